"""Measured kernel efficiencies where a GPU has them (kernel_tables_data, generated from
NVIDIA AIConfigurator's performance database by scripts/kernel_tables.py), else None: the caller
keeps the per-architecture constants. Pure Python lookups and interpolation."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from apps.engine import kernel_tables_data as data
from apps.engine.types import Framework, GpuSpec, ModelSpec, Precision


@dataclass(frozen=True, kw_only=True, slots=True)
class MoeCurve:
    """Grouped-MoE efficiency of one expert width on one GPU and dtype: (rows per expert,
    achieved FLOP/s) points, log-linear between them, held flat beyond the ends."""

    points: tuple[tuple[float, float], ...]
    imbalance: float  # latency of power-law routing over balanced (measured), >= 1

    def rate(self, rows: float) -> float:
        """Achieved FLOP/s of the expert GEMMs at `rows` tokens per touched expert."""
        return interpolate_log(self.points, rows)


@dataclass(frozen=True, kw_only=True, slots=True)
class KernelTables:
    system: str  # AIConfigurator's system name
    note: str  # what was measured, for the estimate's notes
    gemm_tflops: dict[str, tuple[tuple[int, float], ...]]
    moe: dict[str, Any]
    imbalance: dict[str, float]
    allreduce: dict[int, tuple[tuple[int, float], ...]]
    # exact-shape fused-MoE microseconds per layer at data.MOE_SHAPE_TOKENS, per dtype and
    # "hidden,inter,experts,topk,moe_tp" (None where not measured)
    moe_shapes: dict[str, dict[str, tuple[int | None, ...]]]
    # vLLM's MLA prefill module (DeepSeek-V3's MLA), microseconds per layer at data.MLA_BATCH
    # prompts per pass, per "gemm_dtype/kv_dtype", heads on one GPU and prompt length
    mla_context: dict[str, dict[int, dict[int, tuple[int | None, ...]]]]


def interpolate_log(points: tuple[tuple[float, float], ...], x: float) -> float:
    """Interpolate y over log(x) (y linear in log x), flat beyond the ends."""
    if x <= points[0][0]:
        return points[0][1]
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if x <= x1:
            return y0 + (y1 - y0) * math.log(x / x0) / math.log(x1 / x0)
    return points[-1][1]


# Numeric parts of a release a version key pads to ("0.19" is "0.19.0.0").
_RELEASE_PARTS = 4


def version_key(version: str) -> tuple[int | str, ...]:
    """A framework version ("0.11.0", "0.5.6.post2", "1.3.0rc20") as a sortable key: the
    release's numbers (padded, so "0.19" is "0.19.0"), then a pre-release ("rc", "dev") below
    the release itself, a ".post" above it, and the tag's number (a ".postN.dev" counts as its
    post release)."""
    public = version.lower().split("+", 1)[0]  # a local label ("+gf35f8e22") does not order
    text = public.replace("rc", ".rc.").replace("post", ".post.").replace("dev", ".dev.")
    parts = [p for p in text.split(".") if p]
    release = [int(p) for p in itertools.takewhile(str.isdigit, parts)][:_RELEASE_PARTS]
    release += [0] * (_RELEASE_PARTS - len(release))
    rest = parts[len(list(itertools.takewhile(str.isdigit, parts))) :]
    tag = rest[0] if rest else ""
    rank = 1 if not tag else 2 if tag == "post" else 0
    number = int(rest[1]) if len(rest) > 1 and rest[1].isdigit() else 0
    return (*release, rank, tag, number)


def moe_versions(slug: str) -> tuple[str, ...]:
    """The vLLM versions whose MoE op AIConfigurator measured on this GPU, oldest first (the
    last is the newest, the top-level table); empty where the GPU has no measured tables."""
    system = data.SYSTEM_FOR_SLUG.get(slug)
    entry = data.SYSTEMS.get(system) if system else None
    if entry is None or not entry.get("moe_version"):
        return ()
    older = sorted(entry.get("moe_older_versions", {}), key=version_key)
    return (*older, entry["moe_version"])


def moe_version_for(
    slug: str, framework: Framework | None, framework_version: str | None
) -> str | None:
    """The older vLLM MoE table an estimate runs on: the measured version nearest at or below
    the estimate's vLLM version, or the oldest measured where that version is older than all of
    them; None for the newest table (no version given, a newer version, another framework, or
    no older table measured on this GPU)."""
    if framework_version is None or framework not in (None, Framework.VLLM):
        return None
    versions = moe_versions(slug)
    if len(versions) < 2:
        return None
    asked = version_key(framework_version)
    at_or_below = [v for v in versions if version_key(v) <= asked]
    chosen = at_or_below[-1] if at_or_below else versions[0]
    return None if chosen == versions[-1] else chosen


def moe_version_note(
    slug: str,
    framework: Framework | None,
    framework_version: str | None,
    moe_version: str | None,
) -> str:
    """Words on which vLLM version's MoE table an estimate used and why ('' for the newest
    without a version asked)."""
    versions = moe_versions(slug)
    if not versions or framework_version is None:
        return ""
    if framework not in (None, Framework.VLLM):
        return (
            f"; MoE table of vLLM {versions[-1]}, the newest: tables per version are vLLM's only, "
            f"so {framework_version} of this framework does not choose one"
        )
    chosen = moe_version or versions[-1]
    if len(versions) == 1:
        why = "the only version measured on this GPU"
    elif version_key(framework_version) < version_key(versions[0]):
        why = f"older than every version measured on this GPU ({', '.join(versions)}): the oldest"
    else:
        why = "the measured version nearest at or below it"
    return f"; MoE table of vLLM {chosen} for the estimate's vLLM {framework_version} ({why})"


@lru_cache(maxsize=64)
def tables_for(slug: str, moe_version: str | None = None) -> KernelTables | None:
    """The GPU's measured tables; `moe_version` (moe_version_for) swaps in that older vLLM
    version's MoE tables, dtype by dtype: a dtype it did not measure keeps the newest's."""
    system = data.SYSTEM_FOR_SLUG.get(slug)
    entry = data.SYSTEMS.get(system) if system else None
    if entry is None or system is None:
        return None
    src = entry["sources"]
    moe = dict(entry["moe_efficiency"])
    imbalance = dict(entry["moe_imbalance"])
    shapes = dict(entry.get("moe_shapes_us", {}))
    moe_src = src["moe"]
    older = entry.get("moe_older_versions", {}).get(moe_version) if moe_version else None
    if older is not None:
        moe.update(older["moe_efficiency"])
        imbalance.update(older["moe_imbalance"])
        shapes.update(older["moe_shapes_us"])
        kept = sorted(set(entry["moe_efficiency"]) - set(older["moe_efficiency"]))
        moe_src = f"vLLM {moe_version}" + (
            f" ({', '.join(kept)}: {src['moe']}, not measured at {moe_version})" if kept else ""
        )
    note = (
        f"kernel efficiencies: measured (NVIDIA AIConfigurator {data.AIC_VERSION} performance "
        f"database, {data.AIC_LICENCE}, system {system}: GEMM {src['gemm']}, MoE {moe_src}, "
        f"all-reduce {src['allreduce']}"
        + (
            f", MLA prefill {src['mla_context']} (DeepSeek-V3's MLA shape)"
            if src.get("mla_context")
            else ""
        )
        + ")"
    )
    return KernelTables(
        system=system,
        note=note,
        gemm_tflops={k: tuple(v) for k, v in entry["gemm_tflops"].items()},
        moe=moe,
        imbalance=imbalance,
        allreduce={int(n): tuple(v) for n, v in entry["allreduce_s"].items()},
        moe_shapes=shapes,
        mla_context=entry.get("mla_context_us", {}),
    )


def constants_note(gpu: GpuSpec) -> str:
    return (
        f"kernel efficiencies: per-architecture constants ({gpu.architecture}; no measured "
        "kernel table for this GPU)"
    )


def moe_dtype(model: ModelSpec, weight_precision: Precision, path_weight_only: bool) -> str:
    """The MoE kernel family a table row stands for: the served precision, block-scaled FP8
    for a 128 x 128-block checkpoint, W4A16 MXFP4 / INT4 where 4-bit weights run weight-only."""
    ck = model.checkpoint
    if weight_precision is Precision.FP8:
        if path_weight_only:
            return "bfloat16"
        block = ck is not None and ck.precision is Precision.FP8 and "x128 blocks" in ck.label
        return "fp8_block" if block else "fp8"
    if weight_precision is Precision.FP4:
        return "w4a16_mxfp4" if path_weight_only else "nvfp4"
    if weight_precision is Precision.INT4:
        return "int4_wo"
    return "bfloat16"


def gemm_dtype(weight_precision: Precision, block_fp8: bool) -> str | None:
    if weight_precision in (Precision.BF16, Precision.FP16):
        return "bfloat16"
    if weight_precision is Precision.FP8:
        return "fp8_block" if block_fp8 else "fp8"
    if weight_precision is Precision.FP4:
        return "nvfp4"
    return None


def dense_ratio(t: KernelTables, dtype: str | None) -> float | None:
    """Measured large-M GEMM rate of `dtype` over BF16's on this GPU (None: not measured)."""
    if dtype is None or dtype not in t.gemm_tflops or "bfloat16" not in t.gemm_tflops:
        return None
    return t.gemm_tflops[dtype][-1][1] / t.gemm_tflops["bfloat16"][-1][1]


def moe_curve(t: KernelTables, dtype: str, width: float) -> MoeCurve | None:
    """The measured grouped-MoE curve nearest `width` (intermediate per GPU), as absolute
    FLOP/s: efficiency x the dtype's measured dense GEMM rate (BF16's for weight-only)."""
    rows_of = data.MOE_ROWS
    table = t.moe.get(dtype)
    if not table:
        return None
    dense_key = dtype if dtype in t.gemm_tflops else "bfloat16"
    dense = t.gemm_tflops[dense_key][-1][1] * 1e12
    _, effs = min(table, key=lambda row: abs(math.log(max(width, 1.0) / row[0])))
    points = tuple((float(r), e * dense) for r, e in zip(rows_of, effs, strict=True) if e)
    if len(points) < 2:
        return None
    return MoeCurve(points=points, imbalance=max(t.imbalance.get(dtype, 1.0), 1.0))


def moe_shape_points(
    t: KernelTables, dtype: str, model: ModelSpec, tp: int
) -> tuple[tuple[float, float], ...] | None:
    """The fused MoE op's measured seconds per layer by tokens through the layer, for
    `model`'s exact expert shape (hidden, expert intermediate, experts, top-k) sliced `tp` ways
    on this GPU in `dtype`; None where AIConfigurator did not measure that shape."""
    curves = t.moe_shapes.get(dtype)
    if not curves:
        return None
    m = model
    key = f"{m.hidden_size},{m.intermediate_size},{m.experts},{m.active_experts},{tp}"
    curve = curves.get(key)
    if curve is None:
        return None
    points = tuple(
        (float(n), us * 1e-6) for n, us in zip(data.MOE_SHAPE_TOKENS, curve, strict=True) if us
    )
    return points if len(points) >= 2 else None


# The MLA shape AIConfigurator's mla_context_module measured (DeepSeek-V3 config.json: hidden
# 7168, 128 attention heads, kv_lora_rank 512, qk_rope_head_dim 64, v_head_dim 128), and the
# parameters of its projections per layer (q_lora_rank 1536: q_a_proj 7168 x 1536, q_b_proj
# 1536 x 128 x 192, kv_a_proj_with_mqa 7168 x 576, kv_b_proj 512 x 128 x 256, o_proj
# 128 x 128 x 7168), whose FLOPs the measured module replaces.
MLA_MODULE_SHAPE = (7168, 128, 512, 64, 128)
MLA_MODULE_PROJECTION_PARAMS = (
    7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256 + 128 * 128 * 7168
)

MlaPoints = tuple[tuple[float, tuple[tuple[float, float], ...]], ...]


def mla_module_shape(model: ModelSpec) -> bool:
    """Whether `model`'s MLA is the shape AIConfigurator's MLA module table measured."""
    if model.kv_lora_rank is None or model.qk_rope_head_dim is None:
        return False
    v = (
        model.v_head_dim
        if model.v_head_dim is not None
        else model.head_dim - model.qk_rope_head_dim
    )
    shape = (
        model.hidden_size,
        model.attention_heads,
        model.kv_lora_rank,
        model.qk_rope_head_dim,
        v,
    )
    return shape == MLA_MODULE_SHAPE


def mla_context_points(
    t: KernelTables, model: ModelSpec, gemm: str | None, kv: Precision, tp: int
) -> MlaPoints | None:
    """vLLM's measured MLA prefill module for `model` sliced `tp` ways (its heads / tp on one
    GPU), GEMMs in `gemm` and the KV cache in `kv`: (prompt length, ((prompts per pass, seconds
    per layer), ...)) by prompt length; None where the shape, dtype or head count was not
    measured."""
    if gemm is None or not mla_module_shape(model) or model.attention_heads % tp:
        return None
    kv_key = "fp8" if kv is Precision.FP8 else "bfloat16"
    table = t.mla_context.get(f"{gemm}/{kv_key}", {}).get(model.attention_heads // tp)
    if not table:
        return None
    out = []
    for isl, curve in sorted(table.items()):
        pts = tuple(
            (float(b), us * 1e-6) for b, us in zip(data.MLA_BATCH, curve, strict=True) if us
        )
        if pts:
            out.append((float(isl), pts))
    return tuple(out) if out else None


def _mla_at(points: tuple[tuple[float, float], ...], prompts: float) -> float:
    """Seconds per layer at `prompts` prompts per pass: below one prompt, that share of one
    prompt's pass (a chunk of it); log-log between measured counts; beyond the last, scaled."""
    first_x, first_y = points[0]
    if prompts <= first_x:
        return first_y * prompts / first_x
    return moe_op_seconds(points, prompts)


def mla_context_seconds(points: MlaPoints, tokens: float, prompt: float) -> float:
    """Measured seconds per layer of the MLA module over `tokens` prompt tokens of prompts
    `prompt` long (tokens / prompt prompts per pass), log-log between the measured prompt
    lengths; outside them, the nearest length's curve at the same tokens."""
    if tokens <= 0.0:
        return 0.0
    prompt = prompt if prompt > 1.0 else 1.0
    lo_isl, lo = points[0]
    if prompt <= lo_isl or len(points) == 1:
        return _mla_at(lo, tokens / lo_isl)
    hi_isl, hi = points[-1]
    if prompt >= hi_isl:
        return _mla_at(hi, tokens / hi_isl)
    for (x0, c0), (x1, c1) in itertools.pairwise(points):
        if prompt <= x1:
            y0 = _mla_at(c0, tokens / prompt)
            y1 = _mla_at(c1, tokens / prompt)
            return y0 * math.exp(math.log(y1 / y0) * math.log(prompt / x0) / math.log(x1 / x0))
    return _mla_at(hi, tokens / hi_isl)


def moe_op_seconds(points: tuple[tuple[float, float], ...], tokens: float) -> float:
    """Measured op latency at `tokens`, interpolated log-log between the measured token counts;
    below the first, the first (a launch costs its floor); beyond the last, scaled by tokens."""
    first_x, first_y = points[0]
    if tokens <= first_x:
        return first_y
    last_x, last_y = points[-1]
    if tokens >= last_x:
        return last_y * tokens / last_x
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if tokens <= x1:
            return y0 * math.exp(math.log(y1 / y0) * math.log(tokens / x0) / math.log(x1 / x0))
    return last_y


def allreduce_points(t: KernelTables, gpus: int) -> tuple[tuple[int, float], ...] | None:
    return t.allreduce.get(gpus)


def allreduce_seconds(points: tuple[tuple[int, float], ...], elements: float) -> float:
    """Measured all-reduce latency for a message of `elements` 16-bit values, interpolated
    log-linearly; beyond the largest message, scaled by size (bandwidth-bound)."""
    top_x, top_y = points[-1]
    if elements > top_x:
        return top_y * elements / top_x
    return interpolate_log(points, max(elements, 1.0))


def kernel_note_for(
    gpu: GpuSpec,
    framework: Framework | None = None,
    framework_version: str | None = None,
    moe_version: str | None = None,
) -> str:
    """What an estimate's kernel efficiencies came from, in words: the measured tables (MoE
    grouped GEMM, of the vLLM version `moe_version_for` chose; the precision GEMM rates
    normalise them) or the per-architecture constants."""
    t = tables_for(gpu.slug, moe_version)
    if t is None:
        return constants_note(gpu)
    return t.note + moe_version_note(gpu.slug, framework, framework_version, moe_version)
