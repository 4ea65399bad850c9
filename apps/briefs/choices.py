"""The brief's vocabularies: the engine's enums (apps.engine.types, apps.engine.costing) as
Django choices, with the words a person reads. Values and order are the engine's."""

from django.db import models

from apps.core.choices import register, text_choices
from apps.engine import costing
from apps.engine import types as engine
from apps.engine.units import table_unit

WorkloadType = text_choices(
    engine.WorkloadType,
    {
        "TRAINING": "Pre-training",
        "FULL_FINETUNE": "Full fine-tune",
        "LORA_FINETUNE": "LoRA fine-tune",
        "QLORA_FINETUNE": "QLoRA fine-tune",
        "BATCH_INFERENCE": "Batch inference",
        "REALTIME_INFERENCE": "Real-time inference",
        "EMBEDDINGS": "Embeddings",
        "IMAGE_GENERATION": "Image generation",
        "VIDEO_GENERATION": "Video generation",
        "EVALUATION": "Evaluation",
    },
)

TRAINING_TYPES = engine.TRAINING_TYPES
TOKEN_SERVING_TYPES = engine.LLM_SERVING_TYPES
MEDIA_TYPES = engine.MEDIA_TYPES

# Number formats are written as their standard names (NVIDIA and OCP spell them "FP8",
# "BF16": https://docs.nvidia.com/deeplearning/transformer-engine/user-guide/examples/fp8_primer.html).
Precision = text_choices(
    engine.Precision,
    {
        "FP32": "FP32",
        "BF16": "BF16",
        "FP16": "FP16",
        "FP8": "FP8",
        "INT8": "INT8",
        "INT4": "INT4",
        "FP4": "FP4",
    },
)

# The words of each success unit live with the engine's table units (apps.engine.units).
SuccessUnit = text_choices(
    costing.SuccessUnit, {unit.value: table_unit(unit).choice for unit in costing.SuccessUnit}
)


class LatencyPercentile(models.TextChoices):
    """The brief's own: the engine holds every target as its p95 (apps.briefs.contract)."""

    P95 = "P95", "p95"
    P99 = "P99", "p99"
    OFFLINE = "OFFLINE", "Offline (no latency target)"


register(LatencyPercentile, name="LatencyPercentile")


DutyCycle = text_choices(
    engine.DutyCycle,
    {
        "ALWAYS_ON": "Always on",
        "SCHEDULED_BATCH": "Scheduled batch",
        "SEASONAL_BURST": "Seasonal burst",
        "EXPERIMENTAL": "Experimental",
        "NOTEBOOK": "Notebook",
    },
)

OperatingBoundary = text_choices(
    costing.OperatingBoundary,
    {
        "PUBLIC_CLOUD": "Public cloud",
        "PRIVATE_NETWORK": "Private network",
        "DEDICATED_CLUSTER": "Dedicated cluster",
        "ON_PREM": "On premises",
        "DATA_RESIDENCY": "Data residency",
        "MANAGED_API": "Managed API",
    },
)

Tooling = text_choices(
    engine.Tooling,
    {
        "VLLM": "vLLM",
        "SGLANG": "SGLang",
        "TENSORRT_LLM": "TensorRT-LLM",
        "TRITON": "Triton",
        "RAY": "Ray",
        "SLURM": "Slurm",
        "KUBERNETES": "Kubernetes",
        "COMFYUI": "ComfyUI",
        "PROVIDER_ENDPOINTS": "Provider endpoints",
    },
)

Optimizer = text_choices(
    engine.Optimizer,
    {
        "ADAMW": "AdamW",
        "ADAM_8BIT": "Adam 8-bit (bitsandbytes)",
        "ADAMW_8BIT": "AdamW 8-bit (bitsandbytes)",
        "PAGED_ADAMW": "Paged AdamW 32-bit (bitsandbytes)",
        "PAGED_ADAMW_8BIT": "Paged AdamW 8-bit (bitsandbytes)",
        "SGD": "SGD with momentum",
        "ADAFACTOR": "Adafactor",
        "LION": "Lion",
    },
)

SpeculativeMethod = text_choices(
    engine.SpeculativeMethod,
    {
        "MTP": "Multi-token prediction (the model's MTP head)",
        "EAGLE": "EAGLE draft head",
        "DRAFT_MODEL": "Separate draft model",
    },
)

Sharding = text_choices(
    engine.Sharding,
    {
        "NONE": "None (data parallel)",
        "ZERO1": "ZeRO-1",
        "ZERO2": "ZeRO-2",
        "ZERO3": "ZeRO-3",
        "FSDP": "FSDP (full shard)",
    },
)
