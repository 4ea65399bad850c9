"""Rent, reserve, buy or use a model API: the capacity-model comparison for one brief.

The options are the brief's GPU quotes (of one GPU, at one configuration) grouped by what they
offer (`costing_breakeven.option_for_quote`: on demand and marketplace -> rent on demand, spot
-> rent spot, reserved 1 / 3 years -> reserve, owned with capex -> buy) and its API routes. Each
quote and route is costed with the candidate costing (`cost_gpu_candidate`,
`cost_api_candidate`), so an option's monthly cost and unit cost are those of its row in the
candidate table; an option is the cheapest quote (or route) offering it, preferring those that
meet the brief.

The recommendation is the option with the lowest cost per accepted output at the brief's
utilization among those that meet the brief (the table's rule), less commitment winning ties;
spot meets only a brief whose work tolerates interruptions (the costing's rule), so it is never
recommended for one that does not. Buying needs an owned
quote with capex; it misses a brief that runs in the public cloud (the costing's rule), and is
otherwise offered to whoever entered the owned quote: entering one says the organisation can
operate hardware.

The curve and the break-evens (`costing_breakeven`) use the same all-in cost per accepted output,
so the curve at the brief's utilization is each option's figure, and a break-even never
contradicts the recommendation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, localcontext

from apps.engine.costing import (
    ApiRouteTerms,
    CandidateCost,
    CapacityFigures,
    Demand,
    FinanceAssumptions,
    PricingTerm,
    QuoteTerms,
    cost_api_candidate,
    cost_gpu_candidate,
)
from apps.engine.costing_breakeven import (
    CAPACITY_OPTION_LABELS,
    BreakEven,
    CapacityOption,
    OptionCurve,
    UnitDisplay,
    break_even,
    label,
    option_for_quote,
    percent,
    share,
)
from apps.engine.costing_rates import COSTING_CONTEXT, gpu_hourly_rate, money
from apps.engine.costing_types import ZERO
from apps.engine.types import DutyCycle

__all__ = [
    "CAPACITY_OPTION_LABELS",
    "BreakEven",
    "CapacityComparison",
    "CapacityOption",
    "OptionCost",
    "UnitDisplay",
    "UtilizationPoint",
    "compare_capacity_models",
    "option_for_quote",
]


_ORDER = tuple(CapacityOption)  # least commitment first, for ties
_BURSTY = frozenset({DutyCycle.EXPERIMENTAL, DutyCycle.NOTEBOOK, DutyCycle.SEASONAL_BURST})


@dataclass(frozen=True, kw_only=True, slots=True)
class OptionCost:
    option: CapacityOption
    source: int  # index of the quote (GPU options) or the route (API) it was costed from
    hourly_rate_per_gpu: Decimal | None  # effective GPU-hour rate; None for the API
    cost: CandidateCost
    curve: OptionCurve | None  # None: no accepted output, or misses the brief

    @property
    def label(self) -> str:
        return label(self.option)

    @property
    def unit_cost(self) -> Decimal | None:
        """As the candidate table shows it: none for an option that misses the brief."""
        return self.cost.effective_unit_cost if self.cost.meets_constraints else None


@dataclass(frozen=True, kw_only=True, slots=True)
class UtilizationPoint:
    """Cost per accepted output of each option at one utilization (None: not offered, or it
    misses the brief); ``at_brief``: this is the brief's own utilization."""

    utilization: Decimal
    at_brief: bool
    rent_on_demand: Decimal | None
    rent_spot: Decimal | None
    reserve_1y: Decimal | None
    reserve_3y: Decimal | None
    buy: Decimal | None
    api: Decimal | None


@dataclass(frozen=True, kw_only=True, slots=True)
class CapacityComparison:
    utilization: Decimal  # the brief's: busy GPU-hours / committed GPU-hours, unrounded
    options: tuple[OptionCost, ...]
    recommended: CapacityOption | None
    break_evens: tuple[BreakEven, ...]
    rationale: tuple[str, ...]
    curve: tuple[UtilizationPoint, ...]

    def option(self, option: CapacityOption) -> OptionCost | None:
        return next((o for o in self.options if o.option is option), None)

    def unit_cost_at(self, option: CapacityOption, u: Decimal) -> Decimal | None:
        """The curve of ``option`` at utilization ``u`` (0 < u <= 1)."""
        found = self.option(option)
        return None if found is None or found.curve is None else found.curve.at(u)


def _better(cost: CandidateCost, than: CandidateCost) -> bool:
    def key(c: CandidateCost) -> tuple[bool, bool, Decimal]:
        unit = c.effective_unit_cost
        return (not c.meets_constraints, unit is None, unit if unit is not None else ZERO)

    return key(cost) < key(than)


def compare_capacity_models(
    *,
    demand: Demand,
    capacity: CapacityFigures,
    finance: FinanceAssumptions,
    quotes: Sequence[QuoteTerms] = (),
    api_routes: Sequence[ApiRouteTerms] = (),
    display: UnitDisplay | None = None,
    steps: int = 20,
) -> CapacityComparison:
    """Cost the brief under each offered capacity option and recommend one (module doc).

    ``quotes`` are GPU quotes of one GPU, all costed at ``capacity`` (one configuration, so one
    utilization of committed GPU-hours); ``display`` writes amounts in the table's unit; the
    curve has ``steps`` points at u = 1/steps .. 1, and the brief's own utilization."""
    display = display or UnitDisplay(currency=finance.reporting_currency)
    with localcontext(COSTING_CONTEXT):
        committed = cost_gpu_candidate(
            demand=demand,
            capacity=capacity,
            quote=QuoteTerms(pricing_term=PricingTerm.DEDICATED_CLUSTER, hourly_price_per_gpu=ZERO),
            finance=finance,
        )
        # Unrounded, so that break-evens are exact; the chart and the pages round it.
        paid = committed.paid_gpu_hours_per_month
        utilization = committed.busy_gpu_hours_per_month / paid if paid else ZERO
        best: dict[CapacityOption, tuple[int, QuoteTerms | None, CandidateCost]] = {}
        for index, quote in enumerate(quotes):
            option = option_for_quote(quote)
            if option is None:
                continue
            cost = cost_gpu_candidate(
                demand=demand, capacity=capacity, quote=quote, finance=finance
            )
            if option not in best or _better(cost, best[option][2]):
                best[option] = (index, quote, cost)
        for index, route in enumerate(api_routes):
            cost = cost_api_candidate(demand=demand, route=route, finance=finance)
            if CapacityOption.API not in best or _better(cost, best[CapacityOption.API][2]):
                best[CapacityOption.API] = (index, None, cost)
        options = []
        for option in _ORDER:
            if option not in best:
                continue
            index, offered, cost = best[option]
            rate = None
            if offered is not None:  # a bought GPU's power at the row's modelled average draw
                drawn = (
                    cost.energy.average_kw_per_gpu if cost.energy and offered.is_bought else None
                )
                rate = money(gpu_hourly_rate(offered, finance, drawn)[0])
            curve = OptionCurve.of(cost, utilization) if cost.meets_constraints else None
            options.append(
                OptionCost(
                    option=option, source=index, hourly_rate_per_gpu=rate, cost=cost, curve=curve
                )
            )
        pairs = _break_evens(options, utilization, display)
        recommended, rationale = _recommend(demand, options, utilization, pairs, display)
        return CapacityComparison(
            utilization=utilization,
            options=tuple(options),
            recommended=recommended,
            break_evens=tuple(pairs),
            rationale=tuple(rationale),
            curve=_curve(options, utilization, steps),
        )


def _break_evens(
    options: list[OptionCost], utilization: Decimal, display: UnitDisplay
) -> list[BreakEven]:
    """One break-even for every pair of options that meet the brief."""
    priced = [o for o in options if o.curve is not None]
    out = []
    for i, first in enumerate(priced):
        for second in priced[i + 1 :]:
            assert first.curve is not None and second.curve is not None  # noqa: S101 (typing)
            out.append(
                break_even(
                    first.option,
                    first.curve,
                    second.option,
                    second.curve,
                    utilization=utilization,
                    display=display,
                )
            )
    return out


def _excluded_reason(demand: Demand, oc: OptionCost) -> str | None:
    if not oc.cost.meets_constraints:
        return f"{oc.label} does not meet the brief: {'; '.join(oc.cost.why_not)}."
    if oc.cost.effective_unit_cost is None:
        return f"{oc.label} produces no accepted output for this brief."
    return None


def _recommend(
    demand: Demand,
    options: list[OptionCost],
    utilization: Decimal,
    pairs: list[BreakEven],
    display: UnitDisplay,
) -> tuple[CapacityOption | None, list[str]]:
    eligible: list[OptionCost] = []
    excluded: list[str] = []
    for oc in options:
        reason = _excluded_reason(demand, oc)
        if reason is None:
            eligible.append(oc)
        else:
            excluded.append(reason)
    rationale: list[str] = []
    if not eligible:
        rationale.append("No option meets the brief, so none is recommended.")
        return None, rationale + excluded

    def unit(oc: OptionCost) -> Decimal:
        assert oc.cost.effective_unit_cost is not None  # noqa: S101 (eligible ones have one)
        return oc.cost.effective_unit_cost

    ranked = sorted(eligible, key=lambda oc: (unit(oc), _ORDER.index(oc.option)))
    best = ranked[0]
    rationale.append(
        f"At the brief's utilization of committed GPU-hours ({percent(utilization)}), "
        f"{best.label} costs {display.amount(unit(best))}, the lowest of the options that meet "
        "the brief."
    )
    for other in ranked[1:]:
        more = (unit(other) / unit(best) - 1) if unit(best) else ZERO
        line = f"{other.label}: {display.amount(unit(other))} ({percent(more)} more)"
        pair = next(
            (
                p
                for p in pairs
                if {p.cheaper_below, p.cheaper_above} == {best.option, other.option}
                and p.utilization is not None
            ),
            None,
        )
        if pair is not None:
            side = "above" if pair.cheaper_above is best.option else "below"
            line += (
                f"; {best.label} stays cheaper while utilization is {side} "
                f"{percent(pair.utilization or ZERO)}"
            )
        rationale.append(line + ".")
    rationale.extend(excluded)
    if demand.duty_cycle in _BURSTY:
        rationale.append(
            f"The brief's duty cycle ({demand.duty_cycle.value.replace('_', ' ').lower()}) is "
            "bursty: a commitment risks paying for idle capacity if use falls."
        )
    return best.option, rationale


def _curve(
    options: list[OptionCost], utilization: Decimal, steps: int
) -> tuple[UtilizationPoint, ...]:
    grid = {share(Decimal(step) / Decimal(steps)) for step in range(1, steps + 1)}
    grid.discard(share(utilization))  # the brief's own point, unrounded, takes its place
    if ZERO < utilization <= 1:
        grid.add(utilization)
    curves = {o.option: o.curve for o in options}

    def value(option: CapacityOption, u: Decimal) -> Decimal | None:
        curve = curves.get(option)
        return None if curve is None else curve.at(u)

    return tuple(
        UtilizationPoint(
            utilization=u,
            at_brief=u == utilization,
            rent_on_demand=value(CapacityOption.RENT_ON_DEMAND, u),
            rent_spot=value(CapacityOption.RENT_SPOT, u),
            reserve_1y=value(CapacityOption.RESERVE_1Y, u),
            reserve_3y=value(CapacityOption.RESERVE_3Y, u),
            buy=value(CapacityOption.BUY, u),
            api=value(CapacityOption.API, u),
        )
        for u in sorted(grid)
    )
