"""Words for the engine's vocabularies that no Django field stores (a fit verdict, what bounds
a step, a serving framework, a row's cost family, who runs the stack): registered with the
derived choice sets (apps.core.choices), so that apps.core.formatting.label reads them from one
place. The engine's enums keep their values and order; only the words are added here."""

from apps.engine import costing
from apps.engine import types as engine

from .choices import register

register(
    engine.Fit,
    {"FITS": "Fits", "TIGHT": "Fits, tight", "NO": "Does not fit"},
    name="Fit",
)
register(
    engine.Bound,
    {"MEMORY": "Memory bound", "COMPUTE": "Compute bound", "COMMUNICATION": "Communication bound"},
    name="Bound",
)
# Framework names as their projects write them.
register(
    engine.Framework,
    {"VLLM": "vLLM", "SGLANG": "SGLang", "TENSORRT_LLM": "TensorRT-LLM"},
    name="Framework",
)
register(
    costing.CostKind,
    {
        "TRAINING": "Training",
        "REALTIME": "Real-time serving",
        "OFFLINE": "Offline batch",
        "MEDIA": "Image and video",
        "API": "Model API",
    },
    name="CostKind",
)
register(
    costing.OperatingModel,
    {
        "SELF_MANAGED": "Self-managed",
        "MANAGED_ENDPOINT": "Managed endpoint",
        "API": "Model API",
    },
    name="OperatingModel",
)
