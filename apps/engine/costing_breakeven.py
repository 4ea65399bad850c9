"""Break-even utilizations and the cost-per-output curve behind the capacity-model comparison.

See `apps.engine.capacity_model` for the formulas; this module holds the arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from apps.engine.costing_constants import QUEUE_OVERHEAD_SHARE, RATE_QUANTUM, SERVING_STACK_SHARE
from apps.engine.costing_rates import significant
from apps.engine.costing_types import (
    ONE,
    ZERO,
    CandidateCost,
    CostKind,
    Demand,
    FinanceAssumptions,
    cost_kind,
)


class CapacityOption(StrEnum):
    """Values match `apps.decisions.DecisionRecord.CapacityModel`."""

    RENT_ON_DEMAND = "RENT_ON_DEMAND"
    RENT_SPOT = "RENT_SPOT"
    RESERVE_1Y = "RESERVE_1Y"
    RESERVE_3Y = "RESERVE_3Y"
    BUY = "BUY"
    API = "API"


# Billed per GPU-hour used: flat cost per output at any utilization.
FLAT_OPTIONS = frozenset({CapacityOption.RENT_ON_DEMAND, CapacityOption.RENT_SPOT})


@dataclass(frozen=True, kw_only=True, slots=True)
class BreakEven:
    """Below `utilization` the `cheaper_below` option wins, above it `cheaper_above`."""

    cheaper_below: CapacityOption
    cheaper_above: CapacityOption
    utilization: Decimal | None  # None: no crossing in (0, 1]
    explanation: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Curve:
    """Variable cost per accepted output: GPU option at u is full[option] / u (committed) or
    full[option] (pay-per-use); the API is flat."""

    full: dict[CapacityOption, Decimal]
    api: Decimal | None

    def at(self, option: CapacityOption, u: Decimal) -> Decimal | None:
        if option is CapacityOption.API:
            return self.api
        g = self.full.get(option)
        if g is None:
            return None
        return g if option in FLAT_OPTIONS else g / u


def variable_curve(
    *,
    demand: Demand,
    reference: CandidateCost,
    rates: dict[CapacityOption, Decimal],
    api: CandidateCost | None,
    finance: FinanceAssumptions,
) -> Curve:
    """Per-accepted-output costs at full utilization, from a pay-per-use reference costing:
    g = rate x (1 + observability + serving/queue share) / accepted outputs per work GPU-hour.
    The API's = its token, retry and observability lines / accepted outputs."""
    full: dict[CapacityOption, Decimal] = {}
    hours = reference.busy_gpu_hours_per_month
    if hours > ZERO and reference.accepted_outputs_per_month > ZERO:
        per_hour = reference.accepted_outputs_per_month / hours
        kind = cost_kind(demand.workload_type)
        shares = ONE + finance.observability_share
        if kind is CostKind.REALTIME:
            shares += SERVING_STACK_SHARE
        elif kind is CostKind.MEDIA:
            shares += QUEUE_OVERHEAD_SHARE
        full = {option: rate * shares / per_hour for option, rate in rates.items()}
    api_unit: Decimal | None = None
    if api is not None and api.accepted_outputs_per_month > ZERO:
        variable = api.monthly_cost - api.cost_lines["platform_labour"]
        api_unit = variable / api.accepted_outputs_per_month
    return Curve(full=full, api=api_unit)


def share(x: Decimal) -> Decimal:
    return x.quantize(RATE_QUANTUM)


def break_evens(rates: dict[CapacityOption, Decimal], curve: Curve) -> list[BreakEven]:
    out: list[BreakEven] = []
    fixed = [
        o
        for o in (CapacityOption.RESERVE_1Y, CapacityOption.RESERVE_3Y, CapacityOption.BUY)
        if o in rates
    ]
    for flat in (CapacityOption.RENT_ON_DEMAND, CapacityOption.RENT_SPOT):
        if flat not in rates:
            continue
        for committed in fixed:
            u = rates[committed] / rates[flat]
            if u <= ONE:
                text = (
                    f"{committed} ({rates[committed]:.4f}/GPU-h for 730 h) beats {flat} "
                    f"({rates[flat]:.4f}/GPU-h used) above {u:.2%} utilization"
                )
                out.append(
                    BreakEven(
                        cheaper_below=flat,
                        cheaper_above=committed,
                        utilization=share(u),
                        explanation=text,
                    )
                )
            else:
                out.append(
                    BreakEven(
                        cheaper_below=flat,
                        cheaper_above=committed,
                        utilization=None,
                        explanation=f"{committed} never beats {flat}",
                    )
                )
    for i, first in enumerate(fixed):
        for second in fixed[i + 1 :]:
            lower: CapacityOption = first if rates[first] <= rates[second] else second
            out.append(
                BreakEven(
                    cheaper_below=lower,
                    cheaper_above=lower,
                    utilization=None,
                    explanation=(
                        f"{first} and {second} are both paid for every hour: "
                        f"{lower} is cheaper at any utilization"
                    ),
                )
            )
    if curve.api is not None:
        for option in rates:
            g = curve.full.get(option)
            if g is None:
                continue
            if option in FLAT_OPTIONS:
                cheaper: CapacityOption = option if g < curve.api else CapacityOption.API
                out.append(
                    BreakEven(
                        cheaper_below=cheaper,
                        cheaper_above=cheaper,
                        utilization=None,
                        explanation=(
                            f"{option} ({significant(g)}) and the API "
                            f"({significant(curve.api)}) each cost a flat amount per output: "
                            f"{cheaper} is cheaper at any utilization"
                        ),
                    )
                )
                continue
            u = g / curve.api
            out.append(
                BreakEven(
                    cheaper_below=CapacityOption.API,
                    cheaper_above=option,
                    utilization=share(u) if u <= ONE else None,
                    explanation=(
                        f"{option} costs {significant(g)} per accepted output at 100% "
                        f"utilization, the API {significant(curve.api)}: "
                        + (
                            f"{option} wins above {u:.2%}"
                            if u <= ONE
                            else "the API wins at any utilization"
                        )
                    ),
                )
            )
    return out
