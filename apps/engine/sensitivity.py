"""Sensitivity of a brief's winner: which assumption would change it, and at what value.

The leading candidates of a candidate table (its best-ranked rows, winner first) are costed
again with the candidate costing (`cost_gpu_candidate`, `cost_api_candidate`) while one
assumption moves and the rest stay; the winner is the cheapest leading candidate that still
meets the brief. For each assumption the value nearest today's at which another leading
candidate wins (or the winner stops meeting the brief) is found:

- UTILIZATION: the load, as a share of the brief's forecast volume (requests, records, runs),
  with the GPU capacity sized for the forecast (real-time replicas grow when the load is above
  it, committed GPUs grow as the costing grows them). Less load leaves committed and provisioned
  GPUs idle, so it moves GPU candidates against pay-per-token ones. Searched in [0.05, 3].
- ACCEPTANCE_RATE: share of outputs accepted. Every candidate's unit cost is its monthly cost
  over the same accepted share, so when the costing scales them all alike (checked with one
  costing at half the rate) no value changes the winner; otherwise searched in (0, 1].
- RETRY_RATE: share of requests retried, searched in [0, 0.5] (the rate limit of an API route
  and the throughput of real-time replicas can fail a candidate as retries grow).
- LABOUR_HOURS: every operating model's platform labour hours (and the organisation's shared
  pool, when labour is shared by GPU-hours) times k, k in [0, 4].
- PRICE: one leading candidate's own price times m (GPU-hour price and capex, or per-token
  prices), m in [0, 4]: the winner's up, each challenger's down.
- FX_RATE: the rate of a leading candidate's quote currency (when it is not the reporting
  currency) times m, m in [0.2, 5]; every amount of the quotes in that currency moves with it.

The search: LABOUR_HOURS, PRICE and FX_RATE move each unit cost along a straight line (every
cost line is a fixed amount plus hours or tokens times a rate), so two costings per candidate
give each line and the crossing is solved in closed form, then checked with one costing. The
others are scanned outwards from today's value (1/8, 1/4, 1/2 and all of the way to each end of
the range) and the first change is narrowed by bisection to BISECTION_STEPS halvings.

The tornado: the winner's unit cost at each assumption's value times (1 - TORNADO_SWING) and
(1 + TORNADO_SWING), clamped to its range (None where the winner stops meeting the brief).
Totals: each leading candidate's monthly cost times 12 and 36 months, plus what a commitment
longer than that still binds (committed GPU-hours at the quote's rate, or the capex not yet
depreciated for bought hardware), as `commitment_months` defines the commitment.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import ROUND_CEILING, Decimal, localcontext
from enum import StrEnum

from apps.engine.costing import (
    ApiRouteTerms,
    CandidateCost,
    CapacityFigures,
    CostKind,
    Demand,
    FinanceAssumptions,
    PricingTerm,
    QuoteTerms,
    commitment_months,
    cost_api_candidate,
    cost_gpu_candidate,
    gpu_cost_basis,
    gpu_hourly_rate,
)
from apps.engine.costing_rates import COSTING_CONTEXT, money, significant
from apps.engine.costing_types import COMMITTED_TERMS, ONE, ZERO, cost_kind

__all__ = [
    "BISECTION_STEPS",
    "TORNADO_SWING",
    "TOTAL_MONTHS",
    "Assumption",
    "Change",
    "Finding",
    "LeadingCandidate",
    "PlanPart",
    "SensitivityResult",
    "TornadoBar",
    "Total",
    "horizon_totals",
    "sensitivity",
]

# The tornado chart's swing: each assumption at its value x 0.8 and x 1.2. A common convention
# for one-way sensitivity ("±20 %" in the issue that asked for it; see e.g. the UK Treasury
# Green Book's sensitivity analysis, which varies one input at a time around its central value).
TORNADO_SWING = Decimal("0.2")
# Halvings of the bracket once a change is found: 2^-10 of the bracket (~0.1 %).
BISECTION_STEPS = 10
# How far out from today's value the scan looks, as fractions of the way to each end.
SCAN_FRACTIONS = (Decimal("0.125"), Decimal("0.25"), Decimal("0.5"), ONE)
# Horizons of the totals: one and three years (the reservation terms quotes use).
TOTAL_MONTHS = (12, 36)
# A relative gap below which two costings count as equal (unit costs have 10 significant
# digits; lines are quantized to 4 dp).
_EQUAL = Decimal("1e-7")
_HALF = Decimal("0.5")


class Assumption(StrEnum):
    UTILIZATION = "UTILIZATION"
    ACCEPTANCE_RATE = "ACCEPTANCE_RATE"
    RETRY_RATE = "RETRY_RATE"
    LABOUR_HOURS = "LABOUR_HOURS"
    PRICE = "PRICE"
    FX_RATE = "FX_RATE"


# Where each assumption is searched (value, not multiplier, for the rates).
_RANGES: dict[Assumption, tuple[Decimal, Decimal]] = {
    Assumption.UTILIZATION: (Decimal("0.05"), Decimal(3)),
    Assumption.ACCEPTANCE_RATE: (Decimal("0.01"), ONE),
    Assumption.RETRY_RATE: (ZERO, _HALF),
    Assumption.LABOUR_HOURS: (ZERO, Decimal(4)),
    Assumption.PRICE: (ZERO, Decimal(4)),
    Assumption.FX_RATE: (Decimal("0.2"), Decimal(5)),
}


@dataclass(frozen=True, kw_only=True, slots=True)
class PlanPart:
    """One part of a serving plan (a GPU mix's GPU type, a disaggregated pool): its quote at
    its capacity, serving `request_share` of the brief's requests, carrying the cost lines
    `lines` (None: all of them)."""

    quote: QuoteTerms
    capacity: CapacityFigures
    request_share: Decimal
    currency: str
    lines: frozenset[str] | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class LeadingCandidate:
    """One leading row's costing inputs, as the table costed it (amounts already converted
    to the reporting currency). Exactly one of `quote` (with `capacity`), `route`, or `parts`
    (a serving plan of several quotes, costed part by part and summed line by line, its
    accepted outputs the brief's whole demand)."""

    key: str
    quote: QuoteTerms | None = None
    capacity: CapacityFigures | None = None
    route: ApiRouteTerms | None = None
    parts: tuple[PlanPart, ...] = ()
    currency: str  # the quote's or route's own currency (a plan's: its first part's)
    fx_rate: Decimal = ONE  # reporting-currency units per one unit of `currency`

    def __post_init__(self) -> None:
        kinds = [
            self.quote is not None and self.capacity is not None,
            self.route is not None,
            bool(self.parts),
        ]
        if sum(kinds) != 1:
            raise ValueError("a leading candidate is a quote with capacity, a route or a plan")


@dataclass(frozen=True, kw_only=True, slots=True)
class Change:
    """At `value` the winner changes: `new_winner` (a key) wins, or none of the leading
    candidates meets the brief (None)."""

    value: Decimal
    new_winner: str | None
    winner_utilization: Decimal | None = None  # UTILIZATION: the winner's busy / paid GPU-h


@dataclass(frozen=True, kw_only=True, slots=True)
class Finding:
    """What moving one assumption does to the winner. `subject`: the candidate key (PRICE) or
    the currency (FX_RATE); `base`: today's value (a multiplier of 1 for LABOUR_HOURS, PRICE
    and FX_RATE); `down` / `up`: the nearest change below / above it within [low, high]."""

    assumption: Assumption
    subject: str | None
    base: Decimal
    low: Decimal
    high: Decimal
    down: Change | None
    up: Change | None
    never: bool = False  # no value at all can change the winner (proved, not searched)


@dataclass(frozen=True, kw_only=True, slots=True)
class TornadoBar:
    assumption: Assumption
    low_value: Decimal
    high_value: Decimal
    low_unit_cost: Decimal | None
    high_unit_cost: Decimal | None

    @property
    def swing(self) -> Decimal:
        costs = [c for c in (self.low_unit_cost, self.high_unit_cost) if c is not None]
        return max(costs) - min(costs) if len(costs) == 2 else Decimal("Infinity")


@dataclass(frozen=True, kw_only=True, slots=True)
class Total:
    key: str
    months: int
    running: Decimal  # monthly all-in cost x months
    committed_beyond: Decimal  # still owed after `months` on a longer commitment
    commitment_months: int

    @property
    def total(self) -> Decimal:
        return self.running + self.committed_beyond


@dataclass(frozen=True, kw_only=True, slots=True)
class SensitivityResult:
    winner: str
    base_unit_costs: dict[str, Decimal | None]
    findings: tuple[Finding, ...]
    tornado: tuple[TornadoBar, ...]  # widest swing first
    totals: tuple[Total, ...]
    costings: int  # how many candidate costings it took


@dataclass(frozen=True, kw_only=True, slots=True)
class _Scenario:
    """One assumption at one value: what to cost each candidate with."""

    demand: Demand
    finance: FinanceAssumptions
    load: Decimal = ONE
    price: dict[str, Decimal] | None = None  # key -> multiplier
    fx: dict[str, Decimal] | None = None  # currency -> multiplier


class _Coster:
    """Costs candidates under scenarios and counts the costings."""

    def __init__(self, demand: Demand, finance: FinanceAssumptions) -> None:
        self.demand = demand
        self.finance = finance
        self.count = 0

    def cost(self, c: LeadingCandidate, s: _Scenario) -> CandidateCost:
        self.count += 1
        m = ONE
        if s.price is not None:
            m *= s.price.get(c.key, ONE)
        fx = s.fx.get(c.currency, ONE) if s.fx is not None else ONE
        if c.route is not None:
            route = c.route
            if m * fx != ONE:
                route = replace(
                    route,
                    input_price_per_mtok=route.input_price_per_mtok * m * fx,
                    output_price_per_mtok=route.output_price_per_mtok * m * fx,
                )
            return cost_api_candidate(demand=s.demand, route=route, finance=s.finance)
        if c.parts:
            return self._plan(c, s, m)
        if c.quote is None or c.capacity is None:  # LeadingCandidate forbids it
            raise ValueError(f"{c.key}: a GPU candidate needs its quote and capacity")
        quote = _scaled_quote(c.quote, m, fx)
        capacity = _loaded_capacity(c.capacity, s.demand, s.load)
        return cost_gpu_candidate(
            demand=s.demand, capacity=capacity, quote=quote, finance=s.finance
        )

    def _plan(self, c: LeadingCandidate, s: _Scenario, m: Decimal) -> CandidateCost:
        """A serving plan: each part costed as a GPU row for its share of the requests, the
        parts' lines summed, over the accepted outputs of the brief's whole demand (as
        apps.finance.plans costs it)."""
        costs: list[tuple[CandidateCost, frozenset[str] | None]] = []
        for part in c.parts:
            fx = s.fx.get(part.currency, ONE) if s.fx is not None else ONE
            requests = s.demand.requests_per_month
            demand = replace(
                s.demand,
                requests_per_month=None if requests is None else requests * part.request_share,
            )
            cost = cost_gpu_candidate(
                demand=demand,
                capacity=_loaded_capacity(part.capacity, s.demand, s.load),
                quote=_scaled_quote(part.quote, m, fx),
                finance=s.finance,
            )
            costs.append((cost, part.lines))
        whole = gpu_cost_basis(
            demand=s.demand, capacity=replace(c.parts[0].capacity, replicas=1), finance=s.finance
        )
        return _summed_plan(costs, whole.accepted_q, s.finance.reporting_currency)

    def unit(self, c: LeadingCandidate, s: _Scenario) -> Decimal | None:
        cost = self.cost(c, s)
        return cost.effective_unit_cost if cost.meets_constraints else None


def _summed_plan(
    costs: list[tuple[CandidateCost, frozenset[str] | None]], accepted: Decimal, currency: str
) -> CandidateCost:
    """A plan's parts as one costing: each part's lines (all, or those named) summed line by
    line in the first part's order."""
    lines: dict[str, Decimal] = {}
    for cost, only in costs:
        for name, amount in cost.cost_lines.items():
            if only is None or name in only:
                lines[name] = lines.get(name, ZERO) + amount
    monthly = sum(lines.values(), ZERO)
    why_not = tuple(sorted({w for cost, _ in costs for w in cost.why_not}))
    first = costs[0][0]
    unit = significant(monthly / accepted) if accepted > ZERO and not why_not else None
    return CandidateCost(
        cost_lines=lines,
        monthly_cost=monthly,
        generated_outputs_per_month=first.generated_outputs_per_month,
        accepted_outputs_per_month=accepted,
        effective_unit_cost=unit,
        success_unit=first.success_unit,
        meets_constraints=not why_not and accepted > ZERO,
        why_not=why_not,
        notes=(),
        utilization=first.utilization,
        currency=currency,
        basis=first.basis,
        pricing_term=None,
        gpus_paid=sum(c.gpus_paid for c, _ in costs),
        busy_gpu_hours_per_month=sum((c.busy_gpu_hours_per_month for c, _ in costs), ZERO),
        paid_gpu_hours_per_month=sum((c.paid_gpu_hours_per_month for c, _ in costs), ZERO),
    )


def _scaled_quote(quote: QuoteTerms, price: Decimal, fx: Decimal) -> QuoteTerms:
    if price == ONE and fx == ONE:
        return quote
    both = price * fx
    return replace(
        quote,
        hourly_price_per_gpu=quote.hourly_price_per_gpu * both,
        capex_per_gpu=None if quote.capex_per_gpu is None else quote.capex_per_gpu * both,
        storage_price_per_tb_month=quote.storage_price_per_tb_month * fx,
        egress_price_per_gb=quote.egress_price_per_gb * fx,
        network_monthly=quote.network_monthly * fx,
        monthly_extras=quote.monthly_extras * fx,
    )


def _loaded_capacity(capacity: CapacityFigures, demand: Demand, load: Decimal) -> CapacityFigures:
    """The capacity at `load` x the forecast: real-time replicas stay as sized, and grow
    (whole replicas) when the load is above the forecast; other kinds' GPU-hours follow the
    work (the costing recomputes them from throughput where it has one)."""
    if load == ONE:
        return capacity
    if cost_kind(demand.workload_type) is CostKind.REALTIME:
        if load <= ONE:
            return capacity
        replicas = int((capacity.replicas * load).to_integral_value(ROUND_CEILING))
        return replace(
            capacity,
            replicas=replicas,
            gpu_hours_per_month=capacity.gpu_hours_per_month * replicas / capacity.replicas,
        )
    return replace(capacity, gpu_hours_per_month=capacity.gpu_hours_per_month * load)


def _loaded_demand(demand: Demand, load: Decimal) -> Demand:
    return replace(
        demand,
        requests_per_month=None
        if demand.requests_per_month is None
        else demand.requests_per_month * load,
        jobs_per_month=demand.jobs_per_month * load,
    )


def _scenario(
    assumption: Assumption, x: Decimal, demand: Demand, finance: FinanceAssumptions
) -> _Scenario:
    if assumption is Assumption.UTILIZATION:
        return _Scenario(demand=_loaded_demand(demand, x), finance=finance, load=x)
    if assumption is Assumption.ACCEPTANCE_RATE:
        return _Scenario(
            demand=replace(demand, acceptance_rate=x)
            if demand.acceptance_rate is not None
            else demand,
            finance=replace(finance, acceptance_rate=x),
        )
    if assumption is Assumption.RETRY_RATE:
        return _Scenario(demand=demand, finance=replace(finance, retry_rate=x))
    if assumption is Assumption.LABOUR_HOURS:
        return _Scenario(
            demand=demand,
            finance=replace(
                finance,
                platform_hours_self_managed=finance.platform_hours_self_managed * x,
                platform_hours_managed_endpoint=finance.platform_hours_managed_endpoint * x,
                platform_hours_api=finance.platform_hours_api * x,
                # shared by GPU-hours: the platform team's pool is what the hours are
                platform_labour_pool_hours=None
                if finance.platform_labour_pool_hours is None
                else finance.platform_labour_pool_hours * x,
            ),
        )
    raise ValueError(f"{assumption} is moved per candidate or per currency")


def _winner(costs: list[Decimal | None]) -> int | None:
    """The cheapest candidate that meets the brief (the first of equals), or None."""
    best: tuple[Decimal, int] | None = None
    for i, cost in enumerate(costs):
        if cost is not None and (best is None or cost < best[0]):
            best = (cost, i)
    return None if best is None else best[1]


def _units(costs: list[CandidateCost]) -> list[Decimal | None]:
    return [c.effective_unit_cost if c.meets_constraints else None for c in costs]


def _base_value(assumption: Assumption, demand: Demand, finance: FinanceAssumptions) -> Decimal:
    if assumption is Assumption.ACCEPTANCE_RATE:
        if demand.acceptance_rate is not None:
            return demand.acceptance_rate
        return finance.acceptance_rate
    if assumption is Assumption.RETRY_RATE:
        return finance.retry_rate
    return ONE


def _clamp(x: Decimal, assumption: Assumption) -> Decimal:
    low, high = _RANGES[assumption]
    return min(max(x, low), high)


def _search(changed: Callable[[Decimal], bool], base: Decimal, bound: Decimal) -> Decimal | None:
    """The value nearest `base` towards `bound` at which `changed` first holds, or None."""
    previous = base
    for fraction in SCAN_FRACTIONS:
        x = base + (bound - base) * fraction
        if x == previous:
            continue
        if changed(x):
            inside, outside = previous, x
            for _ in range(BISECTION_STEPS):
                mid = (inside + outside) / 2
                if changed(mid):
                    outside = mid
                else:
                    inside = mid
            return outside
        previous = x
    return None


def _line_crossings(
    lines: list[tuple[Decimal, Decimal] | None], winner: int, low: Decimal, high: Decimal
) -> tuple[tuple[Decimal, int] | None, tuple[Decimal, int] | None]:
    """Lines u_i(x) = a_i + b_i (x - 1) (None: not costed); the nearest x below and above 1,
    within [low, high], where another line meets the winner's, with who crosses."""
    winner_line = lines[winner]
    if winner_line is None:
        return None, None
    aw, bw = winner_line
    down: tuple[Decimal, int] | None = None
    up: tuple[Decimal, int] | None = None
    for i, line in enumerate(lines):
        if i == winner or line is None or line[1] == bw:
            continue
        x = ONE + (line[0] - aw) / (bw - line[1])
        if ONE < x <= high and (up is None or x < up[0]):
            up = (x, i)
        if low <= x < ONE and (down is None or x > down[0]):
            down = (x, i)
    return down, up


class _Analysis:
    def __init__(
        self,
        coster: _Coster,
        candidates: list[LeadingCandidate],
        costs: list[CandidateCost],
        winner: int,
    ) -> None:
        self.demand = coster.demand
        self.finance = coster.finance
        self.candidates = candidates
        self.coster = coster
        self.base = _Scenario(demand=self.demand, finance=self.finance)
        self.costs = costs
        self.units = _units(costs)
        self.winner = winner

    # -- the winner under one scenario ---------------------------------------------------
    def changed(self, s: _Scenario, hint: list[int]) -> bool:
        """Whether the base winner stops winning under `s` (costing as few as it can)."""
        mine = self.coster.unit(self.candidates[self.winner], s)
        if mine is None:
            return True
        order = [*hint, *(i for i in range(len(self.candidates)) if i not in hint)]
        for i in order:
            if i == self.winner:
                continue
            other = self.coster.unit(self.candidates[i], s)
            if other is not None and other < mine:
                if i not in hint:
                    hint.insert(0, i)
                return True
        return False

    def winner_under(self, s: _Scenario) -> int | None:
        return _winner([self.coster.unit(c, s) for c in self.candidates])

    def change_at(self, assumption: Assumption, x: Decimal | None) -> Change | None:
        if x is None:
            return None
        s = _scenario(assumption, x, self.demand, self.finance)
        new = self.winner_under(s)
        utilization = None
        if assumption is Assumption.UTILIZATION:
            utilization = self.coster.cost(self.candidates[self.winner], s).utilization
        return Change(
            value=_round(x),
            new_winner=None if new is None else self.candidates[new].key,
            winner_utilization=utilization,
        )

    # -- findings ------------------------------------------------------------------------
    def scanned(self, assumption: Assumption) -> Finding:
        base = _base_value(assumption, self.demand, self.finance)
        low, high = _RANGES[assumption]
        hint: list[int] = []

        def changed(x: Decimal) -> bool:
            return self.changed(_scenario(assumption, x, self.demand, self.finance), hint)

        down = _search(changed, base, low) if base > low else None
        up = _search(changed, base, high) if base < high else None
        return Finding(
            assumption=assumption,
            subject=None,
            base=base,
            low=low,
            high=high,
            down=self.change_at(assumption, down),
            up=self.change_at(assumption, up),
        )

    def acceptance(self) -> Finding:
        """Every unit cost over the same accepted share: no value changes the winner when
        halving the rate scales every candidate's unit cost by the same factor."""
        assumption = Assumption.ACCEPTANCE_RATE
        base = _base_value(assumption, self.demand, self.finance)
        half = _scenario(assumption, base * _HALF, self.demand, self.finance)
        alike = True
        for c, unit in zip(self.candidates, self.units, strict=True):
            moved = self.coster.unit(c, half)
            if unit is None or moved is None:
                alike = alike and unit is None and moved is None
            elif abs(moved * _HALF - unit) > unit * _EQUAL:
                alike = False
        if not alike:
            return self.scanned(assumption)
        low, high = _RANGES[assumption]
        return Finding(
            assumption=assumption, subject=None, base=base, low=low, high=high,
            down=None, up=None, never=True,
        )  # fmt: skip

    def lines(
        self, scenario: Callable[[Decimal], _Scenario], movers: set[int]
    ) -> list[tuple[Decimal, Decimal] | None]:
        """Each candidate's unit cost as a line in the multiplier (two costings: today and
        x 1 + TORNADO_SWING); candidates outside `movers` are flat."""
        up = scenario(ONE + TORNADO_SWING)
        out: list[tuple[Decimal, Decimal] | None] = []
        for i, (c, unit) in enumerate(zip(self.candidates, self.units, strict=True)):
            if unit is None:
                out.append(None)
            elif i not in movers:
                out.append((unit, ZERO))
            else:
                moved = self.coster.unit(c, up)
                out.append(None if moved is None else (unit, (moved - unit) / TORNADO_SWING))
        return out

    def linear(
        self,
        assumption: Assumption,
        subject: str | None,
        scenario: Callable[[Decimal], _Scenario],
        movers: set[int],
    ) -> Finding:
        low, high = _RANGES[assumption]
        down, up = _line_crossings(self.lines(scenario, movers), self.winner, low, high)

        def change(found: tuple[Decimal, int] | None, step: Decimal) -> Change | None:
            if found is None:
                return None
            x = found[0]
            # Checked with one costing just past the crossing (lines are exact up to the
            # lines' 4 dp rounding): who wins there.
            past = _clamp(x * (ONE + step), assumption)
            new = self.winner_under(scenario(past))
            if new == self.winner:
                new = found[1]
            return Change(
                value=_round(x), new_winner=None if new is None else self.candidates[new].key
            )

        return Finding(
            assumption=assumption,
            subject=subject,
            base=ONE,
            low=low,
            high=high,
            down=change(down, -_EQUAL * 1000),
            up=change(up, _EQUAL * 1000),
        )

    def labour(self) -> Finding:
        assumption = Assumption.LABOUR_HOURS
        return self.linear(
            assumption,
            None,
            lambda x: _scenario(assumption, x, self.demand, self.finance),
            set(range(len(self.candidates))),
        )

    def price(self, i: int) -> Finding:
        key = self.candidates[i].key
        return self.linear(
            Assumption.PRICE,
            key,
            lambda x: replace(self.base, price={key: x}),
            {i},
        )

    def fx(self, currency: str) -> Finding:
        movers = {i for i, c in enumerate(self.candidates) if c.currency == currency}
        return self.linear(
            Assumption.FX_RATE,
            currency,
            lambda x: replace(self.base, fx={currency: x}),
            movers,
        )

    # -- tornado and totals --------------------------------------------------------------
    def bar(self, assumption: Assumption, scenario: Callable[[Decimal], _Scenario]) -> TornadoBar:
        base = _base_value(assumption, self.demand, self.finance)
        lo = _clamp(base * (ONE - TORNADO_SWING), assumption)
        hi = _clamp(base * (ONE + TORNADO_SWING), assumption)
        w = self.candidates[self.winner]
        return TornadoBar(
            assumption=assumption,
            low_value=_round(lo),
            high_value=_round(hi),
            low_unit_cost=self.coster.unit(w, scenario(lo)),
            high_unit_cost=self.coster.unit(w, scenario(hi)),
        )

    def totals(self) -> list[Total]:
        out: list[Total] = []
        for c, cost in zip(self.candidates, self.costs, strict=True):
            out += horizon_totals(
                key=c.key,
                quote=c.quote,
                finance=self.finance,
                monthly_cost=cost.monthly_cost,
                paid_gpu_hours_per_month=cost.paid_gpu_hours_per_month,
                gpus_paid=cost.gpus_paid,
            )
        return out


def horizon_totals(
    *,
    key: str,
    quote: QuoteTerms | None,
    finance: FinanceAssumptions,
    monthly_cost: Decimal,
    paid_gpu_hours_per_month: Decimal,
    gpus_paid: int,
    horizons: tuple[int, ...] = TOTAL_MONTHS,
) -> list[Total]:
    """One candidate's cost over each horizon: its monthly all-in cost x months, plus what a
    longer commitment still binds after it (committed GPU-hours at the quote's rate, or the
    capex of bought GPUs not yet depreciated). ``quote`` None: an API route, no commitment.
    The candidate table reads it for every row it shows; the sensitivity for its leaders."""
    months, monthly_commitment, capex = 0, ZERO, ZERO
    if quote is not None:
        months = commitment_months(quote, finance)
        if quote.pricing_term is PricingTerm.OWNED and quote.capex_per_gpu is not None:
            capex = quote.capex_per_gpu * gpus_paid
        elif quote.pricing_term in COMMITTED_TERMS or months:
            rate, _ = gpu_hourly_rate(quote, finance)
            monthly_commitment = rate * paid_gpu_hours_per_month
    out: list[Total] = []
    for horizon in horizons:
        left = max(months - horizon, 0)
        beyond = monthly_commitment * left
        if capex and months:
            beyond = capex * left / months  # capex not yet depreciated
        out.append(
            Total(
                key=key,
                months=horizon,
                running=money(monthly_cost * horizon),
                committed_beyond=money(beyond),
                commitment_months=months,
            )
        )
    return out


def _round(x: Decimal) -> Decimal:
    """A found value to 4 significant digits (the bisection's own precision is ~0.1 %)."""
    if not x:
        return ZERO
    return x.quantize(Decimal(1).scaleb(x.adjusted() - 3)).normalize()


def sensitivity(
    *,
    demand: Demand,
    finance: FinanceAssumptions,
    candidates: list[LeadingCandidate],
) -> SensitivityResult | None:
    """The sensitivity of the winner among `candidates` (see the module doc); None when no
    candidate meets the brief today."""
    with localcontext(COSTING_CONTEXT):
        return _sensitivity(demand, finance, candidates)


def _sensitivity(
    demand: Demand, finance: FinanceAssumptions, candidates: list[LeadingCandidate]
) -> SensitivityResult | None:
    coster = _Coster(demand, finance)
    base = _Scenario(demand=demand, finance=finance)
    costs = [coster.cost(c, base) for c in candidates]
    winner_index = _winner(_units(costs))
    if winner_index is None:
        return None
    a = _Analysis(coster, candidates, costs, winner_index)
    findings: list[Finding] = []
    bars: list[TornadoBar] = []
    volume_known = not (
        cost_kind(demand.workload_type) is CostKind.REALTIME and demand.requests_per_month is None
    )
    if volume_known:
        findings.append(a.scanned(Assumption.UTILIZATION))
    findings.append(a.acceptance())
    findings.append(a.scanned(Assumption.RETRY_RATE))
    findings.append(a.labour())
    findings.extend(a.price(i) for i, unit in enumerate(a.units) if unit is not None)
    foreign = sorted(
        {c.currency for c, u in zip(candidates, a.units, strict=True)
         if u is not None and c.fx_rate != ONE}
    )  # fmt: skip
    findings.extend(a.fx(currency) for currency in foreign)

    def global_scenario(assumption: Assumption) -> Callable[[Decimal], _Scenario]:
        return lambda x: _scenario(assumption, x, demand, finance)

    for assumption in (
        *((Assumption.UTILIZATION,) if volume_known else ()),
        Assumption.ACCEPTANCE_RATE,
        Assumption.RETRY_RATE,
        Assumption.LABOUR_HOURS,
    ):
        bars.append(a.bar(assumption, global_scenario(assumption)))
    winner = candidates[a.winner]
    bars.append(a.bar(Assumption.PRICE, lambda x: replace(a.base, price={winner.key: x})))
    if winner.fx_rate != ONE:
        currency = winner.currency
        bars.append(a.bar(Assumption.FX_RATE, lambda x: replace(a.base, fx={currency: x})))
    bars.sort(key=lambda b: b.swing, reverse=True)
    return SensitivityResult(
        winner=winner.key,
        base_unit_costs={c.key: u for c, u in zip(candidates, a.units, strict=True)},
        findings=tuple(findings),
        tornado=tuple(bars),
        totals=tuple(a.totals()),
        costings=a.coster.count,
    )
