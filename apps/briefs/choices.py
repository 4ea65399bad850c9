"""The brief's vocabularies. Values match the engine's enums and the API contract."""

from django.db import models

from apps.engine.costing import SuccessUnit as EngineSuccessUnit
from apps.engine.units import table_unit


class WorkloadType(models.TextChoices):
    TRAINING = "TRAINING", "Pre-training"
    FULL_FINETUNE = "FULL_FINETUNE", "Full fine-tune"
    LORA_FINETUNE = "LORA_FINETUNE", "LoRA fine-tune"
    QLORA_FINETUNE = "QLORA_FINETUNE", "QLoRA fine-tune"
    BATCH_INFERENCE = "BATCH_INFERENCE", "Batch inference"
    REALTIME_INFERENCE = "REALTIME_INFERENCE", "Real-time inference"
    EMBEDDINGS = "EMBEDDINGS", "Embeddings"
    IMAGE_GENERATION = "IMAGE_GENERATION", "Image generation"
    VIDEO_GENERATION = "VIDEO_GENERATION", "Video generation"
    EVALUATION = "EVALUATION", "Evaluation"


TRAINING_TYPES = frozenset(
    {
        WorkloadType.TRAINING,
        WorkloadType.FULL_FINETUNE,
        WorkloadType.LORA_FINETUNE,
        WorkloadType.QLORA_FINETUNE,
    }
)
TOKEN_SERVING_TYPES = frozenset(
    {WorkloadType.BATCH_INFERENCE, WorkloadType.REALTIME_INFERENCE, WorkloadType.EVALUATION}
)
MEDIA_TYPES = frozenset({WorkloadType.IMAGE_GENERATION, WorkloadType.VIDEO_GENERATION})


class Precision(models.TextChoices):
    FP32 = "FP32"
    BF16 = "BF16"
    FP16 = "FP16"
    FP8 = "FP8"
    INT8 = "INT8"
    INT4 = "INT4"
    FP4 = "FP4"


def _unit(unit: EngineSuccessUnit) -> tuple[str, str]:
    return unit.value, table_unit(unit).choice


class SuccessUnit(models.TextChoices):
    """The engine's enum (the one home of the vocabulary, words included) as Django choices;
    tests/unit/test_success_units.py checks that the members match."""

    TOKEN = _unit(EngineSuccessUnit.TOKEN)
    REQUEST = _unit(EngineSuccessUnit.REQUEST)
    RECORD = _unit(EngineSuccessUnit.RECORD)
    IMAGE = _unit(EngineSuccessUnit.IMAGE)
    CLIP = _unit(EngineSuccessUnit.CLIP)
    VIDEO_SECOND = _unit(EngineSuccessUnit.VIDEO_SECOND)
    PATCH = _unit(EngineSuccessUnit.PATCH)
    CHECKPOINT = _unit(EngineSuccessUnit.CHECKPOINT)
    TRAINING_RUN = _unit(EngineSuccessUnit.TRAINING_RUN)
    EVALUATION = _unit(EngineSuccessUnit.EVALUATION)


class LatencyPercentile(models.TextChoices):
    P95 = "P95", "p95"
    P99 = "P99", "p99"
    OFFLINE = "OFFLINE", "Offline (no latency target)"


class DutyCycle(models.TextChoices):
    ALWAYS_ON = "ALWAYS_ON", "Always on"
    SCHEDULED_BATCH = "SCHEDULED_BATCH", "Scheduled batch"
    SEASONAL_BURST = "SEASONAL_BURST", "Seasonal burst"
    EXPERIMENTAL = "EXPERIMENTAL", "Experimental"
    NOTEBOOK = "NOTEBOOK", "Notebook"


class OperatingBoundary(models.TextChoices):
    PUBLIC_CLOUD = "PUBLIC_CLOUD", "Public cloud"
    PRIVATE_NETWORK = "PRIVATE_NETWORK", "Private network"
    DEDICATED_CLUSTER = "DEDICATED_CLUSTER", "Dedicated cluster"
    ON_PREM = "ON_PREM", "On premises"
    DATA_RESIDENCY = "DATA_RESIDENCY", "Data residency"
    MANAGED_API = "MANAGED_API", "Managed API"


class Tooling(models.TextChoices):
    VLLM = "VLLM", "vLLM"
    SGLANG = "SGLANG", "SGLang"
    TENSORRT_LLM = "TENSORRT_LLM", "TensorRT-LLM"
    TRITON = "TRITON", "Triton"
    RAY = "RAY", "Ray"
    SLURM = "SLURM", "Slurm"
    KUBERNETES = "KUBERNETES", "Kubernetes"
    COMFYUI = "COMFYUI", "ComfyUI"
    PROVIDER_ENDPOINTS = "PROVIDER_ENDPOINTS", "Provider endpoints"


class SpeculativeMethod(models.TextChoices):
    MTP = "MTP", "Multi-token prediction (the model's MTP head)"
    EAGLE = "EAGLE", "EAGLE draft head"
    DRAFT_MODEL = "DRAFT_MODEL", "Separate draft model"


class Optimizer(models.TextChoices):
    ADAMW = "ADAMW", "AdamW"
    ADAM_8BIT = "ADAM_8BIT", "Adam 8-bit (bitsandbytes)"
    ADAMW_8BIT = "ADAMW_8BIT", "AdamW 8-bit (bitsandbytes)"
    PAGED_ADAMW = "PAGED_ADAMW", "Paged AdamW 32-bit (bitsandbytes)"
    PAGED_ADAMW_8BIT = "PAGED_ADAMW_8BIT", "Paged AdamW 8-bit (bitsandbytes)"
    SGD = "SGD", "SGD with momentum"
    ADAFACTOR = "ADAFACTOR", "Adafactor"
    LION = "LION", "Lion"


class Sharding(models.TextChoices):
    NONE = "NONE", "None (data parallel)"
    ZERO1 = "ZERO1", "ZeRO-1"
    ZERO2 = "ZERO2", "ZeRO-2"
    ZERO3 = "ZERO3", "ZeRO-3"
    FSDP = "FSDP", "FSDP (full shard)"
