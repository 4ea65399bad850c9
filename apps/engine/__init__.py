"""gpuselect's decision engine: pure Python, no Django, no I/O, no clock."""

from apps.engine.constants import ENGINE_VERSION
from apps.engine.estimator import candidate_counts, estimate, estimate_at
from apps.engine.hf_config import model_from_hf_config
from apps.engine.presets import PRESETS
from apps.engine.request import parse_estimate_request
from apps.engine.serialize import estimate_to_dict, request_model_to_dict
from apps.engine.types import (
    Architecture,
    Bound,
    CapacityPlan,
    DutyCycle,
    EngineInputError,
    Estimate,
    EstimateRequest,
    Fit,
    GpuSpec,
    MemoryBreakdown,
    ModelKind,
    ModelSpec,
    Optimizer,
    Performance,
    Precision,
    Sharding,
    TrainingResult,
    TrainingSpec,
    WorkloadType,
)

__all__ = [
    "ENGINE_VERSION",
    "PRESETS",
    "Architecture",
    "Bound",
    "CapacityPlan",
    "DutyCycle",
    "EngineInputError",
    "Estimate",
    "EstimateRequest",
    "Fit",
    "GpuSpec",
    "MemoryBreakdown",
    "ModelKind",
    "ModelSpec",
    "Optimizer",
    "Performance",
    "Precision",
    "Sharding",
    "TrainingResult",
    "TrainingSpec",
    "WorkloadType",
    "candidate_counts",
    "estimate",
    "estimate_at",
    "estimate_to_dict",
    "model_from_hf_config",
    "parse_estimate_request",
    "request_model_to_dict",
]
