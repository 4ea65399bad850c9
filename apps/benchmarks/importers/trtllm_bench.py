"""TensorRT-LLM ``trtllm-bench throughput --report_json`` (``ReportUtility.get_statistics_dict``
in tensorrt_llm/bench/dataclasses/reporting.py; statistics.py for the definitions).

The report: ``engine`` (model, version, backend, dtype, quantization), ``world_info``
(tp/pp/ep/world size, batch limits), ``request_info`` (num_requests, avg input / output
length, avg_num_concurrent_requests), ``performance`` and, only with ``--streaming``,
``streaming_metrics``; ``dataset``; later ``machine`` (first GPU's name and memory) and
``decoding_stats``. Two versions:

* before PR #3212 (commit f8a4cc0629, Apr 2025): ``performance`` has no total rate;
* since: ``system_total_throughput_tok_s`` = (input + output tokens) / total latency.

Percentile blocks (``request_latency_percentiles_ms``, ``ttft_percentiles``,
``tpot_percentiles``) hold ``p50``, ``p90``, ``p95``, ``p99``, ``minimum``, ``maximum``,
``average``, all already converted to ms by the report.

Traps: ``tpot`` = (end - first token) / (output tokens - 1): first token EXCLUDED ->
``tpot_ms``. ``system_output_throughput_tok_s`` counts every output token, the first
included (the report says so), over all ``world_size`` GPUs -> ``output_tokens_per_s``;
``output_throughput_per_gpu_tok_s`` is that divided by world_size and is NOT used (a
per-GPU figure); ``output_throughput_per_user_tok_s`` (includes TTFT) and
``token_output_speed_tok_s`` (excludes it) are per-request speeds, not system rates, and
are not used. Without ``--streaming`` there is no TTFT and the file is refused. trtllm-bench
counts no failed requests; ``avg_num_concurrent_requests`` is measured, not the set
concurrency.
"""

from __future__ import annotations

from typing import Any, Final

from .common import (
    TRTLLM_BENCH,
    CanonicalRun,
    ImportFormatError,
    JsonObject,
    RunBuilder,
    as_object,
    count,
    number,
    optional_object,
)

_STATS: Final = (
    ("mean", "average"),
    ("p50", "p50"),
    ("p90", "p90"),
    ("p95", "p95"),
    ("p99", "p99"),
)
MS_PER_S: Final = 1000.0
NO_STREAMING: Final = (
    "missing required figure: ttft (this trtllm-bench report has no streaming_metrics: run "
    "trtllm-bench throughput with --streaming to measure time to first token)"
)


def looks_like(data: dict[str, Any]) -> bool:
    return (
        isinstance(data.get("engine"), dict)
        and isinstance(data.get("performance"), dict)
        and isinstance(data.get("world_info"), dict)
    )


def _percentiles(b: RunBuilder, canon: str, block: JsonObject, path: str, note: str) -> None:
    for stat, key in _STATS:
        value = number(block, key, f"{path}.{key}")
        b.stat(canon, stat, value, f"{path}.{key} (ms{note})")


def parse(data: object) -> list[CanonicalRun]:
    if not isinstance(data, dict):
        raise ImportFormatError("not a trtllm-bench report: expected a JSON object")
    perf = optional_object(data, "performance")
    streaming = optional_object(data, "streaming_metrics")
    if not streaming:
        raise ImportFormatError(NO_STREAMING)
    b = RunBuilder(TRTLLM_BENCH)
    ttft = optional_object(streaming, "ttft_percentiles", "streaming_metrics")
    _percentiles(b, "ttft_ms", ttft, "streaming_metrics.ttft_percentiles", "")
    if "mean" not in b.latency["ttft_ms"]:
        value = number(streaming, "avg_ttft_ms", "streaming_metrics.avg_ttft_ms")
        b.stat("ttft_ms", "mean", value, "streaming_metrics.avg_ttft_ms (ms)")
    tpot = optional_object(streaming, "tpot_percentiles", "streaming_metrics")
    _percentiles(b, "tpot_ms", tpot, "streaming_metrics.tpot_percentiles", "; first token excluded")
    if "mean" not in b.latency["tpot_ms"]:
        value = number(streaming, "avg_tpot_ms", "streaming_metrics.avg_tpot_ms")
        b.stat("tpot_ms", "mean", value, "streaming_metrics.avg_tpot_ms (ms; first token excluded)")
    e2e = optional_object(perf, "request_latency_percentiles_ms", "performance")
    _percentiles(b, "e2e_latency_ms", e2e, "performance.request_latency_percentiles_ms", "")
    if "mean" not in b.latency["e2e_latency_ms"]:
        value = number(perf, "avg_request_latency_ms", "performance.avg_request_latency_ms")
        b.stat("e2e_latency_ms", "mean", value, "performance.avg_request_latency_ms (ms)")
    b.note("itl_ms", "absent: trtllm-bench reports per-request averages, not chunk gaps")

    b.scalar(
        "request_throughput_rps",
        number(perf, "request_throughput_req_s", "performance.request_throughput_req_s"),
        "performance.request_throughput_req_s (req/s)",
    )
    b.scalar(
        "output_tokens_per_s",
        number(
            perf, "system_output_throughput_tok_s", "performance.system_output_throughput_tok_s"
        ),
        "performance.system_output_throughput_tok_s (tok/s, all world_size GPUs; output "
        "tokens including the first)",
    )
    b.scalar(
        "total_tokens_per_s",
        number(perf, "system_total_throughput_tok_s", "performance.system_total_throughput_tok_s"),
        "performance.system_total_throughput_tok_s (input + output tok/s, all GPUs)",
    )
    # Validated, never mapped: per-GPU and per-user speeds are not system rates.
    for key in ("output_throughput_per_gpu_tok_s", "output_throughput_per_user_tok_s"):
        number(perf, key, f"performance.{key}")
    number(streaming, "token_output_speed_tok_s", "streaming_metrics.token_output_speed_tok_s")
    b.note(
        "output_throughput_per_gpu_tok_s",
        "not used: per GPU (system output rate / world_size); output_tokens_per_s is the "
        "system rate",
    )
    b.note(
        "output_throughput_per_user_tok_s",
        "not used: a per-request speed (includes TTFT), not a system rate",
    )

    info = optional_object(data, "request_info")
    b.scalar(
        "completed",
        count(info, "num_requests", "request_info.num_requests"),
        "request_info.num_requests (trtllm-bench counts no failures)",
    )
    b.scalar(
        "input_tokens_mean",
        number(info, "avg_input_length", "request_info.avg_input_length"),
        "request_info.avg_input_length (tokens)",
    )
    b.scalar(
        "output_tokens_mean",
        number(info, "avg_output_length", "request_info.avg_output_length"),
        "request_info.avg_output_length (tokens)",
    )
    total_ms = number(perf, "total_latency_ms", "performance.total_latency_ms")
    b.scalar(
        "duration_s",
        None if total_ms is None else total_ms / MS_PER_S,
        "performance.total_latency_ms (ms, /1000: first request start to last request end)",
    )

    engine = optional_object(data, "engine")
    world = optional_object(data, "world_info")
    machine = as_object(data.get("machine"))
    decoding = as_object(data.get("decoding_stats"))
    conditions: dict[str, Any] = {
        "model": engine.get("model"),
        "backend": engine.get("backend"),
        "dtype": engine.get("dtype"),
        "quantization": engine.get("quantization"),
        "kv_cache_dtype": engine.get("kv_cache_dtype"),
        "tp_size": world.get("tp_size"),
        "pp_size": world.get("pp_size"),
        "ep_size": world.get("ep_size"),
        "world_size": world.get("world_size"),
        "max_batch_size": world.get("max_batch_size"),
        "max_num_tokens": world.get("max_num_tokens"),
        "avg_num_concurrent_requests": info.get("avg_num_concurrent_requests"),
        "gpu_name": machine.get("name"),
        "speculative_decoding": decoding.get("mode"),
    }
    version = engine.get("version")
    label = None
    if conditions["tp_size"] is not None:
        label = f"{conditions['backend'] or 'trtllm'} tp={conditions['tp_size']}"
    return [
        b.build(
            tool_version=version if isinstance(version, str) else None,
            conditions=conditions,
            label=label,
        )
    ]
