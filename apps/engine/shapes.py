"""Parameter counts from a transformer's shapes (used by presets and pasted HF configs).

A `Shape` describes the layers by type, as counts (so nothing loops over layers per evaluation):
`layers` decoder layers of which `moe_layers` carry routed experts (the rest a dense MLP of
`intermediate`), and of which `window_layers` use windowed attention and `linear_layers` a linear
/ recurrent mixer (Gated DeltaNet, Mamba) instead of softmax attention; the rest attend fully.
"""

from __future__ import annotations

from dataclasses import dataclass

from apps.engine import constants as c
from apps.engine.types import AttentionLayout

# A linear-attention / Mamba state is kept at 16 bits (vLLM's mamba_cache_dtype "auto" = the
# model dtype, BF16 for every hybrid published so far), whatever the KV cache precision.
LINEAR_STATE_BYTES = c.BYTES_16BIT


@dataclass(frozen=True, kw_only=True, slots=True)
class Shape:
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    intermediate: int  # the dense MLP's width (dense layers; Llama 4's intermediate_size_mlp)
    gated_mlp: bool = True
    tied_embeddings: bool = False
    experts: int = 1
    active_experts: int = 1
    moe_intermediate: int | None = None  # one routed expert's width
    shared_experts: int = 0
    shared_intermediate: int | None = None  # one shared expert's width (default: moe width)
    first_dense_layers: int = 0
    moe_layers: int | None = None  # layers with routed experts (None: layers - first_dense)
    # MLA (DeepSeek-V2/V3)
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0
    v_head_dim: int = 0
    q_gate: bool = False  # attention output gate (Qwen3-Next: q_proj is twice as wide)
    # Per-layer attention types (counts; layers - window_layers - linear_layers attend fully)
    window: int = 0  # tokens a sliding-window / chunked-local layer attends to
    window_layers: int = 0
    linear_layers: int = 0
    linear_params: float = 0.0  # one linear-attention / Mamba mixer's weights
    linear_state: float = 0.0  # one such layer's constant per-sequence state (elements)
    vision_params: float = 0.0  # a multimodal wrapper's vision tower and projector
    extra_params: float = 0.0  # e.g. BERT position/type embeddings and pooler


@dataclass(frozen=True, kw_only=True, slots=True)
class ParamGroups:
    """Parameters by tensor group (what quantization schemes keep or convert), whole model."""

    embed_in: float  # input embedding (a lookup, never quantized by the schemes read here)
    lm_head: float  # output projection (0 when tied to the input embedding)
    attention: float  # softmax attention projections
    linear_attention: float  # linear / recurrent mixers
    router: float
    experts: float  # all routed experts
    expert_active: float  # the routed experts one token uses
    shared: float  # shared experts
    dense_mlp: float
    norms: float
    vision: float
    extra: float

    @property
    def total(self) -> float:
        return (
            self.embed_in
            + self.lm_head
            + self.attention
            + self.linear_attention
            + self.router
            + self.experts
            + self.shared
            + self.dense_mlp
            + self.norms
            + self.vision
            + self.extra
        )

    @property
    def active(self) -> float:
        """Per-token parameters (both embedding matrices counted, as most model cards do)."""
        return self.total - self.experts + self.expert_active - self.vision


def gated_deltanet(
    hidden: int, key_heads: int, value_heads: int, key_dim: int, value_dim: int, kernel: int
) -> tuple[float, float]:
    """(weights, per-sequence state elements) of one Gated DeltaNet layer (Qwen3-Next
    Qwen3NextGatedDeltaNet: in_proj_qkvz, in_proj_ba, a depthwise conv, out_proj; the state is
    one key_dim x value_dim matrix per value head plus the conv window)."""
    keys, values = key_heads * key_dim, value_heads * value_dim
    conv = 2 * keys + values
    params = hidden * (2 * keys + 2 * values) + hidden * 2 * value_heads + conv * kernel
    params += values * hidden
    return float(params), float(value_heads * key_dim * value_dim + conv * (kernel - 1))


def mamba_mixer(
    hidden: int, d_state: int, d_conv: int, expand: int, dt_rank: int
) -> tuple[float, float]:
    """(weights, per-sequence state elements) of one Mamba layer (in_proj, conv1d, x_proj,
    dt_proj, A, out_proj; the state is d_inner x d_state plus the conv window)."""
    d_inner = expand * hidden
    params = (
        hidden * 2 * d_inner
        + d_inner * d_conv
        + d_inner * (dt_rank + 2 * d_state)
        + dt_rank * d_inner
        + d_inner * d_state
        + d_inner * hidden
    )
    return float(params), float(d_inner * d_state + d_inner * (d_conv - 1))


def vit_params(
    hidden: int, layers: int, intermediate: int, patch: int, out_dim: int, text_hidden: int
) -> float:
    """A ViT vision tower, roughly: layers x (4 h^2 attention + 2 h x intermediate MLP), the
    patch embedding, and a projector from `out_dim` into the text model's width."""
    per_layer = 4 * hidden * hidden + 2 * hidden * intermediate
    return float(layers * per_layer + 3 * patch * patch * hidden + out_dim * text_hidden)


def attention_params_per_layer(s: Shape) -> float:
    h = s.hidden
    if s.kv_lora_rank is not None:
        qk = s.qk_nope_head_dim + s.qk_rope_head_dim
        q_in = h * s.q_lora_rank if s.q_lora_rank else 0
        q = q_in + (s.q_lora_rank or h) * s.heads * qk
        kv_a = h * (s.kv_lora_rank + s.qk_rope_head_dim)
        kv_b = s.kv_lora_rank * s.heads * (s.qk_nope_head_dim + s.v_head_dim)
        o = s.heads * s.v_head_dim * h
        return float(q + kv_a + kv_b + o)
    q = h * s.heads * s.head_dim * (2 if s.q_gate else 1)
    kv = 2 * h * s.kv_heads * s.head_dim
    o = s.heads * s.head_dim * h
    return float(q + kv + o)


def _mlp_params(hidden: int, intermediate: int, gated: bool) -> float:
    return float((3 if gated else 2) * hidden * intermediate)


def moe_layer_count(s: Shape) -> int:
    if s.experts <= 1:
        return 0
    n = s.moe_layers if s.moe_layers is not None else s.layers - s.first_dense_layers
    return max(0, min(n, s.layers))


def param_groups(s: Shape) -> ParamGroups:
    softmax_layers = s.layers - s.linear_layers
    moe_n = moe_layer_count(s)
    dense_n = s.layers - moe_n
    moe_i = s.moe_intermediate or s.intermediate
    expert = _mlp_params(s.hidden, moe_i, s.gated_mlp)
    shared_i = s.shared_intermediate or moe_i
    embed = float(s.vocab * s.hidden)
    return ParamGroups(
        embed_in=embed,
        lm_head=0.0 if s.tied_embeddings else embed,
        attention=softmax_layers * attention_params_per_layer(s),
        linear_attention=s.linear_layers * s.linear_params,
        router=float(moe_n * s.hidden * s.experts),
        experts=moe_n * s.experts * expert,
        expert_active=moe_n * min(s.active_experts, s.experts) * expert,
        shared=moe_n * s.shared_experts * _mlp_params(s.hidden, shared_i, s.gated_mlp),
        dense_mlp=dense_n * _mlp_params(s.hidden, s.intermediate, s.gated_mlp),
        norms=2.0 * s.hidden * s.layers,
        vision=s.vision_params,
        extra=s.extra_params,
    )


def count_params(s: Shape) -> tuple[float, float]:
    """(total, active-per-token) parameter counts."""
    g = param_groups(s)
    return g.total, g.active


def kv_elements_per_layer(s: Shape) -> float:
    """K and V (or the MLA latent + decoupled RoPE key) cached per token by one layer."""
    if s.kv_lora_rank is not None:
        return float(s.kv_lora_rank + s.qk_rope_head_dim)
    return 2.0 * s.kv_heads * s.head_dim


def attention_layout(s: Shape) -> AttentionLayout | None:
    """The per-type KV sums, or None when every layer attends fully (the legacy formula)."""
    if s.window_layers == 0 and s.linear_layers == 0:
        return None
    per_layer = kv_elements_per_layer(s)
    window_layers = s.window_layers if s.window > 0 else 0
    full = max(s.layers - window_layers - s.linear_layers, 0)
    return AttentionLayout(
        full_layers=full,
        full_kv_elements=full * per_layer,
        window=s.window if window_layers else 0,
        window_layers=window_layers,
        window_kv_elements=window_layers * per_layer,
        linear_layers=s.linear_layers,
        state_bytes=s.linear_layers * s.linear_state * LINEAR_STATE_BYTES,
    )


def _attention_in_out(s: Shape) -> float:
    """(in + out) summed over one softmax-attention layer's projections."""
    h = s.hidden
    if s.kv_lora_rank is not None:
        qk = s.qk_nope_head_dim + s.qk_rope_head_dim
        if s.q_lora_rank:
            q = (h + s.q_lora_rank) + (s.q_lora_rank + s.heads * qk)  # q_a_proj, q_b_proj
        else:
            q = h + s.heads * qk
        kv_a = h + s.kv_lora_rank + s.qk_rope_head_dim
        kv_b = s.kv_lora_rank + s.heads * (s.qk_nope_head_dim + s.v_head_dim)
        o = s.heads * s.v_head_dim + h
        return float(q + kv_a + kv_b + o)
    q = h + s.heads * s.head_dim * (2 if s.q_gate else 1)
    kv = 2 * (h + s.kv_heads * s.head_dim)
    o = s.heads * s.head_dim + h
    return float(q + kv + o)


def lora_in_out(s: Shape) -> float:
    """Sum of (in_features + out_features) over the linear projections LoRA adapts, whole model;
    a rank-r adapter on an (in x out) projection trains r x (in + out) parameters (Hu et al.
    2021, arXiv:2106.09685, section 4.1).

    Which modules get adapters (the QLoRA paper's "all linear layers", arXiv:2305.14314
    section 4; qlora.py find_all_linear_names, which skips lm_head):
      * every softmax-attention projection (q, k, v, o; MLA: q_a, q_b, kv_a, kv_b, o);
      * every MLP projection (gate, up, down) of dense layers, of every routed expert and of
        every shared expert (PEFT target_modules="all-linear" on Mixtral / Qwen-MoE / DeepSeek);
      * linear-attention / Mamba mixers, approximated as one hidden-wide projection holding the
        mixer's weights (in + out = hidden + weights / hidden);
      * not the MoE router, the embeddings / LM head or a vision tower.
    """
    softmax_layers = s.layers - s.linear_layers
    moe_n = moe_layer_count(s)
    dense_n = s.layers - moe_n
    mats = 3 if s.gated_mlp else 2
    moe_i = s.moe_intermediate or s.intermediate
    shared_i = s.shared_intermediate or moe_i
    total = softmax_layers * _attention_in_out(s)
    if s.linear_layers:
        total += s.linear_layers * (s.hidden + s.linear_params / s.hidden)
    total += dense_n * mats * (s.hidden + s.intermediate)
    total += moe_n * s.experts * mats * (s.hidden + moe_i)
    total += moe_n * s.shared_experts * mats * (s.hidden + shared_i)
    return float(total)
