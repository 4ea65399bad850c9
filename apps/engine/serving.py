"""LLM serving (realtime, batch, evaluation): memory fit, latency, throughput, capacity."""

from __future__ import annotations

import math
from collections.abc import Mapping

from apps.engine import constants as c
from apps.engine.memory import ServingMemory, breakdown, serving_memory
from apps.engine.performance import ServingModel, serving_model
from apps.engine.precision import compute_path
from apps.engine.types import (
    CapacityPlan,
    Estimate,
    EstimateRequest,
    GpuSpec,
    Performance,
    WorkloadType,
)


def _latency(sm: ServingModel, req: EstimateRequest, conc: int) -> tuple[float, float, float]:
    """(ttft_s, itl_s, e2e_s) at p95 request shapes with `conc` sequences in flight.

    ITL is the mean decode-step time at the p95 context, including the prompt tokens that chunked
    prefill mixes into each step (conc x in_p50 / out_p50 per step).  TTFT is the p95 prompt's
    prefill plus one in-flight step when other sequences are running; queueing for a prefill slot
    is not modelled.
    """
    ctx = req.input_tokens_p95 + req.output_tokens_p95
    mixed = conc * req.input_tokens_p50 / max(req.output_tokens_p50, 1)
    itl = sm.step(
        decode_seqs=conc,
        context=ctx,
        prefill_tokens=mixed,
        prefill_context=req.input_tokens_p50 / 2,
    ).seconds
    ttft = sm.prefill(req.input_tokens_p95).seconds
    if conc > 1:
        ttft += sm.step(decode_seqs=conc - 1, context=ctx).seconds
    return ttft, itl, ttft + req.output_tokens_p95 * itl


def _meets(req: EstimateRequest, ttft: float, itl: float, e2e: float) -> bool:
    return (
        (req.ttft_p95_ms is None or ttft * 1e3 <= req.ttft_p95_ms)
        and (req.itl_p95_ms is None or itl * 1e3 <= req.itl_p95_ms)
        and (req.e2e_p95_s is None or e2e <= req.e2e_p95_s)
    )


def _capacity(
    sm: ServingModel, req: EstimateRequest, gpu_count: int, mem_max: int, conc: int
) -> CapacityPlan:
    hi = max(1, min(mem_max, c.BATCH_INFERENCE_MAX_CONCURRENCY * 64))
    if mem_max < 1:
        return CapacityPlan(
            max_concurrency_at_target=0, replicas=None, gpus_total=None, gpu_hours_per_month=None
        )
    if req.has_latency_target:
        if not _meets(req, *_latency(sm, req, 1)):
            return CapacityPlan(
                max_concurrency_at_target=0,
                replicas=None,
                gpus_total=None,
                gpu_hours_per_month=None,
            )
        lo = 1
        while lo < hi:  # largest concurrency meeting the target; ~20 steps
            mid = (lo + hi + 1) // 2
            if _meets(req, *_latency(sm, req, mid)):
                lo = mid
            else:
                hi = mid - 1
        best = lo
    else:
        best = min(hi, c.BATCH_INFERENCE_MAX_CONCURRENCY)
    if req.requests_per_second is not None:
        e2e = _latency(sm, req, best)[2]
        demand = req.requests_per_second * e2e  # Little's law: requests in flight
    elif req.concurrency is not None:
        demand = float(req.concurrency)
    else:
        demand = float(min(conc, best))
    replicas = max(1, math.ceil(demand / best - 1e-9))
    gpus_total = replicas * gpu_count
    return CapacityPlan(
        max_concurrency_at_target=best,
        replicas=replicas,
        gpus_total=gpus_total,
        gpu_hours_per_month=gpus_total * req.hours_per_month,
    )


def estimate_serving(
    req: EstimateRequest,
    gpu: GpuSpec,
    gpu_count: int,
    calibration: Mapping[str, float],
) -> Estimate:
    model = req.model
    notes: list[str] = []
    path = compute_path(gpu, req.weight_precision)
    if path.note:
        notes.append(path.note)
    ctx_p95 = req.input_tokens_p95 + req.output_tokens_p95
    if ctx_p95 > model.max_context_tokens:
        notes.append(
            f"p95 context {ctx_p95} tokens exceeds the model's "
            f"{model.max_context_tokens}-token window"
        )
    explicit_conc = req.concurrency
    chunk = min(c.SERVING_PREFILL_CHUNK_TOKENS, max(req.input_tokens_p95, 1) * (explicit_conc or 1))
    mem: ServingMemory = serving_memory(
        model,
        gpu,
        gpu_count,
        weight_precision=req.weight_precision,
        kv_precision=req.kv_cache_precision,
        chunk_tokens=max(chunk, 1),
    )
    logits_per_seq = model.vocab_size * c.LOGITS_BYTES
    free = max(mem.free_for_kv(), 0.0)
    per_seq = ctx_p95 * mem.kv_per_token_per_gpu + logits_per_seq
    mem_max = int(min(free / per_seq, c.MAX_REPORTED_CONCURRENCY))
    if explicit_conc is not None:
        conc = explicit_conc
    elif req.workload_type is WorkloadType.REALTIME_INFERENCE:
        conc = 1
    else:
        conc = max(1, min(mem_max, c.BATCH_INFERENCE_MAX_CONCURRENCY))
        notes.append(
            f"batch chosen as the largest that fits (capped at "
            f"{c.BATCH_INFERENCE_MAX_CONCURRENCY}): {conc}"
        )
    kv_used = conc * ctx_p95 * mem.kv_per_token_per_gpu
    logits = conc * logits_per_seq
    used = mem.fixed_per_gpu + kv_used + logits
    fits = used <= mem.usable_per_gpu
    kv_room = max(free - logits, 0.0) / max(conc, 1)
    max_ctx = int(min(kv_room / max(mem.kv_per_token_per_gpu, 1e-9), model.max_context_tokens))

    sm = serving_model(
        model,
        gpu,
        gpu_count,
        weight_precision=req.weight_precision,
        kv_precision=req.kv_cache_precision,
        path=path,
        bw_scale=calibration.get("decode_bw_efficiency", 1.0),
        mfu_scale=calibration.get("prefill_mfu", 1.0),
    )
    ttft, itl, e2e = _latency(sm, req, conc)
    # Throughput at the median shapes: each step decodes `conc` tokens and carries the prompt
    # tokens of the requests that replace finished ones (conc x in_p50 / out_p50).
    out50 = max(req.output_tokens_p50, 1)
    mean_step = sm.step(
        decode_seqs=conc,
        context=req.input_tokens_p50 + out50 / 2,
        prefill_tokens=conc * req.input_tokens_p50 / out50,
        prefill_context=req.input_tokens_p50 / 2,
    )
    tok_s = conc / mean_step.seconds
    meets = _meets(req, ttft, itl, e2e) if req.has_latency_target else None
    if not fits:
        notes.append(
            "does not fit: weights + KV cache at p95 context exceed "
            f"{c.USABLE_MEMORY_FRACTION:.0%} of GPU memory"
        )
    notes.append(
        "performance: roofline estimate (prefill compute-bound, decode bandwidth-bound, "
        "tensor-parallel all-reduce); latencies at p95 shapes, throughput at p50 shapes"
    )
    memory = breakdown(
        gpu_count=gpu_count,
        capacity_per_gpu=mem.capacity_per_gpu,
        weights=mem.weights_per_gpu,
        kv_cache=kv_used,
        activations=mem.activations_per_gpu + logits,
        overhead=mem.overhead_per_gpu,
    )
    return Estimate(
        gpu=gpu.slug,
        gpu_count=gpu_count,
        fits=fits,
        memory=memory,
        max_concurrency=max(mem_max, 0),
        max_context_tokens=max(max_ctx, 0),
        performance=Performance(
            output_tokens_per_s=tok_s,
            output_tokens_per_s_per_gpu=tok_s / gpu_count,
            ttft_ms=ttft * 1e3,
            itl_ms=itl * 1e3,
            e2e_latency_s=e2e,
            bound=mean_step.bound,
        ),
        meets_latency_target=meets,
        capacity=_capacity(sm, req, gpu_count, mem_max, conc),
        training=None,
        notes=tuple(notes),
    )
