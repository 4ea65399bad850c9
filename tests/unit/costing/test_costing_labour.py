"""Platform labour as finance allocates it: per self-managed deployment, or the platform team's
pool shared by the GPU-hours each deployment holds."""

from __future__ import annotations

from decimal import Decimal as D

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.engine.costing import (
    ApiRouteTerms,
    CapacityFigures,
    Demand,
    LabourAllocation,
    OperatingModel,
    PricingTerm,
    SuccessUnit,
    cost_api_candidate,
    cost_gpu_candidate,
)
from apps.engine.costing_labour import platform_labour_hours
from apps.engine.types import EngineInputError, WorkloadType
from tests.unit.costing.builders import finance, quote, realtime_capacity, realtime_demand


def shared(pool: str = "400", total: str = "8000", **overrides):
    return finance(
        labour_allocation=LabourAllocation.SHARED_BY_GPU_HOURS,
        platform_labour_pool_hours=D(pool),
        self_managed_gpu_hours_per_month=D(total),
        **overrides,
    )


def realtime_row(fin, **kwargs):
    args = {"demand": realtime_demand(), "capacity": realtime_capacity(), "quote": quote()}
    args.update(kwargs)
    return cost_gpu_candidate(finance=fin, **args)


def lora_8b_month() -> tuple[Demand, CapacityFigures]:
    """One LoRA fine-tune of an 8B model a month: 10 h on one GPU."""
    demand = Demand(
        workload_type=WorkloadType.LORA_FINETUNE,
        success_unit=SuccessUnit.CHECKPOINT,
        hours_per_month=D(10),
        storage_tb=D(0),
        egress_gb_per_month=D(0),
    )
    capacity = CapacityFigures(
        gpu_count=1,
        replicas=1,
        gpu_hours_per_month=D(10),
        fits=True,
        time_to_train_hours=D(10),
        gpus_total=1,
    )
    return demand, capacity


class TestPerDeployment:
    def test_every_self_managed_deployment_bears_the_hours_whatever_its_size(self):
        small = realtime_row(finance(), capacity=realtime_capacity(replicas=1))
        large = realtime_row(finance(), capacity=realtime_capacity(replicas=8))

        # 40 h x $100 on each
        assert small.cost_lines["platform_labour"] == D("4000.0000")
        assert large.cost_lines["platform_labour"] == D("4000.0000")
        assert "40 h a month per self-managed deployment x 100 USD/h" in " ".join(small.notes)

    def test_finance_sets_the_hours_per_deployment(self):
        row = realtime_row(finance(platform_hours_self_managed=D(10)))

        assert row.cost_lines["platform_labour"] == D("1000.0000")

    def test_an_8b_lora_fine_tune_is_mostly_labour(self):
        """The issue's example: about 45 USD of GPU compute carries 40 h x 115 USD."""
        demand, capacity = lora_8b_month()
        row = cost_gpu_candidate(
            demand=demand,
            capacity=capacity,
            quote=quote(price="4.50", storage_price_per_tb_month=D(0)),
            finance=finance(labour_rate_per_hour=D(115)),
        )

        assert row.cost_lines["gpu_compute"] == D("45.0000")
        assert row.cost_lines["platform_labour"] == D("4600.0000")
        assert row.cost_lines["platform_labour"] > row.monthly_cost / 2


class TestSharedByGpuHours:
    def test_a_deployment_bears_its_share_of_the_pool_by_the_gpu_hours_it_holds(self):
        """400 GPU-h paid of the 8,000 self-managed GPU-h expected: 5% of the 400 h pool =
        20 h x $100."""
        row = realtime_row(shared())

        assert row.paid_gpu_hours_per_month == D(400)
        assert row.cost_lines["platform_labour"] == D("2000.0000")
        assert "5.00% of the organisation's 400 h pool" in " ".join(row.notes)

    def test_twice_the_gpu_hours_bear_twice_the_labour(self):
        one = realtime_row(
            shared(), capacity=realtime_capacity(replicas=1, gpu_hours_per_month=D(200))
        )
        two = realtime_row(
            shared(), capacity=realtime_capacity(replicas=2, gpu_hours_per_month=D(400))
        )

        assert two.cost_lines["platform_labour"] == 2 * one.cost_lines["platform_labour"]

    def test_committed_capacity_shares_by_every_hour_it_pays_for(self):
        """Reserved: 2 GPUs x 730 h = 1,460 GPU-h held (busy or idle) of 8,000: 73 h."""
        row = realtime_row(shared(), quote=quote(PricingTerm.RESERVED_1Y, "1.50"))

        assert row.paid_gpu_hours_per_month == D(1460)
        assert row.cost_lines["platform_labour"] == D("7300.0000")

    def test_a_deployment_larger_than_the_expected_total_bears_the_whole_pool_and_says_so(self):
        row = realtime_row(shared(total="100"))

        assert row.cost_lines["platform_labour"] == D("40000.0000")  # 400 h x $100, no more
        assert "share capped at 1" in " ".join(row.notes)

    def test_the_lora_fine_tune_bears_a_few_dollars_of_a_shared_pool(self):
        """~10 GPU-h of 20,000 (the run, its checkpoints and expected interruptions): 0.05% of
        400 h = 0.2 h x $115 = $23."""
        demand, capacity = lora_8b_month()
        row = cost_gpu_candidate(
            demand=demand,
            capacity=capacity,
            quote=quote(price="4.50", storage_price_per_tb_month=D(0)),
            finance=shared(total="20000", labour_rate_per_hour=D(115)),
        )

        paid = row.paid_gpu_hours_per_month
        assert D(10) < paid < D("10.01")
        expected = D(400) * paid / D(20000) * D(115)
        assert abs(row.cost_lines["platform_labour"] - expected) <= D("0.0001")
        assert abs(row.cost_lines["platform_labour"] - D(23)) < D("0.01")
        assert row.cost_lines["gpu_compute"] > row.cost_lines["platform_labour"]

    def test_owned_gpus_datacentre_hours_are_in_the_gpu_month_not_the_labour_line(self):
        owned = quote(
            PricingTerm.OWNED,
            "0",
            capex_per_gpu=D(36000),
            depreciation_months=60,
            gpu_tdp_w=D(700),
        )
        row = realtime_row(shared(), quote=owned)

        # 1,460 of 8,000 GPU-h: 73 h of the pool at $100; the hands-on hours are costed in
        # the owned GPU-month (gpu_compute), not here
        assert row.cost_lines["platform_labour"] == D("7300.0000")

    def test_api_routes_keep_their_own_hours(self):
        route = ApiRouteTerms(input_price_per_mtok=D(1), output_price_per_mtok=D(2))

        row = cost_api_candidate(demand=realtime_demand(), route=route, finance=shared())

        assert row.cost_lines["platform_labour"] == D("400.0000")  # 4 API hours x $100

    @pytest.mark.parametrize(
        ("changes", "field"),
        [
            ({"platform_labour_pool_hours": None}, "platform_labour_pool_hours"),
            ({"self_managed_gpu_hours_per_month": None}, "self_managed_gpu_hours_per_month"),
            ({"self_managed_gpu_hours_per_month": D(0)}, "self_managed_gpu_hours_per_month"),
            ({"platform_labour_pool_hours": D(-1)}, "platform_labour_pool_hours"),
        ],
    )
    def test_sharing_without_both_figures_is_refused_naming_the_field(self, changes, field):
        values = {
            "labour_allocation": LabourAllocation.SHARED_BY_GPU_HOURS,
            "platform_labour_pool_hours": D(400),
            "self_managed_gpu_hours_per_month": D(8000),
            **changes,
        }
        with pytest.raises(EngineInputError) as raised:
            finance(**values)
        assert raised.value.field == field

    def test_negative_hours_per_deployment_are_refused(self):
        with pytest.raises(EngineInputError) as raised:
            finance(platform_hours_self_managed=D(-1))
        assert raised.value.field == "platform_hours_self_managed"


class TestSharedLabourProperties:
    @given(
        gpu_hours=st.decimals(min_value=1, max_value=100_000, places=2),
        total=st.decimals(min_value=1, max_value=1_000_000, places=2),
        pool=st.decimals(min_value=0, max_value=10_000, places=2),
    )
    def test_a_share_of_the_pool_never_more_than_the_pool(self, gpu_hours, total, pool):
        hours, _ = platform_labour_hours(
            finance=shared(pool=str(pool), total=str(total)),
            operating_model=OperatingModel.SELF_MANAGED,
            paid_gpu_hours=gpu_hours,
        )
        assert D(0) <= hours <= pool
        assert hours == pool * min(D(1), gpu_hours / total)
