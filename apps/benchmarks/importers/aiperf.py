"""AIPerf ``profile_export_aiperf.json`` (ai-dynamo/aiperf).

Shapes (aiperf/exporters/json_exporter.py, docs/tutorials/working-with-profile-exports.md):

* 0.1.x: ``{"records": {<tag>: {"tag", "header", "unit", "avg", "p50", ...}},
  "input_config", "was_cancelled", "error_summary", "start_time", "end_time"}``.
* 0.13 (schema 1.4): the same metrics; ``input_config`` is reorganised into ``models``,
  ``endpoint``, ``datasets`` and ``phases`` (the load is the profiling phase's).
* 0.2+: metrics flattened to the top level like GenAI-Perf
  (``"time_to_first_token": {"unit": "ms", "avg": ..., "p50": ...}``) plus
  ``benchmark_duration``, ``request_count``, ``error_request_count``, ``goodput``;
  later files add ``schema_version`` ("1.x") and ``aiperf_version``.

Every metric carries its own ``unit``; values are converted from it (ms, s/sec, ns).
Trap: AIPerf ``inter_token_latency`` is (request_latency - ttft) / (osl - 1) per
request, first token EXCLUDED -> ``tpot_ms``. ``inter_chunk_latency`` (gaps
between streamed chunks) -> ``itl_ms``.
"""

from __future__ import annotations

from typing import Any

from .common import (
    AIPERF,
    CanonicalRun,
    ImportFormatError,
    JsonObject,
    RunBuilder,
    as_object,
    count,
    number,
    to_ms,
    to_seconds,
)

_STAT_KEYS = (("mean", "avg"), ("p50", "p50"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99"))
_AIPERF_MARKERS = ("aiperf_version", "was_cancelled", "error_summary", "records")
#: The measured phase's ``kind`` in AIPerf 0.13's ``input_config.phases``, and its ``name`` in
#: AIPerf 0.11's (whose phases have no ``kind``: tests/data/benchmarks/real/aiperf_0_11_*).
AIPERF_PROFILING_PHASE = "profiling"


def looks_like(data: dict[str, Any]) -> bool:
    if isinstance(data.get("records"), dict) and "time_to_first_token" in data["records"]:
        return True
    if not isinstance(data.get("time_to_first_token"), dict):
        return False
    if any(k in data for k in _AIPERF_MARKERS):
        return True
    config = as_object(data.get("input_config"))
    return "loadgen" in config


def metric_obj(metrics: JsonObject, name: str) -> JsonObject:
    value = metrics.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ImportFormatError(f"{name} is not an object with unit/avg/percentiles")
    return value


def latency(b: RunBuilder, canon: str, metrics: JsonObject, name: str, note: str = "") -> None:
    """Copy avg/p50/p90/p95/p99 of ``metrics[name]`` into ``canon`` (ms)."""
    obj = metric_obj(metrics, name)
    if not obj:
        return
    unit = obj.get("unit")
    if not isinstance(unit, str):
        raise ImportFormatError(f"{name} has no unit")
    for stat, key in _STAT_KEYS:
        value = number(obj, key, f"{name}.{key}")
        if value is not None:
            b.stat(canon, stat, to_ms(value, unit, name), f"{name}.{key} ({unit}{note})")


def scalar(
    b: RunBuilder, canon: str, metrics: JsonObject, name: str, whole: bool = False
) -> float | int | None:
    """Copy ``metrics[name].avg`` into the scalar ``canon``."""
    obj = metric_obj(metrics, name)
    value: float | int | None
    value = count(obj, "avg", f"{name}.avg") if whole else number(obj, "avg", f"{name}.avg")
    unit = obj.get("unit", "")
    b.scalar(canon, value, f"{name}.avg ({unit})")
    return value


def parse(data: object) -> list[CanonicalRun]:
    if not isinstance(data, dict):
        raise ImportFormatError("not an AIPerf export: expected a JSON object")
    records = data.get("records")
    metrics = records if isinstance(records, dict) else data
    b = RunBuilder(AIPERF)
    latency(b, "ttft_ms", metrics, "time_to_first_token")
    latency(b, "tpot_ms", metrics, "inter_token_latency", "; first token excluded")
    latency(b, "itl_ms", metrics, "inter_chunk_latency", "; gap between streamed chunks")
    latency(b, "e2e_latency_ms", metrics, "request_latency")
    scalar(b, "request_throughput_rps", metrics, "request_throughput")
    scalar(b, "output_tokens_per_s", metrics, "output_token_throughput")
    scalar(b, "total_tokens_per_s", metrics, "total_token_throughput")
    scalar(b, "input_tokens_mean", metrics, "input_sequence_length")
    scalar(b, "output_tokens_mean", metrics, "output_sequence_length")
    scalar(b, "completed", metrics, "request_count", whole=True)
    goodput = metric_obj(metrics, "goodput")
    if "request" in str(goodput.get("unit", "")):
        scalar(b, "goodput_rps", metrics, "goodput")

    failed = scalar(b, "failed", metrics, "error_request_count", whole=True)
    if failed is None:
        summary = data.get("error_summary")
        if isinstance(summary, list):
            total = 0
            for item in summary:
                total += count(as_object(item), "count", "error_summary[].count") or 0
            b.scalar("failed", total, "derived sum of error_summary[].count")

    duration = metric_obj(metrics, "benchmark_duration")
    value = number(duration, "avg", "benchmark_duration.avg")
    if value is not None:
        unit = str(duration.get("unit", "sec"))
        b.scalar(
            "duration_s",
            to_seconds(value, unit, "benchmark_duration"),
            f"benchmark_duration.avg ({unit})",
        )

    conditions = input_conditions(as_object(data.get("input_config")))
    if "schema_version" in data:
        conditions["export_schema_version"] = data["schema_version"]
    conditions["was_cancelled"] = data.get("was_cancelled")
    version = data.get("aiperf_version")
    return [
        b.build(
            tool_version=version if isinstance(version, str) else None,
            conditions=conditions,
            label=_label(conditions),
        )
    ]


def input_conditions(config: JsonObject) -> dict[str, Any]:
    """Conditions from AIPerf's ``input_config`` (UserConfig); not a stable schema."""
    if isinstance(config.get("phases"), list):
        return _phase_conditions(config)
    endpoint = as_object(config.get("endpoint"))
    loadgen = as_object(config.get("loadgen"))
    prompt = as_object(as_object(config.get("input")).get("prompt"))
    names = endpoint.get("model_names")
    conds: dict[str, Any] = {
        "model": names[0] if isinstance(names, list) and names else None,
        "endpoint_type": endpoint.get("type"),
        "streaming": endpoint.get("streaming"),
        "concurrency": loadgen.get("concurrency"),
        "request_rate": loadgen.get("request_rate"),
        "request_rate_mode": loadgen.get("request_rate_mode"),
        "input_tokens_mean": as_object(prompt.get("input_tokens")).get("mean"),
        "output_tokens_mean": as_object(prompt.get("output_tokens")).get("mean"),
    }
    return conds


def _phase_conditions(config: JsonObject) -> dict[str, Any]:
    """AIPerf 0.11 / 0.13's ``input_config`` (schema 1.3 / 1.4): ``models.items
    [].name``, ``endpoint.type`` / ``streaming``, ``datasets[].prompts.isl`` / ``osl`` and one
    entry a phase in ``phases``: ``{"name", "kind": "warmup" | "profiling", "type":
    "concurrency" | "poisson" | ..., "requests", "concurrency" | "rate"}``. The load is the
    profiling phase's (a warm-up phase is excluded from the results)."""
    endpoint = as_object(config.get("endpoint"))
    items = as_object(config.get("models")).get("items")
    first = as_object(items[0]) if isinstance(items, list) and items else {}
    datasets = config.get("datasets")
    prompts = as_object(as_object(datasets[0] if isinstance(datasets, list) and datasets else {})
                        .get("prompts"))  # fmt: skip
    phases = [as_object(p) for p in config["phases"]]
    profiling = _profiling_phase(phases)
    return {
        "model": first.get("name"),
        "endpoint_type": endpoint.get("type"),
        "streaming": endpoint.get("streaming"),
        "concurrency": profiling.get("concurrency"),
        "request_rate": profiling.get("rate"),
        "request_rate_mode": profiling.get("type") if profiling.get("rate") is not None else None,
        "input_tokens_mean": as_object(prompts.get("isl")).get("mean"),
        "output_tokens_mean": as_object(prompts.get("osl")).get("mean"),
    }


def _profiling_phase(phases: list[JsonObject]) -> JsonObject:
    """The measured phase: AIPerf 0.13 marks it ``"kind": "profiling"``; AIPerf 0.11 (schema 1.3)
    writes no ``kind`` and names it ``"name": "profiling"``, with ``"exclude_from_results":
    false`` (a warm-up phase is ``true``)."""
    for key in ("kind", "name"):
        found = [p for p in phases if p.get(key) == AIPERF_PROFILING_PHASE]
        if found:
            return found[0]
    measured = [p for p in phases if p.get("exclude_from_results") is False]
    return measured[0] if len(measured) == 1 else {}


def _label(conditions: dict[str, Any]) -> str | None:
    if conditions.get("concurrency") is not None:
        return f"concurrency={conditions['concurrency']}"
    if conditions.get("request_rate") is not None:
        return f"rate={conditions['request_rate']} req/s"
    return None
