"""Constraints, overrides and ranking of the costing core."""

from __future__ import annotations

from decimal import Decimal as D

import pytest

from apps.engine.costing import (
    ApiRouteTerms,
    CapacityFigures,
    Demand,
    OperatingBoundary,
    PricingTerm,
    SuccessUnit,
    cost_api_candidate,
    cost_gpu_candidate,
    owned_gpu_month,
)
from apps.engine.types import EngineInputError, WorkloadType
from tests.unit.costing.builders import finance, quote, realtime_capacity, realtime_demand


def gpu_row(**kwargs):
    args = {
        "demand": realtime_demand(),
        "capacity": realtime_capacity(),
        "quote": quote(),
        "finance": finance(),
    }
    args.update(kwargs)
    return cost_gpu_candidate(**args)


class TestWhyNot:
    def test_a_candidate_that_does_not_fit_is_kept_but_fails_its_constraints(self):
        row = gpu_row(capacity=realtime_capacity(fits=False))

        assert row.meets_constraints is False
        assert row.why_not == ("does not fit in memory",)
        assert row.effective_unit_cost is not None

    def test_missing_the_latency_target_is_a_why_not(self):
        row = gpu_row(capacity=realtime_capacity(meets_latency_target=False))

        assert row.why_not == ("misses the p95 TTFT/ITL target",)

    def test_replicas_slower_than_the_demand_are_a_why_not(self):
        row = gpu_row(capacity=realtime_capacity(output_tokens_per_s_per_replica=D(300)))

        assert row.why_not == ("replicas serve 600 tok/s, demand needs 708.6 tok/s",)

    def test_an_api_rate_limit_below_demand_is_a_why_not(self):
        route = ApiRouteTerms(
            input_price_per_mtok=D(1), output_price_per_mtok=D(1), rate_limit_rpm=100
        )

        row = cost_api_candidate(demand=realtime_demand(), route=route, finance=finance())

        assert row.why_not == ("API rate limit 100 rpm below demand 170.1 rpm",)

    def test_a_commitment_longer_than_the_horizon_is_a_why_not(self):
        row = gpu_row(
            demand=realtime_demand(horizon_months=6), quote=quote(PricingTerm.RESERVED_1Y)
        )

        assert row.why_not == ("minimum commitment 12 months exceeds the 6-month horizon",)

    def test_a_managed_api_brief_rules_out_self_managed_gpus(self):
        row = gpu_row(demand=realtime_demand(operating_boundary=OperatingBoundary.MANAGED_API))

        assert row.why_not == ("brief asks for a managed API; this candidate is self-managed GPUs",)

    def test_an_api_route_cannot_price_a_training_run(self):
        demand = Demand(
            workload_type=WorkloadType.LORA_FINETUNE,
            success_unit=SuccessUnit.TRAINING_RUN,
            hours_per_month=D(10),
        )
        route = ApiRouteTerms(input_price_per_mtok=D(1), output_price_per_mtok=D(1))

        row = cost_api_candidate(demand=demand, route=route, finance=finance())

        assert row.why_not == ("an API route priced per token cannot serve LORA_FINETUNE",)
        assert row.effective_unit_cost is None


class TestOverrides:
    def test_a_measured_failure_share_replaces_the_assumed_failure_rate(self):
        row = gpu_row(capacity=realtime_capacity(measured_failed_share=D("0.1")))

        # 500M tokens x (1 - 0.1) x 0.9
        assert row.accepted_outputs_per_month == D("405000000.0000")

    def test_the_briefs_acceptance_rate_overrides_the_finance_one(self):
        row = gpu_row(demand=realtime_demand(acceptance_rate=D("0.5")))

        # 500M tokens x 0.99 x 0.5
        assert row.accepted_outputs_per_month == D("247500000.0000")

    def test_spot_bills_an_interruption_overhead(self):
        row = gpu_row(quote=quote(PricingTerm.SPOT, "1.00"))

        # 392 first-attempt GPU-h x $1.00 x 1.10
        assert row.cost_lines["gpu_compute"] == D("431.2000")

    def test_owned_capex_is_depreciated_with_power_hosting_and_operations(self):
        """$36,000 / 60 months = 600. Power at the energy model's average draw: 2 GPUs x 730 h =
        1,460 paid GPU-h, 400 of them busy at batch 16 (0.43 x (1 + log2 16 / log2 128) = 0.43 x
        11/7 of 700 W = 473 W), 1,060 idle at 0.15 x 700 = 105 W, and the 575 W host share on all
        1,460: 189,200 + 111,300 + 839,500 Wh = 1,140 kWh, 0.78082 kW a GPU on average; x PUE
        1.56 x 730 h x $0.10 = 88.92. Hosting is rented by the provisioned 0.7 + 0.575 = 1.275
        kW x $150 = 191.25; 0.5 h x $100 = 50 operations: 930.17 a GPU-month; 2 GPUs =
        1,860.34 split into busy and idle."""
        row = gpu_row(
            capacity=realtime_capacity(batch_per_replica=16),
            quote=quote(
                PricingTerm.OWNED,
                "0",
                capex_per_gpu=D(36000),
                depreciation_months=60,
                gpu_tdp_w=D(700),
            ),
        )

        lines = row.cost_lines
        gpu_bill = lines["gpu_compute"] + lines["retry_waste"] + lines["idle_capacity"]
        assert abs(gpu_bill - D("1860.34")) <= D("0.00015")  # three lines rounded to 4 dp
        assert any("USD\u00a0930.17 per GPU-month" in note for note in row.notes)
        assert any("power 0.781 kW on average" in note for note in row.notes)
        # platform labour is the team's 40 hours; the datacentre hours are in the GPU-month
        assert lines["platform_labour"] == D("4000.0000")

    def test_an_owned_quote_s_own_running_costs_replace_the_finance_defaults(self):
        """1.0 kW x PUE 1.2 x 730 h x $0.20 = 175.2 power; 1.0 kW x $100 = 100 hosting;
        2 h x $100 = 200 operations; $48,000 / 48 = 1,000: 1,475.2 a GPU-month."""
        owned = owned_gpu_month(
            quote(
                PricingTerm.OWNED,
                "0",
                capex_per_gpu=D(48000),
                depreciation_months=48,
                gpu_tdp_w=D(700),
                power_kw_per_gpu=D("1.0"),
                pue=D("1.2"),
                electricity_per_kwh=D("0.20"),
                hosting_per_kw_month=D(100),
                ops_hours_per_month=D(2),
            ),
            finance(),
        )

        assert (owned.depreciation, owned.power, owned.hosting, owned.operations) == (
            D(1000),
            D("175.2"),
            D(100),
            D(200),
        )
        assert owned.total == D("1475.2")
        assert owned.defaulted == ()

    def test_an_owned_quote_without_depreciation_months_is_refused(self):
        with pytest.raises(EngineInputError) as caught:
            quote(PricingTerm.OWNED, "0", capex_per_gpu=D(36000))

        assert caught.value.field == "depreciation_months"

    def test_bought_hardware_misses_a_public_cloud_brief(self):
        row = gpu_row(
            demand=realtime_demand(operating_boundary=OperatingBoundary.PUBLIC_CLOUD),
            quote=quote(PricingTerm.OWNED, "0", capex_per_gpu=D(36000), depreciation_months=60),
        )

        assert not row.meets_constraints
        assert row.why_not == ("brief runs in the public cloud; this candidate is bought hardware",)

    def test_reserved_capacity_grows_by_whole_replicas_when_the_work_needs_it(self):
        """Batch work of 1,000 GPU-h a month on 1-GPU replicas: 730 h a GPU is not enough,
        so two GPUs are reserved."""
        demand = Demand(
            workload_type=WorkloadType.EMBEDDINGS,
            success_unit=SuccessUnit.RECORD,
            hours_per_month=D(730),
            records_per_job=D(3_600_000),
        )
        capacity = CapacityFigures(
            gpu_count=1,
            replicas=1,
            gpu_hours_per_month=D(0),
            fits=True,
            records_per_s_per_replica=D(1),
        )

        row = cost_gpu_candidate(
            demand=demand,
            capacity=capacity,
            quote=quote(PricingTerm.RESERVED_1Y),
            finance=finance(retry_rate=D(0)),
        )

        assert row.gpus_paid == 2
        assert row.cost_lines["idle_capacity"] == D("920.0000")  # (1,460 - 1,000) x $2

    def test_a_success_unit_that_does_not_fit_the_workload_counts_no_outputs(self):
        row = gpu_row(demand=realtime_demand(success_unit=SuccessUnit.IMAGE))

        assert row.accepted_outputs_per_month == D("0.0000")
        assert row.effective_unit_cost is None
        assert row.meets_constraints is False


class TestValidation:
    @pytest.mark.parametrize(
        ("field", "value"),
        [("retry_rate", D(1)), ("failure_rate", D("-0.1")), ("acceptance_rate", D(0))],
    )
    def test_rates_out_of_range_name_the_field(self, field, value):
        with pytest.raises(EngineInputError) as error:
            finance(**{field: value})

        assert error.value.field == field
