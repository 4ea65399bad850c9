"""Per-request logs: one record per request, summarised here into one run.

* llmperf ``*_individual_responses.json`` (ray-project/llmperf ``token_benchmark_ray.py``
  ``run_token_benchmark``: ``json.dump(individual_responses, f)``): a JSON list of the
  per-request metrics ``get_token_throughput_latencies`` collects, each ``{"error_code",
  "error_msg", "inter_token_latency_s", "ttft_s", "end_to_end_latency_s",
  "request_output_throughput_token_per_s", "number_total_tokens", "number_output_tokens",
  "number_input_tokens"}``; a failed request has an ``error_code``. Seconds throughout;
  ``inter_token_latency_s`` includes the first token (as in the summary) and is not used.

* AIPerf ``profile_export.jsonl`` (ai-dynamo/aiperf ``docs/tutorials/
  working-with-profile-exports.md``, "Per-Request Records (JSONL)"; ``MetricRecordInfo`` in
  ``aiperf/common/models/record_models.py``): one JSON object a line, ``{"metadata":
  {"request_start_ns", "request_end_ns", "benchmark_phase", "was_cancelled", ...}, "metrics":
  {<tag>: {"value", "unit"}}, "error": null | {"code", "type", "message"}}``. A failed request
  has an ``error``; only ``benchmark_phase == "profiling"`` records count (warm-up ones do not,
  as in AIPerf's own summary). ``inter_token_latency`` excludes the first token -> ``tpot_ms``;
  ``inter_chunk_latency`` is a list of chunk gaps a request -> ``itl_ms`` over all gaps.

The summary figures are computed from the records the way the tools' own summaries are: means
and percentiles of the successful requests (nearest rank for llmperf; linear interpolation,
numpy's default, for AIPerf: ``aiperf/metrics/metric_dicts.py`` ``np.percentile``); AIPerf's
run duration is its ``benchmark_duration``, the last response's end less the first request's
start, and its throughputs are counts over it. The request sizes become the run's request-size
buckets (apps.engine.request_sizes), as a vLLM or SGLang detailed file's do.
"""

from __future__ import annotations

import math
from typing import Any, Final

from .common import (
    AIPERF,
    LLMPERF,
    CanonicalRun,
    ImportFormatError,
    RunBuilder,
    as_object,
    count,
    number,
    to_ms,
)

LLMPERF_REQUESTS: Final = "llmperf individual_responses.json"
AIPERF_RECORDS: Final = "AIPerf profile_export.jsonl"
_AIPERF_KEYS: Final = ("metadata", "metrics")
#: AIPerf's measured phase (``CreditPhase.PROFILING``); warm-up records are not counted.
AIPERF_PROFILING: Final = "profiling"
NANOS_PER_SECOND: Final = 1_000_000_000  # aiperf/common/constants.py NANOS_PER_SECOND
#: AIPerf record metrics -> (canonical latency slot, note).
AIPERF_LATENCIES: Final = (
    ("time_to_first_token", "ttft_ms", ""),
    ("inter_token_latency", "tpot_ms", "; first token excluded"),
    ("inter_chunk_latency", "itl_ms", "; gaps between streamed chunks, all requests"),
    ("request_latency", "e2e_latency_ms", ""),
)
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


def looks_like_aiperf_records(data: object) -> bool:
    """A list of AIPerf per-request records (or the one record of a one-line file)."""
    items = data if isinstance(data, list) else [data]
    return bool(items) and all(
        isinstance(item, dict)
        and all(k in item for k in _AIPERF_KEYS)
        and isinstance(item["metadata"], dict)
        and "request_start_ns" in item["metadata"]
        for item in items[:50]
    )


def _linear_percentile(ordered: list[float], pct: int) -> float:
    """numpy.percentile's default (linear interpolation between the closest ranks)."""
    position = pct / 100 * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _aiperf_stats(b: RunBuilder, canon: str, values: list[float], what: str) -> None:
    if not values:
        return
    ordered = sorted(values)
    b.stat(canon, "mean", sum(ordered) / len(ordered), f"mean of per-request {what}")
    for stat, pct in _PERCENTILES:
        b.stat(
            canon, stat, _linear_percentile(ordered, pct), f"{stat} (linear) of per-request {what}"
        )


def _aiperf_value(metrics: dict[str, Any], tag: str, where: str) -> list[float]:
    """The metric's value(s) in milliseconds (a token count for a length): one number, or
    a list of them (``inter_chunk_latency``); [] when the record does not have it."""
    entry = metrics.get(tag)
    if entry is None:
        return []
    if not isinstance(entry, dict):
        raise ImportFormatError(f"{where}.metrics.{tag} is not an object with value and unit")
    raw = entry.get("value")
    items = raw if isinstance(raw, list) else [raw]
    values = [number({"value": v}, "value", f"{where}.metrics.{tag}.value") for v in items]
    unit = entry.get("unit")
    found = [v for v in values if v is not None]
    if tag in ("input_sequence_length", "output_sequence_length") or not found:
        return found
    if not isinstance(unit, str):
        raise ImportFormatError(f"{where}.metrics.{tag} has no unit")
    return [to_ms(v, unit, f"{where}.metrics.{tag}") for v in found]


def parse_aiperf_records(data: object) -> list[CanonicalRun]:
    items = data if isinstance(data, list) else [data]
    b = RunBuilder(AIPERF)
    ok: list[tuple[int, dict[str, Any]]] = []
    failed = warmup = 0
    starts: list[float] = []
    ends: list[float] = []
    for index, item in enumerate(items):
        where = f"line {index + 1}"
        if not isinstance(item, dict):
            raise ImportFormatError(f"{where} is not a JSON object")
        meta = as_object(item.get("metadata"))
        if meta.get("benchmark_phase", AIPERF_PROFILING) != AIPERF_PROFILING:
            warmup += 1
            continue
        start = count(meta, "request_start_ns", f"{where}.metadata.request_start_ns")
        end = count(meta, "request_end_ns", f"{where}.metadata.request_end_ns")
        if start is not None:
            starts.append(start)
        if end is not None:
            ends.append(end)
        if item.get("error") is not None:
            failed += 1
            continue
        ok.append((index, as_object(item.get("metrics"))))
    if not ok:
        raise ImportFormatError(
            f"no successful profiling request in this {AIPERF_RECORDS}: no figures to import"
        )
    for tag, canon, note in AIPERF_LATENCIES:
        values = [v for i, m in ok for v in _aiperf_value(m, tag, f"line {i + 1}")]
        _aiperf_stats(b, canon, values, f"{tag}{note}")
    ins: list[int] = []
    outs: list[int] = []
    for index, metrics in ok:
        isl = _aiperf_value(metrics, "input_sequence_length", f"line {index + 1}")
        osl = _aiperf_value(metrics, "output_sequence_length", f"line {index + 1}")
        if isl and osl and isl[0] == int(isl[0]) and osl[0] == int(osl[0]):
            ins.append(int(isl[0]))
            outs.append(int(osl[0]))
    b.scalar("completed", len(ok), "count of profiling records without an error")
    b.scalar("failed", failed, "count of profiling records with an error")
    if ins:
        b.scalar("input_tokens_mean", sum(ins) / len(ins), "mean of input_sequence_length")
        b.scalar("output_tokens_mean", sum(outs) / len(outs), "mean of output_sequence_length")
        b.request_log({"input_lens": ins, "output_lens": outs}, "input_lens", "output_lens")
    if starts and ends and max(ends) > min(starts):
        duration = (max(ends) - min(starts)) / NANOS_PER_SECOND
        b.scalar("duration_s", duration, "derived max(request_end_ns) - min(request_start_ns) (s)")
        b.scalar(
            "request_throughput_rps",
            len(ok) / duration,
            "derived successful records / duration (req/s)",
        )
        if len(outs) == len(ok):
            b.scalar(
                "output_tokens_per_s",
                sum(outs) / duration,
                "derived sum of output_sequence_length / duration (tok/s)",
            )
            b.scalar(
                "total_tokens_per_s",
                (sum(ins) + sum(outs)) / duration,
                "derived sum of input and output sequence lengths / duration (tok/s)",
            )
    conditions: dict[str, Any] = {"log": AIPERF_RECORDS}
    if warmup:
        conditions["warmup_records_skipped"] = warmup
    return [b.build(tool_version=None, conditions=conditions, label="per-request log")]
