"""Rent, reserve, buy or API: break-evens, the recommendation and the chart's points."""

from __future__ import annotations

from decimal import Decimal as D

from hypothesis import given, settings
from hypothesis import strategies as st

from apps.engine.capacity_model import (
    CapacityOption,
    compare_capacity_models,
    unit_cost_vs_utilization,
)
from apps.engine.costing import ApiRouteTerms, DutyCycle, PricingTerm, cost_gpu_candidate
from tests.unit.costing.builders import finance, quote, realtime_capacity, realtime_demand


def break_even(comparison, below, above):
    (match,) = [
        b for b in comparison.break_evens if b.cheaper_below is below and b.cheaper_above is above
    ]
    return match.utilization


def busy_for(hours, requests=100_000):
    """A 1-GPU, 1-replica real-time deployment active `hours` a month."""
    return {
        "demand": realtime_demand(hours_per_month=D(hours), requests_per_month=D(requests)),
        "capacity": realtime_capacity(replicas=1, gpu_hours_per_month=D(hours)),
    }


class TestBreakEven:
    def test_on_demand_vs_reserved_is_the_price_ratio(self):
        comparison = compare_capacity_models(
            **busy_for(400),
            on_demand_hourly=D("2.50"),
            reserved_1y_hourly=D("1.75"),
            finance=finance(),
        )

        assert break_even(
            comparison, CapacityOption.RENT_ON_DEMAND, CapacityOption.RESERVE_1Y
        ) == D("0.7000")

    @settings(max_examples=100, deadline=None)
    @given(
        on_demand=st.decimals("0.5", "10", places=2),
        ratio=st.decimals("0.2", "0.95", places=2),
        hours=st.integers(10, 730),
    )
    def test_reserved_is_cheaper_above_the_break_even_and_on_demand_below(
        self, on_demand, ratio, hours
    ):
        reserved = on_demand * ratio
        case = busy_for(hours)
        u = D(hours) / D(730)

        rent = cost_gpu_candidate(
            **case, quote=quote(PricingTerm.ON_DEMAND, str(on_demand)), finance=finance()
        )
        reserve = cost_gpu_candidate(
            **case, quote=quote(PricingTerm.RESERVED_1Y, str(reserved)), finance=finance()
        )

        if u > ratio:
            assert reserve.monthly_cost <= rent.monthly_cost
        elif u < ratio:
            assert rent.monthly_cost <= reserve.monthly_cost

    def test_on_demand_vs_buy_follows_the_owned_gpu_month(self):
        """($36,000 / 60 + 700 W x 1.56 x 730 h x $0.10 + $200) / ($2.50 x 730)
        = 879.716 / 1,825 = 0.48204 -> 0.4820."""
        comparison = compare_capacity_models(
            **busy_for(400),
            on_demand_hourly=D("2.50"),
            capex_per_gpu=D(36000),
            gpu_tdp_w=D(700),
            finance=finance(),
        )

        assert break_even(comparison, CapacityOption.RENT_ON_DEMAND, CapacityOption.BUY) == D(
            "0.4820"
        )

    def test_a_reservation_beats_the_api_above_the_utilization_where_unit_costs_cross(self):
        """A replica loaded to ~870 of its 1,000 tok/s while active (5M requests x 250 tokens
        over 400 h), so a GPU-hour yields ~2.8M accepted tokens."""
        comparison = compare_capacity_models(
            **busy_for(400, requests=5_000_000),
            on_demand_hourly=D("2.50"),
            reserved_1y_hourly=D("1.75"),
            api_route=ApiRouteTerms(
                input_price_per_mtok=D("0.50"), output_price_per_mtok=D("1.50")
            ),
            finance=finance(),
        )
        u = break_even(comparison, CapacityOption.API, CapacityOption.RESERVE_1Y)
        points = unit_cost_vs_utilization(
            **busy_for(400, requests=5_000_000),
            on_demand_hourly=D("2.50"),
            reserved_1y_hourly=D("1.75"),
            api_route=ApiRouteTerms(
                input_price_per_mtok=D("0.50"), output_price_per_mtok=D("1.50")
            ),
            finance=finance(),
        )

        assert D("0.1") < u < D("0.3")
        for point in points:
            if point.utilization > u:
                assert point.reserve_1y <= point.api
            elif point.utilization < u:
                assert point.reserve_1y >= point.api


class TestRecommendation:
    def test_a_low_volume_brief_goes_to_the_api(self):
        comparison = compare_capacity_models(
            **busy_for(40),
            on_demand_hourly=D("2.50"),
            reserved_1y_hourly=D("1.75"),
            api_route=ApiRouteTerms(
                input_price_per_mtok=D("0.20"), output_price_per_mtok=D("0.80")
            ),
            finance=finance(),
        )

        assert comparison.recommended is CapacityOption.API

    def test_an_always_on_brief_reserves_rather_than_rents(self):
        comparison = compare_capacity_models(
            **busy_for(730),
            on_demand_hourly=D("2.50"),
            reserved_1y_hourly=D("1.75"),
            finance=finance(),
        )

        assert comparison.utilization == D("1.0000")
        assert comparison.recommended is CapacityOption.RESERVE_1Y

    def test_bursty_use_rents_on_demand(self):
        case = busy_for(100)
        case["demand"] = realtime_demand(
            hours_per_month=D(100),
            requests_per_month=D(100_000),
            duty_cycle=DutyCycle.EXPERIMENTAL,
        )

        comparison = compare_capacity_models(
            **case, on_demand_hourly=D("2.50"), reserved_1y_hourly=D("1.75"), finance=finance()
        )

        assert comparison.recommended is CapacityOption.RENT_ON_DEMAND
        assert any("EXPERIMENTAL duty cycle" in line for line in comparison.rationale)

    def test_buying_is_only_offered_to_an_organisation_that_operates_hardware(self):
        kwargs = {
            **busy_for(730),
            "on_demand_hourly": D("2.50"),
            "reserved_1y_hourly": D("1.75"),
            "capex_per_gpu": D(36000),
            "gpu_tdp_w": D(700),
            "finance": finance(),
        }

        assert compare_capacity_models(**kwargs).recommended is CapacityOption.RESERVE_1Y
        assert (
            compare_capacity_models(**kwargs, can_operate_hardware=True).recommended
            is CapacityOption.BUY
        )

    def test_a_short_horizon_rules_out_commitments(self):
        case = busy_for(730)
        case["demand"] = realtime_demand(
            hours_per_month=D(730), requests_per_month=D(100_000), horizon_months=3
        )

        comparison = compare_capacity_models(
            **case, on_demand_hourly=D("2.50"), reserved_1y_hourly=D("1.75"), finance=finance()
        )

        assert comparison.recommended is CapacityOption.RENT_ON_DEMAND


class TestUnitCostVsUtilization:
    def test_twenty_points_where_reserved_meets_on_demand_at_the_price_ratio(self):
        points = unit_cost_vs_utilization(
            **busy_for(400),
            on_demand_hourly=D("2.00"),
            reserved_1y_hourly=D("1.00"),
            finance=finance(),
        )

        assert [p.utilization for p in points][:2] == [D("0.0500"), D("0.1000")]
        assert len(points) == 20
        assert points[-1].utilization == D("1.0000")
        at_half = next(p for p in points if p.utilization == D("0.5000"))
        assert at_half.reserve_1y == at_half.rent_on_demand
        assert points[0].rent_on_demand == points[-1].rent_on_demand  # flat
        assert points[0].reserve_1y == points[-1].reserve_1y * 20  # falls as 1/u
        assert points[0].buy is None and points[0].api is None
