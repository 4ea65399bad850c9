"""SGLang ``python -m sglang.bench_serving --output-file`` JSON lines (sgl-project/sglang,
python/sglang/bench_serving.py, ``benchmark()``: ``result = {...}`` appended with
``json.dumps(result) + "\\n"``, one line a run).

Two layouts:

* 2024 (commit 50a61368): ``backend``, ``dataset_name``, ``request_rate``,
  ``total_input_tokens``, ``total_output_tokens``, ``total_output_tokens_retokenized``,
  ``mean_e2e_latency_ms``, ``median_e2e_latency_ms``, ``median_ttft_ms``, ``median_itl_ms``,
  ``output_throughput``, the ``random_*`` / ``sharegpt_output_len`` arguments, ``duration``,
  ``completed``. No mean TTFT, no TPOT, no request rate: the request rate is derived as
  completed / duration and the totals / completed give the token means.
* 2025 (commit 0033168f): adds ``max_concurrency``, ``request_throughput``,
  ``input_throughput``, ``mean/median/std/p99`` of ``ttft``, ``tpot``, ``e2e_latency``,
  ``mean/median/std/p95/p99`` of ``itl``, ``concurrency`` and ``accept_length``. With
  ``--output-details`` a line also holds ``input_lens``, ``output_lens``, ``ttfts``, ``itls``,
  ``generated_texts`` and ``errors`` per request: the lengths become the run's request-size
  buckets (as a vLLM ``--save-detailed`` file's), the rest is not read.

Traps: all latencies are ms already. ``tpot`` = (latency - ttft) / (output_len - 1): first
token EXCLUDED -> ``tpot_ms``; ``itl`` is the gaps between streamed chunks -> ``itl_ms``.
``output_throughput`` counts every output token (the first included) -> output tok/s; the
``*_retokenized`` counts are not used. ``concurrency`` is MEASURED (sum of request latencies
/ duration), not the concurrency the run was set to: it is kept as ``measured_concurrency``,
and ``max_concurrency`` is the setting. Percentiles are whichever ``p{N}_*_ms`` a line has
(p99 for most, p95 only for ITL): none is made up. The default ``--request-rate inf`` is
written as the non-standard JSON token ``Infinity``; it is read as "inf". The file names no
model: the import must say which one ran.
"""

from __future__ import annotations

from typing import Any, Final

from .common import (
    SGLANG_BENCH,
    CanonicalRun,
    ImportFormatError,
    RunBuilder,
    count,
    derive_tpot_mean,
    number,
)

_METRICS: Final = (
    ("ttft", "ttft_ms", ""),
    ("tpot", "tpot_ms", "; first token excluded"),
    ("itl", "itl_ms", "; gaps between streamed chunks"),
    ("e2e_latency", "e2e_latency_ms", ""),
)
_STATS: Final = (
    ("mean", "mean"),
    ("p50", "median"),
    ("p90", "p90"),
    ("p95", "p95"),
    ("p99", "p99"),
)
_CONDITION_KEYS: Final = (
    "backend",
    "dataset_name",
    "request_rate",
    "max_concurrency",
    "sharegpt_output_len",
    "random_input_len",
    "random_output_len",
    "random_range_ratio",
    "accept_length",
)


def looks_like(data: dict[str, Any]) -> bool:
    """True for one bench_serving result line (vLLM's own file spells e2e ``e2el``)."""
    return (
        "completed" in data
        and "duration" in data
        and ("total_output_tokens_retokenized" in data or "median_e2e_latency_ms" in data)
    )


def parse(data: object) -> list[CanonicalRun]:
    """Parse one result line, or a list of them (one a run)."""
    if isinstance(data, list):
        if not data:
            raise ImportFormatError("not an SGLang bench_serving result: empty JSON list")
        return [_parse_one(item, index) for index, item in enumerate(data, start=1)]
    return [_parse_one(data, None)]


def _parse_one(data: object, index: int | None) -> CanonicalRun:
    where = f"line {index}: " if index is not None else ""
    if not isinstance(data, dict):
        raise ImportFormatError(f"not an SGLang bench_serving result ({where}not a JSON object)")
    b = RunBuilder(SGLANG_BENCH)
    for short, canon, note in _METRICS:
        for stat, prefix in _STATS:
            key = f"{prefix}_{short}_ms"
            b.stat(canon, stat, number(data, key, f"{where}{key}"), f"{key} (ms{note})")

    completed = count(data, "completed", f"{where}completed")
    b.scalar("completed", completed, "completed (successful requests)")
    failed = count(data, "failed", f"{where}failed")
    if failed is not None:
        b.scalar("failed", failed, "failed")
    elif isinstance(data.get("errors"), list):
        # --output-details writes ``failed`` null beside its per-request ``errors`` ("" for
        # a request that succeeded): the failures are the non-empty entries, 0 for none.
        b.scalar(
            "failed",
            sum(1 for e in data["errors"] if e),
            "derived: non-empty entries of errors[] (failed is null)",
        )
    duration = number(data, "duration", f"{where}duration")
    b.scalar("duration_s", duration, "duration (s)")
    rps = number(data, "request_throughput", f"{where}request_throughput")
    if rps is not None:
        b.scalar("request_throughput_rps", rps, "request_throughput (req/s)")
    elif completed is not None and duration:
        b.scalar(
            "request_throughput_rps",
            completed / duration,
            "derived completed / duration (req/s; this file has no request_throughput)",
        )
    out_tps = number(data, "output_throughput", f"{where}output_throughput")
    b.scalar(
        "output_tokens_per_s",
        out_tps,
        "output_throughput (tok/s, every output token including the first)",
    )
    total_in = number(data, "total_input_tokens", f"{where}total_input_tokens")
    total_out = number(data, "total_output_tokens", f"{where}total_output_tokens")
    total_tps = number(data, "total_throughput", f"{where}total_throughput")
    in_tps = number(data, "input_throughput", f"{where}input_throughput")
    if total_tps is not None:
        b.scalar("total_tokens_per_s", total_tps, "total_throughput (tok/s)")
    elif in_tps is not None and out_tps is not None:
        b.scalar(
            "total_tokens_per_s",
            in_tps + out_tps,
            "derived input_throughput + output_throughput (tok/s)",
        )
    elif total_in is not None and total_out is not None and duration:
        b.scalar(
            "total_tokens_per_s",
            (total_in + total_out) / duration,
            "derived (total_input_tokens + total_output_tokens) / duration (tok/s)",
        )
    if completed:
        if total_in is not None:
            b.scalar(
                "input_tokens_mean", total_in / completed, "derived total_input_tokens / completed"
            )
        if total_out is not None:
            b.scalar(
                "output_tokens_mean",
                total_out / completed,
                "derived total_output_tokens / completed (not the retokenized count)",
            )
    if not b.latency["tpot_ms"]:
        derive_tpot_mean(b, "this SGLang file has no TPOT")
    measured = number(data, "concurrency", f"{where}concurrency")

    # --output-details adds per-request input_lens / output_lens (commit 0033168f,
    # ``result_details``; a failed request's output length is 0 and is left out).
    b.request_log(data, "input_lens", "output_lens")

    conditions: dict[str, Any] = {k: data[k] for k in _CONDITION_KEYS if k in data}
    if measured is not None:
        conditions["measured_concurrency"] = measured
    parts = [str(data.get("backend") or "sglang")]
    if "request_rate" in data:
        parts.append(f"rate={data['request_rate']}")
    if data.get("max_concurrency") is not None:
        parts.append(f"concurrency={data['max_concurrency']}")
    # bench_serving writes no version of its own into the line.
    return b.build(tool_version=None, conditions=conditions, label=" ".join(parts))
