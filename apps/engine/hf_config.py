"""A pasted Hugging Face config.json -> ModelSpec (parameter count computed from the shapes).

Read as published: multimodal wrappers (`text_config` / `language_config`, with the vision
tower counted roughly from `vision_config`), per-`model_type` defaults for the fields a config
leaves out (`_DEFAULTS`, copied from the transformers configuration classes), each layer's
attention type and MLP type (counted once here, not per evaluation), and the checkpoint's
`quantization_config` (see `quantization`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from apps.engine import constants as c
from apps.engine.presets import decoder
from apps.engine.quantization import checkpoint_weights, scheme_from_config
from apps.engine.shapes import (
    LINEAR_STATE_BYTES,
    Shape,
    count_params,
    gated_deltanet,
    group_layer_counts,
    mamba2_mixer,
    mamba_mixer,
    param_groups,
    vit_params,
)
from apps.engine.types import (
    CheckpointWeights,
    EngineInputError,
    ModelKind,
    ModelSpec,
    Precision,
)
from apps.engine.validation import get_bool, get_float, get_int, require_dict

_MAX_DIM = 1_000_000
_MAX_LAYERS = 10_000
_NON_GATED = {
    "nemotron_h",  # relu2 MLPs and experts: up and down projections only
    "gptj",
    "gpt_neox",
    "gpt2",
    "falcon",
    "mpt",
    "bert",
    "roberta",
    "xlm-roberta",
    "opt",
    "bloom",
    "gpt_bigcode",
    "phi",
}
_TIED_BY_DEFAULT = {
    "gemma",
    "gemma2",
    "gemma3",
    "gemma3_text",
    "bert",
    "roberta",
    "xlm-roberta",
    "mpt",
    "gpt2",
    "bloom",
    "gpt_bigcode",
}
_ENCODERS = {"bert", "roberta", "xlm-roberta", "nomic_bert"}

# Defaults of the transformers configuration classes (transformers v4.56,
# src/transformers/models/<name>/configuration_<name>.py, `__init__` keyword defaults) for the
# fields published config.json files leave out. Layer, hidden and head counts are never taken
# from here: a config without them is refused, naming the field.
_DEFAULTS: dict[str, dict[str, Any]] = {
    # Gemma3TextConfig: vocab 262_208, head_dim 256, kv 4, sliding_window 4096, one global layer
    # in every 6 (sliding_window_pattern), tied embeddings, 131_072 positions.
    "gemma3_text": {
        "vocab_size": 262_208,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "intermediate_size": 9216,
        "sliding_window": 4096,
        "sliding_window_pattern": 6,
        "max_position_embeddings": 131_072,
        "tie_word_embeddings": True,
    },
    # Gemma2Config: vocab 256_000, head_dim 256, sliding_window 4096 on every other layer.
    "gemma2": {
        "vocab_size": 256_000,
        "head_dim": 256,
        "sliding_window": 4096,
        "max_position_embeddings": 8192,
        "tie_word_embeddings": True,
    },
    # Llama4TextConfig: vocab 202_048, intermediate 8192 (experts), intermediate_size_mlp 16384
    # (dense layers), 16 experts top-1, attention_chunk_size 8192 on the RoPE layers, one NoPE
    # (global) layer every no_rope_layer_interval=4, interleave_moe_layer_step 1.
    "llama4_text": {
        "vocab_size": 202_048,
        "intermediate_size": 8192,
        "intermediate_size_mlp": 16384,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "num_local_experts": 16,
        "num_experts_per_tok": 1,
        "interleave_moe_layer_step": 1,
        "attention_chunk_size": 8192,
        "no_rope_layer_interval": 4,
        "max_position_embeddings": 4096 * 32,
        "tie_word_embeddings": False,
    },
    # GptOssConfig: vocab 201_088, 128 experts top-4 of width 2880, head_dim 64, kv 8,
    # sliding_window 128 on every other layer (layer_types), 131_072 positions.
    "gpt_oss": {
        "vocab_size": 201_088,
        "intermediate_size": 2880,
        "head_dim": 64,
        "num_key_value_heads": 8,
        "num_local_experts": 128,
        "num_experts_per_tok": 4,
        "sliding_window": 128,
        "max_position_embeddings": 131_072,
        "tie_word_embeddings": False,
    },
    # Qwen3NextConfig: vocab 151_936, head_dim 256, kv 2, 512 experts top-10 of width 512,
    # one shared expert of 512, Gated DeltaNet linear attention (16 key heads x 128, 32 value
    # heads x 128, conv kernel 4) with one full-attention layer every full_attention_interval=4.
    "qwen3_next": {
        "vocab_size": 151_936,
        "intermediate_size": 5632,
        "num_key_value_heads": 2,
        "head_dim": 256,
        "num_experts": 512,
        "num_experts_per_tok": 10,
        "moe_intermediate_size": 512,
        "shared_expert_intermediate_size": 512,
        "decoder_sparse_step": 1,
        "full_attention_interval": 4,
        "linear_num_key_heads": 16,
        "linear_num_value_heads": 32,
        "linear_key_head_dim": 128,
        "linear_value_head_dim": 128,
        "linear_conv_kernel_dim": 4,
        "max_position_embeddings": 32768,
        "tie_word_embeddings": False,
    },
    # Qwen2MoeConfig: vocab 151_936, 60 experts top-4 of 1408, shared expert of 5632.
    "qwen2_moe": {
        "vocab_size": 151_936,
        "num_experts": 60,
        "num_experts_per_tok": 4,
        "moe_intermediate_size": 1408,
        "shared_expert_intermediate_size": 5632,
        "decoder_sparse_step": 1,
        "tie_word_embeddings": False,
    },
    # Qwen3MoeConfig: vocab 151_936, 128 experts top-8 of 768, no shared expert.
    "qwen3_moe": {
        "vocab_size": 151_936,
        "num_experts": 128,
        "num_experts_per_tok": 8,
        "moe_intermediate_size": 768,
        "decoder_sparse_step": 1,
        "tie_word_embeddings": False,
    },
    # DeepseekV3Config: vocab 129_280, 256 routed experts top-8 of 2048, 1 shared, first 3
    # layers dense, moe_layer_freq 1, MLA q_lora 1536 / kv_lora 512 / rope 64 / nope 128 / v 128.
    "deepseek_v3": {
        "vocab_size": 129_280,
        "intermediate_size": 18432,
        "moe_intermediate_size": 2048,
        "n_routed_experts": 256,
        "num_experts_per_tok": 8,
        "n_shared_experts": 1,
        "first_k_dense_replace": 3,
        "moe_layer_freq": 1,
        "q_lora_rank": 1536,
        "kv_lora_rank": 512,
        "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128,
        "v_head_dim": 128,
        "tie_word_embeddings": False,
    },
    # MistralConfig: vocab 32_000, kv 8, sliding_window 4096 (v0.1; later configs set null).
    "mistral": {"vocab_size": 32_000, "num_key_value_heads": 8, "sliding_window": 4096},
    # JambaConfig: attention every attn_layer_period=8 at offset 4, MoE every 2 at offset 1,
    # 16 experts top-2, Mamba d_state 16 / d_conv 4 / expand 2.
    "jamba": {
        "vocab_size": 65_536,
        "num_key_value_heads": 8,
        "attn_layer_period": 8,
        "attn_layer_offset": 4,
        "expert_layer_period": 2,
        "expert_layer_offset": 1,
        "num_experts": 16,
        "num_experts_per_tok": 2,
        "mamba_d_state": 16,
        "mamba_d_conv": 4,
        "mamba_expand": 2,
        "tie_word_embeddings": False,
    },
    # NemotronHConfig (transformers v4.56 models/nemotron_h): Mamba-2 mixers of
    # mamba_num_heads x mamba_head_dim with n_groups x ssm_state_size B / C, conv_kernel 4;
    # non-gated relu2 MLPs; one sub-layer per block, chosen by hybrid_override_pattern.
    "nemotron_h": {
        "vocab_size": 131_072,
        "num_key_value_heads": 8,
        "mamba_num_heads": 128,
        "mamba_head_dim": 64,
        "n_groups": 8,
        "ssm_state_size": 128,
        "conv_kernel": 4,
        "max_position_embeddings": 4096,
        "tie_word_embeddings": False,
    },
}
_DEFAULTS["gemma3"] = _DEFAULTS["gemma3_text"]
_DEFAULTS["llama4"] = _DEFAULTS["llama4_text"]
_DEFAULTS["deepseek_v2"] = {
    k: v for k, v in _DEFAULTS["deepseek_v3"].items() if k != "vocab_size"
} | {
    "vocab_size": 102_400,
    "n_routed_experts": 160,
    "num_experts_per_tok": 6,
    "n_shared_experts": 2,
}
_DEFAULTS["kimi_k2"] = _DEFAULTS["deepseek_v3"]

# Model types whose `sliding_window`, when set, applies to every layer (MistralConfig,
# MixtralConfig, Phi3Config, Starcoder2Config: one window for all layers).
_ALL_LAYERS_WINDOWED = {"mistral", "mixtral", "phi3", "starcoder2"}
# Model types that interleave windowed and global layers by a fixed pattern.
_GEMMA2_STYLE = {"gemma2"}  # sliding on even layers (Gemma2Config.layer_types)
_PATTERN_DEFAULT = {"gemma3_text": 6, "gemma3": 6, "cohere2": 4}  # one global layer per N
_QWEN_WINDOW_TYPES = {"qwen2", "qwen2_moe", "qwen3", "qwen3_moe"}  # use_sliding_window

_DTYPES = {
    "bfloat16": Precision.BF16,
    "float16": Precision.FP16,
    "half": Precision.FP16,
    "float32": Precision.FP32,
    "float": Precision.FP32,
}
# ViT patch size when a vision_config leaves it out (SigLIP / CLIP ViT-L/14 use 14).
_DEFAULT_PATCH = 14
# Mamba's default dt_rank: ceil(hidden / 16) (MambaConfig / JambaConfig "auto").
_MAMBA_DT_RANK_DIVISOR = 16


def _first_int(
    cfg: Mapping[str, Any],
    keys: tuple[str, ...],
    field: str,
    *,
    lo: int = 1,
    default: int | None = None,
) -> int | None:
    for key in keys:
        if cfg.get(key) is not None:
            return get_int(cfg, key, f"{field}.{key}", lo=lo, hi=_MAX_DIM * 1000)
    return default


def _need(value: int | None, field: str, what: str) -> int:
    if value is None:
        raise EngineInputError(field, f"config has no {what}")
    return value


def _int_list(cfg: Mapping[str, Any], key: str, field: str) -> list[int] | None:
    raw = cfg.get(key)
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(
        isinstance(x, int) and not isinstance(x, bool) for x in raw
    ):
        raise EngineInputError(f"{field}.{key}", "must be a list of integers")
    return raw


def _unwrap(cfg: Mapping[str, Any], field: str) -> tuple[dict[str, Any], str, Mapping[str, Any]]:
    """(text config with the wrapper's top-level keys underneath, its model_type, vision_config).

    A multimodal wrapper keeps the language model in `text_config` (Gemma 3, Llama 4, Mistral 3)
    or `language_config` / `llm_config`; quantization_config and torch_dtype usually stay at the
    top level, so they are carried down unless the text config has its own.
    """
    model_type_raw = cfg.get("model_type", "llama")
    if not isinstance(model_type_raw, str):
        raise EngineInputError(f"{field}.model_type", "must be a string")
    model_type = model_type_raw.lower()
    vision_raw = cfg.get("vision_config")
    vision: Mapping[str, Any] = vision_raw if isinstance(vision_raw, dict) else {}
    for key in ("text_config", "language_config", "llm_config"):
        inner = cfg.get(key)
        if inner is None:
            continue
        inner_field = f"{field}.{key}"
        inner = require_dict(inner, inner_field)
        if inner.get("num_hidden_layers") is None and cfg.get("num_hidden_layers") is not None:
            break  # a text-only config that also carries a sub-config: read the top level
        inner_type_raw = inner.get("model_type", model_type)
        inner_type = inner_type_raw.lower() if isinstance(inner_type_raw, str) else model_type
        carried = {k: v for k, v in cfg.items() if k not in ("vision_config", key)}
        merged = {**_DEFAULTS.get(inner_type, _DEFAULTS.get(model_type, {})), **carried, **inner}
        merged["model_type"] = inner_type
        return merged, inner_type, vision
    return {**_DEFAULTS.get(model_type, {}), **cfg}, model_type, vision


def _vision_params(vision: Mapping[str, Any], text_hidden: int, field: str) -> float:
    """The vision tower of a multimodal wrapper, roughly (see `shapes.vit_params`)."""
    if not vision:
        return 0.0
    vf = f"{field}.vision_config"
    h = _first_int(vision, ("hidden_size", "width", "embed_dim"), vf)
    layers = _first_int(vision, ("num_hidden_layers", "depth", "num_layers"), vf)
    if h is None or layers is None:
        return 0.0
    inter = _first_int(vision, ("intermediate_size", "mlp_dim"), vf) or 4 * h
    patch = _first_int(vision, ("patch_size",), vf) or _DEFAULT_PATCH
    out_dim = _first_int(vision, ("vision_output_dim", "out_hidden_size"), vf) or h
    return vit_params(h, layers, inter, patch, out_dim, text_hidden)


def _layer_types(
    cfg: Mapping[str, Any], model_type: str, layers: int, max_ctx: int, field: str
) -> tuple[list[str], int]:
    """Each layer's attention type ("full", "window", "linear") and the window in tokens."""
    raw = cfg.get("layer_types")
    window = _first_int(cfg, ("sliding_window",), field, default=0) or 0
    chunk = _first_int(cfg, ("attention_chunk_size",), field, default=0) or 0
    hybrid = hybrid_pattern(cfg, layers, field)
    if hybrid is not None:
        return [_PATTERN_KINDS[ch] for ch in hybrid], 0
    if raw is not None:
        if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
            raise EngineInputError(f"{field}.layer_types", "must be a list of strings")
        if len(raw) != layers:
            raise EngineInputError(
                f"{field}.layer_types", f"has {len(raw)} entries for {layers} layers"
            )
        out: list[str] = []
        for i, name in enumerate(raw):
            n = name.lower()
            if "linear" in n or "mamba" in n or "recurrent" in n or "ssm" in n:
                out.append("linear")
            elif "chunk" in n:
                out.append("window" if chunk else "full")
                window = chunk or window
            elif "sliding" in n or "local" in n:
                out.append("window" if window else "full")
            elif "full" in n or "global" in n or n == "attention":
                out.append("full")
            else:
                raise EngineInputError(f"{field}.layer_types[{i}]", f"unknown type {name[:40]!r}")
        return out, window
    if model_type == "qwen3_next" or cfg.get("full_attention_interval") is not None:
        k = _first_int(cfg, ("full_attention_interval",), field, default=4) or 4
        return ["full" if (i + 1) % k == 0 else "linear" for i in range(layers)], 0
    if model_type == "jamba" or cfg.get("attn_layer_period") is not None:
        period = _first_int(cfg, ("attn_layer_period",), field, default=8) or 8
        offset = _first_int(cfg, ("attn_layer_offset",), field, lo=0, default=4) or 0
        return ["full" if i % period == offset else "linear" for i in range(layers)], 0
    if chunk and model_type.startswith("llama4"):
        rope = _int_list(cfg, "no_rope_layers", field)
        if rope is None or len(rope) != layers:
            interval = _first_int(cfg, ("no_rope_layer_interval",), field, default=4) or 4
            rope = [int((i + 1) % interval != 0) for i in range(layers)]
        # RoPE layers use chunked local attention; the NoPE layers attend globally.
        return ["window" if r else "full" for r in rope], chunk
    if not window or window >= max_ctx:
        return ["full"] * layers, 0
    if model_type in _GEMMA2_STYLE:
        return ["window" if i % 2 == 0 else "full" for i in range(layers)], window
    pattern = _first_int(
        cfg, ("sliding_window_pattern",), field, default=0
    ) or _PATTERN_DEFAULT.get(model_type, 0)
    if pattern:
        return ["full" if (i + 1) % pattern == 0 else "window" for i in range(layers)], window
    if model_type in _QWEN_WINDOW_TYPES or "max_window_layers" in cfg:
        if not get_bool(cfg, "use_sliding_window", f"{field}.use_sliding_window", default=False):
            return ["full"] * layers, 0
        start = _first_int(cfg, ("max_window_layers",), field, lo=0, default=layers) or 0
        return ["window" if i >= start else "full" for i in range(layers)], window
    use = cfg.get("use_sliding_window")
    if model_type in _ALL_LAYERS_WINDOWED or use is True:
        return ["window"] * layers, window
    return ["full"] * layers, 0


# nemotron_h's hybrid_override_pattern, one character a block (transformers
# NemotronHConfig.layers_block_type): "M" a Mamba-2 mixer, "*" attention, "-" an MLP, "E" an
# MoE block. Each block holds that one sub-layer.
_PATTERN_KINDS = {"M": "linear", "*": "full", "-": "mlp", "E": "moe"}


def hybrid_pattern(cfg: Mapping[str, Any], layers: int, field: str) -> str | None:
    """The config's hybrid_override_pattern, checked against the layer count; None without."""
    raw = cfg.get("hybrid_override_pattern")
    if raw is None:
        return None
    key = f"{field}.hybrid_override_pattern"
    if not isinstance(raw, str):
        raise EngineInputError(key, "must be a string such as 'M-M*-'")
    bad = sorted(set(raw) - set(_PATTERN_KINDS))
    if bad:
        raise EngineInputError(key, f"unknown block type {bad[0][:1]!r} (M, *, - or E)")
    if len(raw) != layers:
        raise EngineInputError(key, f"has {len(raw)} blocks for {layers} layers")
    return raw


def _moe_layer_flags(
    cfg: Mapping[str, Any], model_type: str, layers: int, field: str
) -> list[bool]:
    """Which layers carry routed experts, from every layout key the published configs use."""
    pattern = hybrid_pattern(cfg, layers, field)
    if pattern is not None:
        return [ch == "E" for ch in pattern]
    listed = _int_list(cfg, "moe_layers", field)
    if listed is not None:
        chosen = set(listed)
        return [i in chosen for i in range(layers)]
    step = _first_int(cfg, ("interleave_moe_layer_step",), field, default=1) or 1
    sparse_step = _first_int(cfg, ("decoder_sparse_step",), field, default=1) or 1
    first_dense = _first_int(cfg, ("first_k_dense_replace",), field, lo=0, default=0) or 0
    freq = _first_int(cfg, ("moe_layer_freq",), field, default=1) or 1
    mlp_only = set(_int_list(cfg, "mlp_only_layers", field) or [])
    period = _first_int(cfg, ("expert_layer_period",), field, default=1) or 1
    offset = _first_int(cfg, ("expert_layer_offset",), field, lo=0, default=0) or 0
    if model_type != "jamba" and cfg.get("expert_layer_period") is None:
        offset = 0
    return [
        (i + 1) % step == 0
        and (i + 1) % sparse_step == 0
        and i >= first_dense
        and i % freq == 0
        and i not in mlp_only
        and i % period == offset % period
        for i in range(layers)
    ]


def _linear_mixer(cfg: Mapping[str, Any], hidden: int, field: str) -> tuple[float, float]:
    """(weights, constant per-sequence state elements) of one linear-attention / Mamba layer."""
    nv = _first_int(cfg, ("linear_num_value_heads",), field)
    if nv is not None:  # Gated DeltaNet (Qwen3-Next)
        nk = _first_int(cfg, ("linear_num_key_heads",), field, default=nv) or nv
        dk = _first_int(cfg, ("linear_key_head_dim",), field, default=128) or 128
        dv = _first_int(cfg, ("linear_value_head_dim",), field, default=128) or 128
        kernel = _first_int(cfg, ("linear_conv_kernel_dim",), field, default=4) or 4
        return gated_deltanet(hidden, nk, nv, dk, dv, kernel)
    mamba_heads = _first_int(cfg, ("mamba_num_heads",), field)
    if mamba_heads is not None:  # Mamba-2 (nemotron_h)
        head = _first_int(cfg, ("mamba_head_dim",), field, default=64) or 64
        groups = _first_int(cfg, ("n_groups",), field, default=8) or 8
        d_state = _first_int(cfg, ("ssm_state_size", "state_size"), field, default=128) or 128
        d_conv = _first_int(cfg, ("conv_kernel",), field, default=4) or 4
        cache = cfg.get("mamba_ssm_cache_dtype")
        state_bytes = c.BYTES_FP32 if cache in ("float32", "fp32") else LINEAR_STATE_BYTES
        return mamba2_mixer(hidden, mamba_heads, head, groups, d_state, d_conv, state_bytes)
    # Mamba (Jamba and other Mamba hybrids); defaults of MambaConfig / JambaConfig
    d_state = _first_int(cfg, ("mamba_d_state", "state_size", "ssm_state_size"), field) or 16
    d_conv = _first_int(cfg, ("mamba_d_conv", "conv_kernel"), field) or 4
    expand = _first_int(cfg, ("mamba_expand", "expand"), field) or 2
    dt_rank = _first_int(cfg, ("mamba_dt_rank", "time_step_rank"), field) or math.ceil(
        hidden / _MAMBA_DT_RANK_DIVISOR
    )
    return mamba_mixer(hidden, d_state, d_conv, expand, dt_rank)


def _dtype(cfg: Mapping[str, Any], field: str) -> Precision | None:
    for key in ("torch_dtype", "dtype"):
        raw = cfg.get(key)
        if raw is None:
            continue
        if not isinstance(raw, str):
            raise EngineInputError(f"{field}.{key}", "must be a string, e.g. 'bfloat16'")
        found = _DTYPES.get(raw.lower().removeprefix("torch."))
        if found is None:
            raise EngineInputError(f"{field}.{key}", f"unknown dtype {raw[:40]!r}")
        return found
    return None


def split_pasted_configs(
    config: Mapping[str, Any], hf_quant_config: Mapping[str, Any] | None
) -> tuple[Mapping[str, Any], Mapping[str, Any] | None]:
    """(config.json, hf_quant_config.json) from what was given: a ModelOpt export's
    hf_quant_config.json ({"producer": ..., "quantization": {"quant_algo": ...}}) may come as
    its own argument, or nested in the config under "hf_quant_config" (as a pasted pair is
    stored)."""
    nested = config.get("hf_quant_config")
    if hf_quant_config is None and isinstance(nested, dict):
        rest = {k: v for k, v in config.items() if k != "hf_quant_config"}
        return rest, nested
    return config, hf_quant_config


def is_hf_quant_config(value: Any) -> bool:
    """Whether a JSON object is a ModelOpt hf_quant_config.json (its "quantization" block
    names a quant_algo) rather than a config.json."""
    if not isinstance(value, dict):
        return False
    block = value.get("quantization")
    return isinstance(block, dict) and "quant_algo" in block and "num_hidden_layers" not in value


def model_from_hf_config(
    config: Mapping[str, Any],
    *,
    field: str = "hf_config",
    hf_quant_config: Mapping[str, Any] | None = None,
    quant_field: str = "hf_quant_config",
) -> ModelSpec:
    """`config`: a config.json as published (Infinity / NaN literals may stand where Hugging
    Face writes them; only the fields read here are checked). `hf_quant_config`: NVIDIA
    ModelOpt's hf_quant_config.json, where a ModelOpt checkpoint keeps its quantization (FP8,
    NVFP4) when config.json has no quantization_config."""
    top = require_dict(config, field)
    top, hf_quant_config = split_pasted_configs(top, hf_quant_config)
    cfg, model_type, vision = _unwrap(top, field)
    attn_cfg = cfg.get("attn_config")
    attn = attn_cfg if isinstance(attn_cfg, dict) else {}

    layers = _need(
        _first_int(cfg, ("num_hidden_layers", "n_layer", "n_layers", "num_layers"), field),
        field,
        "layer count (num_hidden_layers)",
    )
    hidden = _need(
        _first_int(cfg, ("hidden_size", "n_embd", "d_model"), field),
        field,
        "hidden size (hidden_size)",
    )
    heads = _need(
        _first_int(cfg, ("num_attention_heads", "n_head", "n_heads"), field),
        field,
        "attention head count (num_attention_heads)",
    )
    if layers > _MAX_LAYERS or heads > hidden:
        raise EngineInputError(f"{field}.num_hidden_layers", "implausible shape")
    kv = _first_int(cfg, ("num_key_value_heads", "num_kv_heads"), field)
    new_arch = get_bool(
        cfg, "new_decoder_architecture", f"{field}.new_decoder_architecture", default=False
    )
    if model_type == "falcon" and not new_arch:
        kv = 1 if get_bool(cfg, "multi_query", f"{field}.multi_query", default=True) else heads
    if kv is None and attn.get("kv_n_heads") is not None:
        kv = get_int(attn, "kv_n_heads", f"{field}.attn_config.kv_n_heads", lo=1, hi=_MAX_DIM)
    kv = min(kv or heads, heads)
    kv_lora = _first_int(cfg, ("kv_lora_rank",), field)
    rope_dim = _first_int(cfg, ("qk_rope_head_dim",), field, lo=0, default=0) or 0
    nope_dim = _first_int(cfg, ("qk_nope_head_dim",), field, lo=0, default=0) or 0
    mla_head = nope_dim + rope_dim if kv_lora is not None and nope_dim + rope_dim else None
    head_dim = _first_int(cfg, ("head_dim",), field) or mla_head or max(hidden // heads, 1)
    vocab = _need(
        _first_int(cfg, ("vocab_size", "padded_vocab_size"), field),
        field,
        "vocabulary size (vocab_size)",
    )
    inter = _first_int(cfg, ("intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim"), field)
    if inter is None:
        ratio = get_float(
            {**attn, **cfg}, "expansion_ratio", f"{field}.expansion_ratio", lo=0, hi=64, default=4.0
        )
        inter = int(hidden * (ratio or 4.0))
    experts = (
        _first_int(cfg, ("num_local_experts", "num_experts", "n_routed_experts"), field, default=1)
        or 1
    )
    active = (
        _first_int(cfg, ("num_experts_per_tok", "experts_per_token", "moe_topk"), field, default=1)
        or 1
    )
    active = min(active, experts)
    llama4 = model_type.startswith("llama4")
    # Expert width: moe_intermediate_size where the config has one; Llama 4, Mixtral, gpt-oss
    # and Jamba experts use intermediate_size. Llama 4's dense layers use intermediate_size_mlp.
    moe_inter = _first_int(cfg, ("moe_intermediate_size",), field) or inter
    dense_inter = _first_int(cfg, ("intermediate_size_mlp",), field) if llama4 else None
    shared = _first_int(cfg, ("n_shared_experts",), field, lo=0, default=0) or 0
    shared_inter = moe_inter
    shared_width = _first_int(
        cfg,
        ("shared_expert_intermediate_size", "moe_shared_expert_intermediate_size"),
        field,
        lo=0,
    )
    if shared_width:
        shared, shared_inter = 1, shared_width
    elif llama4 and experts > 1:
        shared, shared_inter = 1, inter  # Llama4TextMoe.shared_expert: intermediate_size
    tied_default = model_type in _TIED_BY_DEFAULT
    tied = get_bool(
        cfg, "tie_word_embeddings", f"{field}.tie_word_embeddings", default=tied_default
    )
    max_ctx = (
        _first_int(
            cfg,
            ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length"),
            field,
            default=4096,
        )
        or 4096
    )
    moe_flags = _moe_layer_flags(cfg, model_type, layers, field) if experts > 1 else []
    kinds, window = _layer_types(cfg, model_type, layers, max_ctx, field)
    linear_n = kinds.count("linear")
    # Single-sub-layer blocks (hybrid_override_pattern): MLP / MoE blocks have no mixer,
    # mixer blocks no MLP.
    mixer_free = kinds.count("mlp") + kinds.count("moe")
    mlp_free = (linear_n + kinds.count("full")) if mixer_free or "moe" in kinds else 0
    linear_params, linear_state = _linear_mixer(cfg, hidden, field) if linear_n else (0.0, 0.0)
    shape = Shape(
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv,
        head_dim=head_dim,
        vocab=vocab,
        intermediate=dense_inter or inter,
        gated_mlp=model_type not in _NON_GATED,
        tied_embeddings=tied,
        experts=experts,
        active_experts=active,
        moe_intermediate=moe_inter if experts > 1 else None,
        shared_experts=shared,
        shared_intermediate=shared_inter,
        moe_layers=sum(moe_flags) if experts > 1 else None,
        q_lora_rank=_first_int(cfg, ("q_lora_rank",), field),
        kv_lora_rank=kv_lora,
        qk_rope_head_dim=rope_dim,
        qk_nope_head_dim=nope_dim,
        v_head_dim=_first_int(cfg, ("v_head_dim",), field, lo=0, default=0) or 0,
        q_gate=model_type == "qwen3_next",
        window=window,
        window_layers=kinds.count("window") if window else 0,
        linear_layers=linear_n,
        linear_params=linear_params,
        linear_state=linear_state,
        mixer_free_layers=mixer_free,
        mlp_free_layers=mlp_free,
        moe_latent=_first_int(cfg, ("moe_latent_size",), field, lo=0, default=0) or 0,
        vision_params=_vision_params(vision, hidden, field),
    )
    name_raw = top.get("_name_or_path") or cfg.get("_name_or_path") or model_type
    name = name_raw[:200] if isinstance(name_raw, str) else model_type
    if model_type in _ENCODERS:
        total, _ = count_params(shape)
        total += (max_ctx + 2) * hidden + hidden * hidden
        return ModelSpec(
            name=name,
            params_billion=total / 1e9,
            layers=layers,
            hidden_size=hidden,
            attention_heads=heads,
            kv_heads=kv,
            head_dim=head_dim,
            vocab_size=vocab,
            intermediate_size=inter,
            kind=ModelKind.ENCODER,
            tied_embeddings=True,
            max_context_tokens=max_ctx,
            native_precision=_dtype(cfg, field),
        )
    checkpoint, quant_notes = _checkpoint(cfg, shape, field, hf_quant_config, quant_field)
    return decoder(
        name,
        shape,
        max_context=max_ctx,
        checkpoint=checkpoint,
        native_precision=_dtype(cfg, field),
        notes=quant_notes + _layout_notes(shape),
    )


def _checkpoint(
    cfg: Mapping[str, Any],
    shape: Shape,
    field: str,
    hf_quant_config: Mapping[str, Any] | None = None,
    quant_field: str = "hf_quant_config",
) -> tuple[CheckpointWeights | None, tuple[str, ...]]:
    q = cfg.get("quantization_config")
    qfield = f"{field}.quantization_config"
    notes: tuple[str, ...] = ()
    if hf_quant_config is not None:
        block = require_dict(hf_quant_config, quant_field).get("quantization")
        block = require_dict(block, f"{quant_field}.quantization")
        if q is None or not isinstance(q, dict) or "quant_algo" not in q:
            # ModelOpt's own file describes the export; config.json's block, when any, is
            # a copy of it or absent.
            q, qfield = {"quant_method": "modelopt", **block}, f"{quant_field}.quantization"
            notes = ("quantization read from hf_quant_config.json (NVIDIA ModelOpt)",)
    if q is None:
        return None, ()
    scheme = scheme_from_config(q, qfield)
    if scheme is None:
        method = str(q.get("quant_method", "?"))[:40]
        return None, (
            f"quantization_config: quant_method {method!r} is not read; weights are sized at "
            "weight_precision",
        )
    return checkpoint_weights(param_groups(shape), scheme, group_layer_counts(shape)), notes


def _layout_notes(s: Shape) -> tuple[str, ...]:
    parts: list[str] = []
    full = s.layers - s.window_layers - s.linear_layers - s.mixer_free_layers
    if s.mixer_free_layers:
        parts.append(f"{s.mixer_free_layers} MLP / MoE blocks without a token mixer")
    if s.window_layers:
        parts.append(f"{s.window_layers} windowed ({s.window} tokens)")
    if s.linear_layers:
        parts.append(f"{s.linear_layers} linear-attention (constant state per sequence)")
    if not parts:
        return ()
    return (f"attention layers: {full} full, " + ", ".join(parts),)
