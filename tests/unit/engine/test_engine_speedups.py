"""The engine's speed-ups change no result: memoised vs cold evaluations, the interpolating
capacity search vs plain bisection, and the fast dataclass constructors."""

from __future__ import annotations

import dataclasses
import pickle

import pytest
from engine_catalog import load_gpus
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.engine import PRESETS, EstimateRequest, ModelKind, Precision, WorkloadType, estimate
from apps.engine.estimator import clear_caches
from apps.engine.serving import _latency, _meets, largest_meeting, largest_meeting_bisect
from apps.engine.serving import serving_setup as setup_of
from apps.engine.types import CapacityPlan, Performance, new_capacity_plan

DECODERS = sorted(k for k, v in PRESETS.items() if v.kind is ModelKind.DECODER)
GPUS = load_gpus()


@settings(max_examples=300, deadline=None)
@given(
    preset=st.sampled_from(DECODERS),
    gpu=st.sampled_from(GPUS),
    tp=st.sampled_from([1, 2, 4, 8]),
    wp=st.sampled_from(list(Precision)),
    tin=st.integers(1, 32_000),
    tout=st.integers(1, 4_000),
    ttft=st.one_of(st.none(), st.floats(1.0, 1e5)),
    itl=st.one_of(st.none(), st.floats(0.5, 1e3)),
    e2e=st.one_of(st.none(), st.floats(0.1, 1e3)),
    hi=st.integers(1, 65_536),
)
def test_the_interpolating_search_finds_the_bisection_answer(
    preset, gpu, tp, wp, tin, tout, ttft, itl, e2e, hi
):
    req = EstimateRequest(
        workload_type=WorkloadType.REALTIME_INFERENCE,
        model=PRESETS[preset],
        weight_precision=wp,
        input_tokens_p50=tin,
        input_tokens_p95=tin * 2,
        output_tokens_p50=tout,
        output_tokens_p95=tout * 2,
        ttft_p95_ms=ttft,
        itl_p95_ms=itl,
        e2e_p95_s=e2e if ttft is not None or itl is not None else (e2e or 30.0),
    )
    sm = setup_of(req.model, gpu, tp, wp, req.kv_cache_precision, 1.0, 1.0).sm
    prefill_s = sm.prefill_seconds(req.input_tokens_p95)
    at_one = _latency(sm, req, 1, prefill_s)
    if not _meets(req, *at_one):
        return
    conc = min(hi, 7)
    at_conc = _latency(sm, req, conc, prefill_s)
    expected = largest_meeting_bisect(sm, req, hi, prefill_s)
    assert largest_meeting(sm, req, hi, prefill_s, conc, at_conc, at_one) == expected


@pytest.mark.parametrize(
    "preset", ["llama-3.1-8b", "mixtral-8x7b", "deepseek-v3", "bge-large-en-v1.5"]
)
@pytest.mark.parametrize(
    "wt",
    [WorkloadType.REALTIME_INFERENCE, WorkloadType.BATCH_INFERENCE, WorkloadType.LORA_FINETUNE],
)
def test_memoised_and_cold_estimates_are_identical(preset, wt):
    model = PRESETS[preset]
    if model.kind is ModelKind.ENCODER:
        wt = WorkloadType.EMBEDDINGS
    req = EstimateRequest(
        workload_type=wt, model=model, ttft_p95_ms=800.0, weight_precision=Precision.FP8
    )
    clear_caches()
    cold = estimate(req, GPUS)
    warm = estimate(req, GPUS)
    # An equal request (a new object) answers the same through the value-keyed caches.
    again = estimate(dataclasses.replace(req), GPUS)
    assert cold == warm == again


def test_fast_constructors_keep_dataclass_behaviour():
    p = Performance(ttft_ms=3.0)
    assert p == Performance(ttft_ms=3.0) and hash(p) == hash(Performance(ttft_ms=3.0))
    assert p.itl_ms is None and dataclasses.replace(p, itl_ms=1.0).itl_ms == 1.0
    assert pickle.loads(pickle.dumps(p)) == p  # noqa: S301 - our own bytes
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.ttft_ms = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        Performance(nonsense=1.0)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        CapacityPlan(max_concurrency_at_target=1)  # type: ignore[call-arg]
    assert new_capacity_plan(1, 2, 3, 4.0, None) == CapacityPlan(
        max_concurrency_at_target=1, replicas=2, gpus_total=3, gpu_hours_per_month=4.0
    )


def test_positionally_built_results_are_ordinary_frozen_instances():
    built = new_capacity_plan(1, 2, 3, 4.0, 5.0)
    assert type(built) is CapacityPlan  # the slotted draft it was filled in is gone
    assert hash(built) == hash(dataclasses.replace(built))
    assert pickle.loads(pickle.dumps(built)) == built  # noqa: S301 - our own bytes
    assert dataclasses.replace(built, replicas=5).replicas == 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.replicas = 9  # type: ignore[misc]
