"""A checkpoint's `quantization_config` -> its stored weight bytes, tensor group by tensor group.

Each scheme stores its quantized linear weights at `bytes_per_param` (the value bits plus the
scales that go with them) and keeps the modules it leaves unquantized at 16 bits: always the
input embedding and the norms, by default the LM head and the MoE router, plus whatever the
config lists (`modules_to_not_convert`, `ignore`, `ignored_layers`, `exclude_modules`,
`llm_int8_skip_modules`). A listed name keeps its whole tensor group at 16 bits (a name that
names one layer is read as naming its group in every layer: weights come out a little high).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from apps.engine import constants as c
from apps.engine.shapes import ParamGroups
from apps.engine.types import CheckpointWeights, EngineInputError, Precision

# MXFP4 (OCP Microscaling spec v1.0, 2023): blocks of 32 FP4 (E2M1) values share one 8-bit
# (E8M0) scale -> 4 + 8/32 = 4.25 bits per weight. gpt-oss model card, "MXFP4 ... 4.25 bits".
MXFP4_BLOCK_SIZE = 32
MXFP4_SCALE_BYTES = 1.0
# NVFP4 blocks: constants.FP4_BLOCK_SIZE values per FP8 (E4M3) scale (NVIDIA NVFP4 blog, 2025).
# Block-wise FP8 (DeepSeek-V3 report arXiv:2412.19437 section 3.3.2; transformers
# FineGrainedFP8Config): one FP32 scale per 128 x 128 weight block by default.
FP8_BLOCK_DEFAULT = (128, 128)
FP32_SCALE_BYTES = c.BYTES_FP32
# Group-wise integer schemes (AWQ, GPTQ, compressed-tensors pack-quantized): one FP16 scale per
# group (and, when asymmetric, a zero point packed at the weight's own bit width).
FP16_SCALE_BYTES = c.BYTES_16BIT
INT_GROUP_DEFAULT = 128  # AutoAWQ and AutoGPTQ default q_group_size / group_size
# bitsandbytes 4-bit: blocks of 64 with an FP32 absmax (4.5 bits/weight); with double
# quantization the absmax is 8-bit plus an FP32 per 256 blocks (QLoRA paper, arXiv:2305.14314).
BNB_4BIT_BLOCK = 64
BNB_4BIT_DOUBLE_QUANT_BITS = c.QLORA_BITS_PER_PARAM

# Tensor groups (ParamGroups fields). The input embedding and the norms are never quantized by
# these schemes (they are not Linear layers); the LM head and the MoE router stay 16-bit by
# default (transformers' quantizers and vLLM skip lm_head; routers are kept for accuracy).
_ALWAYS_16BIT = frozenset({"embed_in", "norms", "extra"})
_DEFAULT_16BIT = frozenset({"lm_head", "router", "vision"})
_SKIP_KEYS = (
    "modules_to_not_convert",
    "ignore",
    "ignored_layers",
    "exclude_modules",
    "llm_int8_skip_modules",
)


@dataclass(frozen=True, kw_only=True, slots=True)
class QuantScheme:
    precision: Precision  # the compute path the checkpoint is served on
    bytes_per_param: float  # a quantized weight, scales included
    keep_16bit: frozenset[str]  # ParamGroups fields stored at 16 bits (every layer's)
    label: str
    # Groups kept 16-bit in some layers only: the layer indices a skip list names for them
    # ("backbone.layers.4.mixer.in_proj"); `checkpoint_bytes` keeps that share of the group.
    kept_layers: Mapping[str, frozenset[int]] = field(default_factory=dict)


# Tensors too small to matter that skip lists name one by one (a Mamba layer's conv1d, norms,
# A_log / D / dt_bias, DeepSeek's e_score_correction_bias): they are not read as keeping their
# layer's projections 16-bit.
_TINY_MODULES = ("conv1d", "norm", "a_log", ".d", "dt_bias", "correction_bias")
_LAYER_INDEX = re.compile(r"layers\.(\d+)\.")


def _groups_named(name: str) -> set[str]:
    """The tensor groups a module name (or `re:` pattern) from a skip list stands for."""
    n = name.lower().removeprefix("re:")
    out: set[str] = set()
    if "lm_head" in n or "output_layer" in n:
        out.add("lm_head")
    if "embed" in n or "wte" in n:
        out.add("embed_in")
    if any(k in n for k in ("vision", "visual", "multi_modal_projector", "mm_projector")):
        out.add("vision")
        return out
    tail = n.rstrip("$").rsplit(".", 1)[-1]
    if "router" in n or tail == "gate" or "moe_gate" in n:
        out.add("router")
    if "shared_expert" in n:
        out.add("shared")
    elif "expert" in n:
        out.add("experts")
    # nemotron_h names every block's sub-layer `mixer` (Mamba-2, attention or MoE), so the
    # projection names decide: q/k/v/o attention, in_proj / out_proj a Mamba mixer.
    if any(k in n for k in ("q_proj", "k_proj", "v_proj", "o_proj", "qkv_proj")):
        out.add("attention")
    elif "linear_attn" in n or "mamba" in n or tail in ("in_proj", "out_proj", "mixer"):
        out.add("linear_attention")
    elif any(k in n for k in ("attn", "attention")):
        out.add("attention")
    if not out and any(k in n for k in ("mlp", "feed_forward", "ffn")):
        out.add("dense_mlp")
    return out


def _skip_list(
    q: Mapping[str, Any], field: str
) -> tuple[frozenset[str], dict[str, frozenset[int]]]:
    """(groups kept 16-bit in every layer, {group: the layers it is kept in} for the rest)."""
    whole: set[str] = set()
    layers: dict[str, set[int]] = {}
    for key in _SKIP_KEYS:
        raw = q.get(key)
        if raw is None:
            continue
        if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
            raise EngineInputError(f"{field}.{key}", "must be a list of module names")
        for name in raw:
            low = name.lower().rstrip("$")
            if low.endswith(_TINY_MODULES):
                continue
            groups = _groups_named(name)
            index = _LAYER_INDEX.search(low)
            if index is None or "*" in low:
                whole |= groups
                continue
            for g in groups:
                layers.setdefault(g, set()).add(int(index.group(1)))
    partial = {g: frozenset(ix) for g, ix in layers.items() if g not in whole}
    return frozenset(whole), partial


def _int(q: Mapping[str, Any], key: str, field: str, default: int) -> int:
    v = q.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int):
        raise EngineInputError(f"{field}.{key}", "must be an integer")
    return v


def _int_group_bytes(bits: int, group: int, asymmetric: bool) -> float:
    """Stored bytes per weight of a group-wise integer scheme (group <= 0: per output channel,
    whose scales are negligible)."""
    value = bits / 8.0
    if group <= 0:
        return value
    zero = bits / 8.0 if asymmetric else 0.0
    return value + (FP16_SCALE_BYTES + zero) / group


def _int_precision(bits: int, field: str) -> Precision:
    if bits == 4:
        return Precision.INT4
    if bits == 8:
        return Precision.INT8
    raise EngineInputError(field, f"{bits}-bit weights are not supported (4 or 8)")


def _fp8_block_bytes(block: Any, field: str) -> tuple[float, str]:
    if block is None:
        return c.BYTES_8BIT * (1.0 + c.FP8_SCALE_OVERHEAD_FRACTION), "per-tensor"
    if (
        not isinstance(block, list)
        or len(block) != 2
        or not all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in block)
    ):
        raise EngineInputError(field, "must be two positive integers, e.g. [128, 128]")
    return c.BYTES_8BIT + FP32_SCALE_BYTES / (block[0] * block[1]), f"{block[0]}x{block[1]} blocks"


def _compressed_tensors(q: Mapping[str, Any], field: str) -> tuple[Precision, float, str]:
    groups = q.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        raise EngineInputError(f"{field}.config_groups", "must be an object of scheme groups")
    name, first = next(iter(groups.items()))
    gfield = f"{field}.config_groups.{name}"
    if not isinstance(first, dict) or not isinstance(first.get("weights"), dict):
        raise EngineInputError(f"{gfield}.weights", "must be a JSON object")
    w = first["weights"]
    wfield = f"{gfield}.weights"
    bits = _int(w, "num_bits", wfield, 8)
    kind = w.get("type", "int")
    strategy = w.get("strategy", "tensor")
    group = _int(w, "group_size", wfield, 0) if strategy == "group" else 0
    if kind == "float":
        if bits == 8:
            block = w.get("block_structure") if strategy == "block" else None
            bpp, how = _fp8_block_bytes(block, f"{wfield}.block_structure")
            return Precision.FP8, bpp, f"FP8 {how} (compressed-tensors)"
        if bits == 4:
            g = group or c.FP4_BLOCK_SIZE
            bpp = c.BYTES_4BIT + c.FP4_BLOCK_SCALE_BYTES / g
            return Precision.FP4, bpp, f"NVFP4, {g}-value blocks (compressed-tensors)"
        raise EngineInputError(f"{wfield}.num_bits", "float weights must be 8 or 4 bits")
    if kind != "int":
        raise EngineInputError(f"{wfield}.type", "must be 'int' or 'float'")
    asym = w.get("symmetric", True) is False
    bpp = _int_group_bytes(bits, group, asym)
    how = f"group {group}" if group else strategy
    return _int_precision(bits, f"{wfield}.num_bits"), bpp, f"INT{bits} {how} (compressed-tensors)"


def scheme_from_config(q: Any, field: str) -> QuantScheme | None:
    """The scheme a `quantization_config` describes; None for a method the engine does not
    know (the caller then sizes the weights at the request's weight_precision and says so)."""
    if not isinstance(q, dict):
        raise EngineInputError(field, "must be a JSON object")
    method_raw = q.get("quant_method", q.get("quantization_method"))
    if method_raw is None and q.get("quant_algo") is not None:
        method_raw = "modelopt"
    if not isinstance(method_raw, str):
        raise EngineInputError(f"{field}.quant_method", "must be a string")
    method = method_raw.lower().replace("_", "-")
    keep, kept_layers = _skip_list(q, field)
    if method == "fp8":
        bpp, how = _fp8_block_bytes(q.get("weight_block_size"), f"{field}.weight_block_size")
        precision, label = Precision.FP8, f"FP8 {how}"
    elif method == "fbgemm-fp8":
        precision, bpp, label = Precision.FP8, c.BYTES_8BIT, "FP8 per-row (fbgemm)"
    elif method == "mxfp4":
        bpp = c.BYTES_4BIT + MXFP4_SCALE_BYTES / MXFP4_BLOCK_SIZE
        precision, label = Precision.FP4, f"MXFP4, {MXFP4_BLOCK_SIZE}-value blocks"
    elif method == "modelopt":
        algo_raw = q.get("quant_algo")
        if not isinstance(algo_raw, str):
            raise EngineInputError(f"{field}.quant_algo", "must be a string, e.g. 'NVFP4'")
        algo = algo_raw.upper()
        if "FP4" in algo:
            g = _int(q, "group_size", field, c.FP4_BLOCK_SIZE)
            bpp = c.BYTES_4BIT + c.FP4_BLOCK_SCALE_BYTES / max(g, 1)
            precision, label = Precision.FP4, f"NVFP4, {g}-value blocks (ModelOpt)"
        elif "FP8" in algo:
            precision, bpp, label = Precision.FP8, c.BYTES_8BIT, "FP8 per-tensor (ModelOpt)"
        elif "INT4" in algo or "W4A" in algo:
            g = _int(q, "group_size", field, INT_GROUP_DEFAULT)
            bpp = _int_group_bytes(4, g, False)
            precision, label = Precision.INT4, f"INT4 AWQ group {g} (ModelOpt)"
        elif "INT8" in algo:
            precision, bpp, label = Precision.INT8, c.BYTES_8BIT, "INT8 (ModelOpt)"
        else:
            raise EngineInputError(f"{field}.quant_algo", f"unknown algorithm {algo_raw[:40]!r}")
    elif method in ("awq", "gptq"):
        bits = _int(q, "bits", field, 4)
        group = _int(q, "group_size", field, INT_GROUP_DEFAULT)
        asym = bool(q.get("zero_point", True)) if method == "awq" else True  # GPTQ packs qzeros
        bpp = _int_group_bytes(bits, group, asym)
        precision = _int_precision(bits, f"{field}.bits")
        label = f"INT{bits} {method.upper()} group {group if group > 0 else 'per-channel'}"
    elif method == "compressed-tensors":
        precision, bpp, label = _compressed_tensors(q, field)
    elif method == "bitsandbytes":
        if q.get("load_in_4bit"):
            double = bool(q.get("bnb_4bit_use_double_quant", False))
            bnb_bits = BNB_4BIT_DOUBLE_QUANT_BITS if double else 4.0 + 32.0 / BNB_4BIT_BLOCK
            kind = str(q.get("bnb_4bit_quant_type", "fp4")).upper()[:10]
            precision, bpp = Precision.INT4, bnb_bits / 8.0
            label = f"bitsandbytes 4-bit {kind}"
        elif q.get("load_in_8bit"):
            precision, bpp, label = Precision.INT8, c.BYTES_8BIT, "bitsandbytes LLM.int8()"
        else:
            raise EngineInputError(field, "bitsandbytes config sets neither load_in_4bit nor 8bit")
    else:
        return None
    return QuantScheme(
        precision=precision,
        bytes_per_param=bpp,
        keep_16bit=_ALWAYS_16BIT | _DEFAULT_16BIT | keep,
        label=label,
        kept_layers=kept_layers,
    )


_GROUP_NAMES = (
    "embed_in",
    "lm_head",
    "attention",
    "linear_attention",
    "router",
    "experts",
    "shared",
    "dense_mlp",
    "norms",
    "vision",
    "extra",
)


def kept_share(
    scheme: QuantScheme, name: str, layer_counts: Mapping[str, int] | None = None
) -> float:
    """Share of tensor group `name` stored at 16 bits: 1 when kept in every layer; the named
    layers over the group's layers (`layer_counts`) when a skip list names some; else 0."""
    if name in scheme.keep_16bit:
        return 1.0
    named = scheme.kept_layers.get(name)
    if not named:
        return 0.0
    count = (layer_counts or {}).get(name, 0)
    if count <= 0:
        return 1.0  # the group's layer count unknown: kept whole (errs high, as before)
    return min(len(named) / count, 1.0)


def _group_bytes(
    n: float, scheme: QuantScheme, name: str, layer_counts: Mapping[str, int] | None
) -> float:
    share = kept_share(scheme, name, layer_counts)
    return n * (share * c.BYTES_16BIT + (1.0 - share) * scheme.bytes_per_param)


def checkpoint_bytes(
    groups: ParamGroups, scheme: QuantScheme, layer_counts: Mapping[str, int] | None = None
) -> float:
    """Sum over tensor groups, each at its own precision."""
    total = 0.0
    for name in _GROUP_NAMES:
        total += _group_bytes(getattr(groups, name), scheme, name, layer_counts)
    return total


def routed_expert_bytes(
    groups: ParamGroups, scheme: QuantScheme, layer_counts: Mapping[str, int] | None = None
) -> float:
    return _group_bytes(groups.experts, scheme, "experts", layer_counts)


def checkpoint_weights(
    groups: ParamGroups, scheme: QuantScheme, layer_counts: Mapping[str, int] | None = None
) -> CheckpointWeights:
    """The stored weights of a checkpoint quantized by `scheme`, with a label for the notes.
    `layer_counts`: layers per tensor group, for skip lists that name single layers."""
    kept = kept_16bit_description(scheme, groups, layer_counts)
    precisions = tuple(
        (name, _group_precision(scheme, name, layer_counts))
        for name in _GROUP_NAMES
        if getattr(groups, name) > 0
    )
    return CheckpointWeights(
        precision=scheme.precision,
        weight_bytes=checkpoint_bytes(groups, scheme, layer_counts),
        routed_expert_bytes=routed_expert_bytes(groups, scheme, layer_counts),
        label=f"{scheme.label}; kept 16-bit: {kept}" if kept else scheme.label,
        group_precisions=precisions,
    )


def _group_precision(scheme: QuantScheme, name: str, layer_counts: Mapping[str, int] | None) -> str:
    """A tensor group's stored precision in words: "BF16", "FP4", or "FP4 (BF16 in 6 of 23
    layers)"."""
    share = kept_share(scheme, name, layer_counts)
    quant = scheme.precision.value
    if share >= 1.0:
        return "BF16"
    if share <= 0.0:
        return quant
    named = len(scheme.kept_layers.get(name, ()))
    return f"{quant} (BF16 in {named} of {(layer_counts or {}).get(name, 0)} layers)"


def kept_16bit_description(
    scheme: QuantScheme, groups: ParamGroups, layer_counts: Mapping[str, int] | None = None
) -> str:
    """The non-empty groups kept 16-bit, in words, for the notes."""
    words = {
        "embed_in": "embeddings",
        "lm_head": "lm_head",
        "attention": "attention",
        "linear_attention": "linear attention",
        "router": "router",
        "experts": "experts",
        "shared": "shared experts",
        "dense_mlp": "dense MLP",
        "vision": "vision tower",
    }
    out = []
    for k, w in words.items():
        if getattr(groups, k) <= 0:
            continue
        share = kept_share(scheme, k, layer_counts)
        if share >= 1.0:
            out.append(w)
        elif share > 0.0:
            out.append(f"{w} in {len(scheme.kept_layers[k])} layers")
    return ", ".join(out)
