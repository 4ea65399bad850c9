"""Properties that must hold for every preset, GPU, precision and shape."""

from __future__ import annotations

import dataclasses
import math

from engine_catalog import load_gpus
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.engine import (
    PRESETS,
    EstimateRequest,
    Fit,
    GpuSpec,
    ModelKind,
    Precision,
    WorkloadType,
    estimate_at,
)
from apps.engine.precision import PRECISION_BITS, unsupported_precision, weight_bytes
from apps.engine.serving import candidate_layouts
from apps.engine.types import Layout

DECODERS = sorted(k for k, v in PRESETS.items() if v.kind is ModelKind.DECODER)
GPUS = load_gpus()

requests = st.builds(
    lambda preset, wp, kvp, tin, tout, conc, wt: EstimateRequest(
        workload_type=wt,
        model=PRESETS[preset],
        weight_precision=wp,
        kv_cache_precision=kvp,
        input_tokens_p50=tin,
        input_tokens_p95=tin * 2,
        output_tokens_p50=tout,
        output_tokens_p95=tout * 2,
        concurrency=conc,
        ttft_p95_ms=2000.0,
        itl_p95_ms=100.0,
    ),
    st.sampled_from(DECODERS),
    st.sampled_from(list(Precision)),
    st.sampled_from([Precision.BF16, Precision.FP8, Precision.FP32]),
    st.integers(1, 32_000),
    st.integers(1, 4_000),
    st.one_of(st.none(), st.integers(1, 512)),
    st.sampled_from([WorkloadType.REALTIME_INFERENCE, WorkloadType.BATCH_INFERENCE]),
)


_RANK = {Fit.FITS: 0, Fit.TIGHT: 1, Fit.NO: 2}


def _with_more_memory(gpu: GpuSpec, factor: float) -> GpuSpec:
    """`gpu` with `factor` x its memory, on whichever figure the engine sizes against."""
    mib = gpu.device_memory_mib
    return dataclasses.replace(
        gpu,
        memory_gb=gpu.memory_gb * factor,
        device_memory_mib=None if mib is None else int(mib * factor),
    )


def _numbers(e: object) -> list[float]:
    out: list[float] = []
    for f in dataclasses.fields(e):  # type: ignore[arg-type]
        v = getattr(e, f.name)
        if dataclasses.is_dataclass(v):
            out += _numbers(v)
        elif isinstance(v, int | float) and not isinstance(v, bool):
            out.append(float(v))
    return out


class TestProperties:
    @settings(max_examples=150, deadline=None)
    @given(requests, st.sampled_from(GPUS), st.sampled_from([1, 2, 4, 8]))
    def test_outputs_are_finite_and_non_negative(self, req, gpu, n) -> None:  # type: ignore[no-untyped-def]
        e = estimate_at(req, gpu, n)
        m = e.memory
        for value in [*_numbers(e.performance), m.total_gb, m.weights_gb, m.kv_cache_gb]:
            assert math.isfinite(value) and value >= 0
        assert e.max_concurrency >= 0 and e.max_context_tokens >= 0

    @settings(max_examples=100, deadline=None)
    @given(requests, st.sampled_from(GPUS), st.sampled_from([1, 2, 4]))
    def test_more_gpu_memory_never_turns_a_fit_into_a_non_fit(self, req, gpu, n) -> None:  # type: ignore[no-untyped-def]
        if estimate_at(req, gpu, n).fits:
            assert estimate_at(req, _with_more_memory(gpu, 1.5), n).fits

    @settings(max_examples=150, deadline=None)
    @given(
        requests,
        st.sampled_from(GPUS),
        st.sampled_from([1, 2, 4]),
        st.floats(1.0, 3.0),
        st.sampled_from([True, False]),
    )
    def test_more_device_memory_never_worsens_the_verdict(  # type: ignore[no-untyped-def]
        self, req, gpu, n, factor, datasheet_only
    ) -> None:
        # FITS stays FITS and TIGHT never becomes NO, whether the capacity is the driver's MiB
        # or (with the device figure dropped) the datasheet's GB.
        if datasheet_only:
            gpu = dataclasses.replace(gpu, device_memory_mib=None)
        before = estimate_at(req, gpu, n)
        after = estimate_at(req, _with_more_memory(gpu, factor), n)
        assert _RANK[after.fit] <= _RANK[before.fit], (before.fit_advice, after.fit_advice)
        assert after.memory_capacity_gb >= before.memory_capacity_gb
        # Advice says what to change for a tight fit, or why a GPU refuses the precision.
        refused = unsupported_precision(gpu, req.weight_precision) is not None
        for e in (before, after):
            assert e.fits is (e.fit is not Fit.NO)
            assert (e.fit_advice is not None) is (e.fit is Fit.TIGHT or refused)

    @settings(max_examples=100, deadline=None)
    @given(requests, st.sampled_from(GPUS), st.sampled_from([1, 2, 4]))
    def test_more_gpus_never_lower_max_concurrency(self, req, gpu, n) -> None:  # type: ignore[no-untyped-def]
        """Under tensor parallelism, and for whatever layout n GPUs pick, some layout of 2n GPUs
        holds at least as many sequences (the layout 2n picks may trade room for speed)."""
        tp = [estimate_at(req, gpu, k, layout=Layout(tp=k)).max_concurrency for k in (n, 2 * n)]
        assert tp[1] >= tp[0]
        picked = estimate_at(req, gpu, n).max_concurrency
        room = max(
            estimate_at(req, gpu, 2 * n, layout=lay).max_concurrency
            for lay in candidate_layouts(req.model, gpu, 2 * n)
        )
        assert room >= picked

    @given(
        st.sampled_from(sorted(PRESETS)),
        st.sampled_from(list(Precision)),
        st.sampled_from(list(Precision)),
    )
    def test_higher_precision_never_shrinks_the_weights(self, preset, a, b) -> None:  # type: ignore[no-untyped-def]
        lo, hi = sorted((a, b), key=lambda p: PRECISION_BITS[p])
        model = PRESETS[preset]
        assert (
            weight_bytes(model, hi) >= weight_bytes(model, lo)
            or PRECISION_BITS[hi] == PRECISION_BITS[lo]
        )
