"""The speed model's step arithmetic: what a decode step carries at low concurrency, and what an
MoE step reads and computes (issue 13)."""

from __future__ import annotations

import math

from engine_catalog import load_gpus
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.engine import PRESETS, EstimateRequest, ModelKind, Precision, WorkloadType, estimate_at
from apps.engine.serving import serving_setup

DECODERS = sorted(k for k, v in PRESETS.items() if v.kind is ModelKind.DECODER)
# Models whose every layer attends fully: their decode step reads context x kv_per_token bytes.
FULL_ATTENTION = [
    k
    for k in DECODERS
    if PRESETS[k].attention is None
    or (PRESETS[k].attention.window_layers == 0 and PRESETS[k].attention.linear_layers == 0)  # type: ignore[union-attr]
]
GPUS = load_gpus()


def _realtime(preset: str, in50: int, in95: int, out: int) -> EstimateRequest:
    return EstimateRequest(
        workload_type=WorkloadType.REALTIME_INFERENCE,
        model=PRESETS[preset],
        weight_precision=Precision.BF16,
        kv_cache_precision=Precision.BF16,
        input_tokens_p50=in50,
        input_tokens_p95=in95,
        output_tokens_p50=out,
        output_tokens_p95=out,
        concurrency=1,
    )


def _itl_ms(req: EstimateRequest, gpu_index: int, count: int) -> float:
    itl = estimate_at(req, GPUS[gpu_index], count).performance.itl_ms
    assert itl is not None
    return itl


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(DECODERS),
    st.integers(0, len(GPUS) - 1),
    st.sampled_from([1, 2, 8]),
    st.integers(1, 16_000),
    st.integers(1, 16_000),
    st.integers(1, 2_000),
)
def test_itl_at_concurrency_1_ignores_the_median_prompt(
    preset: str, gpu: int, count: int, a: int, b: int, out: int
) -> None:
    """A lone request's decode steps carry no prompt tokens: no other request exists whose
    prompt chunked prefill could mix in, so the median prompt length cannot change its ITL."""
    in95 = max(a, b)
    itl_a = _itl_ms(_realtime(preset, a, in95, out), gpu, count)
    itl_b = _itl_ms(_realtime(preset, b, in95, out), gpu, count)
    assert itl_a == itl_b


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(FULL_ATTENTION),
    st.integers(0, len(GPUS) - 1),
    st.sampled_from([1, 2, 8]),
    st.integers(1, 16_000),
    st.integers(1, 16_000),
    st.integers(1, 2_000),
)
def test_itl_at_concurrency_1_grows_only_by_the_kv_read(
    preset: str, gpu: int, count: int, a: int, b: int, out: int
) -> None:
    """ITL(in=a) - ITL(in=b) is the time to read (a - b) more tokens of KV cache, nothing else."""
    itl_a = _itl_ms(_realtime(preset, a, a, out), gpu, count)
    itl_b = _itl_ms(_realtime(preset, b, b, out), gpu, count)
    sm = serving_setup(
        PRESETS[preset], GPUS[gpu], count, Precision.BF16, Precision.BF16, 1.0, 1.0
    ).sm
    kv_read_ms = (a - b) * sm.kv_per_token / sm.bandwidth * 1e3
    assert math.isclose(itl_a - itl_b, kv_read_ms, rel_tol=1e-6, abs_tol=1e-9)
