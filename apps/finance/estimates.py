"""The engine's answer for a brief as the finance code uses it: estimates (calibrated by
benchmark runs, measured where a run exists) and the capacity figures the costing takes. The
engine's request and the brief's monthly demand are built in apps.briefs.contract."""

import hashlib
import json
from dataclasses import replace
from decimal import Decimal
from typing import Any

from apps.benchmarks.models import BenchmarkRun
from apps.briefs.models import WorkloadBrief
from apps.catalog.selectors import estimates_for_request, gpu_specs
from apps.engine import ENGINE_VERSION, EstimateRequest
from apps.engine.costing import (
    Basis,
    CapacityFigures,
)


def _d(value: Any) -> Decimal | None:
    return None if value is None else Decimal(str(value))


def estimates_key(request: EstimateRequest, calibration: dict[str, Any]) -> str:
    """What the engine's answer depends on: the brief's engine request (its repr: every field
    of the frozen dataclasses, in order), the catalog, the calibration learnt from benchmark
    runs and the engine version. Prices are not in it."""
    catalog = [(s.slug, s.memory_gb, s.bf16_tflops, s.memory_bandwidth_tbps) for s in gpu_specs()]
    blob = json.dumps(
        [repr(request), catalog, calibration, ENGINE_VERSION], sort_keys=True, default=str
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def _percentile(figure: Any, *names: str) -> float | None:
    if not isinstance(figure, dict):
        return None
    for name in names:
        value = figure.get(name)
        if isinstance(value, int | float) and value > 0:
            return float(value)
    return None


def measured_estimate(
    estimate: dict[str, Any], run: BenchmarkRun, brief: WorkloadBrief
) -> dict[str, Any]:
    """The engine's answer for a candidate with a THROUGHPUT_LATENCY run's figures in place
    of the estimated ones (memory fit and replicas stay the engine's)."""
    results = run.results
    measured = {**estimate, "performance": {**estimate["performance"]}, "basis": "MEASURED"}
    perf = measured["performance"]
    throughput = results.get("output_tokens_per_s")
    if isinstance(throughput, int | float) and throughput > 0:
        perf["output_tokens_per_s"] = float(throughput)
    ttft = _percentile(results.get("ttft_ms"), "p95", "p99", "p90", "mean", "p50")
    tpot = _percentile(results.get("tpot_ms"), "p95", "p99", "p90", "mean", "p50")
    e2e = _percentile(results.get("e2e_latency_ms"), "p95", "p99", "p90", "mean", "p50")
    if ttft is not None:
        perf["ttft_ms"] = ttft
    if tpot is not None:
        perf["itl_ms"] = tpot
    if e2e is not None:
        perf["e2e_latency_s"] = e2e / 1000
    checks = []
    if brief.ttft_target_ms and ttft is not None:
        checks.append(ttft <= brief.ttft_target_ms)
    if brief.itl_target_ms and tpot is not None:
        checks.append(tpot <= brief.itl_target_ms)
    if brief.e2e_target_ms and e2e is not None:
        checks.append(e2e <= brief.e2e_target_ms)
    if checks:
        measured["meets_latency_target"] = all(checks)
    completed, failed = results.get("completed") or 0, results.get("failed") or 0
    if completed + failed > 0:
        measured["measured_failed_share"] = failed / (completed + failed)
    measured["notes"] = [
        *estimate["notes"],
        f"MEASURED: benchmark run #{run.pk} ({run.get_tool_display()}"
        f"{' ' + run.tool_version if run.tool_version else ''}) replaces the estimate",
    ]
    measured["benchmark_run_id"] = run.pk
    return measured


def e2e_latencies_s(estimates: list[dict[str, Any]]) -> list[float]:
    """The end-to-end latency of each GPU that fits (the demand of a brief given as
    concurrency is its concurrency over their median: apps.briefs.contract.demand_for_brief)."""
    return [
        e["performance"]["e2e_latency_s"]
        for e in estimates
        if e["fits"] and e["performance"].get("e2e_latency_s")
    ]


def with_measurements(
    request: EstimateRequest,
    estimates: list[dict[str, Any]],
    runs: dict[tuple[str, int], BenchmarkRun],
    brief: WorkloadBrief,
    calibration: dict[str, Any],
) -> list[dict[str, Any]]:
    """Replace the estimate of every GPU that has a current THROUGHPUT_LATENCY run (at the
    run's GPU count, which may differ from the engine's pick)."""
    by_gpu = {e["gpu"]: e for e in estimates}
    for (slug, count), run in sorted(runs.items(), key=lambda item: item[1].pk):
        base = by_gpu.get(slug)
        if base is None:
            continue
        if base["gpu_count"] != count:
            forced = replace(request, gpus=(slug,), gpu_count=count)
            base = estimates_for_request(forced, calibration=calibration)[0]
        by_gpu[slug] = measured_estimate(base, run, brief)
    return [by_gpu[e["gpu"]] for e in estimates]


def capacity_from_estimate(estimate: dict[str, Any]) -> CapacityFigures:
    perf = estimate["performance"]
    capacity = estimate.get("capacity") or {}
    training = estimate.get("training") or {}
    gpu_count = estimate["gpu_count"]
    replicas = capacity.get("replicas") or 1
    e2e = perf.get("e2e_latency_s")
    items = perf.get("images_per_hour") or perf.get("clips_per_hour")
    return CapacityFigures(
        gpu_count=gpu_count,
        replicas=replicas,
        gpu_hours_per_month=_d(capacity.get("gpu_hours_per_month")) or Decimal(0),
        fits=estimate["fits"],
        output_tokens_per_s_per_replica=_d(perf.get("output_tokens_per_s")),
        p95_latency_ms=_d(e2e * 1000) if e2e is not None else None,
        meets_latency_target=estimate.get("meets_latency_target"),
        memory_headroom_gb=_d(estimate["memory"]["headroom_gb"]),
        basis=Basis(estimate.get("basis", "ESTIMATED")),
        time_to_train_hours=_d(training.get("time_to_train_hours")),
        checkpoint_write_s=_d(training.get("checkpoint_write_s")),
        gpus_total=gpu_count * replicas if training else None,
        items_per_hour_per_replica=_d(items),
        records_per_s_per_replica=_d(perf.get("records_per_s")),
        measured_failed_share=_d(estimate.get("measured_failed_share")),
    )
