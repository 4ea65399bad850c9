"""llmperf (ray-project/llmperf) ``*_summary.json`` from ``token_benchmark_ray.py``.

``LLMPerfResults.to_dict()`` (src/llmperf/utils.py) flattens the summary with "_":
``results_ttft_s_mean``, ``results_ttft_s_quantiles_p50``, ...,
``results_num_completed_requests``, ``results_number_errors``,
``results_mean_output_throughput_token_per_s``,
``results_num_completed_requests_per_min``, plus ``version`` (RESULTS_VERSION,
"2023-08-31": a result-format date, not the package version), ``model``,
``num_concurrent_requests``, ``mean_input_tokens``, ``mean_output_tokens``.
A nested ``{"results": {"ttft_s": {"quantiles": {...}}}}`` summary (the dict before
flattening) is accepted too. Token-count ``min``/``max`` are strings upstream; unused.

Traps: every latency is in SECONDS. ``inter_token_latency_s`` is
sum(all chunk gaps, the first being the TTFT) / output_tokens, i.e. it INCLUDES
the first token: it is never put in ``tpot_ms`` or ``itl_ms``. Instead
``tpot_ms.mean`` is derived as (e2e_mean - ttft_mean) / (output_tokens_mean - 1).
"""

from __future__ import annotations

from typing import Any

from .common import (
    LLMPERF,
    CanonicalRun,
    ImportFormatError,
    JsonObject,
    RunBuilder,
    count,
    derive_tpot_mean,
    number,
)

_QUANTILES = ("p50", "p90", "p95", "p99")
_MAX_DEPTH = 8


def _flatten(data: JsonObject, prefix: str = "", depth: int = 0) -> JsonObject:
    flat: JsonObject = {}
    for key, value in data.items():
        name = f"{prefix}_{key}" if prefix else str(key)
        if isinstance(value, dict) and depth < _MAX_DEPTH:
            flat.update(_flatten(value, name, depth + 1))
        else:
            flat[name] = value
    return flat


def looks_like(data: dict[str, Any]) -> bool:
    flat = data if "results_ttft_s_mean" in data else None
    if flat is None and isinstance(data.get("results"), dict):
        flat = _flatten({"results": data["results"]})
    return flat is not None and "results_ttft_s_mean" in flat


def parse(data: object) -> list[CanonicalRun]:
    if not isinstance(data, dict):
        raise ImportFormatError("not an llmperf summary: expected a JSON object")
    flat = _flatten(data)
    b = RunBuilder(LLMPERF)
    for base, canon in (("ttft_s", "ttft_ms"), ("end_to_end_latency_s", "e2e_latency_ms")):
        key = f"results_{base}_mean"
        mean = number(flat, key, key)
        b.stat(canon, "mean", None if mean is None else mean * 1000.0, f"{key} (s, x1000)")
        for q in _QUANTILES:
            key = f"results_{base}_quantiles_{q}"
            value = number(flat, key, key)
            b.stat(canon, q, None if value is None else value * 1000.0, f"{key} (s, x1000)")

    b.scalar(
        "output_tokens_per_s",
        number(flat, "results_mean_output_throughput_token_per_s", "output throughput"),
        "results_mean_output_throughput_token_per_s (tok/s over the whole test)",
    )
    completed = count(flat, "results_num_completed_requests", "results_num_completed_requests")
    b.scalar("completed", completed, "results_num_completed_requests")
    b.scalar(
        "failed",
        count(flat, "results_number_errors", "results_number_errors"),
        "results_number_errors",
    )
    per_min = number(
        flat, "results_num_completed_requests_per_min", "results_num_completed_requests_per_min"
    )
    if per_min is not None:
        b.scalar(
            "request_throughput_rps",
            per_min / 60.0,
            "results_num_completed_requests_per_min / 60 (req/s)",
        )
        if completed and per_min > 0:
            b.scalar(
                "duration_s",
                completed * 60.0 / per_min,
                "derived results_num_completed_requests * 60 / "
                "results_num_completed_requests_per_min (s)",
            )
    b.scalar(
        "input_tokens_mean",
        number(flat, "results_number_input_tokens_mean", "results_number_input_tokens_mean"),
        "results_number_input_tokens_mean (tokens)",
    )
    b.scalar(
        "output_tokens_mean",
        number(flat, "results_number_output_tokens_mean", "results_number_output_tokens_mean"),
        "results_number_output_tokens_mean (tokens)",
    )
    # Validate the first-token-inclusive figure even though it is not mapped.
    number(flat, "results_inter_token_latency_s_mean", "results_inter_token_latency_s_mean")
    derive_tpot_mean(
        b, "llmperf inter_token_latency_s includes the first token (and is in seconds)"
    )
    b.note(
        "tpot_ms",
        "percentiles absent: only inter_token_latency_s quantiles exist and they include "
        "the first token",
    )
    b.note("itl_ms", "absent: inter_token_latency_s includes the first token")

    conditions: dict[str, Any] = {
        "model": flat.get("model"),
        "concurrency": flat.get("num_concurrent_requests"),
        "input_tokens_mean": flat.get("mean_input_tokens"),
        "input_tokens_stddev": flat.get("stddev_input_tokens"),
        "output_tokens_mean": flat.get("mean_output_tokens"),
        "output_tokens_stddev": flat.get("stddev_output_tokens"),
        "llm_api": flat.get("llm_api"),
        "name": flat.get("name"),
        "timestamp": flat.get("timestamp"),
        "error_code_frequency": flat.get("results_error_code_frequency"),
    }
    for key, value in flat.items():
        if key.startswith("additional_sampling_params_"):
            conditions[key] = value
    version = flat.get("version")
    label = None
    if conditions["concurrency"] is not None:
        label = f"concurrency={conditions['concurrency']}"
    return [
        b.build(
            tool_version=version if isinstance(version, str) else None,
            conditions=conditions,
            label=label,
        )
    ]
