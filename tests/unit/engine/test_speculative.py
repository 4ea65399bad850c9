"""Speculative decoding and multi-token prediction (issue 13, item 6): tokens per step, the
verification and draft costs, and what an estimate reports."""

from __future__ import annotations

import pytest
from engine_catalog import gpu
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.engine import PRESETS, EngineInputError, Precision, WorkloadType, estimate_at
from apps.engine.request import parse_estimate_request
from apps.engine.serving import serving_setup
from apps.engine.speculative import (
    DRAFT_MODEL_DEFAULT_SHARE,
    draft_cost,
    expected_tokens_per_step,
    per_token_times,
)
from apps.engine.types import EstimateRequest, SpeculativeMethod, SpeculativeSpec

H200 = "h200-sxm-141gb"


def _mtp(tokens: int = 1, rate: float = 0.8) -> SpeculativeSpec:
    return SpeculativeSpec(method=SpeculativeMethod.MTP, tokens=tokens, acceptance_rate=rate)


def _req(
    preset: str, conc: int | None, spec: SpeculativeSpec | None, **kw: object
) -> EstimateRequest:
    return EstimateRequest(
        workload_type=WorkloadType.BATCH_INFERENCE,
        model=PRESETS[preset],
        weight_precision=Precision.FP8,
        kv_cache_precision=Precision.FP8,
        input_tokens_p50=1024,
        input_tokens_p95=1024,
        output_tokens_p50=1024,
        output_tokens_p95=1024,
        concurrency=conc,
        speculative=spec,
        **kw,  # type: ignore[arg-type]
    )


def test_expected_tokens_follow_leviathan_et_al() -> None:
    # (1 - a^(k+1)) / (1 - a): k = 1, a = 0.8 -> 1.8; k = 3, a = 0.5 -> 1.875
    assert expected_tokens_per_step(0.8, 1) == pytest.approx(1.8)
    assert expected_tokens_per_step(0.5, 3) == pytest.approx(1.875)
    assert expected_tokens_per_step(0.0, 4) == pytest.approx(1.0)
    assert expected_tokens_per_step(1.0, 4) == 5.0


@settings(max_examples=60, deadline=None)
@given(st.floats(0.0, 0.999), st.integers(1, 15))
def test_more_proposed_tokens_never_yield_fewer_per_step(a: float, k: int) -> None:
    assert expected_tokens_per_step(a, k + 1) >= expected_tokens_per_step(a, k) - 1e-12
    assert 1.0 <= expected_tokens_per_step(a, k) <= k + 1


def test_the_mtp_head_costs_one_layer_and_the_lm_head() -> None:
    r1 = PRESETS["deepseek-r1"]
    head = r1.vocab_size * r1.hidden_size / r1.active_params
    assert draft_cost(r1, _mtp()) == pytest.approx(1 / r1.layers + head)
    assert 0.02 < draft_cost(r1, _mtp()) < 0.1


def test_a_draft_model_costs_its_share_of_the_parameters() -> None:
    l70 = PRESETS["llama-3.1-70b"]
    given = SpeculativeSpec(
        method=SpeculativeMethod.DRAFT_MODEL, tokens=4, acceptance_rate=0.7, draft_params_billion=8
    )
    assert draft_cost(l70, given) == pytest.approx(8e9 / l70.active_params)
    unsized = SpeculativeSpec(method=SpeculativeMethod.DRAFT_MODEL, tokens=4, acceptance_rate=0.7)
    assert draft_cost(l70, unsized) == DRAFT_MODEL_DEFAULT_SHARE


def test_speculation_at_batch_one_cuts_inter_token_latency_and_raises_throughput() -> None:
    plain = estimate_at(_req("deepseek-r1", 1, None), gpu(H200), 8)
    spec = estimate_at(_req("deepseek-r1", 1, _mtp()), gpu(H200), 8)
    assert plain.performance.itl_ms and spec.performance.itl_ms
    ratio = plain.performance.itl_ms / spec.performance.itl_ms
    # 1.8 tokens per step, less the verification's extra token and the MTP head's pass.
    assert 1.3 < ratio < 1.8
    assert spec.performance.output_tokens_per_s > plain.performance.output_tokens_per_s  # type: ignore[operator]
    # Prefill does not change.
    assert spec.performance.ttft_ms == pytest.approx(plain.performance.ttft_ms)


def test_the_verification_step_costs_more_than_a_plain_step() -> None:
    """A step checking k + 1 tokens per sequence is never cheaper than a one-token step, and for
    an MoE model it touches more experts, so its memory time grows too."""
    setup = serving_setup(
        PRESETS["deepseek-r1"], gpu(H200), 8, Precision.FP8, Precision.FP8, 1.0, 1.0
    )
    sm = setup.sm
    spec = _mtp(tokens=3, rate=1.0)  # E = 4: per-token times x 4 = the whole step
    whole = [4 * t for t in per_token_times(sm, PRESETS["deepseek-r1"], spec, 8, 2048, 0.0, 0.0)]
    plain = sm.times(8, 2048, 0.0, 0.0)
    assert whole[0] > plain[0]
    assert whole[1] > plain[1]  # more distinct experts read


def test_zero_acceptance_is_slower_than_no_speculation() -> None:
    plain = estimate_at(_req("llama-3.1-70b", 4, None), gpu(H200), 2)
    useless = estimate_at(_req("llama-3.1-70b", 4, _mtp(rate=0.0)), gpu(H200), 2)
    assert useless.performance.itl_ms > plain.performance.itl_ms  # type: ignore[operator]


def test_the_estimate_notes_the_assumption_in_words() -> None:
    e = estimate_at(_req("deepseek-r1", 1, _mtp()), gpu(H200), 8)
    note = next(n for n in e.notes if n.startswith("speculative decoding"))
    assert "multi-token prediction" in note
    assert "1.80 tokens per step" in note
    assert "verifies 2 tokens per sequence" in note
    plain = estimate_at(_req("deepseek-r1", 1, None), gpu(H200), 8)
    assert not any(n.startswith("speculative decoding") for n in plain.notes)


def _body(**extra: object) -> dict[str, object]:
    return {
        "workload_type": "REALTIME_INFERENCE",
        "model": {"preset": "deepseek-r1"},
        "input_tokens": {"p50": 1000},
        "output_tokens": {"p50": 500},
        **extra,
    }


def test_the_request_parses_speculative() -> None:
    req = parse_estimate_request(
        _body(speculative={"method": "mtp", "tokens": 2, "acceptance_rate": 0.7}), known_gpus=()
    )
    assert req.speculative == SpeculativeSpec(
        method=SpeculativeMethod.MTP, tokens=2, acceptance_rate=0.7
    )
    assert parse_estimate_request(_body(), known_gpus=()).speculative is None


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ("MTP", "speculative"),
        ({"tokens": 1, "acceptance_rate": 0.8}, "speculative.method"),
        ({"method": "MEDUSA", "tokens": 1, "acceptance_rate": 0.8}, "speculative.method"),
        ({"method": "MTP", "acceptance_rate": 0.8}, "speculative.tokens"),
        ({"method": "MTP", "tokens": 0, "acceptance_rate": 0.8}, "speculative.tokens"),
        ({"method": "MTP", "tokens": 17, "acceptance_rate": 0.8}, "speculative.tokens"),
        ({"method": "MTP", "tokens": 1}, "speculative.acceptance_rate"),
        ({"method": "MTP", "tokens": 1, "acceptance_rate": 1.2}, "speculative.acceptance_rate"),
        ({"method": "MTP", "tokens": 1, "acceptance_rate": "high"}, "speculative.acceptance_rate"),
        (
            {"method": "MTP", "tokens": 1, "acceptance_rate": 0.8, "draft_params_billion": 1},
            "speculative.draft_params_billion",
        ),
        ({"method": "MTP", "tokens": 1, "acceptance_rate": 0.8, "depth": 2}, "speculative.depth"),
    ],
)
def test_bad_speculative_input_names_the_field(spec: object, field: str) -> None:
    with pytest.raises(EngineInputError) as exc:
        parse_estimate_request(_body(speculative=spec), known_gpus=())
    assert exc.value.field == field


def test_speculative_is_refused_for_training() -> None:
    body = {
        "workload_type": "LORA_FINETUNE",
        "model": {"preset": "llama-3.1-8b"},
        "training": {"sequence_length": 2048},
        "speculative": {"method": "MTP", "tokens": 1, "acceptance_rate": 0.8},
    }
    with pytest.raises(EngineInputError) as exc:
        parse_estimate_request(body, known_gpus=())
    assert exc.value.field == "speculative"
