"""MLPerf Endpoints (mlcommons/endpoints) ``result_summary.json``: the serialised
``Report`` of src/inference_endpoint/metrics/report.py.

Two layouts:

* May 2026 (commit 1d667a68): ``version``, ``git_sha``, ``n_samples_issued`` /
  ``_completed`` / ``_failed``, ``duration_ns``, ``state``, ``complete``, and the rollups
  ``ttft``, ``tpot``, ``latency``, ``output_sequence_lengths``. QPS and TPS were methods of
  the report, not written: they are derived here exactly as those methods did
  (completed / duration, output tokens / duration).
* since PR #353 (Jun 2026): ``qps`` and ``tps`` are written, with
  ``legacy_loadgen_window_duration_ns`` (set when they use the LoadGen "completed" window:
  QPS = (completed - 1) / window), ``input_sequence_lengths``, ``finish_reason_counts`` and
  ``run_config`` (``load_pattern``, seeds).

Each rollup is ``{"total", "min", "max", "median", "avg", "std_dev", "percentiles":
{"50.0": ..., "90.0": ..., "99.9": ...}, "histogram"}``; the percentile keys are ``str(p)`` of
the configured grid (default 99.9, 99, 97, 95, 90, 80, 75, 50, 25, 10, 5, 1; "90" is read too).

Traps: every latency is in NANOSECONDS (``*_ns`` series). ``tpot`` = (completion - first
chunk) / tokens after the first chunk: first token EXCLUDED -> ``tpot_ms``. ``tps`` counts
OUTPUT tokens only, for the whole system -> ``output_tokens_per_s``; there is no total
(input + output) rate and none is made up. Tokens/s per user is not in the file (MLPerf
states it from TPOT) and is not derived. The file names no model: the import must say
which one ran. TTFT p90 is what MLPerf's rules are written against; p95 is kept only where
the file's grid has it.
"""

from __future__ import annotations

from typing import Any, Final

from .common import (
    MLPERF_ENDPOINTS,
    CanonicalRun,
    ImportFormatError,
    JsonObject,
    RunBuilder,
    as_object,
    count,
    number,
    optional_object,
)

NS_PER_MS: Final = 1_000_000.0
NS_PER_S: Final = 1_000_000_000.0
#: canonical stat -> the percentile keys it is read from (str(p) of the float grid, or int).
_PERCENTILE_KEYS: Final = (
    ("p90", ("90.0", "90")),
    ("p95", ("95.0", "95")),
    ("p99", ("99.0", "99")),
)
_P50_KEYS: Final = ("50.0", "50")
#: (file rollup, canonical metric, note)
_ROLLUPS: Final = (
    ("ttft", "ttft_ms", ""),
    ("tpot", "tpot_ms", "; first token excluded"),
    ("latency", "e2e_latency_ms", ""),
)


_ROLLUP = " (a rollup with avg/percentiles)"  # what every metric block of the file is


def looks_like(data: dict[str, Any]) -> bool:
    return (
        "n_samples_completed" in data
        and "duration_ns" in data
        and isinstance(data.get("ttft"), dict)
    )


def _latency(b: RunBuilder, data: JsonObject, name: str, canon: str, note: str) -> None:
    rollup = optional_object(data, name, hint=_ROLLUP)
    if not rollup:
        return
    unit = f"ns, /1e6{note}"
    mean = number(rollup, "avg", f"{name}.avg")
    b.stat(canon, "mean", None if mean is None else mean / NS_PER_MS, f"{name}.avg ({unit})")
    pcts = rollup.get("percentiles")
    if pcts is not None and not isinstance(pcts, dict):
        raise ImportFormatError(f"{name}.percentiles is not an object")
    pcts = pcts or {}
    p50_key = next((k for k in _P50_KEYS if k in pcts), None)
    if p50_key is not None:
        p50 = number(pcts, p50_key, f"{name}.percentiles.{p50_key}")
        p50_src = f"{name}.percentiles.{p50_key} ({unit})"
    else:
        p50 = number(rollup, "median", f"{name}.median")
        p50_src = f"{name}.median ({unit})"
    b.stat(canon, "p50", None if p50 is None else p50 / NS_PER_MS, p50_src)
    for stat, keys in _PERCENTILE_KEYS:
        key = next((k for k in keys if k in pcts), None)
        if key is None:
            continue
        value = number(pcts, key, f"{name}.percentiles.{key}")
        b.stat(
            canon,
            stat,
            None if value is None else value / NS_PER_MS,
            f"{name}.percentiles.{key} ({unit})",
        )


def parse(data: object) -> list[CanonicalRun]:
    if not isinstance(data, dict):
        raise ImportFormatError("not an MLPerf Endpoints result_summary.json: expected an object")
    b = RunBuilder(MLPERF_ENDPOINTS)
    for name, canon, note in _ROLLUPS:
        _latency(b, data, name, canon, note)
    b.note("itl_ms", "absent: MLPerf Endpoints reports no chunk-gap distribution")

    completed = count(data, "n_samples_completed", "n_samples_completed")
    b.scalar("completed", completed, "n_samples_completed")
    b.scalar("failed", count(data, "n_samples_failed", "n_samples_failed"), "n_samples_failed")
    duration_ns = number(data, "duration_ns", "duration_ns")
    duration_s = None if not duration_ns else duration_ns / NS_PER_S
    b.scalar("duration_s", duration_s, "duration_ns (ns, /1e9)")
    osl = optional_object(data, "output_sequence_lengths", hint=_ROLLUP)
    isl = optional_object(data, "input_sequence_lengths", hint=_ROLLUP)
    b.scalar(
        "output_tokens_mean",
        number(osl, "avg", "output_sequence_lengths.avg"),
        "output_sequence_lengths.avg (tokens)",
    )
    b.scalar(
        "input_tokens_mean",
        number(isl, "avg", "input_sequence_lengths.avg"),
        "input_sequence_lengths.avg (tokens)",
    )
    window = "legacy LoadGen window" if data.get("legacy_loadgen_window_duration_ns") else "run"
    if "qps" in data or "tps" in data:
        b.scalar(
            "request_throughput_rps",
            number(data, "qps", "qps"),
            f"qps (req/s over the {window}; whole system)",
        )
        b.scalar(
            "output_tokens_per_s",
            number(data, "tps", "tps"),
            f"tps (OUTPUT tok/s over the {window}; whole system)",
        )
    elif duration_s:
        # The May 2026 layout: Report.qps() / Report.tps() were not serialised.
        if completed is not None:
            b.scalar(
                "request_throughput_rps",
                completed / duration_s,
                "derived n_samples_completed / duration (as Report.qps(); req/s)",
            )
        osl_total = number(osl, "total", "output_sequence_lengths.total")
        if osl_total is not None:
            b.scalar(
                "output_tokens_per_s",
                osl_total / duration_s,
                "derived output_sequence_lengths.total / duration (as Report.tps(); OUTPUT tok/s)",
            )
    b.note("total_tokens_per_s", "absent: tps counts output tokens only")
    b.note("tokens_per_s_per_user", "not in result_summary.json; not derived")

    run_config = as_object(data.get("run_config"))
    load = as_object(run_config.get("load_pattern"))
    conditions: dict[str, Any] = {
        "load_pattern": load.get("type"),
        "target_qps": load.get("target_qps"),
        "concurrency": load.get("target_concurrency"),
        "use_legacy_loadgen_qps_metrics": load.get("use_legacy_loadgen_qps_metrics"),
        "samples_issued": data.get("n_samples_issued"),
        "state": data.get("state"),
        "complete": data.get("complete"),
        "git_sha": data.get("git_sha"),
        "legacy_loadgen_window_duration_ns": data.get("legacy_loadgen_window_duration_ns"),
    }
    version = data.get("version")
    return [
        b.build(
            tool_version=version if isinstance(version, str) else None,
            conditions=conditions,
            label=_label(conditions),
        )
    ]


def _label(conditions: dict[str, Any]) -> str | None:
    kind = conditions.get("load_pattern")
    if not isinstance(kind, str):
        return None
    if conditions.get("concurrency") is not None:
        return f"{kind} concurrency={conditions['concurrency']}"
    if conditions.get("target_qps") is not None:
        return f"{kind} qps={conditions['target_qps']}"
    return kind
