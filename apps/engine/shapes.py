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
    # Hybrid stacks whose blocks hold ONE sub-layer (nemotron_h's hybrid_override_pattern: "M"
    # a Mamba-2 mixer, "*" attention, "-" an MLP, "E" an MoE block): `mixer_free_layers` have
    # an MLP / MoE but no token mixer, `mlp_free_layers` a mixer (attention or linear) but no
    # MLP. 0 for the usual transformer layer (mixer + MLP).
    mixer_free_layers: int = 0
    mlp_free_layers: int = 0
    # Latent MoE (nemotron_h moe_latent_size): the routed experts run in a `moe_latent`-wide
    # space, entered and left through two hidden x latent projections per MoE layer (counted
    # with the shared experts: every token runs them). 0: experts take the hidden state.
    moe_latent: int = 0
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


def mamba2_mixer(
    hidden: int,
    heads: int,
    head_dim: int,
    groups: int,
    d_state: int,
    d_conv: int,
    state_bytes: float = LINEAR_STATE_BYTES,
) -> tuple[float, float]:
    """(weights, per-sequence state in LINEAR_STATE_BYTES elements) of one Mamba-2 mixer
    (transformers NemotronHMamba2Mixer / Mamba2Mixer): in_proj to the gate z and x (heads x
    head_dim each), B and C (groups x d_state each) and dt (one per head); a depthwise conv1d
    over x, B, C with its bias; dt_bias, A_log and D per head; the gated RMSNorm over
    d_inner; out_proj. The state is the SSM's heads x head_dim x d_state (at `state_bytes`:
    nemotron_h configs ask mamba_ssm_cache_dtype float32) plus the conv window (16-bit)."""
    d_inner = heads * head_dim
    conv_dim = d_inner + 2 * groups * d_state
    in_proj = hidden * (2 * d_inner + 2 * groups * d_state + heads)
    params = in_proj + conv_dim * d_conv + conv_dim + 3 * heads + d_inner + d_inner * hidden
    ssm = heads * head_dim * d_state * state_bytes / LINEAR_STATE_BYTES
    return float(params), float(ssm + conv_dim * (d_conv - 1))


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


def softmax_layer_count(s: Shape) -> int:
    """Layers with softmax attention (full or windowed)."""
    return max(s.layers - s.linear_layers - s.mixer_free_layers, 0)


def dense_mlp_layer_count(s: Shape) -> int:
    """Layers with a dense MLP: neither routed experts nor MLP-free (a mixer-only block)."""
    return max(s.layers - moe_layer_count(s) - s.mlp_free_layers, 0)


def param_groups(s: Shape) -> ParamGroups:
    softmax_layers = softmax_layer_count(s)
    moe_n = moe_layer_count(s)
    dense_n = dense_mlp_layer_count(s)
    moe_i = s.moe_intermediate or s.intermediate
    expert = _mlp_params(s.moe_latent or s.hidden, moe_i, s.gated_mlp)
    shared_i = s.shared_intermediate or moe_i
    latent_proj = 2.0 * s.hidden * s.moe_latent
    embed = float(s.vocab * s.hidden)
    return ParamGroups(
        embed_in=embed,
        lm_head=0.0 if s.tied_embeddings else embed,
        attention=softmax_layers * attention_params_per_layer(s),
        linear_attention=s.linear_layers * s.linear_params,
        router=float(moe_n * s.hidden * s.experts),
        experts=moe_n * s.experts * expert,
        expert_active=moe_n * min(s.active_experts, s.experts) * expert,
        shared=moe_n
        * (s.shared_experts * _mlp_params(s.hidden, shared_i, s.gated_mlp) + latent_proj),
        dense_mlp=dense_n * _mlp_params(s.hidden, s.intermediate, s.gated_mlp),
        # one norm per sub-layer: two per transformer layer, one per single-sub-layer block
        norms=float(s.hidden * (2 * s.layers - s.mixer_free_layers - s.mlp_free_layers)),
        vision=s.vision_params,
        extra=s.extra_params,
    )


def group_layer_counts(s: Shape) -> dict[str, int]:
    """Layers each per-layer tensor group spans (for skip lists that name single layers)."""
    moe_n = moe_layer_count(s)
    return {
        "attention": softmax_layer_count(s),
        "linear_attention": s.linear_layers,
        "router": moe_n,
        "experts": moe_n,
        "shared": moe_n,
        "dense_mlp": dense_mlp_layer_count(s),
    }


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
    if s.window_layers == 0 and s.linear_layers == 0 and s.mixer_free_layers == 0:
        return None
    per_layer = kv_elements_per_layer(s)
    window_layers = s.window_layers if s.window > 0 else 0
    full = max(softmax_layer_count(s) - window_layers, 0)
    return AttentionLayout(
        full_layers=full,
        full_kv_elements=full * per_layer,
        window=s.window if window_layers else 0,
        window_layers=window_layers,
        window_kv_elements=window_layers * per_layer,
        linear_layers=s.linear_layers,
        state_bytes=s.linear_layers * s.linear_state * LINEAR_STATE_BYTES,
        mixer_free_layers=s.mixer_free_layers,
        mlp_free_layers=s.mlp_free_layers,
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
    softmax_layers = softmax_layer_count(s)
    moe_n = moe_layer_count(s)
    dense_n = dense_mlp_layer_count(s)
    mats = 3 if s.gated_mlp else 2
    moe_i = s.moe_intermediate or s.intermediate
    shared_i = s.shared_intermediate or moe_i
    total = softmax_layers * _attention_in_out(s)
    if s.linear_layers:
        total += s.linear_layers * (s.hidden + s.linear_params / s.hidden)
    total += dense_n * mats * (s.hidden + s.intermediate)
    total += moe_n * s.experts * mats * ((s.moe_latent or s.hidden) + moe_i)
    if s.moe_latent:
        total += moe_n * 2 * (s.hidden + s.moe_latent)
    total += moe_n * s.shared_experts * mats * (s.hidden + shared_i)
    return float(total)
