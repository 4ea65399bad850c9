"""Disaggregated prefill / decode pools (apps/engine/disagg.py): DistServe's M/D/1 goodput, the
KV hand-off, pool sizes, and the cheapest pair over every option pair."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from engine_catalog import gpu

from apps.engine import EngineInputError, EstimateRequest, ModelSpec, Precision, WorkloadType
from apps.engine.disagg import (
    KV_TRANSFER_BW_EFFICIENCY,
    TTFT_QUEUE_P95_FACTOR,
    DisaggInfeasible,
    DisaggPlan,
    PoolOption,
    kv_transfer_seconds,
    md1_goodput,
    md1_mean_ttft,
    plan_disagg,
)

# OPT-13B (facebook/opt-13b config.json): DistServe's motivating model.
OPT13 = ModelSpec(
    name="opt-13b",
    params_billion=12.85,
    layers=40,
    hidden_size=5120,
    attention_heads=40,
    kv_heads=40,
    head_dim=128,
    vocab_size=50272,
    intermediate_size=20480,
    max_context_tokens=2048,
)
A100 = gpu("a100-sxm4-80gb")
H100 = gpu("h100-sxm5-80gb")
H200 = gpu("h200-sxm-141gb")
L40S = gpu("l40s-48gb")

BRIEF = EstimateRequest(
    workload_type=WorkloadType.REALTIME_INFERENCE,
    model=OPT13,
    weight_precision=Precision.FP16,
    kv_cache_precision=Precision.FP16,
    input_tokens_p50=512,
    input_tokens_p95=512,
    output_tokens_p50=64,
    output_tokens_p95=64,
    requests_per_second=10.0,
    ttft_p95_ms=250.0,
    itl_p95_ms=100.0,
)


def _option(
    key: str, g: object, cost: float, n: int = 1, fabric: float | None = None
) -> PoolOption:
    assert g is not None
    return PoolOption(
        key=key,
        label=key,
        gpu=g,  # type: ignore[arg-type]
        gpus_per_instance=n,
        cost_per_gpu_month=cost,
        fabric_gbps=fabric,
    )


class TestMd1Goodput:
    def test_matches_the_hand_solved_quadratic(self) -> None:
        # 0.1 + r 0.01 / (2 (1 - 0.1 r)) = 0.25  ->  0.01 r = 0.3 (1 - 0.1 r)  ->  r = 0.3 / 0.04
        assert md1_goodput(0.1, 0.25) == pytest.approx(7.5, abs=1e-9)
        assert md1_mean_ttft(0.1, 7.5) == pytest.approx(0.25, abs=1e-9)

    def test_the_tail_factor_scales_the_queueing_term_only(self) -> None:
        # 0.1 + 3 r 0.01 / (2 (1 - 0.1 r)) = 0.25  ->  0.03 r = 0.3 (1 - 0.1 r)  ->  r = 5
        assert md1_goodput(0.1, 0.25, 3.0) == pytest.approx(5.0, abs=1e-9)
        assert math.log(20.0) == pytest.approx(TTFT_QUEUE_P95_FACTOR, abs=0.0)

    def test_is_zero_when_the_prompt_alone_takes_the_budget(self) -> None:
        assert md1_goodput(0.25, 0.25) == 0.0
        assert md1_goodput(0.3, 0.25) == 0.0


class TestKvTransfer:
    def test_matches_the_hand_calculation(self) -> None:
        # 2 (K, V) x 40 layers x 40 KV heads x 128 head dim x 2 bytes = 819,200 bytes per token
        data = 2 * 40 * 40 * 128 * 2 * 512
        expected = data / (400e9 / 8 * KV_TRANSFER_BW_EFFICIENCY)
        got = kv_transfer_seconds(OPT13, Precision.FP16, 512, 400.0)
        assert got == pytest.approx(expected, rel=1e-12)
        assert got == pytest.approx(0.00975419534883721, rel=1e-9)


class TestPlanDisagg:
    def test_pool_sizes_meet_the_rate_and_are_the_fewest(self) -> None:
        brief = replace(BRIEF, requests_per_second=37.0)
        plan = plan_disagg(brief, [_option("a100", A100, 1000.0)])
        assert isinstance(plan, DisaggPlan)
        rate = 37.0
        p, d = plan.prefill, plan.decode
        assert rate <= p.instances * p.goodput_rps_per_instance
        assert rate > (p.instances - 1) * p.goodput_rps_per_instance
        assert rate <= d.instances * d.rps_per_instance
        assert rate > (d.instances - 1) * d.rps_per_instance
        assert plan.ttft_ms <= 250.0
        assert plan.itl_ms <= 100.0
        assert plan.monthly_cost == pytest.approx(
            (p.instances * p.gpus_per_instance + d.instances * d.gpus_per_instance) * 1000.0
        )

    def test_the_cheapest_plan_may_pair_two_gpu_types(self) -> None:
        # H100 prefills faster and is priced low here; H200 holds more sequences per GPU. The
        # cheapest plan prefills on H100 and decodes on H200, cheaper than either type alone.
        brief = replace(BRIEF, requests_per_second=60.0)
        h100 = _option("h100", H100, 500.0)
        h200 = _option("h200", H200, 900.0)
        plan = plan_disagg(brief, [h100, h200])
        assert isinstance(plan, DisaggPlan)
        assert (plan.prefill.key, plan.decode.key) == ("h100", "h200")
        for alone in (h100, h200):
            single = plan_disagg(brief, [alone])
            assert isinstance(single, DisaggPlan)
            assert plan.monthly_cost < single.monthly_cost

    def test_finds_what_trying_every_pair_finds(self) -> None:
        brief = replace(BRIEF, requests_per_second=25.0)
        options = [
            _option("a100-200", A100, 900.0, fabric=200.0),
            _option("h100-400", H100, 1500.0),
            _option("h100x2-100", H100, 1400.0, n=2, fabric=100.0),
            _option("h200-3200", H200, 2100.0, fabric=3200.0),
            _option("l40s", L40S, 700.0),
        ]
        full = plan_disagg(brief, options)
        assert isinstance(full, DisaggPlan)
        costs = []
        for p in options:
            for d in options:
                r = plan_disagg(brief, [p, d] if p is not d else [p])
                if isinstance(r, DisaggPlan):
                    costs.append(r.monthly_cost)
        assert full.monthly_cost == pytest.approx(min(costs), rel=1e-12)

    def test_nothing_meeting_the_target_says_why(self) -> None:
        brief = replace(BRIEF, itl_p95_ms=1.0)
        result = plan_disagg(brief, [_option("a100", A100, 1000.0)])
        assert isinstance(result, DisaggInfeasible)
        assert result.reason == "no option can decode within the ITL target"
        assert any("a100 as decode" in r for r in result.option_reasons)

    def test_a_ttft_target_under_the_transfer_time_cannot_be_served(self) -> None:
        # 512 tokens' KV over 10 Gb/s: 0.39 s, over the 250 ms target
        result = plan_disagg(BRIEF, [_option("slow", A100, 1000.0, fabric=10.0)])
        assert isinstance(result, DisaggInfeasible)
        assert result.reason == "no option can prefill within the TTFT target"
        assert "KV transfer alone" in result.option_reasons[0]

    def test_needs_ttft_and_itl_targets(self) -> None:
        brief = replace(BRIEF, ttft_p95_ms=None, itl_p95_ms=None, e2e_p95_s=5.0)
        with pytest.raises(EngineInputError) as err:
            plan_disagg(brief, [_option("a100", A100, 1000.0)])
        assert err.value.field == "ttft_p95_ms"
