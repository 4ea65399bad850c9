"""The cost-per-output curve, break-evens and words behind the capacity-model comparison.

Every option's curve is its all-in cost per accepted output (the candidate table's definition:
every cost line, platform labour included) as a function of u, the utilization of committed
GPU-hours, with the same work and the same accepted outputs N:
- pay-per-use options (rent on demand, rent spot) and the model API bill what is used: flat,
  c(u) = monthly cost / N;
- committed options (reserve, buy) pay for work / u GPU-hours: the lines that scale with the GPU
  bill (compute, waste, idle capacity and the shares of the bill: V at the brief's utilization
  U) scale by U / u, the others (storage, network, extras, labour, moderation, review: F) stay,
  c(u) = (F + V x U / u) / N. At u = U that is the option's own monthly cost / N, exactly.
Break-even between two options: where c_1(u) = c_2(u) in (0, 1]. With c = a + b / u
(a = F / N, b = V x U / N; b = 0 for flat options), u* = (b_2 - b_1) / (a_1 - a_2); below u* the
option with the smaller b is cheaper, above it the one with the smaller a. No crossing in (0, 1]:
one option is cheaper at every utilization.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from apps.engine.costing_constants import RATE_QUANTUM
from apps.engine.costing_rates import significant
from apps.engine.costing_types import (
    ONE,
    PAY_PER_USE_TERMS,
    ZERO,
    CandidateCost,
    PricingTerm,
    QuoteTerms,
)


class CapacityOption(StrEnum):
    """Values match `apps.decisions.DecisionRecord.CapacityModel`; least commitment first."""

    RENT_ON_DEMAND = "RENT_ON_DEMAND"
    RENT_SPOT = "RENT_SPOT"
    RESERVE_1Y = "RESERVE_1Y"
    RESERVE_3Y = "RESERVE_3Y"
    BUY = "BUY"
    API = "API"


# What a person reads for each option (pages, PDF, chart legends), never the code name.
CAPACITY_OPTION_LABELS: dict[CapacityOption, str] = {
    CapacityOption.RENT_ON_DEMAND: "Rent on demand",
    CapacityOption.RENT_SPOT: "Rent spot",
    CapacityOption.RESERVE_1Y: "Reserve 1 year",
    CapacityOption.RESERVE_3Y: "Reserve 3 years",
    CapacityOption.BUY: "Buy (owned)",
    CapacityOption.API: "Model API",
}

# The pricing terms behind each GPU option: the one home of this mapping (the comparison, the
# decision form's default, the PDF). A dedicated cluster is a reservation of its own term: three
# years or more reads as RESERVE_3Y, anything shorter as RESERVE_1Y; an owned quote is BUY when
# bought (capex), and no option at an hourly figure.
_OPTION_BY_TERM = {
    PricingTerm.ON_DEMAND: CapacityOption.RENT_ON_DEMAND,
    PricingTerm.MARKETPLACE: CapacityOption.RENT_ON_DEMAND,
    PricingTerm.SPOT: CapacityOption.RENT_SPOT,
    PricingTerm.RESERVED_1Y: CapacityOption.RESERVE_1Y,
    PricingTerm.RESERVED_3Y: CapacityOption.RESERVE_3Y,
}
THREE_YEARS_MONTHS = 36

# Lines that do not scale with the GPU-hours paid for (see the module doc).
FIXED_LINES = frozenset(
    {
        "storage",
        "network_egress",
        "provider_extras",
        "platform_labour",
        "moderation",
        "operator_review",
    }
)


def capacity_option_for_term(
    term: PricingTerm, *, commitment_months: int = 0, bought: bool = True
) -> CapacityOption:
    """The capacity option a quote of ``term`` is (an owned quote at an hourly figure reads as
    renting on demand: it buys nothing)."""
    if term is PricingTerm.OWNED:
        return CapacityOption.BUY if bought else CapacityOption.RENT_ON_DEMAND
    if term is PricingTerm.DEDICATED_CLUSTER:
        long = commitment_months >= THREE_YEARS_MONTHS
        return CapacityOption.RESERVE_3Y if long else CapacityOption.RESERVE_1Y
    return _OPTION_BY_TERM[term]


def option_for_quote(quote: QuoteTerms) -> CapacityOption | None:
    """The capacity option a GPU quote offers in the comparison, or None (owned at an hourly
    figure: no purchase to compare)."""
    if quote.pricing_term is PricingTerm.OWNED and not quote.is_bought:
        return None
    return capacity_option_for_term(
        quote.pricing_term,
        commitment_months=quote.minimum_commitment_months,
        bought=quote.is_bought,
    )


def label(option: CapacityOption) -> str:
    return CAPACITY_OPTION_LABELS[option]


def share(x: Decimal) -> Decimal:
    return x.quantize(RATE_QUANTUM)


# Significant figures of a unit cost in words, as the candidate table shows it
# (apps.core.formatting.UNIT_COST_DIGITS: the table's unit costs and these sentences agree).
UNIT_COST_FIGURES = 4


def percent(u: Decimal) -> str:
    """A utilization in words: 0.4315 -> "43.2%"."""
    return f"{u * 100:.1f}%"


@dataclass(frozen=True, kw_only=True, slots=True)
class UnitDisplay:
    """How unit costs are written: in the table's unit (e.g. x 1,000,000, "per 1M accepted
    tokens"), so the capacity model's words use the candidate table's unit."""

    currency: str
    scale: Decimal = ONE
    label: str = "per accepted output"

    def amount(self, unit_cost: Decimal) -> str:
        """A unit cost as the candidate table writes it (apps.core.formatting.unit_cost): 4
        significant figures without trailing zeros, whole from 10,000 up ("6.33", "5,521")."""
        value = unit_cost * self.scale
        if abs(value) >= Decimal(10) ** UNIT_COST_FIGURES:
            value = value.quantize(ONE)
        elif value:
            value = value.quantize(Decimal(1).scaleb(value.adjusted() - UNIT_COST_FIGURES + 1))
        text = f"{value:,f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return f"{text} {self.currency} {self.label}"


@dataclass(frozen=True, kw_only=True, slots=True)
class OptionCurve:
    """One option's curve: c(u) = (fixed + variable x utilization / u) / accepted (committed),
    or monthly / accepted (flat). ``variable`` is at the brief's ``utilization``."""

    flat: bool
    fixed: Decimal
    variable: Decimal
    accepted: Decimal
    utilization: Decimal

    @classmethod
    def of(cls, cost: CandidateCost, utilization: Decimal) -> OptionCurve | None:
        if cost.accepted_outputs_per_month <= ZERO or cost.effective_unit_cost is None:
            return None
        fixed = sum((v for k, v in cost.cost_lines.items() if k in FIXED_LINES), ZERO)
        flat = cost.pricing_term is None or cost.pricing_term in PAY_PER_USE_TERMS
        if not flat and utilization <= ZERO:
            return None
        return cls(
            flat=flat,
            fixed=fixed,
            variable=cost.monthly_cost - fixed,
            accepted=cost.accepted_outputs_per_month,
            utilization=utilization,
        )

    def at(self, u: Decimal) -> Decimal:
        """Cost per accepted output at utilization u (0 < u <= 1), to 10 significant digits."""
        if self.flat:
            return significant((self.fixed + self.variable) / self.accepted)
        return significant((self.fixed + self.variable * self.utilization / u) / self.accepted)

    @property
    def a(self) -> Decimal:
        """The part of c(u) that does not fall with utilization."""
        return (self.fixed + (self.variable if self.flat else ZERO)) / self.accepted

    @property
    def b(self) -> Decimal:
        """c(u) = a + b / u."""
        return ZERO if self.flat else self.variable * self.utilization / self.accepted


@dataclass(frozen=True, kw_only=True, slots=True)
class BreakEven:
    """Below `utilization` the `cheaper_below` option wins, above it `cheaper_above`; with no
    crossing in (0, 1] (`utilization` None) one option, named twice, wins throughout."""

    cheaper_below: CapacityOption
    cheaper_above: CapacityOption
    utilization: Decimal | None
    explanation: str


def break_even(
    first: CapacityOption,
    c1: OptionCurve,
    second: CapacityOption,
    c2: OptionCurve,
    *,
    utilization: Decimal,
    display: UnitDisplay,
) -> BreakEven:
    """The break-even of one pair (module doc), in words in the table's unit."""
    da, db = c1.a - c2.a, c2.b - c1.b
    if da != ZERO:
        u = db / da
        if ZERO < u < ONE:
            below, above = (first, second) if c1.b < c2.b else (second, first)
            at = display.amount(c1.at(u))
            return BreakEven(
                cheaper_below=below,
                cheaper_above=above,
                utilization=share(u),
                explanation=(
                    f"{label(above)} is cheaper than {label(below)} above {percent(u)} "
                    f"utilization of committed GPU-hours, {label(below)} below it (both cost "
                    f"{at} there)."
                ),
            )
    # One option wins everywhere in (0, 1]: compare at full utilization (and, in words, at the
    # brief's).
    v1, v2 = c1.at(ONE), c2.at(ONE)
    winner, loser = (first, second) if v1 <= v2 else (second, first)
    cw, cl = (c1, c2) if winner is first else (c2, c1)
    here = f"at the brief's {percent(utilization)}: {display.amount(cw.at(utilization))} against "
    here += display.amount(cl.at(utilization))
    if v1 == v2 and c1.a == c2.a:
        text = f"{label(first)} and {label(second)} cost the same at any utilization ({here})."
    else:
        text = f"{label(winner)} is cheaper than {label(loser)} at any utilization ({here})."
    return BreakEven(cheaper_below=winner, cheaper_above=winner, utilization=None, explanation=text)
