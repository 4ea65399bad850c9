"""The engine's vocabulary: enums and frozen dataclasses in and out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from enum import StrEnum
from typing import Any


def _fields_of(cls: type[Any], user: str) -> tuple[Any, ...]:
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not (params.frozen and params.kw_only) or "__slots__" not in vars(cls):
        raise TypeError(f"{cls.__name__}: {user} needs @dataclass(frozen, kw_only, slots)")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: {user} does not call __post_init__")
    out = fields(cls)
    for f in out:
        if f.default_factory is not MISSING or not f.init or f.name.startswith("_"):
            raise TypeError(f"{cls.__name__}.{f.name}: {user} handles plain fields only")
    return out


# Issue 23 item 9 asked for plain keyword dataclasses instead of these exec-generated
# constructors unless bench/estimate.py showed a loss over 20%. Measured on this branch (commit
# eeecaf3, reverted; the same machine, three interleaved rounds of one estimate_at each):
# llama-2-7b inference at TP1 ~90K -> ~48K evaluations/s, 8 x A100 ZeRO-3 training ~150K ->
# ~64K (a frozen dataclass's own __init__ sets each of the ~50 result fields through
# object.__setattr__), and the llm-analysis ratio fell below 20x. So the fastest honest form
# stays: the constructors are built from the classes' own field lists (no hand-written field
# order to drift) and return ordinary frozen instances (tests/unit/engine/test_engine_speedups).
def positional_constructor(cls: type[Any]) -> Any:
    """`new(field1, field2, ...)`: build `cls` from every field, positionally, in declaration
    order, without keyword matching; for the engine's per-evaluation hot paths. Annotate the
    result with a precise `Callable[[...], cls]` where it is assigned.

    A frozen class's slots can only be set through their descriptors (a method call per field,
    ~40 ns). For a class whose slots are exactly its fields (on `object`), `new` fills an
    instance of a plain slotted twin of the same layout with ordinary attribute stores, then
    makes it a `cls` by `__class__` assignment (allowed between classes that add the same
    slots to the same base): the result is an ordinary, frozen `cls` instance, built 2-3x faster.
    Any other class keeps the descriptor calls."""
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    names = [f.name for f in _fields_of(cls, "positional_constructor")]
    args = ", ".join(names)
    twin = _slotted_twin(cls, names)
    if twin is not None:
        namespace["_twin"] = twin
        body = "".join(f"    self.{name} = {name}\n" for name in names)
        src = f"def new({args}):\n    self = _new(_twin)\n{body}    self.__class__ = _cls\n"
    else:
        for name in names:
            namespace[f"_s_{name}"] = vars(cls)[name].__set__
        body = "".join(f"    _s_{name}(self, {name})\n" for name in names)
        src = f"def new({args}):\n    self = _new(_cls)\n{body}"
    exec(src + "    return self\n", namespace)  # noqa: S102 - source built from the field names
    new = namespace["new"]
    new.__qualname__ = new.__name__ = f"new_{cls.__name__}"
    return new


def _slotted_twin(cls: type[Any], names: list[str]) -> type[Any] | None:
    """A plain (unfrozen) class with `cls`'s slots, whose instances may become `cls` instances
    by `__class__` assignment; None when `cls` has other slots or bases, or the assignment is
    refused."""
    if cls.__bases__ != (object,) or tuple(vars(cls)["__slots__"]) != tuple(names):
        return None
    twin = type(f"_{cls.__name__}Draft", (), {"__slots__": tuple(names), "__module__": __name__})
    probe: Any = object.__new__(twin)
    try:
        probe.__class__ = cls
    except TypeError:
        return None
    return twin


def fast_init[T](cls: type[T]) -> type[T]:
    """Give a frozen, slotted, keyword-only dataclass a faster `__init__`.

    The generated `__init__` of a frozen dataclass stores each field with `object.__setattr__`,
    which looks the name up through the type on every call; this one calls each slot's descriptor
    directly. Same signature, defaults, frozen-ness, equality and hash; construction is 2-3x
    faster, which matters because the engine builds several result objects per evaluation.
    """
    namespace: dict[str, Any] = {}
    args: list[str] = []
    body: list[str] = []
    for f in _fields_of(cls, "fast_init"):
        if f.default is MISSING:
            args.append(f.name)
        else:
            namespace[f"_d_{f.name}"] = f.default
            args.append(f"{f.name}=_d_{f.name}")
        namespace[f"_s_{f.name}"] = vars(cls)[f.name].__set__
        body.append(f"    _s_{f.name}(self, {f.name})")
    src = f"def __init__(self, *, {', '.join(args)}):\n" + ("\n".join(body) or "    pass")
    exec(src, namespace)  # noqa: S102 - source built above from the class's own field names
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = vars(cls)["__init__"].__doc__
    setattr(cls, "__init__", init)  # noqa: B010 - mypy forbids assigning a method directly
    return cls


BASIS_ESTIMATED = "ESTIMATED"  # Estimate.basis: every figure the engine computes


class EngineInputError(Exception):
    """Bad input, naming the field (dotted path in the request JSON)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class WorkloadType(StrEnum):
    TRAINING = "TRAINING"
    FULL_FINETUNE = "FULL_FINETUNE"
    LORA_FINETUNE = "LORA_FINETUNE"
    QLORA_FINETUNE = "QLORA_FINETUNE"
    BATCH_INFERENCE = "BATCH_INFERENCE"
    REALTIME_INFERENCE = "REALTIME_INFERENCE"
    EMBEDDINGS = "EMBEDDINGS"
    IMAGE_GENERATION = "IMAGE_GENERATION"
    VIDEO_GENERATION = "VIDEO_GENERATION"
    EVALUATION = "EVALUATION"


TRAINING_TYPES = frozenset(
    {
        WorkloadType.TRAINING,
        WorkloadType.FULL_FINETUNE,
        WorkloadType.LORA_FINETUNE,
        WorkloadType.QLORA_FINETUNE,
    }
)
LLM_SERVING_TYPES = frozenset(
    {WorkloadType.BATCH_INFERENCE, WorkloadType.REALTIME_INFERENCE, WorkloadType.EVALUATION}
)
MEDIA_TYPES = frozenset({WorkloadType.IMAGE_GENERATION, WorkloadType.VIDEO_GENERATION})


class Precision(StrEnum):
    FP32 = "FP32"
    BF16 = "BF16"
    FP16 = "FP16"
    FP8 = "FP8"
    INT8 = "INT8"
    INT4 = "INT4"
    FP4 = "FP4"


class Optimizer(StrEnum):
    ADAMW = "ADAMW"
    ADAM_8BIT = "ADAM_8BIT"  # bitsandbytes Adam8bit (kept for stored briefs; = ADAMW_8BIT memory)
    ADAMW_8BIT = "ADAMW_8BIT"  # bitsandbytes AdamW8bit
    PAGED_ADAMW = "PAGED_ADAMW"  # bitsandbytes PagedAdamW (32-bit states in unified memory)
    PAGED_ADAMW_8BIT = "PAGED_ADAMW_8BIT"  # bitsandbytes PagedAdamW8bit
    SGD = "SGD"  # with momentum
    ADAFACTOR = "ADAFACTOR"
    LION = "LION"


PAGED_OPTIMIZERS = frozenset({Optimizer.PAGED_ADAMW, Optimizer.PAGED_ADAMW_8BIT})


class Sharding(StrEnum):
    NONE = "NONE"
    ZERO1 = "ZERO1"
    ZERO2 = "ZERO2"
    ZERO3 = "ZERO3"
    FSDP = "FSDP"


class DutyCycle(StrEnum):
    ALWAYS_ON = "ALWAYS_ON"
    SCHEDULED_BATCH = "SCHEDULED_BATCH"
    SEASONAL_BURST = "SEASONAL_BURST"
    EXPERIMENTAL = "EXPERIMENTAL"
    NOTEBOOK = "NOTEBOOK"


class Tooling(StrEnum):
    """The serving, training and orchestration stacks a brief may name (docs/design.md, "The
    workload brief"). Recorded with the brief; the engine sizes serving as vLLM does."""

    VLLM = "VLLM"
    SGLANG = "SGLANG"
    TENSORRT_LLM = "TENSORRT_LLM"
    TRITON = "TRITON"
    RAY = "RAY"
    SLURM = "SLURM"
    KUBERNETES = "KUBERNETES"
    COMFYUI = "COMFYUI"
    PROVIDER_ENDPOINTS = "PROVIDER_ENDPOINTS"


class ModelKind(StrEnum):
    DECODER = "DECODER"
    ENCODER = "ENCODER"
    DIFFUSION = "DIFFUSION"


class Architecture(StrEnum):
    VOLTA = "VOLTA"
    TURING = "TURING"
    AMPERE = "AMPERE"
    ADA = "ADA"
    HOPPER = "HOPPER"
    BLACKWELL = "BLACKWELL"
    BLACKWELL_ULTRA = "BLACKWELL_ULTRA"
    CDNA3 = "CDNA3"
    CDNA4 = "CDNA4"


class Fit(StrEnum):
    """The memory verdict of one estimate.

    FITS: within the serving framework's default share of the GPU (vLLM
    gpu_memory_utilization 0.9; the rest is the engine's safety margin). TIGHT: fits only if the
    framework is given more of the GPU, or at a smaller batch or shorter context (the estimate's
    `fit_advice` says which and how much). NO: neither.
    """

    FITS = "FITS"
    TIGHT = "TIGHT"
    NO = "NO"


class Bound(StrEnum):
    MEMORY = "MEMORY"
    COMPUTE = "COMPUTE"
    COMMUNICATION = "COMMUNICATION"


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class GpuSpec:
    slug: str
    name: str
    vendor: str
    form_factor: str
    memory_gb: float
    memory_bandwidth_tbps: float
    bf16_tflops: float
    fp8_tflops: float | None
    fp4_tflops: float | None
    int8_tops: float | None
    tdp_w: float
    interconnect: str
    interconnect_gbps: float  # GB/s, bidirectional, as in the catalog CSV
    max_gpus_per_node: int
    architecture: str
    # Total memory the driver reports (nvidia-smi / amd-smi, MiB = 2**20 bytes), when on file;
    # the engine sizes against it in preference to the datasheet's `memory_gb` (10**9 bytes).
    device_memory_mib: int | None = None
    # Scale-out (node-to-node) bandwidth per GPU, GB/s per direction, from the GPU system or the
    # quote when known; None: the documented default for the interconnect
    # (constants.SCALE_OUT_GB_PER_S_DEFAULTS).
    scale_out_gb_per_s: float | None = None


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class AttentionLayout:
    """A model's attention, layer by layer, summed by layer type once per model.

    KV figures are element counts (multiply by the KV precision's bytes); the recurrent state
    is in bytes (kept at the model's dtype whatever the KV cache precision). A full-attention layer
    caches every token; a windowed layer (sliding window, or chunked local attention) caches at
    most `window` tokens; a linear / recurrent layer keeps a constant state per sequence.
    """

    full_layers: int
    full_kv_elements: float  # per token, summed over the full-attention layers
    window: int = 0  # tokens a windowed layer keeps (0: no windowed layers)
    window_layers: int = 0
    window_kv_elements: float = 0.0  # per cached token, summed over the windowed layers
    linear_layers: int = 0
    state_bytes: float = 0.0  # per sequence, summed over the linear / recurrent layers
    # Hybrid stacks of single-sub-layer blocks (nemotron_h): blocks with an MLP / MoE and no
    # token mixer, and blocks with a mixer and no MLP (see shapes.Shape). A transformer layer
    # has both, so both are 0.
    mixer_free_layers: int = 0
    mlp_free_layers: int = 0


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class CheckpointWeights:
    """What a published (possibly quantized) checkpoint stores, summed over its tensor groups."""

    precision: Precision  # the compute path it is served on (FP8, FP4, INT4, INT8, BF16, ...)
    weight_bytes: float  # every weight at its own precision, plus quantization scales
    routed_expert_bytes: float  # the routed experts' share of weight_bytes (0 for dense)
    label: str  # e.g. "MXFP4 (quant_method mxfp4; self_attn, router, embeddings kept 16-bit)"
    # (tensor group, stored precision in words) for the groups the model has, e.g.
    # ("experts", "FP4"), ("attention", "BF16"); the response's model summary shows them.
    group_precisions: tuple[tuple[str, str], ...] = ()


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class ModelSpec:
    """A model's shape. Counts are totals; `active_params_billion` is per token (MoE)."""

    name: str
    params_billion: float
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    vocab_size: int
    intermediate_size: int
    experts: int = 1
    active_experts: int = 1
    active_params_billion: float | None = None
    kind: ModelKind = ModelKind.DECODER
    tied_embeddings: bool = False
    kv_lora_rank: int | None = None  # MLA (DeepSeek-V2/V3): compressed KV latent
    qk_rope_head_dim: int | None = None
    # MLA value head size (v_head_dim); None: head_dim - qk_rope_head_dim (the no-RoPE query/key
    # size, equal to v_head_dim in DeepSeek-V2/V3 and Kimi K2 configs).
    v_head_dim: int | None = None
    max_context_tokens: int = 131072
    diffusion_flops_per_step_1mp: float | None = None
    diffusion_steps: int = 0
    attention: AttentionLayout | None = None  # None: every layer full attention (or MLA)
    checkpoint: CheckpointWeights | None = None  # a quantized checkpoint's stored weights
    native_precision: Precision | None = None  # the config's torch_dtype / dtype
    # Sum of (in_features + out_features) over the linear projections LoRA adapts (attention,
    # MLP, every routed and shared expert; see shapes.lora_in_out): rank-r LoRA trains r x this.
    # None: derived from the fields above (dense q, k, v, o, gate, up, down per layer).
    lora_in_out: float | None = None
    notes: tuple[str, ...] = ()  # how the model was read (added to every estimate's notes)

    @property
    def active_params(self) -> float:
        active = self.active_params_billion
        return (active if active is not None else self.params_billion) * 1e9

    @property
    def total_params(self) -> float:
        return self.params_billion * 1e9

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank is not None

    @property
    def is_moe(self) -> bool:
        return self.experts > 1


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class TrainingSpec:
    sequence_length: int
    tokens: float | None = None
    global_batch_tokens: int | None = None
    optimizer: Optimizer = Optimizer.ADAMW
    sharding: Sharding = Sharding.NONE
    activation_checkpointing: bool = False
    lora_rank: int | None = None
    micro_batch_sequences: int = 1
    checkpoint_interval_hours: float | None = None


class Framework(StrEnum):
    """The serving framework whose scheduler defaults bound an offline batch (frameworks.py)."""

    VLLM = "VLLM"
    SGLANG = "SGLANG"
    TENSORRT_LLM = "TENSORRT_LLM"


class SpeculativeMethod(StrEnum):
    """How draft tokens are proposed (speculative.py): the model's own multi-token-prediction
    head (DeepSeek-V3 MTP), an EAGLE draft head, or a separate smaller draft model."""

    MTP = "MTP"
    EAGLE = "EAGLE"
    DRAFT_MODEL = "DRAFT_MODEL"


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class SpeculativeSpec:
    """Speculative decoding: `tokens` draft tokens proposed per step, each accepted with
    probability `acceptance_rate` (the per-token rate, Leviathan et al. 2023's alpha)."""

    method: SpeculativeMethod
    tokens: int
    acceptance_rate: float
    draft_params_billion: float | None = None  # DRAFT_MODEL only; None: a default share


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class Layout:
    """How one serving replica's GPUs split the model.

    `tp` x `pp`: tensor parallel within each of `pp` pipeline stages (the layers split into `pp`
    consecutive groups). `dep` > 1: DEP, attention data-parallel over `dep` GPUs (each holds its
    own sequences and their KV cache) with the routed experts split across the same GPUs (expert
    parallel) and attention, dense and shared-expert weights replicated on each; then tp = pp = 1.
    `replicas` > 1: plain data parallelism inside the replica, that many independent engines of
    the layout above, each with its own share of the sequences (vLLM --data-parallel-size).
    """

    tp: int = 1
    pp: int = 1
    dep: int = 1
    replicas: int = 1

    @property
    def engine_gpus(self) -> int:
        """GPUs of one engine (one tp x pp group, or one DEP group)."""
        return self.tp * self.pp * self.dep

    @property
    def gpus(self) -> int:
        return self.replicas * self.tp * self.pp * self.dep

    def label(self, gpus_per_node: int) -> str:
        """e.g. "TP8", "DEP8", "TP2xPP2", "PP4", "DP2xTP4", "DEP16 (2 nodes)"."""
        if self.dep > 1:
            name = f"DEP{self.dep}"
        elif self.pp > 1:
            name = f"TP{self.tp}xPP{self.pp}" if self.tp > 1 else f"PP{self.pp}"
        else:
            name = f"TP{self.tp}"
        if self.replicas > 1:
            name = f"DP{self.replicas}x{name}"
        per_node = max(gpus_per_node, 1)
        nodes = -(-self.gpus // per_node)
        return f"{name} ({nodes} nodes)" if nodes > 1 else name


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class EstimateRequest:
    workload_type: WorkloadType
    model: ModelSpec
    weight_precision: Precision = Precision.BF16
    kv_cache_precision: Precision = Precision.BF16
    input_tokens_p50: int = 512
    input_tokens_p95: int = 512
    output_tokens_p50: int = 128
    output_tokens_p95: int = 128
    concurrency: int | None = None
    requests_per_second: float | None = None
    ttft_p95_ms: float | None = None
    itl_p95_ms: float | None = None
    e2e_p95_s: float | None = None
    gpus: tuple[str, ...] | None = None
    gpu_count: int | None = None
    training: TrainingSpec | None = None
    duty_cycle: DutyCycle = DutyCycle.ALWAYS_ON
    hours_per_month: float = 730.0
    records_per_job: int | None = None
    acceptance_rate: float = 1.0
    image_pixels: int | None = None
    diffusion_steps: int | None = None
    video_frames: int | None = None
    speculative: SpeculativeSpec | None = None  # None: plain one-token-per-step decoding
    framework: Framework | None = None  # None: vLLM (frameworks.DEFAULT_FRAMEWORK)
    # The framework's version ("0.11.0"): a vLLM version picks the measured MoE kernel table
    # of the version nearest at or below it (kernel_tables.moe_version_for); None: the newest.
    framework_version: str | None = None
    # Serving: evaluate this parallel layout only (its GPUs are the count); None: the engine
    # chooses among the layouts the framework offers for the model (serving.candidate_layouts).
    layout: Layout | None = None

    @property
    def has_latency_target(self) -> bool:
        return (
            self.ttft_p95_ms is not None
            or self.itl_p95_ms is not None
            or self.e2e_p95_s is not None
        )


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class MemoryBreakdown:
    """Totals across all `gpu_count` GPUs, in GB (10^9 bytes)."""

    weights_gb: float
    kv_cache_gb: float
    activations_gb: float
    gradients_gb: float
    optimizer_gb: float
    adapters_gb: float
    overhead_gb: float
    safety_margin_gb: float
    total_gb: float
    capacity_gb: float
    headroom_gb: float


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class Performance:
    output_tokens_per_s: float | None = None
    output_tokens_per_s_per_gpu: float | None = None
    ttft_ms: float | None = None
    itl_ms: float | None = None
    e2e_latency_s: float | None = None
    bound: Bound | None = None
    training_tokens_per_s_per_gpu: float | None = None
    records_per_s: float | None = None
    images_per_hour: float | None = None
    clips_per_hour: float | None = None


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class CapacityPlan:
    max_concurrency_at_target: int | None
    replicas: int | None
    gpus_total: int | None
    gpu_hours_per_month: float | None
    # Requests a second one replica completes at the latency target: the most sequences in
    # flight that meet it over their end-to-end latency (Little's law); None without a target.
    requests_per_s_at_target: float | None = None


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class TrainingResult:
    tokens_per_s_total: float
    time_to_train_hours: float | None
    checkpoint_size_gb: float
    checkpoint_write_s: float
    mfu: float


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class Estimate:
    gpu: str
    gpu_count: int
    fits: bool  # fit is not Fit.NO
    fit: Fit
    fit_advice: str | None  # for TIGHT: what to change, and by how much
    memory_capacity_gb: float  # per GPU, GB = 10**9 bytes
    memory_capacity_source: str  # "device (nvidia-smi MiB)" | "device (amd-smi MiB)" | "datasheet"
    memory: MemoryBreakdown
    max_concurrency: int
    max_context_tokens: int
    performance: Performance
    meets_latency_target: bool | None
    capacity: CapacityPlan | None
    training: TrainingResult | None
    basis: str = BASIS_ESTIMATED
    notes: tuple[str, ...] = ()
    layout: str | None = None  # serving: the parallel layout assumed, e.g. "TP8", "DEP8"


# Positional constructors for the per-evaluation hot paths (every field, in declaration order).
new_memory_breakdown: Callable[
    [float, float, float, float, float, float, float, float, float, float, float], MemoryBreakdown
] = positional_constructor(MemoryBreakdown)
new_performance: Callable[
    [
        float | None,
        float | None,
        float | None,
        float | None,
        float | None,
        Bound | None,
        float | None,
        float | None,
        float | None,
        float | None,
    ],
    Performance,
] = positional_constructor(Performance)
new_capacity_plan: Callable[
    [int | None, int | None, int | None, float | None, float | None], CapacityPlan
] = positional_constructor(CapacityPlan)
new_training_result: Callable[[float, float | None, float, float, float], TrainingResult] = (
    positional_constructor(TrainingResult)
)
new_estimate: Callable[
    [
        str,
        int,
        bool,
        Fit,
        str | None,
        float,
        str,
        MemoryBreakdown,
        int,
        int,
        Performance,
        bool | None,
        CapacityPlan | None,
        TrainingResult | None,
        str,
        tuple[str, ...],
        str | None,
    ],
    Estimate,
] = positional_constructor(Estimate)
