"""Parameter counts from a transformer's shapes (used by presets and pasted HF configs)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True, slots=True)
class Shape:
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    intermediate: int
    gated_mlp: bool = True
    tied_embeddings: bool = False
    experts: int = 1
    active_experts: int = 1
    moe_intermediate: int | None = None
    shared_experts: int = 0
    shared_intermediate: int | None = None
    first_dense_layers: int = 0
    # MLA (DeepSeek-V2/V3)
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0
    v_head_dim: int = 0
    extra_params: float = 0.0  # e.g. BERT position/type embeddings and pooler


def _attention_params(s: Shape) -> float:
    h = s.hidden
    if s.kv_lora_rank is not None:
        qk = s.qk_nope_head_dim + s.qk_rope_head_dim
        q_in = h * s.q_lora_rank if s.q_lora_rank else 0
        q = q_in + (s.q_lora_rank or h) * s.heads * qk
        kv_a = h * (s.kv_lora_rank + s.qk_rope_head_dim)
        kv_b = s.kv_lora_rank * s.heads * (s.qk_nope_head_dim + s.v_head_dim)
        o = s.heads * s.v_head_dim * h
        return float(q + kv_a + kv_b + o)
    q = h * s.heads * s.head_dim
    kv = 2 * h * s.kv_heads * s.head_dim
    o = s.heads * s.head_dim * h
    return float(q + kv + o)


def _mlp_params(hidden: int, intermediate: int, gated: bool) -> float:
    return float((3 if gated else 2) * hidden * intermediate)


def count_params(s: Shape) -> tuple[float, float]:
    """(total, active-per-token) parameter counts."""
    attn = _attention_params(s)
    norms = 2.0 * s.hidden
    dense_mlp = _mlp_params(s.hidden, s.intermediate, s.gated_mlp)
    embed = float(s.vocab * s.hidden) * (1 if s.tied_embeddings else 2)
    if s.experts <= 1:
        per_layer = attn + dense_mlp + norms
        total = s.layers * per_layer + embed + s.extra_params
        return total, total
    moe_i = s.moe_intermediate or s.intermediate
    expert = _mlp_params(s.hidden, moe_i, s.gated_mlp)
    shared = s.shared_experts * _mlp_params(s.hidden, s.shared_intermediate or moe_i, s.gated_mlp)
    router = float(s.hidden * s.experts)
    moe_layers = s.layers - s.first_dense_layers
    dense_layers = s.first_dense_layers
    base = s.layers * (attn + norms) + dense_layers * dense_mlp + embed + s.extra_params
    total = base + moe_layers * (s.experts * expert + shared + router)
    active = base + moe_layers * (s.active_experts * expert + shared + router)
    return total, active
