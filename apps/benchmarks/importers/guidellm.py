"""GuideLLM ``benchmarks.json`` (``GenerativeBenchmarksReport``): one canonical run
per entry of ``benchmarks``.

Two schemas (vllm-project/guidellm):

* 0.2.x: ``{"benchmarks": [...]}``; each benchmark has ``args.strategy``,
  ``worker.backend_model``, ``request_totals``, ``start_time``/``end_time``/``duration``
  and ``metrics.<name>.{successful,errored,incomplete,total}`` distributions
  (src/guidellm/benchmark/benchmark.py, utils/statistics.py).
* 0.3/0.4+: ``{"args": {...}, "benchmarks": [...]}`` with ``config.strategy``,
  ``scheduler_metrics`` and ``metrics.request_totals``
  (src/guidellm/benchmark/schemas/generative/{benchmark,metrics,report}.py); from
  0.5 (PR #497) a ``metadata`` block carries ``version`` and ``guidellm_version``.

Traps: ``inter_token_latency_ms`` is (last_token - first_token) / (output_tokens - 1),
first token EXCLUDED -> ``tpot_ms`` (it is a per-request average, not a chunk gap,
so ``itl_ms`` stays absent). ``time_per_output_token_ms`` INCLUDES the first token
(0.4+: (last_token - request_start) / output_tokens) and is never used for tpot.
``request_latency`` is in SECONDS (converted to ms). Only the ``successful``
distribution of each metric is used.
"""

from __future__ import annotations

from typing import Any

from .common import (
    GUIDELLM,
    CanonicalRun,
    ImportFormatError,
    JsonObject,
    RunBuilder,
    as_object,
    count,
    number,
)

_PCTS = ("p90", "p95", "p99")


def looks_like(data: dict[str, Any]) -> bool:
    """True for a GuideLLM report: a list of benchmarks that carry ``metrics``."""
    benchmarks = data.get("benchmarks")
    if not isinstance(benchmarks, list) or not benchmarks:
        return False
    first = benchmarks[0]
    return isinstance(first, dict) and isinstance(first.get("metrics"), dict)


def parse(data: object) -> list[CanonicalRun]:
    if not isinstance(data, dict):
        raise ImportFormatError("not a GuideLLM report: expected a JSON object")
    benchmarks = data.get("benchmarks")
    if not isinstance(benchmarks, list):
        raise ImportFormatError("not a GuideLLM report: no 'benchmarks' list")
    if not benchmarks:
        raise ImportFormatError("GuideLLM report holds no benchmarks")
    metadata = as_object(data.get("metadata"))
    version = metadata.get("guidellm_version")
    report_args = as_object(data.get("args"))
    runs = []
    for index, bench in enumerate(benchmarks):
        if not isinstance(bench, dict):
            raise ImportFormatError(f"GuideLLM benchmark #{index} is not a JSON object")
        runs.append(
            _parse_benchmark(
                bench,
                index,
                version if isinstance(version, str) else None,
                report_args,
                metadata,
            )
        )
    return runs


def _dist(metrics: JsonObject, name: str, index: int) -> JsonObject:
    """The ``successful`` distribution of ``metrics[name]`` (empty if absent)."""
    summary = metrics.get(name)
    if summary is None:
        return {}
    if not isinstance(summary, dict):
        raise ImportFormatError(f"benchmark #{index}: metrics.{name} is not an object")
    return as_object(summary.get("successful"))


def _latency(
    b: RunBuilder,
    canon: str,
    metrics: JsonObject,
    name: str,
    index: int,
    scale: float,
    unit: str,
) -> None:
    dist = _dist(metrics, name, index)
    what = f"benchmark #{index} {name}.successful"
    conv = f"{unit}, x{scale:g}" if scale != 1.0 else unit
    mean = number(dist, "mean", f"{what}.mean")
    b.stat(
        canon, "mean", None if mean is None else mean * scale, f"{name}.successful.mean ({conv})"
    )
    pcts = as_object(dist.get("percentiles"))
    p50 = number(pcts, "p50", f"{what}.percentiles.p50")
    p50_src = f"{name}.successful.percentiles.p50 ({conv})"
    if p50 is None:
        p50 = number(dist, "median", f"{what}.median")
        p50_src = f"{name}.successful.median ({conv})"
    b.stat(canon, "p50", None if p50 is None else p50 * scale, p50_src)
    for pct in _PCTS:
        value = number(pcts, pct, f"{what}.percentiles.{pct}")
        b.stat(
            canon,
            pct,
            None if value is None else value * scale,
            f"{name}.successful.percentiles.{pct} ({conv})",
        )


def _strategy_label(strategy: JsonObject) -> tuple[str | None, dict[str, Any]]:
    kind = strategy.get("type_")
    if not isinstance(kind, str):
        return None, {}
    conds: dict[str, Any] = {"strategy": kind}
    label = kind
    if kind == "concurrent" and "streams" in strategy:
        conds["concurrency"] = strategy["streams"]
        label = f"concurrent@{strategy['streams']}"
    elif kind in ("constant", "poisson") and "rate" in strategy:
        conds["request_rate"] = strategy["rate"]
        label = f"{kind}@{strategy['rate']} req/s"
    elif kind == "throughput" and strategy.get("max_concurrency") is not None:
        conds["max_concurrency"] = strategy["max_concurrency"]
    elif kind == "synchronous":
        conds["concurrency"] = 1
    return label, conds


def _parse_benchmark(
    bench: JsonObject,
    index: int,
    version: str | None,
    report_args: JsonObject,
    metadata: JsonObject,
) -> CanonicalRun:
    metrics = as_object(bench.get("metrics"))
    b = RunBuilder(GUIDELLM)
    _latency(b, "ttft_ms", metrics, "time_to_first_token_ms", index, 1.0, "ms")
    _latency(
        b, "tpot_ms", metrics, "inter_token_latency_ms", index, 1.0, "ms; first token excluded"
    )
    _latency(b, "e2e_latency_ms", metrics, "request_latency", index, 1000.0, "s")
    b.note(
        "time_per_output_token_ms",
        "not used: includes the first token (TTFT); tpot_ms comes from inter_token_latency_ms",
    )
    b.note("itl_ms", "absent: GuideLLM reports per-request averages, not chunk gaps")

    w = f"benchmark #{index}"
    for canon, name, unit in (
        ("request_throughput_rps", "requests_per_second", "req/s"),
        ("output_tokens_per_s", "output_tokens_per_second", "tok/s"),
        ("total_tokens_per_s", "tokens_per_second", "tok/s"),
        ("input_tokens_mean", "prompt_token_count", "tokens"),
        ("output_tokens_mean", "output_token_count", "tokens"),
    ):
        dist = _dist(metrics, name, index)
        b.scalar(
            canon,
            number(dist, "mean", f"{w} {name}.successful.mean"),
            f"{name}.successful.mean ({unit})",
        )

    totals_src = "metrics.request_totals"
    totals = metrics.get("request_totals")
    if not isinstance(totals, dict):
        totals, totals_src = bench.get("request_totals"), "request_totals"
    totals = as_object(totals)
    b.scalar(
        "completed",
        count(totals, "successful", f"{w} {totals_src}.successful"),
        f"{totals_src}.successful",
    )
    b.scalar(
        "failed", count(totals, "errored", f"{w} {totals_src}.errored"), f"{totals_src}.errored"
    )
    goodput = metrics.get("request_goodput")
    if isinstance(goodput, int | float) and not isinstance(goodput, bool):
        b.scalar(
            "goodput_rps",
            number(metrics, "request_goodput", f"{w} request_goodput"),
            "metrics.request_goodput (req/s)",
        )

    duration = number(bench, "duration", f"{w} duration")
    if duration is not None:
        b.scalar("duration_s", duration, "duration (s)")
    else:
        sched = as_object(bench.get("scheduler_metrics"))
        start = number(sched, "measure_start_time", f"{w} measure_start_time")
        end = number(sched, "measure_end_time", f"{w} measure_end_time")
        if start is not None and end is not None and end >= start:
            b.scalar(
                "duration_s",
                end - start,
                "derived scheduler_metrics.measure_end_time - measure_start_time (s)",
            )

    config = as_object(bench.get("config"))
    old_args = as_object(bench.get("args"))
    strategy = as_object(config.get("strategy") or old_args.get("strategy"))
    label, conditions = _strategy_label(strategy)
    worker = as_object(bench.get("worker"))
    backend = as_object(config.get("backend"))
    model = report_args.get("model") or backend.get("model") or worker.get("backend_model")
    conditions["model"] = model
    conditions["backend"] = (
        report_args.get("backend")
        or backend.get("type_")
        or backend.get("kind")  # GuideLLM 0.8 (BackendArgs.kind)
        or worker.get("backend_type")
    )
    conditions["target"] = (
        report_args.get("target") or backend.get("target") or worker.get("backend_target")
    )
    conditions["data"] = report_args.get("data") or as_object(bench.get("request_loader")).get(
        "data"
    )
    conditions["incomplete_requests"] = totals.get("incomplete")
    if "version" in metadata:
        conditions["report_schema_version"] = metadata["version"]
    return b.build(tool_version=version, conditions=conditions, label=label)
