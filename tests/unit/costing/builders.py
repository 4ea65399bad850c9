"""Small builders for costing tests (plain functions; no database)."""

from __future__ import annotations

from decimal import Decimal as D
from typing import Any

from apps.engine.costing import (
    CapacityFigures,
    Demand,
    FinanceAssumptions,
    PricingTerm,
    QuoteTerms,
    SuccessUnit,
)
from apps.engine.types import WorkloadType


def finance(**overrides: Any) -> FinanceAssumptions:
    """The finance assumptions every worked example uses: labour $100/h, observability 5%,
    retries 2%, failures 1%, acceptance 90%, $0.10/kWh (owned hardware: the default PUE 1.56,
    $150 hosting per kW-month and 0.5 datacentre hours per GPU-month)."""
    values: dict[str, Any] = {
        "reporting_currency": "USD",
        "labour_rate_per_hour": D(100),
        "observability_share": D("0.05"),
        "retry_rate": D("0.02"),
        "failure_rate": D("0.01"),
        "acceptance_rate": D("0.9"),
        "power_price_per_kwh": D("0.10"),
    }
    values.update(overrides)
    return FinanceAssumptions(**values)


def quote(
    term: PricingTerm = PricingTerm.ON_DEMAND, price: str = "2.00", **overrides: Any
) -> QuoteTerms:
    values: dict[str, Any] = {
        "pricing_term": term,
        "hourly_price_per_gpu": D(price),
        "storage_price_per_tb_month": D(20),
        "egress_price_per_gb": D("0.05"),
    }
    values.update(overrides)
    return QuoteTerms(**values)


def realtime_demand(**overrides: Any) -> Demand:
    """2M requests a month over 200 active hours, 1,000 tokens in and 250 out each."""
    values: dict[str, Any] = {
        "workload_type": WorkloadType.REALTIME_INFERENCE,
        "success_unit": SuccessUnit.TOKEN,
        "hours_per_month": D(200),
        "input_tokens_mean": D(1000),
        "output_tokens_mean": D(250),
        "requests_per_month": D(2_000_000),
        "storage_tb": D(1),
        "egress_gb_per_month": D(100),
    }
    values.update(overrides)
    return Demand(**values)


def realtime_capacity(**overrides: Any) -> CapacityFigures:
    """Two 1-GPU replicas at 1,000 output tok/s each, provisioned for the 200 active hours."""
    values: dict[str, Any] = {
        "gpu_count": 1,
        "replicas": 2,
        "gpu_hours_per_month": D(400),
        "fits": True,
        "output_tokens_per_s_per_replica": D(1000),
        "meets_latency_target": True,
    }
    values.update(overrides)
    return CapacityFigures(**values)
