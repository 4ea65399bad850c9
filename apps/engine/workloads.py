"""Training / fine-tuning, embeddings and diffusion (image / video) estimates."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from apps.engine import constants as c
from apps.engine.memory import (
    TRAINING_HEADROOM_BYTES,
    breakdown,
    gpu_capacity_bytes,
    gpu_capacity_source,
    memory_fit,
    training_fit,
    training_memory,
    utilization_advice,
)
from apps.engine.performance import attention_flops_per_position, training_flops_per_token
from apps.engine.precision import compute_path, weight_bytes
from apps.engine.types import (
    BASIS_ESTIMATED,
    PAGED_OPTIMIZERS,
    Bound,
    CapacityPlan,
    Estimate,
    EstimateRequest,
    Fit,
    GpuSpec,
    MemoryBreakdown,
    Performance,
    Precision,
    Sharding,
    TrainingSpec,
    WorkloadType,
    fast_init,
    new_capacity_plan,
    new_estimate,
    new_memory_breakdown,
    new_performance,
    new_training_result,
)

_LORA = (WorkloadType.LORA_FINETUNE, WorkloadType.QLORA_FINETUNE)


def _training_rate(req: EstimateRequest, gpu: GpuSpec, notes: list[str]) -> tuple[float, float]:
    """(peak FLOP/s of the training compute path, MFU)."""
    mfu = c.TRAINING_MFU.get(gpu.architecture, 0.35)
    p = req.weight_precision
    if p is Precision.FP8 and gpu.fp8_tflops and gpu.architecture != "AMPERE":
        notes.append("FP8 training (Transformer Engine style): FP8 peak at reduced MFU")
        return gpu.fp8_tflops * 1e12, mfu * c.FP8_TRAINING_MFU_FACTOR
    if p is Precision.FP32:
        notes.append("FP32 training: TF32 tensor-core rate (half of BF16)")
        return gpu.bf16_tflops * 1e12 / 2, mfu
    if p not in (Precision.BF16, Precision.FP16) and req.workload_type not in _LORA:
        notes.append(f"{p} training is not a standard recipe: compute at BF16 rate")
    return gpu.bf16_tflops * 1e12, mfu


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class TrainingPlan:
    """What a training brief costs before the GPU and the data-parallel degree are known."""

    training: TrainingSpec
    lora: bool
    weights: float  # bytes before ZeRO-3/FSDP sharding
    gradients: float  # bytes before ZeRO-2/3/FSDP sharding
    optimizer: float  # bytes before any ZeRO sharding
    adapters: float  # bytes before any ZeRO sharding
    shard_weights: bool
    shard_gradients: bool
    shard_optimizer: bool
    activations: float  # per GPU
    overhead: float  # per GPU
    paged_optimizer: float  # bytes before any ZeRO sharding, in host-pageable memory
    flops_per_token: float
    checkpoint_bytes: float
    notes: tuple[str, ...]  # after the GPU's compute-path notes


_HEADROOM_NOTE = (
    "training memory: fits when everything counted plus "
    f"{c.TRAINING_ALLOCATOR_HEADROOM_GB_PER_GPU:g} GB of allocator headroom per GPU fits "
    "(no serving engine's GPU memory-utilization cap)"
)


def training_plan(req: EstimateRequest) -> TrainingPlan:
    model = req.model
    training = req.training or TrainingSpec(sequence_length=c.DEFAULT_TRAINING_SEQUENCE_LENGTH)
    # Undivided totals: training_memory at one GPU shards nothing.
    tm = training_memory(model, req.workload_type, training, 1, req.weight_precision)
    shard = training.sharding
    lora = req.workload_type in _LORA
    notes: list[str] = []
    if lora:
        per_param = (
            c.LORA_FLOPS_PER_PARAM_RECOMPUTE
            if training.activation_checkpointing
            else c.LORA_FLOPS_PER_PARAM
        )
        notes.append("LoRA: no weight gradients for the frozen base (4N FLOPs per token)")
    else:
        per_param = (
            c.TRAIN_FLOPS_PER_PARAM_RECOMPUTE
            if training.activation_checkpointing
            else c.TRAIN_FLOPS_PER_PARAM
        )
    if req.workload_type is WorkloadType.QLORA_FINETUNE:
        notes.append("QLoRA: NF4 base with double quantization; dequantization slows each pass")
    if training.activation_checkpointing:
        notes.append(
            "activation checkpointing: forward recomputed in backward (8N FLOPs per token)"
        )
    notes.append(_HEADROOM_NOTE)
    if training.optimizer in PAGED_OPTIMIZERS:
        notes.append(
            f"paged optimizer: {tm.paged_optimizer / c.GB:.1f} GB of optimizer states in CUDA "
            "unified memory, paged to host RAM when the GPU runs short (not counted on the GPU)"
        )
    if lora:
        precision = "BF16" if req.workload_type is WorkloadType.QLORA_FINETUNE else "FP32"
        notes.append(
            f"LoRA rank {training.lora_rank or c.DEFAULT_LORA_RANK}: "
            f"{tm.adapter_params / 1e6:.1f}M adapter parameters in {precision} "
            "(gradients and optimizer states for the adapters only; base frozen)"
        )
    return TrainingPlan(
        training=training,
        lora=lora,
        weights=tm.weights,
        gradients=tm.gradients,
        optimizer=tm.optimizer,
        adapters=tm.adapters,
        shard_weights=shard in (Sharding.ZERO3, Sharding.FSDP),
        shard_gradients=shard in (Sharding.ZERO2, Sharding.ZERO3, Sharding.FSDP),
        shard_optimizer=shard is not Sharding.NONE,
        activations=tm.activations,
        overhead=tm.overhead,
        paged_optimizer=tm.paged_optimizer,
        flops_per_token=training_flops_per_token(model, training.sequence_length, per_param),
        checkpoint_bytes=tm.checkpoint,
        notes=tuple(notes),
    )


# One plan per request object: a catalog estimate evaluates the same request ~20-70 times.
# Entries keep their request alive, so an id is never reused while its entry exists.
_PLANS: dict[int, tuple[EstimateRequest, TrainingPlan]] = {}
_PLANS_MAX = 256


def _plan_for(req: EstimateRequest) -> TrainingPlan:
    hit = _PLANS.get(id(req))
    if hit is not None and hit[0] is req:
        return hit[1]
    plan = training_plan(req)
    if len(_PLANS) >= _PLANS_MAX:
        _PLANS.clear()
    _PLANS[id(req)] = (req, plan)
    return plan


# The sharding as the note says it (a reader of the brief page or the API's notes).
_SHARDING_WORDS = {
    Sharding.NONE: "no",
    Sharding.ZERO1: "ZeRO-1",
    Sharding.ZERO2: "ZeRO-2",
    Sharding.ZERO3: "ZeRO-3",
    Sharding.FSDP: "FSDP",
}


@lru_cache(maxsize=1024)
def _parallelism_note(gpu_count: int, sharding: Sharding) -> str:
    words = _SHARDING_WORDS.get(sharding, str(sharding))
    return f"parallelism: data parallel over {gpu_count} GPU(s) with {words} sharding"


def clear_workload_caches() -> None:
    _PLANS.clear()
    _parallelism_note.cache_clear()


def estimate_training(
    req: EstimateRequest, gpu: GpuSpec, gpu_count: int, calibration: Mapping[str, float]
) -> Estimate:
    plan = _plan_for(req)
    training = plan.training
    notes: list[str] = [_parallelism_note(gpu_count, training.sharding)]
    # Per-GPU bytes under the brief's ZeRO stage / FSDP sharding (x / 1 is exact, so the
    # unsharded figures are the plan's own).
    weights = plan.weights / gpu_count if plan.shard_weights else plan.weights
    gradients = plan.gradients / gpu_count if plan.shard_gradients else plan.gradients
    optimizer = plan.optimizer / gpu_count if plan.shard_optimizer else plan.optimizer
    adapters = plan.adapters / gpu_count if plan.shard_weights else plan.adapters
    total = weights + gradients + optimizer + adapters + plan.activations + plan.overhead
    capacity = gpu_capacity_bytes(gpu)
    # Training's own rule (no serving memory fraction): FITS with the allocator headroom to
    # spare, TIGHT when only the headroom is eaten into or a smaller micro-batch fits.
    fit = training_fit(total, capacity)
    fit_advice: str | None = None
    if fit is Fit.TIGHT:
        fit_advice = (
            f"needs {total / c.GB:.1f} of {capacity / c.GB:.1f} GB per GPU, inside the "
            f"{c.TRAINING_ALLOCATOR_HEADROOM_GB_PER_GPU:g} GB allocator headroom: "
            + _TRAINING_SETTING
        )
    elif fit is Fit.NO:
        fit_advice = _smaller_training(training, total, plan.activations, capacity)
        if fit_advice is not None:
            fit = Fit.TIGHT
    fits = fit is not Fit.NO
    if not fits:
        notes.append(
            "does not fit: try ZeRO-3/FSDP sharding, activation checkpointing or more GPUs"
        )

    peak, mfu = _training_rate(req, gpu, notes)
    if calibration:
        mfu *= calibration.get("training_mfu", 1.0)
    notes.extend(plan.notes)
    tok_s_gpu = peak * mfu / plan.flops_per_token
    if req.workload_type is WorkloadType.QLORA_FINETUNE:
        tok_s_gpu *= c.QLORA_SPEED_FACTOR
    tok_s_total = tok_s_gpu * gpu_count
    hours = training.tokens / tok_s_total / 3600.0 if training.tokens else None

    ckpt = plan.checkpoint_bytes
    ckpt_s = ckpt / (_CHECKPOINT_BYTES_PER_S_PER_GPU * gpu_count)
    memory = training_breakdown(
        gpu_count,
        capacity,
        weights,
        plan.activations,
        gradients,
        optimizer,
        adapters,
        plan.overhead,
    )
    month_hours = req.hours_per_month if hours is None else min(hours, req.hours_per_month)
    return new_estimate(
        gpu.slug,
        gpu_count,
        fits,
        fit,
        fit_advice,
        capacity / c.GB,
        gpu_capacity_source(gpu),
        memory,
        training.micro_batch_sequences if fits else 0,
        training.sequence_length if fits else 0,
        new_performance(None, None, None, None, None, Bound.COMPUTE, tok_s_gpu, None, None, None),
        None,
        new_capacity_plan(None, 1, gpu_count, gpu_count * month_hours, None),
        new_training_result(tok_s_total, hours, ckpt / c.GB, ckpt_s, mfu),
        BASIS_ESTIMATED,
        tuple(notes),
        None,
    )


_CHECKPOINT_BYTES_PER_S_PER_GPU = c.CHECKPOINT_WRITE_GB_PER_S_PER_GPU * c.GB

# Training frameworks have no memory-fraction knob: the engine's margin is for allocator
# fragmentation, which PyTorch's expandable segments reduce (PyTorch "CUDA semantics: optimizing
# memory usage with PYTORCH_CUDA_ALLOC_CONF").
_TRAINING_SETTING = (
    "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to cut fragmentation, or lower the "
    "micro-batch"
)
# Media / encoder serving: the same vLLM-style knob (or the server's own memory fraction).
_MEDIA_SETTING = "fits only if the server may use {:.0%} of GPU memory"


def _smaller_training(
    training: TrainingSpec, total: float, activations: float, capacity: float
) -> str | None:
    """TIGHT advice when a smaller micro-batch or shorter sequence fits the default share:
    activation (and logits) bytes are linear in micro-batch x sequence tokens."""
    if activations <= 0:
        return None
    share = (capacity - TRAINING_HEADROOM_BYTES - (total - activations)) / activations
    if share <= 0:
        return None
    keep = c.TIGHT_MIN_WORKLOAD_FRACTION
    micro = training.micro_batch_sequences
    if micro > 1:
        fewer = int(micro * share)
        if fewer >= 1 and fewer >= math.ceil(micro * keep):
            unit = "sequence" if fewer == 1 else "sequences"
            return f"fits with a micro-batch of at most {fewer} {unit} (asked {micro})"
    seq = training.sequence_length
    shorter = int(seq * share)
    if micro == 1 and shorter >= 1 and shorter >= math.ceil(seq * keep):
        return f"fits at a sequence length of at most {shorter} tokens (asked {seq})"
    return None


def training_breakdown(
    gpu_count: int,
    capacity_per_gpu: float,
    weights: float,
    activations: float,
    gradients: float,
    optimizer: float,
    adapters: float,
    overhead: float,
) -> MemoryBreakdown:
    """Per-GPU bytes -> totals across `gpu_count` GPUs in GB, with training's safety margin: the
    allocator headroom (not serving's gpu_memory_utilization share)."""
    n = gpu_count / c.GB
    total = (weights + activations + gradients + optimizer + adapters + overhead) * n
    capacity = capacity_per_gpu * n
    return new_memory_breakdown(
        weights * n,
        0.0,
        activations * n,
        gradients * n,
        optimizer * n,
        adapters * n,
        overhead * n,
        TRAINING_HEADROOM_BYTES * n,
        total,
        capacity,
        capacity - total,
    )


def _replica_plan(req: EstimateRequest, gpu: GpuSpec, gpu_count: int) -> tuple[bool, int, float]:
    """Media / encoder models are small: one replica per GPU when the weights fit on one GPU,
    otherwise one replica over all GPUs. Returns (fits, replicas, per-GPU bytes)."""
    w = weight_bytes(req.model, req.weight_precision)
    overhead = c.INFERENCE_RUNTIME_OVERHEAD_GB_PER_GPU * c.GB
    usable = gpu_capacity_bytes(gpu) * c.USABLE_MEMORY_FRACTION
    if w + overhead <= usable:
        return True, gpu_count, w
    per_gpu = w / gpu_count
    return per_gpu + overhead <= usable, 1, per_gpu


def _media_fit(required: float, capacity: float) -> tuple[Fit, str | None]:
    fit = memory_fit(required, capacity)
    if fit is Fit.TIGHT:
        return fit, utilization_advice(required, capacity, _MEDIA_SETTING)
    return fit, None


def estimate_embeddings(
    req: EstimateRequest, gpu: GpuSpec, gpu_count: int, calibration: Mapping[str, float]
) -> Estimate:
    model = req.model
    notes: list[str] = ["embeddings: one compute-bound encoder forward, 2N FLOPs per token"]
    path = compute_path(gpu, req.weight_precision)
    if path.note:
        notes.append(path.note)
    _, replicas, w_gpu = _replica_plan(req, gpu, gpu_count)
    seq = req.input_tokens_p50
    per_token_act = (4.0 * model.hidden_size + 2.0 * model.intermediate_size) * c.BYTES_16BIT
    capacity = gpu_capacity_bytes(gpu)
    usable = capacity * c.USABLE_MEMORY_FRACTION
    overhead = c.INFERENCE_RUNTIME_OVERHEAD_GB_PER_GPU * c.GB
    free = max(usable - w_gpu - overhead, 0.0)
    max_batch = int(min(free / (per_token_act * req.input_tokens_p95), c.MAX_REPORTED_CONCURRENCY))
    batch = req.concurrency or max(1, min(max_batch, c.ENCODER_BATCH_CAP))
    act = batch * req.input_tokens_p95 * per_token_act
    fit, fit_advice = _media_fit(act + w_gpu + overhead, capacity)
    flops_tok = 2.0 * model.active_params + attention_flops_per_position(model) * seq / 2
    rate = path.tflops * 1e12 * path.mfu * c.ENCODER_MFU_FACTOR * calibration.get("prefill_mfu", 1)
    gpus_per_replica = gpu_count // replicas
    tok_s = rate * gpu_count / flops_tok
    records_s = tok_s / max(seq, 1)
    latency = seq * batch * flops_tok / (rate * gpus_per_replica)
    memory = breakdown(
        gpu_count=gpu_count,
        capacity_per_gpu=capacity,
        weights=w_gpu,
        activations=act,
        overhead=overhead,
    )
    return Estimate(
        gpu=gpu.slug,
        gpu_count=gpu_count,
        fits=fit is not Fit.NO,
        fit=fit,
        fit_advice=fit_advice,
        memory_capacity_gb=capacity / c.GB,
        memory_capacity_source=gpu_capacity_source(gpu),
        memory=memory,
        max_concurrency=max(max_batch, 0),
        max_context_tokens=model.max_context_tokens,
        performance=Performance(
            ttft_ms=latency * 1e3,
            e2e_latency_s=latency,
            bound=Bound.COMPUTE,
            records_per_s=records_s,
        ),
        meets_latency_target=(
            None
            if req.e2e_p95_s is None and req.ttft_p95_ms is None
            else (req.e2e_p95_s is None or latency <= req.e2e_p95_s)
            and (req.ttft_p95_ms is None or latency * 1e3 <= req.ttft_p95_ms)
        ),
        capacity=CapacityPlan(
            max_concurrency_at_target=batch,
            replicas=1,
            gpus_total=gpu_count,
            gpu_hours_per_month=gpu_count * req.hours_per_month,
        ),
        training=None,
        notes=tuple(notes),
    )


def estimate_media(
    req: EstimateRequest, gpu: GpuSpec, gpu_count: int, calibration: Mapping[str, float]
) -> Estimate:
    model = req.model
    video = req.workload_type is WorkloadType.VIDEO_GENERATION
    path = compute_path(gpu, req.weight_precision)
    notes: list[str] = [
        "diffusion: FLOPs per step at 1 MP scaled linearly with pixels and steps "
        "(attention's quadratic growth ignored)"
    ]
    if path.note:
        notes.append(path.note)
    _, replicas, w_gpu = _replica_plan(req, gpu, gpu_count)
    capacity = gpu_capacity_bytes(gpu)
    fit, fit_advice = _media_fit(w_gpu + c.INFERENCE_RUNTIME_OVERHEAD_GB_PER_GPU * c.GB, capacity)
    fits = fit is not Fit.NO
    steps = req.diffusion_steps or model.diffusion_steps or 30
    pixels = req.image_pixels or c.DEFAULT_IMAGE_PIXELS
    per_step = (model.diffusion_flops_per_step_1mp or 2.0 * model.active_params * 4096) * (
        pixels / c.DEFAULT_IMAGE_PIXELS
    )
    flops = per_step * steps
    if video:
        frames = req.video_frames or int(c.DEFAULT_VIDEO_FPS * c.DEFAULT_VIDEO_SECONDS)
        flops *= max(frames / c.VIDEO_TEMPORAL_COMPRESSION, 1.0)
        notes.append(
            f"video: {frames} frames, VAE temporal compression {c.VIDEO_TEMPORAL_COMPRESSION:g}x"
        )
    gpus_per_replica = gpu_count // replicas
    rate = (
        path.tflops * 1e12 * path.mfu * c.DIFFUSION_MFU_FACTOR * calibration.get("prefill_mfu", 1.0)
    )
    seconds = flops / (rate * gpus_per_replica)
    per_hour = replicas * 3600.0 / seconds
    overhead = c.INFERENCE_RUNTIME_OVERHEAD_GB_PER_GPU * c.GB
    act = (pixels / 64.0) * model.hidden_size * c.BYTES_16BIT * 8  # latent tokens x hidden
    memory = breakdown(
        gpu_count=gpu_count,
        capacity_per_gpu=capacity,
        weights=w_gpu,
        activations=act,
        overhead=overhead,
    )
    meets = None if req.e2e_p95_s is None else seconds <= req.e2e_p95_s
    return Estimate(
        gpu=gpu.slug,
        gpu_count=gpu_count,
        fits=fits,
        fit=fit,
        fit_advice=fit_advice,
        memory_capacity_gb=capacity / c.GB,
        memory_capacity_source=gpu_capacity_source(gpu),
        memory=memory,
        max_concurrency=replicas if fits else 0,
        max_context_tokens=model.max_context_tokens,
        performance=Performance(
            e2e_latency_s=seconds,
            bound=Bound.COMPUTE,
            clips_per_hour=per_hour if video else None,
            images_per_hour=None if video else per_hour,
        ),
        meets_latency_target=meets,
        capacity=CapacityPlan(
            max_concurrency_at_target=replicas,
            replicas=1,
            gpus_total=gpu_count,
            gpu_hours_per_month=gpu_count * req.hours_per_month,
        ),
        training=None,
        notes=tuple(notes),
    )
