"""The brief as the API contract's JSON body, and back.

docs/design.md's POST /api/v1/estimate body is the one shape every surface speaks: the brief API
accepts it (plus the brief's own fields), and a stored brief is estimated by turning it back
into that body and handing it to the engine's one validating parser.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the model imports this module (WorkloadBrief.clean reads model_body)
    from .models import WorkloadBrief

EXPLICIT_MODEL_FIELDS = (
    "params_billion", "layers", "hidden_size", "attention_heads", "kv_heads", "head_dim",
    "vocab_size", "intermediate_size", "experts", "active_experts",
)  # fmt: skip
# Brief fields that are sent and stored as they are (same name in the body and the model).
PLAIN_FIELDS = (
    "name", "description", "workload_type", "weight_precision", "kv_cache_precision",
    "context_window", "concurrency", "requests_per_second", "records_per_job", "success_unit",
    "acceptance_rate", "duty_cycle", "hours_per_month", "operating_boundary", "tooling",
)  # fmt: skip
TRAINING_FIELDS = (
    "tokens", "sequence_length", "global_batch_tokens", "optimizer", "sharding",
    "activation_checkpointing", "lora_rank", "checkpoint_interval_minutes", "target_eval_score",
)  # fmt: skip
_TRAINING_TO_MODEL = {"tokens": "training_tokens"}


def _num(value: Any) -> Any:
    """Decimals travel as JSON numbers."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def model_body(brief: WorkloadBrief) -> dict[str, Any] | None:
    if brief.model_preset:
        return {"preset": brief.model_preset}
    if brief.model_hf_config:
        return {"hf_config": brief.model_hf_config}
    explicit = {
        name: _num(getattr(brief, name))
        for name in EXPLICIT_MODEL_FIELDS
        if getattr(brief, name) is not None
    }
    return explicit or None


def latency_body(brief: WorkloadBrief) -> dict[str, Any] | str | None:
    if brief.latency_percentile == "OFFLINE":
        return "offline"
    if not brief.latency_percentile:
        return None
    suffix = brief.latency_percentile.lower()
    body: dict[str, Any] = {}
    if brief.ttft_target_ms is not None:
        body[f"ttft_{suffix}_ms"] = brief.ttft_target_ms
    if brief.itl_target_ms is not None:
        body[f"itl_{suffix}_ms"] = brief.itl_target_ms
    if brief.e2e_target_ms is not None:
        body[f"e2e_{suffix}_s"] = brief.e2e_target_ms / 1000
    return body


def brief_to_body(brief: WorkloadBrief) -> dict[str, Any]:
    """The stored brief in the contract's shape (None for what is not given)."""
    body: dict[str, Any] = {name: _num(getattr(brief, name)) for name in PLAIN_FIELDS}
    body["model"] = model_body(brief)
    for key in ("input_tokens", "output_tokens"):
        p50, p95 = getattr(brief, f"{key}_p50"), getattr(brief, f"{key}_p95")
        body[key] = {"p50": p50, "p95": p95} if p50 is not None else None
    body["latency_target"] = latency_body(brief)
    if brief.image_width or brief.image_height:
        media = {"width": brief.image_width, "height": brief.image_height}
        if brief.workload_type == "VIDEO_GENERATION":
            body["video"] = {**media, "seconds": _num(brief.clip_seconds)}
        else:
            body["image"] = media
    if brief.is_training:
        training = {
            name: _num(getattr(brief, _TRAINING_TO_MODEL.get(name, name)))
            for name in TRAINING_FIELDS
        }
        body["training"] = training
    return body


def estimate_body_for_brief(brief: WorkloadBrief) -> dict[str, Any]:
    """The body the engine's parser takes: empty values dropped, p99 targets as the target."""
    body = {k: v for k, v in brief_to_body(brief).items() if v not in (None, "", [])}
    for key in ("name", "description", "success_unit", "operating_boundary", "tooling"):
        body.pop(key, None)
    latency = body.get("latency_target")
    if isinstance(latency, dict):
        # The engine checks one tail target; a p99 target is held to the same estimate.
        body["latency_target"] = {
            k.replace("_p99_", "_p95_"): v for k, v in latency.items() if v is not None
        }
    training = body.get("training")
    if isinstance(training, dict):
        interval = training.pop("checkpoint_interval_minutes", None)
        training.pop("target_eval_score", None)
        body["training"] = {k: v for k, v in training.items() if v not in (None, "")}
        if interval:
            body["training"]["checkpoint_interval_hours"] = interval / 60
    return body


def body_to_fields(body: dict[str, Any]) -> dict[str, Any]:
    """Validated API input (the contract's shape) → WorkloadBrief field values."""
    fields: dict[str, Any] = {name: body[name] for name in PLAIN_FIELDS if name in body}
    if "model" in body:
        model = body["model"] or {}
        fields["model_preset"] = model.get("preset", "")
        fields["model_hf_config"] = model.get("hf_config")
        for name in EXPLICIT_MODEL_FIELDS:
            fields[name] = model.get(name)
    for key in ("input_tokens", "output_tokens"):
        if key in body:
            tokens = body[key] or {}
            fields[f"{key}_p50"] = tokens.get("p50")
            fields[f"{key}_p95"] = tokens.get("p95", tokens.get("p50"))
    if "latency_target" in body:
        latency = body["latency_target"]
        fields.update(latency_percentile="", ttft_target_ms=None)
        fields.update(itl_target_ms=None, e2e_target_ms=None)
        if latency == "offline":
            fields["latency_percentile"] = "OFFLINE"
        elif latency:
            p99 = any("_p99_" in key for key in latency)
            suffix = "p99" if p99 else "p95"
            fields["latency_percentile"] = suffix.upper()
            fields["ttft_target_ms"] = latency.get(f"ttft_{suffix}_ms")
            fields["itl_target_ms"] = latency.get(f"itl_{suffix}_ms")
            e2e = latency.get(f"e2e_{suffix}_s")
            fields["e2e_target_ms"] = round(e2e * 1000) if e2e is not None else None
    media = body.get("image") or body.get("video")
    if media:
        fields["image_width"] = media.get("width")
        fields["image_height"] = media.get("height")
        if "seconds" in media:
            fields["clip_seconds"] = media.get("seconds")
    if body.get("training"):
        for name in TRAINING_FIELDS:
            if name in body["training"]:
                fields[_TRAINING_TO_MODEL.get(name, name)] = body["training"][name]
    return fields
