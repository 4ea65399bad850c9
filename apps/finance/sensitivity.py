"""What would change the winner: the engine's sensitivity (apps.engine.sensitivity) of a
candidate table's leading rows, as the JSON a table stores, the API sends and a decision
record freezes.

Computed when a table is recomputed (``sensitivity_update``, called from the write step) and
stored on ``CandidateTable.sensitivity``: a few hundred candidate costings, a few milliseconds
a table. It is computed again only when its inputs moved: the table's fingerprint (brief,
assumptions, engine answer, FX rates) or the leading rows (which quotes and routes, their
versions and unit costs); a price change elsewhere in the table keeps it as it is.

Each leading row is costed again from the same inputs the table costed it with (the quote's
facts, the chosen configuration, the table's demand and finance assumptions); a row whose
costing does not give back its stored unit cost is left out (``left_out``), so the figures here
are always those of the table.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, TypedDict, cast, overload

from django.db.models import Q

from apps.catalog.selectors import gpu_names
from apps.core import formatting
from apps.engine import EngineInputError
from apps.engine.sensitivity import (
    Assumption,
    Change,
    Finding,
    LeadingCandidate,
    PlanPart,
    SensitivityResult,
    sensitivity,
)
from apps.quotes.models import TERM_LABELS, ApiRoute, Quote

from .fx import FxMissing, fx_convert
from .models import CandidateRow, CandidateTable
from .offers import QuoteFacts, RouteFacts, quote_facts, route_facts
from .plans import PREFILL_POOL_LINES, part_capacity
from .shown import (
    LeftOut,
    Sensitivity,
    SensitivityChange,
    SensitivityFinding,
    SensitivitySignature,
    SensitivityTotal,
)
from .state import PLAN_KINDS, ROW_READ, CandidateKind, Row, row_from_columns
from .units import scaled, significant_text, unit_for, unit_text
from .version_sets import table_versions

if TYPE_CHECKING:
    from .candidates import TableContext, TableWrite

logger = logging.getLogger(__name__)

# The leading candidates: the best-ranked rows whose sensitivity is computed (the winner and
# the four that could take its place; the issue asks for "the leading candidates").
LEADING_ROWS = 5
LABELS = {
    Assumption.UTILIZATION: "Utilization (load against the brief's forecast)",
    Assumption.ACCEPTANCE_RATE: "Acceptance rate",
    Assumption.RETRY_RATE: "Retry rate",
    Assumption.LABOUR_HOURS: "Platform labour hours",
    Assumption.PRICE: "Price",
    Assumption.FX_RATE: "FX rate",
}
# Rows read beyond LEADING_ROWS in case some are of quotes the team no longer sees.
HIDDEN_SLACK = 3
PLAN_WORDS = {"MIX": "GPU mix by request size", "DISAGG": "Disaggregated prefill / decode"}


def unit_scale(unit: str) -> tuple[int, str]:
    """The table's unit (apps.finance.units, one rule for every reader): outputs per shown
    unit cost, and its words."""
    table_unit = unit_for(unit)
    return (table_unit.scale if table_unit else 1), unit_text(table_unit)


def in_table_unit(stored: Sensitivity) -> Sensitivity:
    """The stored sensitivity as readers get it (rankings JSON, finance page, snapshot): its
    unit costs, stored per one output, in the table's unit like the rows beside it (times
    ``unit_scale``), without the stored bookkeeping (``signature``)."""
    out = stored.copy()
    out.pop("signature", None)
    if not out:
        return out
    scale = int(out.get("unit_scale") or 1)

    def shown(value: str | None) -> str | None:
        found = scaled(value, scale)
        return None if found is None else format(found.normalize(), "f")

    out["unit_scale"] = scale
    out["leading"] = [
        {**c, "effective_unit_cost": shown(c["effective_unit_cost"])}
        for c in out.get("leading") or []
    ]
    out["tornado"] = [
        {
            **b,
            "low_unit_cost": shown(b["low_unit_cost"]),
            "high_unit_cost": shown(b["high_unit_cost"]),
        }
        for b in out.get("tornado") or []
    ]
    return out


# Stored unit costs keep 18 decimal places of the engine's 10 significant digits.
SAME_UNIT_COST = Decimal("1e-9")


def _same(costed: Decimal | None, stored: Decimal | None) -> bool:
    if costed is None or stored is None:
        return False
    return abs(costed - stored) <= abs(stored) * SAME_UNIT_COST + Decimal("1e-18")


@overload
def _s(value: Decimal) -> str: ...
@overload
def _s(value: Decimal | None) -> str | None: ...
def _s(value: Decimal | None) -> str | None:
    return None if value is None else format(value.normalize(), "f")


def _leading_rows(table: CandidateTable, team_id: int) -> list[Row]:
    """The best-ranked rows, in ranking order (rank 1, the winner, first), that the brief's
    team may see. A recompute writes only rows of quotes the team sees; one made confidential
    meanwhile is dropped (and its row deleted) by ``services.candidate_rows_drop_invisible``,
    so the check is on the few rows read."""
    rows = [
        row_from_columns(r)
        for r in CandidateRow.objects.filter(
            table=table, meets_constraints=True, effective_unit_cost__isnull=False
        )
        .order_by("effective_unit_cost", "pk")
        .values(*ROW_READ)[: LEADING_ROWS + HIDDEN_SLACK]
    ]
    quote_ids = {pk for r in rows for pk in (r.quote_id, *r.plan_quote_ids) if pk}
    hidden = set(
        Quote.objects.filter(pk__in=quote_ids)
        .exclude(Q(confidential_to__isnull=True) | Q(confidential_to_id=team_id))
        .values_list("pk", flat=True)
    )
    visible = [r for r in rows if not ({r.quote_id, *r.plan_quote_ids} & hidden)]
    return visible[:LEADING_ROWS]


def _signature(ctx: TableContext, table: CandidateTable, rows: list[Row]) -> SensitivitySignature:
    """What the sensitivity was worked out from: the fingerprint and the leading rows, each with
    the version of its quote or route the table costed (apps.finance.version_sets)."""
    quotes, routes = table_versions(table)

    def version(row: Row) -> int | None:
        if row.quote_id:
            return quotes.get(str(row.quote_id))
        return routes.get(str(row.api_route_id)) if row.api_route_id else None

    return {
        "fingerprint": ctx.fingerprint,
        "rows": [[r.key, version(r), _s(r.effective_unit_cost)] for r in rows],
    }


def _still_holds(stored: Sensitivity, built: TableWrite, ctx: TableContext) -> bool:
    """Whether an incremental recompute (only the rows of changed quotes and routes written
    again) leaves the leading rows as they were, told without a query: none of them changed,
    no serving plan was solved again, and no re-costed row undercuts the last of them (or joins
    fewer than LEADING_ROWS)."""
    signature = stored.get("signature")
    if built.replace_all or built.replace_plans:
        return False
    if not signature or signature.get("fingerprint") != ctx.fingerprint:
        return False
    leading = {row[0] for row in signature["rows"]}
    stale = {f"quote:{pk}" for pk in built.stale_quote_ids} | {
        f"api_route:{pk}" for pk in built.stale_route_ids
    }
    if leading & stale:
        return False
    costs = [
        row.effective_unit_cost
        for row in built.rows
        if row.meets_constraints and row.effective_unit_cost is not None
    ]
    if not costs:
        return True
    if len(leading) < LEADING_ROWS:
        return False
    last = Decimal(str(signature["rows"][-1][2]))  # the last leading row's unit cost
    return all(cost >= last for cost in costs)


def sensitivity_update(table: CandidateTable, built: TableWrite) -> list[str]:
    """Bring ``table.sensitivity`` up to date after ``built``'s rows were written; the fields
    to save (none when it still holds)."""
    ctx = built.context
    if ctx is None:
        changed = table.sensitivity != {}
        table.sensitivity = {}
        return ["sensitivity"] if changed else []
    stored = cast(Sensitivity, table.sensitivity or {})  # what sensitivity_for stored
    if _still_holds(stored, built, ctx):
        return []
    rows = _leading_rows(table, ctx.brief.team_id)
    signature = _signature(ctx, table, rows)
    if stored.get("signature") == signature:
        return []
    table.sensitivity = sensitivity_for(ctx, rows)
    table.sensitivity["signature"] = signature
    return ["sensitivity"]


@dataclass(frozen=True, kw_only=True, slots=True)
class _Leading:
    """A leading row with what its words need: its label, and the quote or route it prices
    (None for a plan)."""

    row: Row
    label: str
    quote: QuoteFacts | None = None
    route: RouteFacts | None = None


def _label(row: Row, quote: QuoteFacts | None, route: RouteFacts | None) -> str:
    if route is not None:
        return f"{route.provider} · {route.model} (API)"
    names = gpu_names()
    if quote is not None:
        term = str(TERM_LABELS.get(quote.pricing_term, "")).lower()
        return f"{quote.provider} · {names.get(quote.gpu, quote.gpu)} · {term}"
    return PLAN_WORDS.get(row.kind.value, "Serving plan")


def _rate(ctx: TableContext, currency: str) -> Decimal:
    """Reporting-currency units per one unit of ``currency``."""
    return fx_convert(Decimal(1), currency, ctx.currency, ctx.assumptions.fx_rates)


def _gpu_candidate(ctx: TableContext, row: Row, facts: QuoteFacts) -> LeadingCandidate | None:
    """The costing inputs of a GPU row, at the configuration the table costed it at."""
    configured = ctx.configurator.configure(facts.gpu, facts.limit, facts.instance)
    if configured is None:
        return None
    return LeadingCandidate(
        key=row.key,
        quote=ctx.quote_terms(facts),
        capacity=configured.capacity,
        currency=facts.currency,
        fx_rate=_rate(ctx, facts.currency),
    )


def _plan_candidate(
    ctx: TableContext, row: Row, quotes: dict[int, QuoteFacts]
) -> LeadingCandidate | None:
    """The costing inputs of a serving plan: each part's quote at its replicas, serving its
    share of the requests (as apps.finance.plans costed it)."""
    parts: list[PlanPart] = []

    def part(quote_id: int, gpu: str, count: int, replicas: int, share: float,
             batch: int | None, lines: frozenset[str] | None) -> bool:  # fmt: skip
        facts = quotes.get(quote_id)
        if facts is None or ctx.answer.for_gpu(gpu) is None:
            return False
        capacity = part_capacity(ctx, gpu, count, replicas, batch)
        parts.append(
            PlanPart(
                quote=ctx.quote_terms(facts),
                capacity=capacity,
                request_share=Decimal(repr(share)),
                currency=facts.currency,
                lines=lines,
            )
        )
        return True

    if row.mix is not None:
        for p in row.mix.parts:
            if not part(p.quote_id, p.gpu, p.gpu_count, p.replicas, p.request_share, p.batch, None):
                return None
    elif row.disagg is not None:
        by_role = {pool.role: pool for pool in row.disagg.pools}
        decode, prefill = by_role.get("decode"), by_role.get("prefill")
        if decode is None or prefill is None:
            return None
        lines = set(PREFILL_POOL_LINES)
        if prefill.quote_id != decode.quote_id:
            lines.add("provider_extras")
        if not (
            part(decode.quote_id, decode.gpu, decode.gpus_per_instance, decode.instances, 1.0,
                 decode.batch, None)
            and part(prefill.quote_id, prefill.gpu, prefill.gpus_per_instance,
                     prefill.instances, 1.0, None, frozenset(lines))
        ):  # fmt: skip
            return None
    if not parts:
        return None
    return LeadingCandidate(
        key=row.key,
        parts=tuple(parts),
        currency=parts[0].currency,
        fx_rate=_rate(ctx, parts[0].currency),
    )


def sensitivity_for(ctx: TableContext, rows: list[Row]) -> Sensitivity:
    """The sensitivity of the leading ``rows`` (rank 1 first) as stored JSON ({} when there
    is no winner). The winner it names is rank 1 whatever its kind: a serving plan is costed
    again part by part."""
    quote_ids = {pk for r in rows for pk in (r.quote_id, *r.plan_quote_ids) if pk}
    route_ids = [r.api_route_id for r in rows if r.api_route_id]
    known, known_routes = ctx.quotes_costed or {}, ctx.routes_costed or {}
    if quote_ids <= known.keys():  # a full compute: the quotes it costed
        quotes = {pk: known[pk] for pk in quote_ids}
    else:
        quotes = {q.pk: q for q in quote_facts(Quote.objects.filter(pk__in=quote_ids))}
    if set(route_ids) <= known_routes.keys():
        routes = {pk: known_routes[pk] for pk in route_ids}
    else:
        routes = {a.pk: a for a in route_facts(ApiRoute.objects.filter(pk__in=route_ids))}
    candidates: list[LeadingCandidate] = []
    left_out: list[LeftOut] = []
    leading: dict[str, _Leading] = {}
    for row in rows:
        quote = quotes.get(row.quote_id) if row.quote_id else None
        route = routes.get(row.api_route_id) if row.api_route_id else None
        try:
            if row.kind in PLAN_KINDS:
                candidate = _plan_candidate(ctx, row, quotes)
            elif quote is not None:
                candidate = _gpu_candidate(ctx, row, quote)
            elif route is not None:
                candidate = LeadingCandidate(
                    key=row.key,
                    route=route.terms(ctx.assumptions, ctx.demand),
                    currency=route.currency,
                    fx_rate=_rate(ctx, route.currency),
                )
            else:
                candidate = None
        except FxMissing:
            candidate = None
        if candidate is None:
            left_out.append(
                {"candidate": row.key, "reason": "its inputs changed since it was costed"}
            )
            continue
        candidates.append(candidate)
        leading[row.key] = _Leading(
            row=row, label=_label(row, quote, route), quote=quote, route=route
        )
    if not candidates:
        return {}
    try:
        return _computed(ctx, candidates, leading, left_out)
    except (EngineInputError, ArithmeticError, ValueError):
        # The table's rows are written either way: a sensitivity that cannot be computed is
        # left out (and logged), never a failed recompute.
        logger.exception("sensitivity of brief %s not computed", ctx.brief.pk)
        return {}


def _computed(
    ctx: TableContext,
    candidates: list[LeadingCandidate],
    leading: dict[str, _Leading],
    left_out: list[LeftOut],
) -> Sensitivity:
    result = sensitivity(demand=ctx.demand, finance=ctx.finance, candidates=candidates)
    if result is not None:
        # Only rows whose costing gives back the table's figure (else: left out, and again).
        same = [
            c
            for c in candidates
            if _same(result.base_unit_costs.get(c.key), leading[c.key].row.effective_unit_cost)
        ]
        if len(same) != len(candidates):
            left_out += [
                {"candidate": c.key, "reason": "costed again, it does not give the table's figure"}
                for c in candidates
                if c not in same
            ]
            result = (
                sensitivity(demand=ctx.demand, finance=ctx.finance, candidates=same)
                if same
                else None
            )
    if result is None:
        return {}
    return _as_json(ctx, result, leading, left_out)


def _as_json(
    ctx: TableContext,
    result: SensitivityResult,
    leading: dict[str, _Leading],
    left_out: list[LeftOut],
) -> Sensitivity:
    currency = ctx.currency
    unit = ctx.brief.success_unit
    scale, unit_label = unit_scale(unit)
    labels = {key: found.label for key, found in leading.items()}
    words = _Words(ctx, result, leading, labels, currency, scale, unit_label)
    totals: dict[str, list[SensitivityTotal]] = {}
    for t in result.totals:
        totals.setdefault(t.key, []).append(
            {
                "months": t.months,
                "running": _s(t.running),
                "committed_beyond": _s(t.committed_beyond),
                "total": _s(t.total),
                "commitment_months": t.commitment_months,
            }
        )
    findings: list[SensitivityFinding] = [
        {
            "assumption": f.assumption.value,
            "label": LABELS[f.assumption],
            "subject": f.subject,
            "base": _s(f.base),
            "range": [_s(f.low), _s(f.high)],
            "down": _change_json(f.down),
            "up": _change_json(f.up),
            "never": f.never,
            "explanation": words.finding(f),
        }
        for f in result.findings
    ]
    return {
        "currency": currency,
        "unit": unit,
        "unit_scale": scale,
        "unit_label": unit_label,
        "winner": result.winner,
        "leading": [
            {
                "key": key,
                "candidate_kind": leading[key].row.kind.value,
                "quote_id": leading[key].row.quote_id,
                "api_route_id": leading[key].row.api_route_id,
                "label": labels[key],
                "effective_unit_cost": _s(leading[key].row.effective_unit_cost),
                "monthly_cost": _s(leading[key].row.monthly_cost),
                "totals": totals[key],
            }
            for key in result.base_unit_costs
        ],
        "findings": findings,
        "summary": words.summary(result.findings),
        "tornado": [
            {
                "assumption": b.assumption.value,
                "label": LABELS[b.assumption],
                "low_value": _s(b.low_value),
                "high_value": _s(b.high_value),
                "low_unit_cost": _s(b.low_unit_cost),
                "high_unit_cost": _s(b.high_unit_cost),
            }
            for b in result.tornado
        ],
        "left_out": left_out,
        "costings": result.costings,
    }


def _change_json(change: Change | None) -> SensitivityChange | None:
    if change is None:
        return None
    return {
        "value": _s(change.value),
        "new_winner": change.new_winner,
        "winner_utilization": _s(change.winner_utilization),
    }


def _pct(x: Decimal) -> str:
    return f"{significant_text(x * 100, 3)} %"


class _Words:
    """The findings in words, with formatted money and the table's unit."""

    def __init__(
        self,
        ctx: TableContext,
        result: SensitivityResult,
        leading: dict[str, _Leading],
        labels: dict[str, str],
        currency: str,
        scale: int,
        unit_label: str,
    ) -> None:
        self.ctx, self.result, self.leading, self.labels = ctx, result, leading, labels
        self.currency, self.scale, self.unit_label = currency, scale, unit_label

    def unit_cost(self, key: str) -> str:
        cost = self.result.base_unit_costs[key]
        if cost is None:
            return "no unit cost"
        return f"{formatting.unit_cost(cost * self.scale, self.currency)} {self.unit_label}"

    def who(self, key: str | None) -> str:
        if key is None:
            return "none of the leading candidates meets the brief"
        return f"{self.labels[key]} becomes the cheapest"

    def value(self, f: Finding, x: Decimal, change: Change | None = None) -> str:
        finance = self.ctx.finance
        if f.assumption is Assumption.UTILIZATION:
            busy = ""
            if change is not None and change.winner_utilization is not None:
                winner = self.leading[self.result.winner].row
                term = winner.configuration.pricing_term
                if winner.kind is CandidateKind.GPU and term not in ("ON_DEMAND", "SPOT"):
                    busy = f"; the winner's GPUs then busy {_pct(change.winner_utilization)}"
            return f"a load of {_pct(x)} of the brief's forecast{busy}"
        if f.assumption in (Assumption.ACCEPTANCE_RATE, Assumption.RETRY_RATE):
            return f"a {f.assumption.value.replace('_', ' ').lower()} of {_pct(x)}"
        if f.assumption is Assumption.LABOUR_HOURS:
            hours = (
                finance.platform_hours_self_managed * x,
                finance.platform_hours_managed_endpoint * x,
                finance.platform_hours_api * x,
            )
            return (
                f"{_pct(x)} of today's hours ({significant_text(hours[0], 3)} h a month "
                f"self-managed, {significant_text(hours[1], 3)} h managed endpoint, "
                f"{significant_text(hours[2], 3)} h API)"
            )
        if f.assumption is Assumption.FX_RATE:
            rate = _rate(self.ctx, f.subject or "") * x
            return (
                f"1 {f.subject} = {significant_text(rate)} {self.currency} "
                f"({_pct(x - 1)} on today's rate)"
            )
        # PRICE of one candidate, in its own currency
        found = self.leading[f.subject or ""]
        change_pct = f"{'+' if x > 1 else ''}{_pct(x - 1)}"
        if found.route is not None:
            route = found.route
            return (
                f"{significant_text(route.input_price_per_mtok * x)} in / "
                f"{significant_text(route.output_price_per_mtok * x)} out {route.currency} "
                f"per 1M tokens ({change_pct})"
            )
        if found.quote is not None:
            quote = found.quote
            return (
                f"{significant_text(quote.hourly_price_per_gpu * x)} {quote.currency} per "
                f"GPU-hour ({change_pct})"
            )
        return f"every part's price at {_pct(x)} of today's ({change_pct})"

    def today(self, f: Finding) -> str:
        if f.assumption is Assumption.PRICE:
            return ""
        if f.assumption in (Assumption.ACCEPTANCE_RATE, Assumption.RETRY_RATE):
            return f" (today {_pct(f.base)})"
        if f.assumption is Assumption.FX_RATE:
            today = significant_text(_rate(self.ctx, f.subject or ""))
            return f" (today 1 {f.subject} = {today} {self.currency})"
        return ""

    def no_change(self, f: Finding) -> str:
        low, high = _pct(f.low), _pct(f.high)
        if f.assumption is Assumption.UTILIZATION:
            return f"no load from {low} to {high} of the brief's forecast changes the winner"
        if f.assumption is Assumption.LABOUR_HOURS:
            return f"no labour from {low} to {high} of today's hours changes the winner"
        if f.assumption is Assumption.PRICE:
            return f"no price from 0 to {high} of today's changes the winner"
        if f.assumption is Assumption.FX_RATE:
            return f"no rate from {low} to {high} of today's changes the winner"
        what = f.assumption.value.replace("_", " ").lower()
        return f"no {what} from {low} to {high} changes the winner"

    def finding(self, f: Finding) -> str:
        name = LABELS[f.assumption]
        if f.never:
            return (
                f"{name}: it scales every candidate's unit cost alike, so no value changes the "
                "winner."
            )
        parts = []
        for change, moving in ((f.down, "falling to"), (f.up, "rising to")):
            if change is not None:
                parts.append(
                    f"{moving} {self.value(f, change.value, change)}, {self.who(change.new_winner)}"
                )
        subject = ""
        if f.assumption is Assumption.PRICE and f.subject:
            subject = f" of {self.labels[f.subject]}"
        if not parts:
            return f"{name}{subject}: {self.no_change(f)}{self.today(f)}."
        return f"{name}{subject}{self.today(f)}: " + "; ".join(parts) + "."

    def summary(self, findings: tuple[Finding, ...]) -> list[str]:
        winner = self.result.winner
        head = (
            f"Among the {len(self.result.base_unit_costs)} leading candidates, "
            f"{self.labels[winner]} is the cheapest at {self.unit_cost(winner)}."
        )
        changing = [f for f in findings if f.down is not None or f.up is not None]
        if not changing:
            return [head, "No assumption within the ranges searched changes the winner."]
        return [head, *(self.finding(f) for f in changing)]


class ShownLeading(TypedDict):
    """A leading candidate's row on the finance page, its figures in words."""

    label: str
    winner: bool
    unit_cost: str
    monthly: str
    totals: list[str]


class SensitivityPage(TypedDict):
    """The finance page's "What would change the winner" section."""

    summary: list[str]
    gist: str
    others: list[str]
    rows: list[ShownLeading]
    months: list[int]
    unit_heading: str


def sensitivity_display(sensitivity: Sensitivity) -> SensitivityPage | None:
    """What the finance page's "What would change the winner" section shows: the sentences,
    and each leading candidate's figures as formatted money in the table's unit."""
    if not sensitivity.get("leading"):
        return None
    currency = sensitivity["currency"]

    def total_text(total: SensitivityTotal) -> str:
        text = formatting.money(total["total"], currency)
        if Decimal(total["committed_beyond"]):
            text += (
                f" (of which {formatting.money(total['committed_beyond'], currency)} still owed "
                f"after {total['months']} months on the {total['commitment_months']}-month "
                "commitment)"
            )
        return text

    rows: list[ShownLeading] = []
    for c in sensitivity["leading"]:
        by_months = {t["months"]: t for t in c["totals"]}
        cost = c["effective_unit_cost"]
        rows.append(
            {
                "label": c["label"],
                "winner": c["key"] == sensitivity["winner"],
                "unit_cost": "—" if cost is None else significant_text(Decimal(cost)),
                "monthly": formatting.money(c["monthly_cost"], currency),
                "totals": [total_text(by_months[m]) for m in sorted(by_months)],
            }
        )
    changing = sum(
        1 for f in sensitivity["findings"] if f["down"] is not None or f["up"] is not None
    )
    return {
        "summary": sensitivity["summary"],
        # The collapsed section's one line: whether anything searched changes the winner.
        "gist": (
            f"{changing} assumption{' changes' if changing == 1 else 's change'} the winner "
            "within the ranges searched"
            if changing
            else "no assumption within the ranges searched changes the winner"
        ),
        "others": [
            f["explanation"]
            for f in sensitivity["findings"]
            if f["down"] is None and f["up"] is None
        ],
        "rows": rows,
        "months": sorted({t["months"] for c in sensitivity["leading"] for t in c["totals"]}),
        "unit_heading": f"{currency} {sensitivity['unit_label']}",
    }
