"""Per-request logs: one record per request, summarised here into one run.

* llmperf ``*_individual_responses.json`` (ray-project/llmperf ``token_benchmark_ray.py``
  ``run_token_benchmark``: ``json.dump(individual_responses, f)``): a JSON list of the
  per-request metrics ``get_token_throughput_latencies`` collects, each ``{"error_code",
  "error_msg", "inter_token_latency_s", "ttft_s", "end_to_end_latency_s",
  "request_output_throughput_token_per_s", "number_total_tokens", "number_output_tokens",
  "number_input_tokens"}``; a failed request has an ``error_code``. Seconds throughout;
  ``inter_token_latency_s`` includes the first token (as in the summary) and is not used.

The summary figures are computed from the records the way the tools' own summaries are:
means and nearest-rank percentiles of the successful requests; the request sizes become the
run's request-size buckets (apps.engine.request_sizes), as a vLLM or SGLang detailed file's do.
"""

from __future__ import annotations

import math
from typing import Any, Final

from .common import LLMPERF, CanonicalRun, ImportFormatError, RunBuilder, count, number

LLMPERF_REQUESTS: Final = "llmperf individual_responses.json"
_LLMPERF_KEYS: Final = ("ttft_s", "end_to_end_latency_s", "number_output_tokens")
_PERCENTILES: Final = (("p50", 50), ("p90", 90), ("p95", 95), ("p99", 99))


def looks_like_llmperf_requests(data: list[Any]) -> bool:
    return bool(data) and all(
        isinstance(item, dict) and all(k in item for k in _LLMPERF_KEYS) for item in data[:50]
    )


def _percentile(values: list[float], pct: int) -> float:
    """Nearest-rank percentile (the value at rank ceil(pct/100 x n))."""
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def _stats(b: RunBuilder, canon: str, values: list[float], what: str) -> None:
    if not values:
        return
    b.stat(canon, "mean", sum(values) / len(values), f"mean of per-request {what}")
    for stat, pct in _PERCENTILES:
        b.stat(canon, stat, _percentile(values, pct), f"nearest-rank {stat} of per-request {what}")


def parse_llmperf_requests(data: list[Any]) -> list[CanonicalRun]:
    b = RunBuilder(LLMPERF)
    ok: list[dict[str, Any]] = []
    failed = 0
    for index, item in enumerate(data):
        if not isinstance(item, dict):
            raise ImportFormatError(f"record [{index}] is not a JSON object")
        if item.get("error_code") not in (None, "", 0):
            failed += 1
            continue
        ok.append(item)
    if not ok:
        raise ImportFormatError("every request in this llmperf log failed: no figures to import")
    ttft, e2e, ins, outs = [], [], [], []
    for index, item in enumerate(ok):
        where = f"[{index}]"
        t = number(item, "ttft_s", f"{where}.ttft_s")
        e = number(item, "end_to_end_latency_s", f"{where}.end_to_end_latency_s")
        i = count(item, "number_input_tokens", f"{where}.number_input_tokens")
        o = count(item, "number_output_tokens", f"{where}.number_output_tokens")
        if t is not None:
            ttft.append(t * 1000.0)
        if e is not None:
            e2e.append(e * 1000.0)
        if i is not None and o is not None:
            ins.append(i)
            outs.append(o)
    _stats(b, "ttft_ms", ttft, "ttft_s (s, x1000)")
    _stats(b, "e2e_latency_ms", e2e, "end_to_end_latency_s (s, x1000)")
    tpot = [
        (end - first) / (n - 1)
        for end, first, n in zip(e2e, ttft, outs, strict=False)
        if n > 1 and end >= first
    ]
    if tpot and len(tpot) == len(outs):
        _stats(b, "tpot_ms", tpot, "(end_to_end_latency_s - ttft_s) / (number_output_tokens - 1)")
    b.note("itl_ms", "absent: inter_token_latency_s includes the first token")
    b.scalar("completed", len(ok), "count of requests without an error_code")
    b.scalar("failed", failed, "count of requests with an error_code")
    if ins:
        b.scalar("input_tokens_mean", sum(ins) / len(ins), "mean of number_input_tokens")
        b.scalar("output_tokens_mean", sum(outs) / len(outs), "mean of number_output_tokens")
        b.request_log({"input_lens": ins, "output_lens": outs}, "input_lens", "output_lens")
    b.note("output_tokens_per_s", "absent: the log has no timestamps, so no run duration")
    return [
        b.build(tool_version=None, conditions={"log": LLMPERF_REQUESTS}, label="per-request log")
    ]
