"""Regenerate apps/engine/kernel_tables_data.py: compact fitted kernel-efficiency tables from the
performance database of NVIDIA's AIConfigurator (Apache-2.0), as the installed
`aiconfigurator-core` package ships it (`aiconfigurator_core/systems/data/<system>/<op>/<framework>
/<version>/*.parquet`: per-operation latencies measured per GPU and framework version).

Run (bench environment: `pip install -e '.[bench]'`):  .venv/bin/python scripts/kernel_tables.py

The engine reads only the generated module (plain Python literals); it never imports the package.
Tables, per AIConfigurator system (mapped to catalog slugs below):

- GEMM: median achieved TFLOP/s of dense GEMMs by M (tokens), over the measured N x K with both
  >= 4096, per dtype (bfloat16, fp8 per-tensor, fp8_block, nvfp4), vLLM's table.
- MoE: grouped-GEMM efficiency (achieved FLOP/s of the fused MoE op over the dtype's dense GEMM
  rate at the largest M; weight-only dtypes over bfloat16's), by expert width on one GPU
  (intermediate / moe_tp) and rows per expert touched, balanced routing, no expert parallelism;
  and the latency ratio of power-law routing (power_law_1.2) to balanced at the same shape, the
  measured cost of expert load imbalance.
- All-reduce: vLLM's custom all-reduce under CUDA graphs, latency by message size (elements,
  AIConfigurator's convention) and GPU count.
- MLA prefill module: where AIConfigurator measured vLLM's whole MLA attention module in the
  context phase for DeepSeek-V3's MLA (`mla_context_module`: q_a / kv_a down-projections
  replicated on every GPU, q_b / kv_b / o_proj sliced, the prefill attention kernel), its latency
  per layer by prompt length (isl) and prompts per pass (batch), per GEMM dtype and KV-cache
  dtype, per attention heads on one GPU (128 / TP); the kernel with the most measurements.
- MoE shapes: where AIConfigurator measured the exact expert shape of one of the engine's MoE
  presets (hidden, expert intermediate, experts, top-k) at a tensor-parallel degree, the fused
  MoE op's latency per layer by tokens through it (balanced routing), which the engine charges
  in place of the width x rows efficiency table (small-batch latency floors included).

Per framework version: the top-level tables are each op's newest vLLM version. Where the package
also measured vLLM's MoE op at older versions on a system (0.12.0: h200_sxm 0.19.0; b200_sxm
0.19.0 and 0.22.0), the MoE tables above (efficiency, imbalance, exact shapes) are emitted again
for each of them under `moe_older_versions`, by version, the GEMM rates that normalise them being
the newest (the only GEMM version measured); the engine picks the one for the estimate's
framework version (kernel_tables.moe_version_for). Other ops (GEMM, all-reduce) and the other
frameworks' folders are not emitted per version.
"""

from __future__ import annotations

import math
import statistics
import sys
from collections import defaultdict
from importlib import metadata
from pathlib import Path
from typing import Any

import aiconfigurator_core
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "apps" / "engine" / "kernel_tables_data.py"
DATA = Path(aiconfigurator_core.__file__).parent / "systems" / "data"

# Catalog slug (apps/catalog/data/gpus.csv) -> AIConfigurator system. The 40 GB A100 shares the
# 80 GB part's chip and clocks (its GEMMs and NVLink are the same).
SYSTEMS = {
    "a100-sxm4-80gb": "a100_sxm",
    "a100-sxm4-40gb": "a100_sxm",
    "h100-sxm5-80gb": "h100_sxm",
    "h200-sxm-141gb": "h200_sxm",
    "b200-sxm-180gb": "b200_sxm",
    "gb200-nvl72-186gb": "gb200",
    "b300-sxm-288gb": "b300_sxm",
    "gb300-nvl72-288gb": "gb300",
    "l40s-48gb": "l40s",
    "rtx-pro-6000-96gb": "rtx_pro_6000_server",
}
GEMM_DTYPES = ("bfloat16", "fp8", "fp8_block", "nvfp4")
MOE_DTYPES = ("bfloat16", "fp8", "fp8_block", "nvfp4", "w4a16_mxfp4", "int4_wo")
GEMM_M = (1, 4, 16, 64, 256, 1024, 4096, 16384)
WIDTHS = (128, 256, 512, 1024, 2048, 4096, 8192)
ROWS = (1, 4, 16, 64, 256, 1024, 4096)
FRAMEWORK = "vllm"
# Where a dtype was measured with several MoE kernels, the one vLLM runs by default for it (the
# engine's constants cite the same choices): Marlin for W4A16 MXFP4 on parts without FP4 tensor
# cores (vLLM mxfp4.py get_mxfp4_backend up to 0.11), the Triton fused_moe for block FP8
# (vLLM fused_moe); else the kernel with the most measurements.
PREFERRED_MOE_KERNELS = ("marlin", "triton")


def _moe_rows(d: pd.DataFrame, dtype: str) -> pd.DataFrame:
    """The measurements standing for `dtype`'s MoE kernel. Per-tensor FP8: vLLM runs its Triton
    fused_moe by default (Fp8MoEMethod; the FlashInfer CUTLASS / TRT-LLM paths are opt-in), but
    on Hopper AIConfigurator measured per-tensor FP8 only with ModelOpt's FlashInfer CUTLASS
    kernel, several times slower at decode sizes; where that is so, the same Triton kernel's
    block-FP8 measurements stand in for it."""
    sub = d[d.moe_dtype == dtype]
    if dtype == "fp8" and not any(
        p in s.lower() for s in sub.kernel_source.unique() for p in PREFERRED_MOE_KERNELS
    ):
        block = d[(d.moe_dtype == "fp8_block") & d.kernel_source.str.contains("triton")]
        if not block.empty:
            return block
    return sub


def _version_key(name: str) -> list[int | str]:
    return [int(x) if x.isdigit() else x for x in name.replace("rc", ".").split(".")]


def _versions(system: str, op: str, framework: str = FRAMEWORK) -> list[Path]:
    """The framework-version folders AIConfigurator measured `op` in on `system`, oldest first."""
    root = DATA / system / op / framework
    if not root.is_dir():
        return []
    return sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: _version_key(p.name))


def _latest(system: str, op: str, framework: str = FRAMEWORK) -> Path | None:
    versions = _versions(system, op, framework)
    return versions[-1] if versions else None


def _nearest(value: float, grid: tuple[int, ...]) -> int:
    return min(grid, key=lambda g: abs(math.log(value / g)))


def gemm_table(system: str) -> tuple[str | None, dict[str, list[tuple[int, float]]]]:
    folder = _latest(system, "gemm")
    if folder is None:
        return None, {}
    d = pd.read_parquet(folder / "gemm_perf.parquet")
    d = d[(d.n >= 4096) & (d.k >= 4096)]
    out: dict[str, list[tuple[int, float]]] = {}
    for dtype in GEMM_DTYPES:
        sub = d[d.gemm_dtype == dtype]
        if sub.empty:
            continue
        tflops = 2.0 * sub.m * sub.n * sub.k / (sub.latency * 1e-3) / 1e12
        points = []
        for m in GEMM_M:
            sel = tflops[sub.m == m]
            if len(sel):
                points.append((m, round(float(sel.median()), 1)))
        if points:
            out[dtype] = points
    return f"vLLM {folder.name}", out


def moe_tables(
    system: str, gemm: dict[str, list[tuple[int, float]]], folder: Path | None = None
) -> tuple[str | None, dict[str, Any], dict[str, float]]:
    """`folder`: one framework version's MoE measurements (None: the newest)."""
    folder = folder or _latest(system, "moe")
    if folder is None or "bfloat16" not in gemm or not (folder / "moe_perf.parquet").exists():
        return None, {}, {}
    d = pd.read_parquet(folder / "moe_perf.parquet")
    d = d[d.moe_ep_size == 1]
    eff: dict[str, Any] = {}
    imbalance: dict[str, float] = {}
    for dtype in MOE_DTYPES:
        dense = gemm.get(dtype, gemm["bfloat16"])[-1][1] * 1e12
        sub = _moe_rows(d, dtype)
        if sub.empty:
            continue
        sources = sub.kernel_source.value_counts()
        chosen = next(
            (s for pref in PREFERRED_MOE_KERNELS for s in sources.index if pref in s.lower()),
            sources.index[0],
        )
        sub = sub[sub.kernel_source == chosen]
        cells: dict[tuple[int, int], list[float]] = defaultdict(list)
        bal = sub[sub.distribution == "balanced"]
        for r in bal.itertuples():
            width = r.inter_size / r.moe_tp_size
            touched = r.num_experts * (1.0 - (1.0 - r.topk / r.num_experts) ** r.num_tokens)
            rows = r.num_tokens * r.topk / max(touched, 1e-9)
            # gate + up and down projections of every (token, expert) pair, on this GPU's slice
            flops = 2.0 * 3.0 * r.hidden_size * width * r.num_tokens * r.topk
            achieved = flops / (r.latency * 1e-3)
            cells[(_nearest(width, WIDTHS), _nearest(rows, ROWS))].append(achieved / dense)
        table = []
        for w in WIDTHS:
            row = []
            for rr in ROWS:
                vals = cells.get((w, rr))
                row.append(round(statistics.median(vals), 4) if vals else None)
            if any(v is not None for v in row):
                table.append((w, tuple(row)))
        if table:
            eff[dtype] = tuple(table)
        # load imbalance: power-law routing over balanced, same shape and tokens, >= 256 tokens
        key = ["hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size", "num_tokens"]
        skew = sub[(sub.distribution == "power_law_1.2") & (sub.num_tokens >= 256)]
        joined = skew.merge(bal, on=key, suffixes=("_p", "_b"))
        if len(joined):
            imbalance[dtype] = round(float((joined.latency_p / joined.latency_b).median()), 3)
    return f"vLLM {folder.name}", eff, imbalance


# Token counts kept of each exact-shape MoE curve (AIConfigurator measures 27 from 1 to 16384),
# and the tensor-parallel degrees (the engine's TP layouts within and across two nodes).
SHAPE_TOKENS = (1, 2, 4, 16, 64, 256, 1024, 4096, 16384)
SHAPE_TP = (1, 2, 4, 8, 16)


def _preset_moe_shapes() -> set[tuple[int, int, int, int]]:
    """(hidden, expert intermediate, routed experts, top-k) of the engine's MoE presets."""
    sys.path.insert(0, str(ROOT))
    from apps.engine.presets import PRESETS

    return {
        (m.hidden_size, m.intermediate_size, m.experts, m.active_experts)
        for m in PRESETS.values()
        if m.experts > 1
    }


def _us(seconds_ms: float) -> int:
    """Milliseconds to whole microseconds at 3 significant figures (at least 1)."""
    us = seconds_ms * 1e3
    return max(int(float(f"{us:.3g}")), 1)


def moe_shape_tables(
    system: str, folder: Path | None = None
) -> dict[str, dict[str, tuple[int | None, ...]]]:
    """Exact-shape fused-MoE latency curves: per dtype, per "hidden,inter,experts,topk,moe_tp"
    of an engine preset that AIConfigurator measured on `system` (balanced routing, no expert
    parallelism), microseconds per MoE layer at each of SHAPE_TOKENS tokens through the layer
    (None: not measured). The kernel is vLLM's default where several were measured
    (PREFERRED_MOE_KERNELS), else the one measured. `folder`: one framework version's
    measurements (None: the newest)."""
    folder = folder or _latest(system, "moe")
    if folder is None or not (folder / "moe_perf.parquet").exists():
        return {}
    shapes = _preset_moe_shapes()
    d = pd.read_parquet(folder / "moe_perf.parquet")
    d = d[(d.moe_ep_size == 1) & (d.distribution == "balanced") & d.moe_tp_size.isin(SHAPE_TP)]
    out: dict[str, dict[str, tuple[int | None, ...]]] = {}
    for dtype in MOE_DTYPES:
        sub = _moe_rows(d, dtype)
        for key, g in sub.groupby(["hidden_size", "inter_size", "num_experts", "topk"]):
            if tuple(int(v) for v in key) not in shapes:
                continue
            sources = g.kernel_source.value_counts()
            chosen = next(
                (s for pref in PREFERRED_MOE_KERNELS for s in sources.index if pref in s.lower()),
                sources.index[0],
            )
            g = g[g.kernel_source == chosen]
            for tp, t in g.groupby("moe_tp_size"):
                pts = t.groupby("num_tokens").latency.median()
                curve = tuple(_us(pts[n]) if n in pts.index else None for n in SHAPE_TOKENS)
                if sum(v is not None for v in curve) >= 2:
                    name = ",".join(str(int(v)) for v in (*key, tp))
                    out.setdefault(dtype, {})[name] = curve
    return out


MLA_CONTEXT_MODEL = "deepseek-ai/DeepSeek-V3"  # the MLA shape AIConfigurator measured
MLA_HEADS = (8, 16, 32, 64, 128)  # attention heads on one GPU: DeepSeek-V3's 128 over TP 16..1
MLA_ISL = (128, 512, 1024, 2048, 4096, 8192, 16384, 32768)
MLA_BATCH = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def mla_context_tables(system: str) -> tuple[str | None, dict[str, Any]]:
    """vLLM's measured MLA prefill module (DeepSeek-V3's MLA) on `system`: per
    "gemm_dtype/kv_cache_dtype", per attention heads on one GPU (MLA_HEADS), per prompt length
    (MLA_ISL), microseconds per layer at each of MLA_BATCH prompts per pass (None: not
    measured); the kernel source with the most measurements, the median over its rows."""
    folder = _latest(system, "mla")
    if folder is None or not (folder / "mla_context_module_perf.parquet").exists():
        return None, {}
    d = pd.read_parquet(folder / "mla_context_module_perf.parquet")
    d = d[(d.model == MLA_CONTEXT_MODEL) & (d.step == 0) & (d.tp_size == 1)]
    d = d[d.num_heads.isin(MLA_HEADS) & d.isl.isin(MLA_ISL)]
    out: dict[str, Any] = {}
    for (gemm, kv), g in d.groupby(["gemm_type", "kv_cache_dtype"]):
        chosen = g.kernel_source.value_counts().index[0]
        g = g[g.kernel_source == chosen]
        heads: dict[int, dict[int, tuple[int | None, ...]]] = {}
        for (h, isl), t in g.groupby(["num_heads", "isl"]):
            pts = t.groupby("batch_size").latency.median()
            curve = tuple(_us(pts[b]) if b in pts.index else None for b in MLA_BATCH)
            if curve[0] is not None:
                heads.setdefault(int(h), {})[int(isl)] = curve
        out[f"{gemm}/{kv}"] = heads
    return f"vLLM {folder.name} MLA context module", out


def allreduce_table(system: str) -> tuple[str | None, dict[int, list[tuple[int, float]]]]:
    folder = _latest(system, "comm")
    if folder is None or not (folder / "custom_allreduce_perf.parquet").exists():
        return None, {}
    d = pd.read_parquet(folder / "custom_allreduce_perf.parquet")
    d = d[(d.backend == "vllm_graph") & (d.allreduce_dtype == "bfloat16")]
    out: dict[int, list[tuple[int, float]]] = {}
    for n, sub in d.groupby("num_gpus"):
        pts = sub.groupby("message_size").latency.median()
        out[int(n)] = [(int(size), round(float(ms) * 1e-3, 9)) for size, ms in pts.items()]
    return f"vLLM {folder.name} custom all-reduce (CUDA graph)", out


def main() -> None:
    version = metadata.version("aiconfigurator-core")
    systems: dict[str, Any] = {}
    for system in sorted(set(SYSTEMS.values())):
        gsrc, gemm = gemm_table(system)
        msrc, moe, imbalance = moe_tables(system, gemm)
        asrc, allreduce = allreduce_table(system)
        shapes = moe_shape_tables(system)
        lsrc, mla_context = mla_context_tables(system)
        if not gemm:
            continue
        older: dict[str, Any] = {}
        for folder in _versions(system, "moe")[:-1]:
            _, o_moe, o_imbalance = moe_tables(system, gemm, folder)
            o_shapes = moe_shape_tables(system, folder)
            if o_moe or o_shapes:
                older[folder.name] = {
                    "moe_efficiency": o_moe,
                    "moe_imbalance": o_imbalance,
                    "moe_shapes_us": o_shapes,
                }
        systems[system] = {
            "sources": {"gemm": gsrc, "moe": msrc, "allreduce": asrc, "mla_context": lsrc},
            "gemm_tflops": gemm,
            "moe_efficiency": moe,
            "moe_imbalance": imbalance,
            "allreduce_s": allreduce,
            "moe_shapes_us": shapes,
            "mla_context_us": mla_context,
            "moe_version": msrc.split()[-1] if msrc else None,
            "moe_older_versions": older,
        }
    lines = [
        '"""Measured kernel tables, GENERATED by scripts/kernel_tables.py; do not edit by hand.',
        "",
        f"Source: NVIDIA AIConfigurator performance database, aiconfigurator-core {version}",
        "(PyPI; licence Apache-2.0), aiconfigurator_core/systems/data. Per system: dense GEMM",
        "TFLOP/s by M; grouped-MoE efficiency by expert width and rows per expert (over the dense",
        "GEMM rate); power-law / balanced routing latency ratio; vLLM custom all-reduce seconds by",
        "message elements and GPU count; exact-shape fused-MoE microseconds per layer by tokens",
        "for the engine's MoE presets; vLLM's MLA prefill module microseconds per layer by heads,",
        "prompt length and prompts per pass (mla_context_us); the MoE tables also for each older",
        "vLLM version measured (moe_older_versions, by version; the top-level tables are the",
        "newest). See",
        "scripts/kernel_tables.py for each table's recipe.",
        '"""',
        "",
        "from typing import Any, Final",
        "",
        f'AIC_VERSION: Final = "{version}"',
        'AIC_LICENCE: Final = "Apache-2.0"',
        f"GEMM_M: Final = {GEMM_M!r}",
        f"MOE_WIDTHS: Final = {WIDTHS!r}",
        f"MOE_ROWS: Final = {ROWS!r}",
        f"MOE_SHAPE_TOKENS: Final = {SHAPE_TOKENS!r}",
        f"MLA_BATCH: Final = {MLA_BATCH!r}",
        f"SYSTEM_FOR_SLUG: Final[dict[str, str]] = {SYSTEMS!r}",
        f"SYSTEMS: Final[dict[str, Any]] = {systems!r}",
        "",
    ]
    OUT.write_text("\n".join(lines))
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size:,} bytes, {len(systems)} systems)")


if __name__ == "__main__":
    main()
