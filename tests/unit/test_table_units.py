"""The table unit's vocabulary in Django and on the page: choices that match the engine's enum,
figures as people read them, legacy snapshots, and the "one assumption carries it" warning."""

from decimal import Decimal

import pytest

from apps.briefs.choices import SuccessUnit
from apps.engine.costing import LabourAllocation as EngineLabourAllocation
from apps.engine.costing import SuccessUnit as EngineSuccessUnit
from apps.engine.types import WorkloadType as EngineWorkloadType
from apps.engine.units import DEFAULT_UNITS, table_unit, unit_applies
from apps.finance.lines import dominant_assumption, labour_policy_text, line_label
from apps.finance.models import LabourAllocation
from apps.finance.units import (
    count_text,
    money_text,
    scale_for,
    unit_cost_text,
    unit_of_snapshot,
    unit_words,
)


class TestOneHomePerVocabulary:
    def test_the_briefs_success_units_are_the_engines(self):
        assert SuccessUnit.values == [u.value for u in EngineSuccessUnit]
        assert [label for _, label in SuccessUnit.choices] == [
            table_unit(u).choice for u in EngineSuccessUnit
        ]

    def test_the_seeds_missing_units_are_offered(self):
        assert {"VIDEO_SECOND", "PATCH", "CHECKPOINT"} <= set(SuccessUnit.values)

    @pytest.mark.parametrize("workload", list(EngineWorkloadType))
    def test_a_brief_without_a_unit_is_sized_in_one_its_workload_takes(self, workload):
        assert unit_applies(DEFAULT_UNITS[workload], workload)

    def test_labour_allocations_are_the_engines(self):
        assert LabourAllocation.values == [a.value for a in EngineLabourAllocation]


class TestUnitWords:
    @pytest.mark.parametrize(
        ("unit", "words"),
        [
            ("per 1M accepted tokens", "per 1M accepted tokens"),
            ("TOKEN", "per accepted token"),  # a snapshot frozen before scaled units
            ("CLIP", "per accepted clip"),
            (None, "per accepted output"),
            ("output", "per accepted output"),
        ],
    )
    def test_a_tables_unit_reads_in_words(self, unit, words):
        assert unit_words(unit) == words

    def test_a_legacy_snapshot_keeps_its_costs_per_one_output(self):
        assert unit_of_snapshot({"unit": "TOKEN"}) == ("per accepted token", 1)
        assert unit_of_snapshot({"unit": "per 1M accepted tokens", "unit_scale": 1_000_000}) == (
            "per 1M accepted tokens",
            1_000_000,
        )

    def test_scale_for_an_unknown_unit_is_one(self):
        assert (scale_for("TOKEN"), scale_for(""), scale_for("BOGUS")) == (1_000_000, 1, 1)


class TestMoneyText:
    @pytest.mark.parametrize(
        ("value", "text"),
        [
            (Decimal("5545.1234"), "5,545.12"),
            ("4.8512", "4.85"),
            (Decimal("0.0051"), "0.01"),
            (Decimal("1234567.8"), "1,234,568"),
            (Decimal(0), "0.00"),
            (None, "—"),
        ],
    )
    def test_money_reads_as_money(self, value, text):
        assert money_text(value) == text

    @pytest.mark.parametrize(
        ("value", "text"),
        [
            # Four significant digits whatever the size, as apps.core.formatting.unit_cost.
            (Decimal("4649.715556"), "4,650"),
            (Decimal("0.0042134"), "0.004213"),
            (Decimal("0.5"), "0.5"),
            (Decimal(0), "0"),
        ],
    )
    def test_a_unit_cost_keeps_its_significant_digits(self, value, text):
        assert unit_cost_text(value) == text


class TestCountText:
    @pytest.mark.parametrize(
        ("value", "text"),
        [("1862967565.6578", "1,862,967,566"), ("0.9900", "0.99"), ("12.5", "12.5"), ("0", "0")],
    )
    def test_counts_read_as_counts(self, value, text):
        assert count_text(value) == text


class TestDominantAssumption:
    def test_labour_above_half_is_named_with_its_share_and_amounts(self):
        row = {
            "monthly_cost": "5500.0000",
            "cost_lines": {"gpu_compute": "45.0000", "platform_labour": "4600.0000"},
        }
        assert dominant_assumption(row, "USD") == (
            "Platform labour is 84% of this candidate's monthly cost (4,600.00 of 5,500.00 "
            "USD): its unit cost depends mostly on the platform labour assumption (hours a "
            "month x labour rate, as finance allocates them), not on the price quoted."
        )

    def test_nearly_all_is_not_rounded_to_all(self):
        row = {"monthly_cost": "4603.22", "cost_lines": {"platform_labour": "4600.00"}}
        assert dominant_assumption(row, "USD").startswith("Platform labour is 99.9% of")

    def test_exactly_half_is_not_more_than_half(self):
        row = {"monthly_cost": "100", "cost_lines": {"gpu_compute": "50", "idle_capacity": "50"}}
        assert dominant_assumption(row, "USD") is None

    def test_the_gpus_own_price_is_never_an_assumption(self):
        row = {"monthly_cost": "100", "cost_lines": {"gpu_compute": "90", "storage": "10"}}
        assert dominant_assumption(row, "USD") is None

    def test_idle_committed_capacity_is_flagged(self):
        row = {"monthly_cost": "100", "cost_lines": {"gpu_compute": "30", "idle_capacity": "70"}}
        assert dominant_assumption(row, "EUR").startswith("Idle capacity is 70%")

    def test_line_labels_are_words(self):
        assert (line_label("platform_labour"), line_label("new_line")) == (
            "Platform labour",
            "New line",
        )


class TestLabourPolicyText:
    def test_per_deployment(self):
        values = {
            "labour_rate_per_hour": Decimal(115),
            "reporting_currency": "USD",
            "labour_allocation": "PER_DEPLOYMENT",
            "platform_hours_self_managed": Decimal(40),
        }
        text = labour_policy_text(values, {"labour_allocation": "built-in"})
        assert text.startswith(
            "Platform labour is charged per self-managed deployment (built-in): 40 h a month "
            "at USD\u00a0115.00 / h"
        )

    def test_shared(self):
        values = {
            "labour_rate_per_hour": Decimal(115),
            "reporting_currency": "USD",
            "labour_allocation": "SHARED_BY_GPU_HOURS",
            "platform_labour_pool_hours": Decimal("400.00"),
            "self_managed_gpu_hours_per_month": Decimal("20000.00"),
        }
        text = labour_policy_text(values, {"labour_allocation": "organisation"})
        assert text.startswith(
            "Platform labour is shared by GPU-hours (organisation): the platform team's 400 h "
            "a month at USD\u00a0115.00 / h are split over the 20,000 GPU-hours a month"
        )
