"""Rent, reserve, buy or use a model API: the capacity-model comparison for one brief.

Every option is costed all-in with the candidate costing (`cost_gpu_candidate`,
`cost_api_candidate`), so its monthly cost and unit cost match the candidate table. The
recommendation is the option with the lowest effective unit cost that meets the brief's
constraints, less commitment winning ties; buying is offered only to an organisation that can
operate hardware, and spot is not recommended for real-time serving.

Break-even utilization u (the share of a committed month's GPU-hours doing work) between pairs,
on GPU-rate economics:
- on-demand (rate d) vs reserved (rate r): d x 730 x u = r x 730, so u = r / d.
- on-demand vs buy: u = (capex / amortisation months + power + hosting) / (d x 730).
- spot vs reserved / buy: as on-demand, with spot's rate x (1 + interruption overhead).
- reserved vs buy: both fixed; no utilization break-even (None), compare monthly costs.
- committed GPU option vs API: the GPU's cost per accepted output at u is g / u, where g is its
  cost at u = 1 (rate x (1 + overhead shares) / accepted outputs per GPU-hour); the API's is a
  flat a, so u = g / a. Pay-per-use options are flat too: no break-even (None).
Below u the first option of the pair is cheaper, above it the second. Fixed monthly costs
(platform labour, storage, extras) are left out of break-evens and the chart; they are in the
options' all-in costs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal, localcontext

from apps.engine.costing import (
    ApiRouteTerms,
    CandidateCost,
    CapacityFigures,
    CostKind,
    Demand,
    FinanceAssumptions,
    OperatingBoundary,
    PricingTerm,
    QuoteTerms,
    cost_api_candidate,
    cost_gpu_candidate,
)
from apps.engine.costing_breakeven import (
    BreakEven,
    CapacityOption,
    break_evens,
    share,
    variable_curve,
)
from apps.engine.costing_constants import (
    HOURS_PER_MONTH,
    SPOT_INTERRUPTION_OVERHEAD,
)
from apps.engine.costing_rates import (
    COSTING_CONTEXT,
    money,
    owned_monthly_cost_per_gpu,
    significant,
)
from apps.engine.costing_types import ONE, ZERO, cost_kind
from apps.engine.types import DutyCycle

__all__ = [
    "BreakEven",
    "CapacityComparison",
    "CapacityOption",
    "OptionCost",
    "UtilizationPoint",
    "compare_capacity_models",
    "unit_cost_vs_utilization",
]


_ORDER = tuple(CapacityOption)  # least commitment first, for ties
_TERMS = {
    CapacityOption.RENT_ON_DEMAND: PricingTerm.ON_DEMAND,
    CapacityOption.RENT_SPOT: PricingTerm.SPOT,
    CapacityOption.RESERVE_1Y: PricingTerm.RESERVED_1Y,
    CapacityOption.RESERVE_3Y: PricingTerm.RESERVED_3Y,
    CapacityOption.BUY: PricingTerm.OWNED,
}
_BURSTY = frozenset({DutyCycle.EXPERIMENTAL, DutyCycle.NOTEBOOK, DutyCycle.SEASONAL_BURST})


@dataclass(frozen=True, kw_only=True, slots=True)
class OptionCost:
    option: CapacityOption
    hourly_rate_per_gpu: Decimal | None  # effective GPU-hour rate; None for the API
    cost: CandidateCost


@dataclass(frozen=True, kw_only=True, slots=True)
class CapacityComparison:
    utilization: Decimal  # the brief's: busy GPU-hours / committed GPU-hours
    options: tuple[OptionCost, ...]
    recommended: CapacityOption | None
    break_evens: tuple[BreakEven, ...]
    rationale: tuple[str, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class UtilizationPoint:
    """Variable cost per accepted output at one utilization (None: option not offered)."""

    utilization: Decimal
    rent_on_demand: Decimal | None
    rent_spot: Decimal | None
    reserve_1y: Decimal | None
    reserve_3y: Decimal | None
    buy: Decimal | None
    api: Decimal | None


@dataclass(frozen=True, kw_only=True, slots=True)
class _Offer:
    """The prices on the table; the GPU options offered are those with a price."""

    on_demand_hourly: Decimal
    spot_hourly: Decimal | None
    reserved_1y_hourly: Decimal | None
    reserved_3y_hourly: Decimal | None
    capex_per_gpu: Decimal | None
    gpu_tdp_w: Decimal | None

    def rates(self, finance: FinanceAssumptions) -> dict[CapacityOption, Decimal]:
        """Effective price of a GPU-hour under each offered GPU option (spot with its
        interruption overhead; buy as the owned GPU-month over 730 h)."""
        rates = {CapacityOption.RENT_ON_DEMAND: self.on_demand_hourly}
        if self.spot_hourly is not None:
            rates[CapacityOption.RENT_SPOT] = self.spot_hourly * (ONE + SPOT_INTERRUPTION_OVERHEAD)
        if self.reserved_1y_hourly is not None:
            rates[CapacityOption.RESERVE_1Y] = self.reserved_1y_hourly
        if self.reserved_3y_hourly is not None:
            rates[CapacityOption.RESERVE_3Y] = self.reserved_3y_hourly
        if self.capex_per_gpu is not None:
            monthly = owned_monthly_cost_per_gpu(
                capex_per_gpu=self.capex_per_gpu, gpu_tdp_w=self.gpu_tdp_w, finance=finance
            )
            rates[CapacityOption.BUY] = monthly / HOURS_PER_MONTH
        return rates

    def quote(self, option: CapacityOption, base: QuoteTerms) -> QuoteTerms:
        prices = {
            CapacityOption.RENT_ON_DEMAND: self.on_demand_hourly,
            CapacityOption.RENT_SPOT: self.spot_hourly,
            CapacityOption.RESERVE_1Y: self.reserved_1y_hourly,
            CapacityOption.RESERVE_3Y: self.reserved_3y_hourly,
        }
        if option is CapacityOption.BUY:
            return replace(
                base,
                pricing_term=PricingTerm.OWNED,
                hourly_price_per_gpu=ZERO,
                minimum_commitment_months=0,
                capex_per_gpu=self.capex_per_gpu,
                gpu_tdp_w=self.gpu_tdp_w,
            )
        return replace(
            base,
            pricing_term=_TERMS[option],
            hourly_price_per_gpu=prices[option] or ZERO,
            minimum_commitment_months=0,
            capex_per_gpu=None,
        )


def compare_capacity_models(
    *,
    demand: Demand,
    capacity: CapacityFigures,
    on_demand_hourly: Decimal,
    finance: FinanceAssumptions,
    spot_hourly: Decimal | None = None,
    reserved_1y_hourly: Decimal | None = None,
    reserved_3y_hourly: Decimal | None = None,
    capex_per_gpu: Decimal | None = None,
    gpu_tdp_w: Decimal | None = None,
    api_route: ApiRouteTerms | None = None,
    base_quote: QuoteTerms | None = None,
    can_operate_hardware: bool = False,
) -> CapacityComparison:
    """Cost the brief under each offered capacity model and recommend one (module doc).

    `base_quote` carries the provider's non-GPU prices (storage, egress, network, extras,
    operating model) shared by the GPU options; its term and hourly price are replaced.
    An organisation can operate hardware when told so or when the brief is ON_PREM.
    """
    with localcontext(COSTING_CONTEXT):
        offer = _Offer(
            on_demand_hourly=on_demand_hourly,
            spot_hourly=spot_hourly,
            reserved_1y_hourly=reserved_1y_hourly,
            reserved_3y_hourly=reserved_3y_hourly,
            capex_per_gpu=capex_per_gpu,
            gpu_tdp_w=gpu_tdp_w,
        )
        base = base_quote or QuoteTerms(
            pricing_term=PricingTerm.ON_DEMAND, hourly_price_per_gpu=ZERO
        )
        rates = offer.rates(finance)
        options = [
            OptionCost(
                option=option,
                hourly_rate_per_gpu=money(rate),
                cost=cost_gpu_candidate(
                    demand=demand,
                    capacity=capacity,
                    quote=offer.quote(option, base),
                    finance=finance,
                ),
            )
            for option, rate in rates.items()
        ]
        api = None
        if api_route is not None:
            api = cost_api_candidate(demand=demand, route=api_route, finance=finance)
            options.append(
                OptionCost(option=CapacityOption.API, hourly_rate_per_gpu=None, cost=api)
            )
        committed = cost_gpu_candidate(
            demand=demand,
            capacity=capacity,
            quote=replace(
                base,
                pricing_term=PricingTerm.DEDICATED_CLUSTER,
                hourly_price_per_gpu=on_demand_hourly,
                capex_per_gpu=None,
            ),
            finance=finance,
        )
        curve = variable_curve(
            demand=demand, reference=options[0].cost, rates=rates, api=api, finance=finance
        )
        pairs = break_evens(rates, curve)
        recommended, rationale = _recommend(
            demand=demand,
            options=options,
            utilization=committed.utilization,
            can_operate=can_operate_hardware
            or demand.operating_boundary is OperatingBoundary.ON_PREM,
        )
        return CapacityComparison(
            utilization=committed.utilization,
            options=tuple(options),
            recommended=recommended,
            break_evens=tuple(pairs),
            rationale=tuple(rationale),
        )


def _recommend(
    *, demand: Demand, options: list[OptionCost], utilization: Decimal, can_operate: bool
) -> tuple[CapacityOption | None, list[str]]:
    rationale = [f"brief's utilization of committed GPUs: {utilization:.2%}"]
    if demand.duty_cycle in _BURSTY:
        rationale.append(
            f"{demand.duty_cycle} duty cycle: commitments risk paying for idle capacity"
        )
    eligible: list[OptionCost] = []
    for oc in options:
        unit = oc.cost.effective_unit_cost
        if oc.option is CapacityOption.BUY and not can_operate:
            rationale.append("BUY excluded: the organisation does not operate hardware")
        elif (
            oc.option is CapacityOption.RENT_SPOT
            and cost_kind(demand.workload_type) is CostKind.REALTIME
        ):
            rationale.append("RENT_SPOT excluded: reclaimable capacity for real-time serving")
        elif not oc.cost.meets_constraints or unit is None:
            rationale.append(f"{oc.option} excluded: {'; '.join(oc.cost.why_not) or 'no output'}")
        else:
            eligible.append(oc)
            rationale.append(
                f"{oc.option}: {unit} per accepted {demand.success_unit.lower()}, "
                f"{oc.cost.monthly_cost} a month"
            )
    if not eligible:
        return None, rationale
    best = min(eligible, key=lambda oc: (oc.cost.effective_unit_cost, _ORDER.index(oc.option)))
    rationale.append(f"recommended: {best.option}, the lowest cost per accepted output")
    return best.option, rationale


def unit_cost_vs_utilization(
    *,
    demand: Demand,
    capacity: CapacityFigures,
    on_demand_hourly: Decimal,
    finance: FinanceAssumptions,
    spot_hourly: Decimal | None = None,
    reserved_1y_hourly: Decimal | None = None,
    reserved_3y_hourly: Decimal | None = None,
    capex_per_gpu: Decimal | None = None,
    gpu_tdp_w: Decimal | None = None,
    api_route: ApiRouteTerms | None = None,
    steps: int = 20,
) -> tuple[UtilizationPoint, ...]:
    """Variable cost per accepted output for each option at u = 1/steps .. 1 (0.05 .. 1.0 by
    default), for the chart: committed options fall as 1/u, pay-per-use options and the API
    are flat. Values to 10 significant digits; None where an option is not offered."""
    with localcontext(COSTING_CONTEXT):
        offer = _Offer(
            on_demand_hourly=on_demand_hourly,
            spot_hourly=spot_hourly,
            reserved_1y_hourly=reserved_1y_hourly,
            reserved_3y_hourly=reserved_3y_hourly,
            capex_per_gpu=capex_per_gpu,
            gpu_tdp_w=gpu_tdp_w,
        )
        base = QuoteTerms(pricing_term=PricingTerm.ON_DEMAND, hourly_price_per_gpu=on_demand_hourly)
        reference = cost_gpu_candidate(
            demand=demand, capacity=capacity, quote=base, finance=finance
        )
        api = (
            cost_api_candidate(demand=demand, route=api_route, finance=finance)
            if api_route is not None
            else None
        )
        curve = variable_curve(
            demand=demand, reference=reference, rates=offer.rates(finance), api=api, finance=finance
        )

        def value(option: CapacityOption, u: Decimal) -> Decimal | None:
            v = curve.at(option, u)
            return None if v is None else significant(v)

        points = []
        for step in range(1, steps + 1):
            u = Decimal(step) / Decimal(steps)
            points.append(
                UtilizationPoint(
                    utilization=share(u),
                    rent_on_demand=value(CapacityOption.RENT_ON_DEMAND, u),
                    rent_spot=value(CapacityOption.RENT_SPOT, u),
                    reserve_1y=value(CapacityOption.RESERVE_1Y, u),
                    reserve_3y=value(CapacityOption.RESERVE_3Y, u),
                    buy=value(CapacityOption.BUY, u),
                    api=value(CapacityOption.API, u),
                )
            )
        return tuple(points)
