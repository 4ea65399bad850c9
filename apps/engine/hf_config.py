"""A pasted Hugging Face config.json -> ModelSpec (parameter count computed from the shapes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apps.engine.presets import decoder
from apps.engine.shapes import Shape, count_params
from apps.engine.types import EngineInputError, ModelKind, ModelSpec
from apps.engine.validation import get_bool, get_float, get_int, require_dict

_MAX_DIM = 1_000_000
_NON_GATED = {
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
    "bert",
    "roberta",
    "xlm-roberta",
    "mpt",
    "gpt2",
    "bloom",
    "gpt_bigcode",
}
_ENCODERS = {"bert", "roberta", "xlm-roberta", "nomic_bert"}


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


def model_from_hf_config(config: Mapping[str, Any], *, field: str = "hf_config") -> ModelSpec:
    cfg = require_dict(config, field)
    model_type_raw = cfg.get("model_type", "llama")
    if not isinstance(model_type_raw, str):
        raise EngineInputError(f"{field}.model_type", "must be a string")
    model_type = model_type_raw.lower()
    text_config = cfg.get("text_config")
    if isinstance(text_config, dict) and cfg.get("num_hidden_layers") is None:
        cfg = {**text_config, "model_type": text_config.get("model_type", model_type)}
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
    if layers > 10_000 or heads > hidden:
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
    head_dim = _first_int(cfg, ("head_dim",), field) or max(hidden // heads, 1)
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
    active = _first_int(cfg, ("num_experts_per_tok", "moe_topk"), field, default=1) or 1
    active = min(active, experts)
    moe_inter = _first_int(cfg, ("moe_intermediate_size",), field)
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
    kv_lora = _first_int(cfg, ("kv_lora_rank",), field)
    shape = Shape(
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv,
        head_dim=head_dim,
        vocab=vocab,
        intermediate=inter,
        gated_mlp=model_type not in _NON_GATED,
        tied_embeddings=tied,
        experts=experts,
        active_experts=active,
        moe_intermediate=moe_inter if experts > 1 else None,
        shared_experts=_first_int(cfg, ("n_shared_experts",), field, lo=0, default=0) or 0,
        first_dense_layers=min(
            _first_int(cfg, ("first_k_dense_replace",), field, lo=0, default=0) or 0, layers
        ),
        q_lora_rank=_first_int(cfg, ("q_lora_rank",), field),
        kv_lora_rank=kv_lora,
        qk_rope_head_dim=_first_int(cfg, ("qk_rope_head_dim",), field, lo=0, default=0) or 0,
        qk_nope_head_dim=_first_int(cfg, ("qk_nope_head_dim",), field, lo=0, default=0) or 0,
        v_head_dim=_first_int(cfg, ("v_head_dim",), field, lo=0, default=0) or 0,
    )
    name_raw = cfg.get("_name_or_path") or model_type
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
        )
    return decoder(name, shape, max_context=max_ctx)
