"""The model as the engine read it: the estimate response's top-level `model` summary (the
figures a brief page shows as "read as")."""

from __future__ import annotations

from dataclasses import dataclass

from apps.engine import constants as c
from apps.engine.memory import attention_layout, kv_bytes_per_token, kv_elements_per_layer
from apps.engine.precision import embedding_params, raw_bytes, weight_bytes
from apps.engine.types import ModelKind, ModelSpec, Precision

# Active parameters, as model cards count them: every parameter a token multiplies, so the
# routed experts it is sent to, every dense and shared weight and the LM head, but not the
# input embedding, which is a table lookup (no multiply). This is the convention of
# openai/gpt-oss-120b's card (5.13B active: 5.71B with the 0.58B input embedding) and of
# NVIDIA-Nemotron-3-Nano-30B-A3B's (about 3.2B active, "3.6B including embeddings"). The
# summary also gives the count with both embedding matrices, as other cards quote it.
ACTIVE_PARAMS_CONVENTION = (
    "per token, the input embedding lookup excluded (LM head, attention, dense and shared "
    "weights and the routed experts a token uses counted)"
)

# Tensor groups in words, in the order the summary lists them (quantization.py's ParamGroups
# field names).
GROUP_WORDS: dict[str, str] = {
    "embed_in": "embeddings",
    "lm_head": "lm_head",
    "attention": "attention",
    "linear_attention": "linear attention / Mamba",
    "router": "router",
    "experts": "routed experts",
    "shared": "shared experts",
    "dense_mlp": "dense MLP",
    "vision": "vision tower",
}


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelSummary:
    name: str
    total_params_billion: float
    active_params_billion: float  # ACTIVE_PARAMS_CONVENTION
    active_params_with_embeddings_billion: float
    experts: int
    active_experts: int
    weight_precision: Precision
    weights: tuple[tuple[str, str], ...]  # (tensor group in words, stored precision)
    weights_gb: float
    checkpoint: str | None  # the quantized checkpoint as read, when served as published
    kv_cache_precision: Precision
    kv_bytes_per_token: float  # full-attention layers, whole model, per token of context
    kv_window_bytes_per_token: float  # windowed layers, per token up to their window
    window_tokens: int
    state_bytes_per_sequence: float  # linear-attention / Mamba layers, constant
    attention_layers: tuple[tuple[str, int], ...]  # (layer type, count)


def _group_precisions(model: ModelSpec, p: Precision) -> tuple[tuple[str, str], ...]:
    ck = model.checkpoint
    if ck is not None and p is ck.precision and ck.group_precisions:
        return tuple((GROUP_WORDS[g], what) for g, what in ck.group_precisions if g in GROUP_WORDS)
    # precision.weight_bytes: below 16 bits the embeddings and LM head stay 16-bit.
    emb = "BF16" if raw_bytes(p) < c.BYTES_16BIT else p.value
    if model.kind is not ModelKind.DECODER:
        return (("all weights", p.value),)
    return (("embeddings and lm_head", emb), ("all other weights", p.value))


def model_summary(
    model: ModelSpec, weight_precision: Precision, kv_precision: Precision
) -> ModelSummary:
    emb = embedding_params(model)
    input_embedding = 0.0 if model.tied_embeddings else emb / 2
    layout = attention_layout(model)
    per_layer = kv_elements_per_layer(model)
    kv_bytes = raw_bytes(kv_precision)
    types: list[tuple[str, int]] = [
        ("MLA" if model.is_mla else "full attention", layout.full_layers)
    ]
    if layout.window_layers:
        types.append(("windowed attention", layout.window_layers))
    if layout.linear_layers:
        types.append(("linear attention / Mamba", layout.linear_layers))
    if layout.mixer_free_layers:
        types.append(("MLP / MoE only (no token mixer)", layout.mixer_free_layers))
    ck = model.checkpoint
    served_as_published = ck is not None and weight_precision is ck.precision
    return ModelSummary(
        name=model.name,
        total_params_billion=model.total_params / 1e9,
        active_params_billion=max(model.active_params - input_embedding, 0.0) / 1e9,
        active_params_with_embeddings_billion=model.active_params / 1e9,
        experts=model.experts,
        active_experts=model.active_experts,
        weight_precision=weight_precision,
        weights=_group_precisions(model, weight_precision),
        weights_gb=weight_bytes(model, weight_precision) / c.GB,
        checkpoint=ck.label if served_as_published and ck is not None else None,
        kv_cache_precision=kv_precision,
        kv_bytes_per_token=kv_bytes_per_token(model, kv_precision),
        kv_window_bytes_per_token=layout.window_kv_elements * kv_bytes
        if layout.window_layers
        else 0.0,
        window_tokens=layout.window,
        state_bytes_per_sequence=layout.state_bytes,
        attention_layers=tuple(t for t in types if t[1] > 0) if per_layer else (),
    )


def model_summary_to_dict(s: ModelSummary) -> dict[str, object]:
    return {
        "name": s.name,
        "total_params_billion": round(s.total_params_billion, 3),
        "active_params_billion": round(s.active_params_billion, 3),
        "active_params_with_embeddings_billion": round(s.active_params_with_embeddings_billion, 3),
        "active_params_convention": ACTIVE_PARAMS_CONVENTION,
        "experts": s.experts,
        "active_experts": s.active_experts,
        "weight_precision": s.weight_precision.value,
        "weights_by_tensor_group": dict(s.weights),
        "weights_gb": round(s.weights_gb, 2),
        "checkpoint": s.checkpoint,
        "kv_cache_precision": s.kv_cache_precision.value,
        "kv_bytes_per_token": round(s.kv_bytes_per_token, 1),
        "kv_window_bytes_per_token": round(s.kv_window_bytes_per_token, 1),
        "window_tokens": s.window_tokens,
        "state_bytes_per_sequence": round(s.state_bytes_per_sequence, 1),
        "attention_layers": dict(s.attention_layers),
    }
