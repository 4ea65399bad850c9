"""The engine's vocabulary: enums and frozen dataclasses in and out."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


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
    ADAM_8BIT = "ADAM_8BIT"
    SGD = "SGD"
    ADAFACTOR = "ADAFACTOR"
    LION = "LION"


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


class ModelKind(StrEnum):
    DECODER = "DECODER"
    ENCODER = "ENCODER"
    DIFFUSION = "DIFFUSION"


class Architecture(StrEnum):
    AMPERE = "AMPERE"
    HOPPER = "HOPPER"
    BLACKWELL = "BLACKWELL"
    ADA = "ADA"
    CDNA3 = "CDNA3"


class Bound(StrEnum):
    MEMORY = "MEMORY"
    COMPUTE = "COMPUTE"
    COMMUNICATION = "COMMUNICATION"


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
    max_context_tokens: int = 131072
    diffusion_flops_per_step_1mp: float | None = None
    diffusion_steps: int = 0

    @property
    def active_params(self) -> float:
        active = self.active_params_billion
        return (active if active is not None else self.params_billion) * 1e9

    @property
    def total_params(self) -> float:
        return self.params_billion * 1e9

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank is not None


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

    @property
    def has_latency_target(self) -> bool:
        return any(t is not None for t in (self.ttft_p95_ms, self.itl_p95_ms, self.e2e_p95_s))


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


@dataclass(frozen=True, kw_only=True, slots=True)
class CapacityPlan:
    max_concurrency_at_target: int | None
    replicas: int | None
    gpus_total: int | None
    gpu_hours_per_month: float | None


@dataclass(frozen=True, kw_only=True, slots=True)
class TrainingResult:
    tokens_per_s_total: float
    time_to_train_hours: float | None
    checkpoint_size_gb: float
    checkpoint_write_s: float
    mfu: float


@dataclass(frozen=True, kw_only=True, slots=True)
class Estimate:
    gpu: str
    gpu_count: int
    fits: bool
    memory: MemoryBreakdown
    max_concurrency: int
    max_context_tokens: int
    performance: Performance
    meets_latency_target: bool | None
    capacity: CapacityPlan | None
    training: TrainingResult | None
    basis: str = "ESTIMATED"
    notes: tuple[str, ...] = ()
