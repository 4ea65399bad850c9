"""Memory fit: weights, KV cache, activations, gradients, optimizer, adapters, overhead."""

from __future__ import annotations

import math
from dataclasses import dataclass

from apps.engine import constants as c
from apps.engine.precision import (
    embedding_params,
    raw_bytes,
    weight_bytes,
)
from apps.engine.types import (
    PAGED_OPTIMIZERS,
    AttentionLayout,
    Fit,
    GpuSpec,
    Layout,
    MemoryBreakdown,
    ModelSpec,
    Optimizer,
    Precision,
    Sharding,
    TrainingSpec,
    WorkloadType,
    fast_init,
    new_memory_breakdown,
)


def kv_elements_per_layer(model: ModelSpec) -> float:
    """K and V (or the MLA latent + decoupled RoPE key) one attention layer caches per token."""
    if model.kv_lora_rank is not None:
        return float(model.kv_lora_rank + (model.qk_rope_head_dim or 0))
    return 2.0 * model.kv_heads * model.head_dim


def attention_layout(model: ModelSpec) -> AttentionLayout:
    """The model's per-type layer sums (every layer full attention when it has none)."""
    layout = model.attention
    if layout is not None:
        return layout
    return AttentionLayout(
        full_layers=model.layers, full_kv_elements=model.layers * kv_elements_per_layer(model)
    )


def kv_bytes_per_token(model: ModelSpec, kv_precision: Precision) -> float:
    """KV cache bytes each further token of a long context adds (before tensor-parallel
    splitting): the full-attention layers' K and V. Windowed layers stop growing at their
    window and linear-attention layers keep a constant state (see `kv_cost`).

    GQA/MHA: 2 (K and V) x layers x kv_heads x head_dim x bytes.
    MLA (DeepSeek-V2/V3): one compressed latent (kv_lora_rank) + the decoupled RoPE key
    (qk_rope_head_dim) per layer (DeepSeek-V2 paper, arXiv:2405.04434, section 2.1).
    """
    layout = model.attention
    if layout is None:
        return model.layers * kv_elements_per_layer(model) * raw_bytes(kv_precision)
    return layout.full_kv_elements * raw_bytes(kv_precision)


def stage_fraction(model: ModelSpec, pp: int) -> float:
    """Share of the layers (and of their weights, KV cache and work) the largest of `pp`
    pipeline stages holds: ceil(layers / pp) / layers (vLLM splits the layers as evenly as they
    go; the largest stage sets the memory and the pace)."""
    if pp <= 1 or model.layers <= 0:
        return 1.0
    return math.ceil(model.layers / pp) / model.layers


def routed_expert_bytes(model: ModelSpec, weight_precision: Precision) -> float:
    """Bytes of all routed experts together (0 for a dense model): the checkpoint's own figure
    when served as published, else the routed parameters at the average bytes per parameter."""
    if not model.is_moe or model.experts <= model.active_experts:
        return 0.0
    ck = model.checkpoint
    if ck is not None and weight_precision is ck.precision:
        return ck.routed_expert_bytes
    per_param = weight_bytes(model, weight_precision) / model.total_params
    per_expert = (model.total_params - model.active_params) / (model.experts - model.active_experts)
    return per_expert * model.experts * per_param


def weights_per_gpu(model: ModelSpec, weight_precision: Precision, layout: Layout) -> float:
    """Weight bytes on each GPU of a replica: TP x PP splits every weight over tp ranks within
    the largest stage; DEP replicates all but the routed experts and splits those evenly."""
    total = weight_bytes(model, weight_precision)
    if layout.dep > 1:
        routed = routed_expert_bytes(model, weight_precision)
        return total - routed + routed / layout.dep
    return total / layout.tp * stage_fraction(model, layout.pp)


def kv_shard_fraction(model: ModelSpec, tp: int) -> float:
    """Share of the KV cache each GPU holds under tensor parallelism.

    KV heads are split across ranks; when there are fewer KV heads than ranks they are
    replicated. The MLA latent is shared by all heads, so every rank keeps all of it.
    """
    if model.kv_lora_rank is not None or tp <= 1:
        return 1.0
    return math.ceil(model.kv_heads / tp) / model.kv_heads


# --- Capacity and the fit verdict -----------------------------------------------------------------


def gpu_capacity_bytes(gpu: GpuSpec) -> float:
    """Bytes per GPU the engine sizes against: the driver-reported total (`device_memory_mib`
    MiB) where the catalog has it, else the datasheet's `memory_gb` GB. An "80 GB" H100 reports
    81,559 MiB = 85.5 GB, which is what vLLM's gpu_memory_utilization is a fraction of."""
    mib = gpu.device_memory_mib
    return mib * c.MIB if mib is not None else gpu.memory_gb * c.GB


def gpu_capacity_source(gpu: GpuSpec) -> str:
    """Where `gpu_capacity_bytes` came from: "device (nvidia-smi MiB)" or "datasheet"."""
    if gpu.device_memory_mib is None:
        return c.CAPACITY_SOURCE_DATASHEET
    tool = c.DEVICE_MEMORY_TOOL.get(gpu.vendor, c.DEFAULT_DEVICE_MEMORY_TOOL)
    return f"device ({tool} MiB)"


def memory_fit(required: float, capacity: float) -> Fit:
    """FITS within the default usable fraction of `capacity`, TIGHT within the tight fraction,
    else NO (both figures per GPU, in bytes)."""
    if required <= capacity * c.USABLE_MEMORY_FRACTION:
        return Fit.FITS
    if required <= capacity * c.TIGHT_MEMORY_FRACTION:
        return Fit.TIGHT
    return Fit.NO


def utilization_needed(required: float, capacity: float) -> float:
    """The share of the GPU `required` bytes take, rounded up to the next 0.01 (the precision
    one passes to --gpu-memory-utilization)."""
    return math.ceil(required / capacity * 100.0 - 1e-9) / 100.0


def utilization_advice(required: float, capacity: float, setting: str) -> str:
    """The TIGHT advice when only a larger share of the GPU is needed; `setting` says how to
    give the framework that share, formatted with it (a fraction, e.g. 0.93)."""
    share = utilization_needed(required, capacity)
    return (
        f"needs {required / c.GB:.1f} of {capacity / c.GB:.1f} GB per GPU ({share:.0%}, over the "
        f"default {c.USABLE_MEMORY_FRACTION:.0%}): " + setting.format(share)
    )


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class KvCost:
    """Per-GPU KV cache bytes of one sequence as a function of its context length: full layers
    grow with every token, windowed layers up to `window` tokens, linear layers not at all."""

    per_token: float  # full-attention layers, per cached token
    window: float  # tokens a windowed layer keeps (0: none)
    window_per_token: float  # windowed layers, per cached token (up to `window`)
    per_sequence: float  # linear / recurrent layers' constant state

    def sequence_bytes(self, context: float) -> float:
        b = context * self.per_token + self.per_sequence
        if self.window_per_token:
            b += (context if context < self.window else self.window) * self.window_per_token
        return b

    def max_context(self, room: float) -> float:
        """Longest context whose cache fits in `room` bytes (inf when the cache is bounded)."""
        room -= self.per_sequence
        if room < 0:
            return 0.0
        both = self.per_token + self.window_per_token
        if self.window_per_token:
            # Strictly below a full window (at exactly a full window, a cache of windowed
            # layers only is bounded: every longer context fits too).
            if room < self.window * both:
                return room / both
            room -= self.window * self.window_per_token
        return room / self.per_token if self.per_token > 0 else math.inf


def kv_cost(
    model: ModelSpec, kv_precision: Precision, tp: int, layout: Layout | None = None
) -> KvCost:
    """Per-GPU KV bytes of one sequence on a GPU that holds it. TP splits KV heads (not the MLA
    latent) over `tp` ranks; PP keeps one stage's layers; DEP keeps a sequence's whole cache on
    the one GPU that serves it (tp = 1, see serving for the sequences per GPU)."""
    if layout is not None:
        tp = layout.tp
    b = raw_bytes(kv_precision)
    shard = kv_shard_fraction(model, tp)
    if layout is not None and layout.pp > 1:
        shard *= stage_fraction(model, layout.pp)
    layout_ = attention_layout(model)
    return KvCost(
        per_token=layout_.full_kv_elements * b * shard,
        window=float(layout_.window),
        window_per_token=layout_.window_kv_elements * b * shard if layout_.window else 0.0,
        per_sequence=layout_.state_bytes * shard,
    )


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class ServingMemory:
    """Per-GPU bytes that do not depend on the number of tokens in flight, and the per-token
    KV cost, for a model split tensor-parallel over `tp` GPUs."""

    tp: int
    capacity_per_gpu: float
    usable_per_gpu: float
    weights_per_gpu: float
    activations_per_gpu: float
    overhead_per_gpu: float
    kv_per_token_per_gpu: float

    @property
    def fixed_per_gpu(self) -> float:
        return self.weights_per_gpu + self.activations_per_gpu + self.overhead_per_gpu

    def free_for_kv(self) -> float:
        return self.usable_per_gpu - self.fixed_per_gpu


def serving_memory(
    model: ModelSpec,
    gpu: GpuSpec,
    tp: int,
    *,
    weight_precision: Precision,
    kv_precision: Precision,
    chunk_tokens: int,
    layout: Layout | None = None,
) -> ServingMemory:
    """Per-GPU serving memory under `layout` (None: tensor parallel over `tp`)."""
    lay = layout if layout is not None else Layout(tp=tp)
    capacity = gpu_capacity_bytes(gpu)
    act_bytes = c.BYTES_16BIT
    per_token_act = (
        c.SERVING_ACTIVATION_HIDDEN_FACTOR * model.hidden_size
        + c.SERVING_ACTIVATION_INTERMEDIATE_FACTOR * model.intermediate_size / lay.tp
    ) * act_bytes
    return ServingMemory(
        tp=lay.tp,
        capacity_per_gpu=capacity,
        usable_per_gpu=capacity * c.USABLE_MEMORY_FRACTION,
        weights_per_gpu=weights_per_gpu(model, weight_precision, lay),
        activations_per_gpu=chunk_tokens * per_token_act,
        overhead_per_gpu=c.INFERENCE_RUNTIME_OVERHEAD_GB_PER_GPU * c.GB,
        kv_per_token_per_gpu=kv_cost(model, kv_precision, lay.tp, lay).per_token,
    )


def breakdown(
    *,
    gpu_count: int,
    capacity_per_gpu: float,
    weights: float = 0.0,
    kv_cache: float = 0.0,
    activations: float = 0.0,
    gradients: float = 0.0,
    optimizer: float = 0.0,
    adapters: float = 0.0,
    overhead: float = 0.0,
) -> MemoryBreakdown:
    """Per-GPU bytes -> totals across `gpu_count` GPUs in GB."""
    return breakdown_of(
        gpu_count,
        capacity_per_gpu,
        weights,
        kv_cache,
        activations,
        gradients,
        optimizer,
        adapters,
        overhead,
    )


def breakdown_of(
    gpu_count: int,
    capacity_per_gpu: float,
    weights: float,
    kv_cache: float,
    activations: float,
    gradients: float,
    optimizer: float,
    adapters: float,
    overhead: float,
) -> MemoryBreakdown:
    """`breakdown` with every argument positional (the engine's hot paths)."""
    n = gpu_count / c.GB
    total = (weights + kv_cache + activations + gradients + optimizer + adapters + overhead) * n
    capacity = capacity_per_gpu * n
    return new_memory_breakdown(
        weights * n,
        kv_cache * n,
        activations * n,
        gradients * n,
        optimizer * n,
        adapters * n,
        overhead * n,
        capacity * _SAFETY_FRACTION,
        total,
        capacity,
        capacity - total,
    )


_SAFETY_FRACTION = 1.0 - c.USABLE_MEMORY_FRACTION


# --- Training ------------------------------------------------------------------------------------

_OPTIMIZER_STATE_BYTES = {
    Optimizer.ADAMW: c.OPTIMIZER_STATE_BYTES_ADAMW,
    Optimizer.PAGED_ADAMW: c.OPTIMIZER_STATE_BYTES_ADAMW,
    Optimizer.ADAM_8BIT: c.OPTIMIZER_STATE_BYTES_8BIT,
    Optimizer.ADAMW_8BIT: c.OPTIMIZER_STATE_BYTES_8BIT,
    Optimizer.PAGED_ADAMW_8BIT: c.OPTIMIZER_STATE_BYTES_8BIT,
    Optimizer.SGD: c.OPTIMIZER_STATE_BYTES_SGD_MOMENTUM,
    Optimizer.LION: c.OPTIMIZER_STATE_BYTES_LION,
}


def lora_in_out(model: ModelSpec) -> float:
    """Sum of (in + out) over the projections LoRA adapts: the model's own layout when it was
    read from a shape (presets, config.json), else dense q, k, v, o, gate, up, down per layer
    (MoE: every expert's MLP)."""
    if model.lora_in_out is not None:
        return model.lora_in_out
    h = model.hidden_size
    q_out = model.attention_heads * model.head_dim
    kv_out = model.kv_heads * model.head_dim
    attn = (h + q_out) * 2 + (h + kv_out) * 2
    mlp = 3 * (h + model.intermediate_size) * max(1, model.experts)
    return float(model.layers * (attn + mlp))


def lora_adapter_params(model: ModelSpec, rank: int) -> float:
    """Rank-r adapters on every adapted projection: r x (in + out) each (see `lora_in_out`)."""
    return rank * lora_in_out(model)


def _largest_matrix_params(model: ModelSpec) -> float:
    """The largest single weight matrix (embedding, MLP or attention projection)."""
    h = model.hidden_size
    return float(
        h * max(model.vocab_size, model.intermediate_size, model.attention_heads * model.head_dim)
    )


def optimizer_state_bytes(opt: Optimizer, model: ModelSpec, params: float, *, lora: bool) -> float:
    """Bytes of the optimizer's own states (no master copy) for `params` trained parameters.

    Adafactor keeps (in + out) FP32 values per matrix (see constants): for LoRA over the adapter
    matrices A (in x r) and B (r x out), for full training over every projection and embedding.
    """
    if opt is Optimizer.ADAFACTOR:
        # LoRA: A (r x in) and B (out x r) factor into in + out + 2r; r is small next to in and
        # out, so (in + out) per adapted projection.
        factors = lora_in_out(model)
        if not lora:
            matrix = float(model.vocab_size * model.hidden_size)
            embeddings = embedding_params(model) / matrix if matrix else 0.0
            factors += embeddings * (model.vocab_size + model.hidden_size)
        return min(factors * c.ADAFACTOR_STATE_BYTES_PER_FACTOR, params * c.BYTES_FP32)
    return params * _OPTIMIZER_STATE_BYTES[opt]


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class TrainingMemory:
    """Per-GPU bytes of one training step's peak, by component."""

    weights: float
    gradients: float
    optimizer: float  # GPU-resident optimizer bytes (FP32 master + states; paged: a buffer)
    adapters: float
    activations: float
    overhead: float
    adapter_params: float
    paged_optimizer: float  # optimizer states kept in unified (host-pageable) memory, not counted
    checkpoint: float  # bytes a checkpoint writes (trained weights + full optimizer states)

    @property
    def total(self) -> float:
        return (
            self.weights
            + self.gradients
            + self.optimizer
            + self.adapters
            + self.activations
            + self.overhead
        )


def training_activation_bytes(model: ModelSpec, training: TrainingSpec) -> float:
    """Per-GPU activation bytes of one micro-batch (no tensor/sequence parallelism).

    Without checkpointing every layer keeps 34 s b h bytes; with it, one 16-bit hidden state per
    layer boundary plus one layer's activations recomputed at a time (its input being the
    checkpoint already counted): s b h (2 L + 32). Never more than without (L >= 1). Plus the FP32
    logits of the micro-batch.
    """
    tokens = float(training.sequence_length * training.micro_batch_sequences)
    h = model.hidden_size
    per_layer = c.ACTIVATION_BYTES_PER_TOKEN_HIDDEN
    if training.activation_checkpointing:
        ckpt = c.CHECKPOINTED_BYTES_PER_TOKEN_HIDDEN
        act = tokens * h * (ckpt * model.layers + per_layer - ckpt)
    else:
        act = tokens * h * per_layer * model.layers
    if embedding_params(model) > 0:
        act += tokens * model.vocab_size * c.LOGITS_BYTES
    return act


def training_memory(
    model: ModelSpec,
    workload: WorkloadType,
    training: TrainingSpec,
    gpu_count: int,
    weight_precision: Precision,
) -> TrainingMemory:
    """Per-GPU training memory. Parallelism: data parallel over `gpu_count` with the brief's
    ZeRO stage / FSDP sharding (no tensor or pipeline parallelism)."""
    n = float(model.total_params)
    dp = gpu_count
    shard = training.sharding
    opt_div = dp if shard is not Sharding.NONE else 1
    grad_div = dp if shard in (Sharding.ZERO2, Sharding.ZERO3, Sharding.FSDP) else 1
    weight_div = dp if shard in (Sharding.ZERO3, Sharding.FSDP) else 1
    act = training_activation_bytes(model, training)
    overhead = c.TRAINING_RUNTIME_OVERHEAD_GB_PER_GPU * c.GB
    opt = training.optimizer
    paged = opt in PAGED_OPTIMIZERS

    if workload in (WorkloadType.LORA_FINETUNE, WorkloadType.QLORA_FINETUNE):
        rank = training.lora_rank or c.DEFAULT_LORA_RANK
        adapter_params = lora_adapter_params(model, rank)
        if workload is WorkloadType.QLORA_FINETUNE:
            # Frozen NF4 base with double quantization; embeddings / LM head stay 16-bit.
            emb = min(embedding_params(model), n)
            base = (n - emb) * c.QLORA_BITS_PER_PARAM / 8.0 + emb * c.BYTES_16BIT
            a_bytes = c.QLORA_ADAPTER_BYTES
        else:
            base = weight_bytes(model, weight_precision)
            a_bytes = c.LORA_ADAPTER_BYTES
        states = optimizer_state_bytes(opt, model, adapter_params, lora=True)
        largest = rank * max(model.hidden_size, model.intermediate_size)
        resident = (
            min(states, optimizer_state_bytes(opt, model, largest, lora=True)) if paged else states
        )
        return TrainingMemory(
            weights=base / weight_div,
            gradients=adapter_params * a_bytes / grad_div,
            optimizer=resident / opt_div,
            adapters=adapter_params * a_bytes / weight_div,
            activations=act,
            overhead=overhead,
            adapter_params=adapter_params,
            paged_optimizer=(states - resident) / opt_div,
            checkpoint=adapter_params * a_bytes + states,
        )

    if weight_precision is Precision.FP32:
        w_bytes, g_bytes, master = c.BYTES_FP32, c.BYTES_FP32, 0.0
    else:
        w_bytes, g_bytes = c.TRAIN_WEIGHT_BYTES_MIXED, c.TRAIN_GRAD_BYTES_MIXED
        master = c.MASTER_WEIGHT_BYTES
    states = optimizer_state_bytes(opt, model, n, lora=False)
    resident = (
        min(states, optimizer_state_bytes(opt, model, _largest_matrix_params(model), lora=False))
        if paged
        else states
    )
    return TrainingMemory(
        weights=n * w_bytes / weight_div,
        gradients=n * g_bytes / grad_div,
        optimizer=(n * master + resident) / opt_div,
        adapters=0.0,
        activations=act,
        overhead=overhead,
        adapter_params=0.0,
        paged_optimizer=(states - resident) / opt_div,
        checkpoint=n * (w_bytes + master) + states,
    )


def training_fits(total_per_gpu: float, capacity_per_gpu: float) -> bool:
    """Training's own rule: everything counted plus the allocator headroom fits the GPU (no
    serving gpu_memory_utilization cap)."""
    return total_per_gpu + TRAINING_HEADROOM_BYTES <= capacity_per_gpu


def training_fit(total_per_gpu: float, capacity_per_gpu: float) -> Fit:
    """FITS with the allocator headroom to spare (`training_fits`), TIGHT when the total fits
    only by eating into that headroom (fragmentation then decides: expandable segments help),
    else NO."""
    if training_fits(total_per_gpu, capacity_per_gpu):
        return Fit.FITS
    if total_per_gpu <= capacity_per_gpu:
        return Fit.TIGHT
    return Fit.NO


TRAINING_HEADROOM_BYTES = c.TRAINING_ALLOCATOR_HEADROOM_GB_PER_GPU * c.GB
