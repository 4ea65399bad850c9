"""Engine speed: estimate_at evaluations/s and full-catalog estimate() calls/s per brief, and a
per-configuration speed ratio against the PyPI package llm-analysis (when importable).

Run: .venv/bin/python bench/estimate.py [--seconds 1.0]
Prints figures only; nothing here is a timed assertion.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit" / "engine"))

from engine_catalog import gpu, load_gpus  # noqa: E402

from apps.engine import (  # noqa: E402
    PRESETS,
    EstimateRequest,
    Precision,
    Sharding,
    TrainingSpec,
    WorkloadType,
    estimate,
    estimate_at,
)

GPUS = load_gpus()


def _serve(
    preset: str, p: Precision, wt: WorkloadType, conc: int | None, **kw: Any
) -> EstimateRequest:
    return EstimateRequest(
        workload_type=wt,
        model=PRESETS[preset],
        weight_precision=p,
        kv_cache_precision=Precision.FP8 if p is not Precision.BF16 else Precision.BF16,
        input_tokens_p50=1000,
        input_tokens_p95=4000,
        output_tokens_p50=200,
        output_tokens_p95=800,
        concurrency=conc,
        **kw,
    )


BRIEFS: dict[str, EstimateRequest] = {
    "8B realtime FP8": _serve(
        "llama-3.1-8b",
        Precision.FP8,
        WorkloadType.REALTIME_INFERENCE,
        32,
        ttft_p95_ms=500.0,
        itl_p95_ms=50.0,
    ),
    "70B realtime BF16": _serve(
        "llama-3.1-70b",
        Precision.BF16,
        WorkloadType.REALTIME_INFERENCE,
        16,
        ttft_p95_ms=1000.0,
        itl_p95_ms=60.0,
    ),
    "Mixtral 8x7B batch": _serve(
        "mixtral-8x7b", Precision.BF16, WorkloadType.BATCH_INFERENCE, None
    ),
    "405B FP8 realtime": _serve(
        "llama-3.1-405b",
        Precision.FP8,
        WorkloadType.REALTIME_INFERENCE,
        8,
        ttft_p95_ms=3000.0,
        itl_p95_ms=100.0,
    ),
    "8B LoRA finetune": EstimateRequest(
        workload_type=WorkloadType.LORA_FINETUNE,
        model=PRESETS["llama-3.1-8b"],
        training=TrainingSpec(sequence_length=4096, tokens=2e8, lora_rank=16),
    ),
    "70B training ZeRO-3": EstimateRequest(
        workload_type=WorkloadType.TRAINING,
        model=PRESETS["llama-3.1-70b"],
        training=TrainingSpec(
            sequence_length=8192,
            tokens=1e12,
            sharding=Sharding.ZERO3,
            activation_checkpointing=True,
        ),
    ),
}


def rate(fn: Callable[[], object], seconds: float) -> float:
    """Calls per second of `fn`, measured for about `seconds`."""
    fn()
    n, start = 0, time.perf_counter()
    while True:
        for _ in range(10):
            fn()
        n += 10
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return n / elapsed


def _count_evaluations(req: EstimateRequest) -> int:
    """estimate_at calls made by one full-catalog estimate()."""
    from apps.engine import estimator

    original = estimator.estimate_at
    calls = 0

    def counting(*a: Any, **k: Any) -> Any:
        nonlocal calls
        calls += 1
        return original(*a, **k)

    estimator.estimate_at = counting  # type: ignore[assignment]
    try:
        estimate(req, GPUS)
    finally:
        estimator.estimate_at = original
    return calls


def engine_figures(seconds: float) -> None:
    print(f"{'brief':24s} {'estimate_at/s':>14s} {'estimate(catalog)/s':>20s} {'evals/call':>10s}")
    for name, req in BRIEFS.items():
        h100 = gpu("h100-sxm5-80gb")
        at = rate(lambda req=req, h100=h100: estimate_at(req, h100, 8), seconds)
        full = rate(lambda req=req: estimate(req, GPUS), seconds)
        evals = _count_evaluations(req)
        print(f"{name:24s} {at:14,.0f} {full:20,.0f} {evals:10d}")


def _import_llm_analysis() -> Any | None:
    # llm-analysis 0.2.2 imports `fire` only for its CLI; fire<0.6 (its pin) imports the `pipes`
    # module that Python 3.13 removed. Install with `pip install --no-deps llm-analysis==0.2.2`
    # and stub `fire` so the library API imports.
    sys.modules.setdefault("fire", types.ModuleType("fire"))
    try:
        from llm_analysis import analysis
    except Exception as exc:
        print(f"llm-analysis unavailable ({type(exc).__name__}: {exc}); comparison skipped")
        return None
    logging.getLogger().setLevel(logging.ERROR)
    return analysis


def llm_analysis_figures(seconds: float) -> None:
    analysis = _import_llm_analysis()
    if analysis is None:
        return
    cases: list[tuple[str, Callable[[], object], Callable[[], object]]] = []

    def infer_case(
        label: str,
        model: str,
        preset: str,
        gpu_name: str,
        slug: str,
        tp: int,
        batch: int,
        seq: int,
        out: int,
    ) -> None:
        req = EstimateRequest(
            workload_type=WorkloadType.BATCH_INFERENCE,
            model=PRESETS[preset],
            input_tokens_p50=seq,
            input_tokens_p95=seq,
            output_tokens_p50=out,
            output_tokens_p95=out,
            concurrency=batch,
        )
        g = gpu(slug)
        cases.append(
            (
                label,
                lambda: estimate_at(req, g, tp),
                lambda: analysis.infer(
                    model_name=model,
                    gpu_name=gpu_name,
                    dtype_name="w16a16e16",
                    tp_size=tp,
                    batch_size_per_gpu=batch,
                    seq_len=seq,
                    num_tokens_to_generate=out,
                    log_level="ERROR",
                ),
            )
        )

    infer_case(
        "infer llama-2-7b A100 bs1",
        "NousResearch_Llama-2-7b-hf",
        "llama-2-7b",
        "a100-sxm-80gb",
        "a100-sxm4-80gb",
        1,
        1,
        512,
        128,
    )
    infer_case(
        "infer llama-2-7b H100 bs32",
        "NousResearch_Llama-2-7b-hf",
        "llama-2-7b",
        "h100-sxm-80gb",
        "h100-sxm5-80gb",
        1,
        32,
        2048,
        128,
    )
    infer_case(
        "infer llama-2-70b H100 TP4",
        "upstage_Llama-2-70b-instruct-v2",
        "llama-2-70b",
        "h100-sxm-80gb",
        "h100-sxm5-80gb",
        4,
        16,
        2048,
        256,
    )
    infer_case(
        "infer gpt-j-6b A100 bs32",
        "EleutherAI_gpt-j-6b",
        "gpt-j-6b",
        "a100-sxm-80gb",
        "a100-sxm4-80gb",
        1,
        32,
        1024,
        128,
    )

    train_req = EstimateRequest(
        workload_type=WorkloadType.TRAINING,
        model=PRESETS["llama-2-7b"],
        training=TrainingSpec(sequence_length=4096, tokens=1e10, sharding=Sharding.ZERO3),
    )
    a100 = gpu("a100-sxm4-80gb")
    cases.append(
        (
            "train llama-2-7b 8xA100 ZeRO-3",
            lambda: estimate_at(train_req, a100, 8),
            lambda: analysis.train(
                model_name="NousResearch_Llama-2-7b-hf",
                gpu_name="a100-sxm-80gb",
                dtype_name="w16a16e16",
                total_num_tokens=int(1e10),
                seq_len=4096,
                batch_size_per_gpu=1,
                total_num_gpus=8,
                ds_zero=3,
                flops_efficiency=0.45,
                hbm_memory_efficiency=0.75,
                log_level="ERROR",
            ),
        )
    )

    print(
        f"\n{'configuration (vs llm-analysis 0.2.2)':36s} {'engine/s':>10s} "
        f"{'llm-analysis/s':>15s} {'ratio':>8s}"
    )
    for label, ours, theirs in cases:
        try:
            theirs()
        except Exception as exc:
            print(f"{label:36s} llm-analysis failed: {type(exc).__name__}: {exc}")
            continue
        a = rate(ours, seconds)
        b = rate(theirs, seconds)
        print(f"{label:36s} {a:10,.0f} {b:15,.0f} {a / b:7.0f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    args = parser.parse_args()
    engine_figures(args.seconds)
    llm_analysis_figures(args.seconds)


if __name__ == "__main__":
    main()
