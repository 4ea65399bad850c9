"""llm-d Benchmark Report (the "BR" that llm-d-benchmark writes for every harness, the
inference-perf harness by default): schema versions 0.1 and 0.2 (0.2.1 read as 0.2); and
inference-perf's own request-lifecycle report (``summary_lifecycle_metrics.json`` /
``stage_N_lifecycle_metrics.json``), which the BR is converted from.

Schemas (llm-d/llm-d-benchmark, llmdbenchmark/analysis/benchmark_report/, earlier
workload/report/):

* 0.1 (``schema_v0_1.py``, ``br_v0_1_example.yaml``): ``{"version": "0.1", "scenario":
  {"model": {"name"}, "load": {"name", "args"}, "host", "platform"}, "metrics": {"time":
  {"duration" (s)}, "requests": {"total", "failures", "incomplete", "input_length",
  "output_length"}, "latency": {<metric>: Statistics}, "throughput": {"input_tokens_per_sec",
  "output_tokens_per_sec", "total_tokens_per_sec", "requests_per_sec"} (plain numbers)}}``.
* 0.2 (``schema_v0_2.py``, ``br_v0_2_example.yaml``): ``{"version": "0.2", "run": {"time":
  {"duration": ISO-8601}}, "scenario": {"stack": [components], "load": {"standardized",
  "native"}}, "results": {"request_performance": {"aggregate": {"requests", "latency",
  "throughput": {<rate>: Statistics}}}}}``. The first 0.2 schema (commit 4fb7913b) spelled
  the rate units ``token/s`` / ``qps`` and the request rate ``requests_rate``; the current
  one ``tokens/s`` / ``queries/s`` and ``request_rate``. Both are read. 0.2.1
  (``schema_v0_2_1.py``) subclasses the 0.2 classes and only adds fields.

A ``Statistics`` object carries its own ``units``: ``ms`` or ``s`` for TTFT and request
latency, ``ms/token`` or ``s/token`` for the per-token metrics. inference-perf's own files
are in seconds (its converter writes ``units: s``), so the unit is always read, never assumed.

inference-perf's own report (kubernetes-sigs/inference-perf, inference_perf/reportgen/base.py
``summarize_requests``): ``{"load_summary": {"count", "schedule_delay", ["requested_rate",
"achieved_rate", "send_duration"]}, "successes": {"count", "latency": {<metric>: summary},
"throughput": {"input_tokens_per_sec", "output_tokens_per_sec", "total_tokens_per_sec",
"requests_per_sec"}, "prompt_len" | "prompt_tokens", "output_len"}, "failures": {"count", ...}}``.
Its summaries carry NO unit: every latency is in SECONDS (``time.perf_counter`` deltas).
Until PR #201 (Aug 2025) a summary was ``mean, min, p10, p50, p90, max``; since then the
median is ``median`` and the percentiles those configured (default p0.1 ... p99.9);
``benchmark_time_seconds`` (PR #430) gives the duration. It names no model.

Traps (inference_perf/reportgen/base.py and the schema's field notes):
``time_per_output_token`` = (last token - first token) / (output tokens - 1): first token
EXCLUDED -> ``tpot_ms``. ``inter_token_latency`` = the gaps between streamed tokens ->
``itl_ms``. ``normalized_time_per_output_token`` = request latency / output tokens: it
INCLUDES the first token (TTFT) and is never used. Rates are over the whole stack under test
(every replica and GPU), not per GPU. ``completed`` is derived as total - failures -
incomplete (the report counts requests sent).
"""

from __future__ import annotations

import re
from typing import Any, Final

from .common import (
    INFERENCE_PERF,
    CanonicalRun,
    ImportFormatError,
    JsonObject,
    RunBuilder,
    as_object,
    count,
    number,
    optional_object,
)

#: Statistics keys mapped onto the canonical stats (p0p1, p1..p25, p75, p99p9 are not kept).
_STATS: Final = (("mean", "mean"), ("p50", "p50"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99"))
#: unit -> multiplier to milliseconds (schema ``Units``: MS, S, MS_PER_TOKEN, S_PER_TOKEN).
_TIME_UNITS: Final = {"ms": 1.0, "s": 1000.0}
_PER_TOKEN_UNITS: Final = {"ms/token": 1.0, "s/token": 1000.0}
#: Rate units: 0.2 first spelled them "token/s" and "qps", later "tokens/s" and "queries/s".
_TOKEN_RATE_UNITS: Final = ("tokens/s", "token/s")
_REQUEST_RATE_UNITS: Final = ("queries/s", "qps")
#: (BR metric, canonical metric, allowed units, note)
_LATENCY: Final = (
    ("time_to_first_token", "ttft_ms", _TIME_UNITS, ""),
    ("time_per_output_token", "tpot_ms", _PER_TOKEN_UNITS, "; first token excluded"),
    ("inter_token_latency", "itl_ms", _PER_TOKEN_UNITS, "; gaps between streamed tokens"),
    ("request_latency", "e2e_latency_ms", _TIME_UNITS, ""),
)
_NTPOT_NOTE: Final = (
    "not used: normalized_time_per_output_token includes the first token (latency / "
    "output tokens); tpot_ms comes from time_per_output_token"
)
#: ISO-8601 duration as the 0.2 report writes it (``PT49.97S``; hours and minutes optional).
_ISO_DURATION: Final = re.compile(
    r"^P(?:(?P<d>\d+(?:\.\d+)?)D)?(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?"
    r"(?:(?P<s>\d+(?:\.\d+)?)S)?)?$"
)


def _version(data: dict[str, Any]) -> str:
    value = data.get("version")
    if isinstance(value, float) and not isinstance(value, bool):
        return repr(value)  # YAML's unquoted ``version: 0.2`` is a number
    return value if isinstance(value, str) else ""


def looks_like(data: dict[str, Any]) -> bool:
    """True for a Benchmark Report (its schema version and results block) or an
    inference-perf lifecycle report (load_summary and successes.latency)."""
    if _is_lifecycle(data):
        return True
    version = _version(data)
    if version == "0.1":
        return isinstance(data.get("metrics"), dict) and isinstance(data.get("scenario"), dict)
    if version.startswith("0.2"):
        return isinstance(data.get("results"), dict) and isinstance(data.get("run"), dict)
    return False


def _is_lifecycle(data: dict[str, Any]) -> bool:
    successes = data.get("successes")
    return (
        isinstance(data.get("load_summary"), dict)
        and isinstance(successes, dict)
        and isinstance(successes.get("latency"), dict)
    )


def parse(data: object) -> list[CanonicalRun]:
    if not isinstance(data, dict):
        raise ImportFormatError("not a Benchmark Report: expected a JSON object")
    if _is_lifecycle(data):
        return [_parse_lifecycle(data)]
    version = _version(data)
    if version == "0.1":
        return [_parse_v01(data)]
    if version == "0.2" or version.startswith("0.2."):
        return [_parse_v02(data, version)]
    shown = repr(data.get("version"))[:40]
    raise ImportFormatError(
        f"version: Benchmark Report schema version {shown} is not supported "
        "(supported: 0.1, 0.2, 0.2.x)"
    )


def _latency(b: RunBuilder, latency: JsonObject, where: str) -> None:
    for name, canon, units, note in _LATENCY:
        stats = optional_object(latency, name, where)
        if not stats:
            continue
        path = f"{where}.{name}"
        unit = stats.get("units")
        if not isinstance(unit, str) or unit not in units:
            raise ImportFormatError(
                f"{path}.units: {str(unit)[:20]!r} is not a unit of this figure "
                f"(expected one of {', '.join(units)})"
            )
        factor = units[unit]
        conv = unit if factor == 1.0 else f"{unit}, x{factor:g}"
        for stat, key in _STATS:
            value = number(stats, key, f"{path}.{key}")
            if value is not None:
                b.stat(canon, stat, value * factor, f"{path}.{key} ({conv}{note})")
    if optional_object(latency, "normalized_time_per_output_token", where):
        b.note("normalized_time_per_output_token", _NTPOT_NOTE)


def _requests(b: RunBuilder, requests: JsonObject, where: str) -> None:
    total = count(requests, "total", f"{where}.total")
    failures = count(requests, "failures", f"{where}.failures")
    incomplete = count(requests, "incomplete", f"{where}.incomplete")
    if total is not None:
        lost = (failures or 0) + (incomplete or 0)
        if lost > total:
            raise ImportFormatError(
                f"{where}: failures + incomplete ({lost}) exceed total ({total})"
            )
        b.scalar(
            "completed",
            total - lost,
            f"derived {where}.total - failures - incomplete (requests sent minus those "
            "that errored or did not finish)",
        )
    b.scalar("failed", failures, f"{where}.failures")
    for key, canon in (
        ("input_length", "input_tokens_mean"),
        ("output_length", "output_tokens_mean"),
    ):
        stats = optional_object(requests, key, where)
        if stats:
            unit = stats.get("units")
            if unit != "count":
                raise ImportFormatError(
                    f"{where}.{key}.units: {str(unit)[:20]!r} is not a token count (expected count)"
                )
            b.scalar(
                canon, number(stats, "mean", f"{where}.{key}.mean"), f"{where}.{key}.mean (tokens)"
            )


def _rate(
    b: RunBuilder,
    throughput: JsonObject,
    names: tuple[str, ...],
    canon: str,
    units: tuple[str, ...],
    where: str,
) -> None:
    for name in names:
        stats = optional_object(throughput, name, where)
        if not stats:
            continue
        path = f"{where}.{name}"
        unit = stats.get("units")
        if unit not in units:
            raise ImportFormatError(
                f"{path}.units: {str(unit)[:20]!r} is not a rate of this figure "
                f"(expected one of {', '.join(units)})"
            )
        b.scalar(canon, number(stats, "mean", f"{path}.mean"), f"{path}.mean ({unit}; whole stack)")
        return


def _iso_seconds(text: object, where: str) -> float | None:
    if text is None:
        return None
    match = _ISO_DURATION.match(text) if isinstance(text, str) else None
    if match is None or not any(match.groupdict().values()):
        raise ImportFormatError(f"{where}: {str(text)[:40]!r} is not an ISO-8601 duration")
    parts = {k: float(v) for k, v in match.groupdict().items() if v}
    return (
        parts.get("d", 0.0) * 86400.0
        + parts.get("h", 0.0) * 3600.0
        + parts.get("m", 0.0) * 60.0
        + parts.get("s", 0.0)
    )


def _parse_v02(data: JsonObject, version: str) -> CanonicalRun:
    b = RunBuilder(INFERENCE_PERF)
    results = optional_object(data, "results", "")
    perf = optional_object(results, "request_performance", "results")
    agg = optional_object(perf, "aggregate", "results.request_performance")
    root = "results.request_performance.aggregate"
    _latency(b, optional_object(agg, "latency", root), f"{root}.latency")
    _requests(b, optional_object(agg, "requests", root), f"{root}.requests")
    throughput = optional_object(agg, "throughput", root)
    where = f"{root}.throughput"
    _rate(
        b,
        throughput,
        ("request_rate", "requests_rate"),
        "request_throughput_rps",
        _REQUEST_RATE_UNITS,
        where,
    )
    _rate(b, throughput, ("output_token_rate",), "output_tokens_per_s", _TOKEN_RATE_UNITS, where)
    _rate(b, throughput, ("total_token_rate",), "total_tokens_per_s", _TOKEN_RATE_UNITS, where)
    run = optional_object(data, "run", "")
    duration = _iso_seconds(
        optional_object(run, "time", "run").get("duration"), "run.time.duration"
    )
    b.scalar("duration_s", duration, "run.time.duration (ISO-8601, s)")

    scenario = optional_object(data, "scenario", "")
    load = optional_object(scenario, "load", "scenario")
    standard = as_object(load.get("standardized"))
    native_config = as_object(as_object(load.get("native")).get("config"))
    server = as_object(native_config.get("server"))
    engine = _engine_component(scenario.get("stack"))
    engine_std = as_object(engine.get("standardized"))
    accelerator = as_object(engine_std.get("accelerator"))
    parallelism = as_object(accelerator.get("parallelism"))
    conditions: dict[str, Any] = {
        "model": as_object(engine_std.get("model")).get("name") or server.get("model_name"),
        "report_schema_version": version,
        "harness": standard.get("tool"),
        "harness_version": standard.get("tool_version"),
        "stage": standard.get("stage"),
        "request_rate": standard.get("rate_qps"),
        "concurrency": standard.get("concurrency"),
        "input_tokens_requested": as_object(standard.get("input_seq_len")).get("value"),
        "output_tokens_requested": as_object(standard.get("output_seq_len")).get("value"),
        "engine": engine_std.get("tool"),
        "engine_version": engine_std.get("tool_version"),
        "engine_role": engine_std.get("role"),
        "quantization": _engine_arg(engine, "--quantization") or _engine_arg(engine, "--dtype"),
        "replicas": engine_std.get("replicas"),
        "accelerator": accelerator.get("model"),
        "accelerator_count": accelerator.get("count"),
        "tensor_parallel": parallelism.get("tp"),
        "run_uid": run.get("uid"),
    }
    return b.build(
        tool_version=_str(standard.get("tool_version")),
        conditions=conditions,
        label=_label(conditions),
    )


def _engine_arg(component: JsonObject, name: str) -> Any:
    """An inference engine's command-line argument as the 0.2 stack's ``native.args`` holds it."""
    value = as_object(as_object(component.get("native")).get("args")).get(name)
    return value if isinstance(value, str) else None


def _engine_component(stack: object) -> JsonObject:
    """The first inference-engine component of a 0.2 stack (where the model is named)."""
    if not isinstance(stack, list):
        return {}
    for component in stack:
        standard = as_object(as_object(component).get("standardized"))
        if standard.get("kind") == "inference_engine":
            return as_object(component)
    return {}


def _parse_v01(data: JsonObject) -> CanonicalRun:
    b = RunBuilder(INFERENCE_PERF)
    metrics = optional_object(data, "metrics", "")
    _latency(b, optional_object(metrics, "latency", "metrics"), "metrics.latency")
    _requests(b, optional_object(metrics, "requests", "metrics"), "metrics.requests")
    throughput = optional_object(metrics, "throughput", "metrics")
    for key, canon, unit in (
        ("requests_per_sec", "request_throughput_rps", "req/s"),
        ("output_tokens_per_sec", "output_tokens_per_s", "tok/s"),
        ("total_tokens_per_sec", "total_tokens_per_s", "tok/s"),
    ):
        path = f"metrics.throughput.{key}"
        b.scalar(canon, number(throughput, key, path), f"{path} ({unit}; whole stack)")
    time = optional_object(metrics, "time", "metrics")
    b.scalar(
        "duration_s", number(time, "duration", "metrics.time.duration"), "metrics.time.duration (s)"
    )

    scenario = optional_object(data, "scenario", "")
    model = as_object(scenario.get("model"))
    load = as_object(scenario.get("load"))
    args = as_object(load.get("args"))
    host = as_object(scenario.get("host"))
    accelerators = host.get("accelerator")
    first_acc = (
        as_object(accelerators[0]) if isinstance(accelerators, list) and accelerators else {}
    )
    engines = as_object(scenario.get("platform")).get("engine")
    first_engine = as_object(engines[0]) if isinstance(engines, list) and engines else {}
    conditions: dict[str, Any] = {
        "model": model.get("name"),
        "quantization": model.get("quantization"),
        "report_schema_version": "0.1",
        "harness": load.get("name"),
        "workload": load.get("type"),
        "request_rate": args.get("qps_values"),
        "engine": first_engine.get("name"),
        "engine_version": first_engine.get("version"),
        "accelerator": first_acc.get("model"),
        "accelerator_count": first_acc.get("count"),
        "tensor_parallel": as_object(first_acc.get("parallelism")).get("tp"),
    }
    return b.build(tool_version=None, conditions=conditions, label=_label(conditions))


def _str(value: object) -> str | None:
    return (
        str(value) if isinstance(value, str | int | float) and not isinstance(value, bool) else None
    )


def _label(conditions: dict[str, Any]) -> str | None:
    parts = [str(conditions["harness"])] if conditions.get("harness") else []
    if conditions.get("stage") is not None:
        parts.append(f"stage {conditions['stage']}")
    if conditions.get("request_rate") is not None:
        parts.append(f"rate={conditions['request_rate']}")
    if isinstance(conditions.get("concurrency"), int):
        parts.append(f"concurrency={conditions['concurrency']}")
    return " ".join(parts) or None


#: inference-perf summary keys -> canonical stats ("median" since PR #201, "p50" before).
_LIFECYCLE_STATS: Final = (
    ("mean", ("mean",)),
    ("p50", ("median", "p50")),
    ("p90", ("p90",)),
    ("p95", ("p95",)),
    ("p99", ("p99",)),
)
MS_PER_S: Final = 1000.0


#: What sets a stage's file apart from the summary of a whole run: inference-perf's
#: ``summarize_requests`` adds the stage's send duration and rates to a stage's load_summary
#: only (inference_perf/reportgen/base.py; the demos' stage_N files have them, their
#: summary_lifecycle_metrics.json not).
_STAGE_KEYS: Final = ("send_duration", "requested_rate", "achieved_rate")
SWEEP_SUMMARY: Final = (
    "this is inference-perf's summary over every stage of the run "
    "(summary_lifecycle_metrics.json): its figures mix the stages' loads (a sweep's TTFT "
    "p50 over all its rates is no stage's TTFT), so it is not imported as a run; import "
    "each stage's stage_N_lifecycle_metrics.json instead, one run per stage"
)


def _parse_lifecycle(data: JsonObject) -> CanonicalRun:
    load_summary = optional_object(data, "load_summary", "")
    if not any(key in load_summary for key in _STAGE_KEYS):
        raise ImportFormatError(SWEEP_SUMMARY)
    b = RunBuilder(INFERENCE_PERF)
    successes = optional_object(data, "successes", "")
    latency = optional_object(successes, "latency", "successes")
    for name, canon, _units, note in _LATENCY:
        summary = optional_object(latency, name, "successes.latency")
        path = f"successes.latency.{name}"
        for stat, keys in _LIFECYCLE_STATS:
            key = next((k for k in keys if k in summary), None)
            if key is None:
                continue
            value = number(summary, key, f"{path}.{key}")
            b.stat(
                canon,
                stat,
                None if value is None else value * MS_PER_S,
                f"{path}.{key} (s, x1000{note})",
            )
    if optional_object(latency, "normalized_time_per_output_token", "successes.latency"):
        b.note("normalized_time_per_output_token", _NTPOT_NOTE)

    throughput = optional_object(successes, "throughput", "successes")
    for key, canon, unit in (
        ("requests_per_sec", "request_throughput_rps", "req/s"),
        ("output_tokens_per_sec", "output_tokens_per_s", "tok/s"),
        ("total_tokens_per_sec", "total_tokens_per_s", "tok/s"),
    ):
        path = f"successes.throughput.{key}"
        b.scalar(canon, number(throughput, key, path), f"{path} ({unit})")
    b.scalar("completed", count(successes, "count", "successes.count"), "successes.count")
    failures = optional_object(data, "failures", "")
    b.scalar("failed", count(failures, "count", "failures.count"), "failures.count")
    for keys, canon in (
        (("prompt_tokens", "prompt_len"), "input_tokens_mean"),
        (("output_len",), "output_tokens_mean"),
    ):
        for key in keys:
            summary = optional_object(successes, key, "successes")
            if summary:
                path = f"successes.{key}.mean"
                b.scalar(canon, number(summary, "mean", path), f"{path} (tokens)")
                break
    b.scalar(
        "duration_s",
        number(data, "benchmark_time_seconds", "benchmark_time_seconds"),
        "benchmark_time_seconds (s)",
    )
    load = optional_object(data, "load_summary", "")
    conditions: dict[str, Any] = {
        "harness": "inference-perf",
        "request_rate": load.get("requested_rate"),
        "achieved_rate": load.get("achieved_rate"),
        "requests_sent": load.get("count"),
    }
    return b.build(tool_version=None, conditions=conditions, label=_label(conditions))
