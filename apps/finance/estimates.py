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
from apps.catalog.selectors import engine_estimates, estimate_json, gpu_specs
from apps.engine import ENGINE_VERSION, Estimate, EstimateRequest
from apps.engine.costing import (
    Basis,
    CapacityFigures,
)
from apps.engine.measured import LatencyTargets, Measurement, apply_measurement


def _d(value: Any) -> Decimal | None:
    return None if value is None else Decimal(str(value))


def estimates_key(request: EstimateRequest | None, calibration: dict[str, Any]) -> str:
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


# A run's tail figure: its p95, else the nearest tail it reported, else its typical figure.
TAIL = ("p95", "p99", "p90", "mean", "p50")


def measurement_of(run: BenchmarkRun) -> Measurement:
    """A THROUGHPUT_LATENCY run's canonical results (apps.benchmarks.importers) as the engine
    takes them."""
    results = run.results
    throughput = results.get("output_tokens_per_s")
    completed, failed = results.get("completed") or 0, results.get("failed") or 0
    version = f" {run.tool_version}" if run.tool_version else ""
    return Measurement(
        run_id=run.pk,
        source=f"{run.get_tool_display()}{version}",
        output_tokens_per_s=(
            float(throughput) if isinstance(throughput, int | float) and throughput > 0 else None
        ),
        ttft_ms=_percentile(results.get("ttft_ms"), *TAIL),
        itl_ms=_percentile(results.get("tpot_ms"), *TAIL),
        e2e_latency_ms=_percentile(results.get("e2e_latency_ms"), *TAIL),
        failed_share=failed / (completed + failed) if completed + failed > 0 else None,
    )


def latency_targets(brief: WorkloadBrief) -> LatencyTargets:
    return LatencyTargets(
        ttft_ms=brief.ttft_target_ms, itl_ms=brief.itl_target_ms, e2e_ms=brief.e2e_target_ms
    )


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
    estimates: list[Estimate],
    runs: dict[tuple[str, int], BenchmarkRun],
    brief: WorkloadBrief,
    calibration: dict[str, Any],
) -> list[dict[str, Any]]:
    """Replace the estimate of every GPU that has a current THROUGHPUT_LATENCY run (at the
    run's GPU count, which may differ from the engine's pick) by the engine's measured overlay
    (apps.engine.measured); typed until here, then JSON, as the table stores it."""
    by_gpu: dict[str, tuple[Estimate, Measurement | None]] = {e.gpu: (e, None) for e in estimates}
    targets = latency_targets(brief)
    for (slug, count), run in sorted(runs.items(), key=lambda item: item[1].pk):
        if slug not in by_gpu:
            continue
        base = by_gpu[slug][0]
        if base.gpu_count != count:
            forced = replace(request, gpus=(slug,), gpu_count=count)
            base = engine_estimates(forced, calibration=calibration)[0]
        measurement = measurement_of(run)
        by_gpu[slug] = (apply_measurement(base, measurement, targets), measurement)
    out: list[dict[str, Any]] = []
    for e in estimates:
        found, measured = by_gpu[e.gpu]
        answer = estimate_json(found, calibration)
        if measured is not None:
            answer["benchmark_run_id"] = measured.run_id
            if measured.failed_share is not None:
                answer["measured_failed_share"] = measured.failed_share
        out.append(answer)
    return out


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
        batch_per_replica=batch_of(estimate),
    )


def batch_of(estimate: dict[str, Any]) -> int | None:
    """Sequences in flight on a replica at full load: the most that meet the latency target,
    else the most that fit (the energy model's batch; None for training and media)."""
    capacity = estimate.get("capacity") or {}
    for found in (capacity.get("max_concurrency_at_target"), estimate.get("max_concurrency")):
        if isinstance(found, int) and found > 0:
            return found
    return None
