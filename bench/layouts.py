"""Parallel layouts: what the engine picks per GPU count, against tensor parallelism alone.

Run: .venv/bin/python bench/layouts.py
Prints figures only (offline batch and DeepSeek-R1 decode at small batches); nothing is asserted.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit" / "engine"))

from engine_catalog import gpu  # noqa: E402

from apps.engine import PRESETS, EstimateRequest, Precision, WorkloadType, estimate_at  # noqa: E402
from apps.engine.types import Layout  # noqa: E402

OFFLINE = [
    ("deepseek-r1", Precision.FP8, "h200-sxm-141gb", 8),
    ("deepseek-r1", Precision.FP8, "mi300x-192gb", 8),
    ("deepseek-r1", Precision.FP8, "b200-sxm-180gb", 8),
    ("deepseek-r1", Precision.FP8, "h100-sxm5-80gb", 16),
    ("llama-4-maverick", Precision.FP8, "h100-sxm5-80gb", 8),
    ("qwen3-235b-a22b", Precision.FP8, "h100-sxm5-80gb", 8),
    ("gpt-oss-120b", Precision.FP4, "h100-sxm5-80gb", 8),
    ("mixtral-8x7b", Precision.BF16, "h100-sxm5-80gb", 8),
    ("llama-3.1-70b", Precision.FP8, "h100-sxm5-80gb", 4),
    ("llama-3.1-70b", Precision.FP8, "rtx-pro-6000-96gb", 4),
    ("llama-3.1-70b", Precision.FP8, "l40s-48gb", 8),
]


def _req(preset: str, wp: Precision, conc: int | None, wt: WorkloadType) -> EstimateRequest:
    return EstimateRequest(
        workload_type=wt,
        model=PRESETS[preset],
        weight_precision=wp,
        input_tokens_p50=1024,
        input_tokens_p95=1024,
        output_tokens_p50=1024,
        output_tokens_p95=1024,
        concurrency=conc,
    )


def main() -> None:
    print("Offline batch, in/out 1024/1024, output tokens/s of one replica")
    print(f"{'model':18} {'GPUs':>22}  {'TP only':>9}  {'chosen':>9}  {'x':>5}  layout")
    for preset, wp, slug, n in OFFLINE:
        req = _req(preset, wp, None, WorkloadType.BATCH_INFERENCE)
        g = gpu(slug)
        tp = estimate_at(req, g, n, layout=Layout(tp=n)).performance.output_tokens_per_s or 0.0
        best = estimate_at(req, g, n)
        b = best.performance.output_tokens_per_s or 0.0
        ratio = b / tp if tp else float("inf")
        print(
            f"{preset:18} {f'{n}x {slug}':>22}  {tp:9,.0f}  {b:9,.0f}  {ratio:5.2f}  {best.layout}"
        )
    print()
    print("DeepSeek-R1 FP8 on 8x H200, realtime 1024/1024: output tokens/s = batch / ITL")
    for conc in (1, 8, 32, 128):
        req = _req("deepseek-r1", Precision.FP8, conc, WorkloadType.REALTIME_INFERENCE)
        e = estimate_at(req, gpu("h200-sxm-141gb"), 8)
        itl = e.performance.itl_ms or 0.0
        print(f"  batch {conc:4}: {conc / itl * 1e3:7,.0f} tok/s (ITL {itl:6.2f} ms) {e.layout}")


if __name__ == "__main__":
    main()
