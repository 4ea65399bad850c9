"""The engine's answer for a brief, typed (``apps.finance.state.EngineAnswer``): every catalog
GPU at every size it could be deployed at, calibrated by the brief's benchmark runs of its model,
measured where a run exists. Built once per change of what it depends on (``answer_key``) and
kept with the table; prices are not in it.

The engine's request and the brief's monthly demand are built in apps.briefs.contract.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace

from apps.benchmarks.models import BenchmarkRun
from apps.benchmarks.selectors import run_replicas
from apps.briefs.models import WorkloadBrief
from apps.catalog.selectors import engine_estimates, gpu_specs
from apps.engine import ENGINE_VERSION, Estimate, EstimateRequest, GpuSpec
from apps.engine.constants import AUTO_GPU_COUNTS, AUTO_GPU_COUNTS_LARGE_DOMAIN
from apps.engine.measured import LatencyTargets, Measurement, apply_measurement

from .state import STATE_FORMAT, EngineAnswer, GpuAnswer

# The calibration of a brief's estimates (apps.benchmarks.selectors.calibration_for_brief): per
# GPU slug, the engine factors learnt from runs of the brief's model, and the runs.
Calibration = Mapping[str, Mapping[str, object]]

# Every size the engine tries for one replica (apps.engine.estimator.candidate_counts).
LADDER_COUNTS = (*AUTO_GPU_COUNTS, *AUTO_GPU_COUNTS_LARGE_DOMAIN)


def answer_key(
    request: EstimateRequest | None, calibration: object, specs: Sequence[GpuSpec] | None = None
) -> str:
    """What the engine's answer depends on: the brief's engine request (its repr: every field
    of the frozen dataclasses, in order), the catalog, the calibration learnt from benchmark
    runs, the engine version and this state's format. Prices are not in it."""
    catalog = [
        (s.slug, s.memory_gb, s.bf16_tflops, s.memory_bandwidth_tbps)
        for s in (specs if specs is not None else gpu_specs())
    ]
    blob = json.dumps(
        [repr(request), catalog, calibration, ENGINE_VERSION, STATE_FORMAT],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def _percentile(figure: object, *names: str) -> float | None:
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
    replicas = run_replicas(run.conditions)
    if replicas > 1 and isinstance(throughput, int | float):
        throughput = throughput / replicas  # a file's rate is over all its replicas
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


def _run_ids(factors: Mapping[str, object] | None) -> tuple[int, ...]:
    found = (factors or {}).get("run_ids")
    if not isinstance(found, list | tuple):
        return ()
    return tuple(int(pk) for pk in found if isinstance(pk, int))


def _needs(pick: Estimate, count: int, limit: int) -> bool:
    """Whether a GPU's ladder needs the size ``count`` besides the engine's pick: the sizes
    below it (quotes offering fewer GPUs, or fewer GPUs in all over more replicas), and those
    above it when the pick cannot meet the brief on its own or needs more than one replica."""
    if count > limit or count == pick.gpu_count:
        return False
    replicas = pick.capacity.replicas if pick.capacity is not None else None
    alone = pick.fits and pick.meets_latency_target is not False and (replicas or 1) <= 1
    return count < pick.gpu_count or not alone


def engine_answer(
    *,
    request: EstimateRequest,
    brief: WorkloadBrief,
    calibration: Calibration,
    runs: Mapping[tuple[str, int], BenchmarkRun],
    key: str,
) -> EngineAnswer:
    """The engine's answer for ``brief``: its pick per GPU, each GPU's ladder (one engine call
    per size for every GPU that needs it, not one per GPU and size), and the current
    THROUGHPUT_LATENCY run of a GPU laid over its rung at the run's GPU count (raises
    EngineInputError)."""
    specs = gpu_specs()
    picks = engine_estimates(request, calibration=calibration, specs=specs)
    limits = {spec.slug: spec.max_gpus_per_node for spec in specs}
    ladders: dict[str, dict[int, Estimate]] = {e.gpu: {e.gpu_count: e} for e in picks}
    by_gpu = {e.gpu: e for e in picks}
    for count in LADDER_COUNTS:
        slugs = tuple(s for s, e in by_gpu.items() if _needs(e, count, limits.get(s, 1)))
        if not slugs:
            continue
        forced = replace(request, gpus=slugs, gpu_count=count)
        for rung in engine_estimates(forced, calibration=calibration, specs=specs):
            ladders[rung.gpu][count] = replace(rung, notes=())  # the pick keeps the notes
    measured: dict[str, tuple[Measurement, int]] = {}
    targets = latency_targets(brief)
    for (slug, count), run in sorted(runs.items(), key=lambda item: item[1].pk):
        if slug not in ladders:
            continue
        base = ladders[slug].get(count)
        if base is None:
            forced = replace(request, gpus=(slug,), gpu_count=count)
            base = engine_estimates(forced, calibration=calibration, specs=specs)[0]
        measurement = measurement_of(run)
        ladders[slug][count] = apply_measurement(base, measurement, targets)
        measured[slug] = (measurement, count)
    answers = []
    for pick in picks:
        found = measured.get(pick.gpu)
        answers.append(
            GpuAnswer(
                gpu=pick.gpu,
                pick=pick.gpu_count,
                ladder=tuple(ladders[pick.gpu][n] for n in sorted(ladders[pick.gpu])),
                measurement=found[0] if found else None,
                measured_count=found[1] if found else None,
                calibrated_from=_run_ids(calibration.get(pick.gpu)),
            )
        )
    return EngineAnswer(key=key, gpus=tuple(answers))


def e2e_latencies_s(answer: EngineAnswer) -> list[float]:
    """The end-to-end latency of each GPU's pick that fits (the demand of a brief given as
    concurrency is its concurrency over their median: apps.briefs.contract.demand_for_brief)."""
    out = []
    for gpu in answer.gpus:
        pick = gpu.chosen
        if pick.fits and pick.performance.e2e_latency_s:
            out.append(pick.performance.e2e_latency_s)
    return out
