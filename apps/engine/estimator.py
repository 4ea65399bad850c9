"""Entry points: one evaluation (`estimate_at`) and the per-GPU answer (`estimate`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache

from apps.engine import constants as c
from apps.engine.performance import model_coefficients
from apps.engine.precision import unsupported_precision
from apps.engine.serving import clear_serving_caches, estimate_serving, layout_problem
from apps.engine.types import (
    LLM_SERVING_TYPES,
    MEDIA_TYPES,
    TRAINING_TYPES,
    EngineInputError,
    Estimate,
    EstimateRequest,
    Fit,
    GpuSpec,
    Layout,
    WorkloadType,
)
from apps.engine.workloads import (
    clear_workload_caches,
    estimate_embeddings,
    estimate_media,
    estimate_training,
)

_NO_CALIBRATION: Mapping[str, float] = {}


def estimate_at(
    request: EstimateRequest,
    gpu: GpuSpec,
    gpu_count: int,
    calibration: Mapping[str, float] | None = None,
    *,
    layout: Layout | None = None,
    data_parallel: bool = True,
) -> Estimate:
    """Evaluate `request` on `gpu_count` x `gpu`.

    `calibration` multiplies efficiency factors by name: decode_bw_efficiency, prefill_mfu,
    training_mfu (1.0 = the documented constants). Serving picks the best parallel layout for
    the count (serving.estimate_serving) unless `layout` forces one (its GPUs = gpu_count);
    `data_parallel` False keeps to one engine over all `gpu_count` GPUs (no DPn x ... layouts).
    """
    cal = calibration or _NO_CALIBRATION
    wt = request.workload_type
    if wt in LLM_SERVING_TYPES:
        if layout is None and request.layout is not None and request.layout.gpus == gpu_count:
            layout = request.layout
        e = estimate_serving(request, gpu, gpu_count, cal, layout, data_parallel=data_parallel)
    elif wt in TRAINING_TYPES:
        e = estimate_training(request, gpu, gpu_count, cal)
    elif wt in MEDIA_TYPES:
        e = estimate_media(request, gpu, gpu_count, cal)
    else:
        assert wt is WorkloadType.EMBEDDINGS  # noqa: S101 - exhaustive dispatch
        e = estimate_embeddings(request, gpu, gpu_count, cal)
    refused = unsupported_precision(gpu, request.weight_precision)
    if refused is None:
        return e
    # Not deployable as asked: fit NO, with the reason in place of memory advice (the figures
    # stay, as for any estimate that does not fit).
    return replace(e, fits=False, fit=Fit.NO, fit_advice=refused, notes=(refused, *e.notes))


def candidate_counts(gpu: GpuSpec) -> tuple[int, ...]:
    """1, 2, 4, 8 within a node; 16, 32, 72 too for rack-scale NVLink domains (GB200 NVL72)."""
    return _counts_up_to(gpu.max_gpus_per_node)


def multi_node_counts(gpu: GpuSpec) -> tuple[int, ...]:
    """Whole nodes beyond one (AUTO_NODE_COUNTS x GPUs per node: 16 and 32 for 8-GPU nodes),
    tried only when the model fits no count within a node; none for rack-scale domains, whose
    candidate counts already reach 72."""
    per_node = gpu.max_gpus_per_node
    if per_node > max(c.AUTO_GPU_COUNTS):
        return ()
    return tuple(per_node * k for k in c.AUTO_NODE_COUNTS if per_node * k <= c.MAX_GPU_COUNT)


@lru_cache(maxsize=64)
def _counts_up_to(max_per_node: int) -> tuple[int, ...]:
    counts = [n for n in c.AUTO_GPU_COUNTS if n <= max_per_node]
    if max_per_node > max(c.AUTO_GPU_COUNTS):
        counts += [n for n in c.AUTO_GPU_COUNTS_LARGE_DOMAIN if n <= max_per_node]
    return tuple(counts) or (1,)


def clear_caches() -> None:
    """Forget every memoised per-(model, GPU, count) value (benchmarks measure cold calls)."""
    _counts_up_to.cache_clear()
    clear_serving_caches()
    clear_workload_caches()
    model_coefficients.cache_clear()


def estimate(
    request: EstimateRequest,
    gpus: Sequence[GpuSpec],
    calibration: Mapping[str, float] | None = None,
) -> tuple[Estimate, ...]:
    """Per GPU: at `request.gpu_count` if forced, else the smallest candidate count that FITS
    (and, when a latency target is set, meets it); if none FITS, the smallest count that is
    TIGHT (fits only with more of the GPU, a smaller batch or a shorter context); if none fits at
    all, the largest count (fit NO, fits=False). Serving tries whole nodes beyond one
    (`multi_node_counts`) only when nothing within a node fits, FITS or TIGHT."""
    wanted = set(request.gpus) if request.gpus is not None else None
    out: list[Estimate] = []
    asked = request.layout if request.workload_type in LLM_SERVING_TYPES else None
    if asked is not None:
        problem = layout_problem(request.model, asked)
        if problem is not None:
            raise EngineInputError("layout", problem)
    for gpu in gpus:
        if wanted is not None and gpu.slug not in wanted:
            continue
        if asked is not None:
            e = estimate_at(request, gpu, asked.gpus, calibration, layout=asked)
            note = f"layout {e.layout} as the request asked (layout); no other layout was tried"
            out.append(replace(e, notes=(*e.notes, note)))
            continue
        if request.gpu_count is not None:
            out.append(estimate_at(request, gpu, request.gpu_count, calibration))
            continue
        if unsupported_precision(gpu, request.weight_precision) is not None:
            # No count helps: answered (refused, saying why) at the smallest.
            out.append(estimate_at(request, gpu, candidate_counts(gpu)[0], calibration))
            continue
        chosen: Estimate | None = None
        first_fit: Estimate | None = None
        first_tight: Estimate | None = None
        last: Estimate | None = None
        counts = candidate_counts(gpu)
        beyond = multi_node_counts(gpu) if request.workload_type in LLM_SERVING_TYPES else ()
        for n in (*counts, *beyond):
            if n not in counts and (first_fit is not None or first_tight is not None):
                break  # more nodes only for a model that fits no count within one node
            e = estimate_at(request, gpu, n, calibration)
            last = e
            if e.fit is not Fit.FITS:
                if first_tight is None and e.fit is Fit.TIGHT:
                    first_tight = e
                continue
            if first_fit is None:
                first_fit = e
            if e.meets_latency_target is not False:
                chosen = e
                break
        pick = chosen or first_fit or first_tight or last
        if pick is not None:
            out.append(pick)
    notes = request.model.notes
    if notes:  # how the model was read (pasted config's layers, checkpoint, dtype)
        return tuple(replace(e, notes=(*notes, *e.notes)) for e in out)
    return tuple(out)
