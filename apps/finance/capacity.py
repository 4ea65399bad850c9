"""Rent, reserve, buy or API: the capacity-model comparison of a brief, as plain JSON.

The comparison speaks of the table's winner, rank 1:
- a GPU row: its GPU at its configuration (GPUs per replica and replicas), so every option shares
  one utilization of committed GPU-hours. Its options are that GPU's quotes costed at exactly
  that configuration in the table (a quote whose own row is at another configuration is not an
  option of it), and the brief's API routes, each costed exactly as its row is;
- an API route: the same comparison for the best GPU row that meets the brief, whose
  recommendation is then the API (the cheapest option that meets the brief is rank 1);
- a serving plan of several quotes (MIX, DISAGG): no comparison, with why (it is made for one
  GPU configuration; each part of the plan names its own pricing term).
Every amount is in the table's unit (``unit_scale`` outputs, an integer, as the rows' unit
costs), and so are the rationale and break-evens.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, NotRequired, TypedDict, overload

from django.db.models import Q

from apps.engine.capacity_model import (
    CapacityComparison,
    UnitDisplay,
    compare_capacity_models,
)
from apps.engine.costing import ApiRouteTerms, QuoteTerms
from apps.engine.costing_breakeven import share
from apps.quotes.selectors import quotes_for_team

from .fx import FxMissing
from .lines import figure_text, readable
from .models import CandidateRow, CandidateTable
from .offers import live_routes, quote_facts, route_facts
from .shown import CapacityModel, CapacityOption
from .state import PLAN_KINDS, ROW_READ, CandidateKind, Row, row_from_columns
from .units import money_text, unit_for, unit_text

if TYPE_CHECKING:
    from .candidates import TableContext


def display_unit(success_unit: str, currency: str) -> UnitDisplay:
    """The candidate table's unit (apps.finance.units: one rule for every reader), for the
    comparison's words and chart."""
    unit = unit_for(success_unit)
    return UnitDisplay(
        currency=currency, scale=Decimal(unit.scale if unit else 1), label=unit_text(unit)
    )


@overload
def _s(value: Decimal, scale: Decimal = ...) -> str: ...
@overload
def _s(value: Decimal | None, scale: Decimal = ...) -> str | None: ...
def _s(value: Decimal | None, scale: Decimal = Decimal(1)) -> str | None:
    if value is None:
        return None
    return format((value * scale).normalize(), "f")


def _best(table: CandidateTable, *kinds: CandidateKind) -> Row | None:
    """The best-ranked row that meets the brief (of ``kinds``, when given)."""
    qs = CandidateRow.objects.filter(
        table=table, meets_constraints=True, effective_unit_cost__isnull=False
    )
    if kinds:
        qs = qs.filter(candidate_kind__in=[k.value for k in kinds])
    found = qs.order_by("effective_unit_cost", "pk").values(*ROW_READ).first()
    return None if found is None else row_from_columns(found)


def capacity_model_for(ctx: TableContext, table: CandidateTable) -> CapacityModel:
    """The comparison for the table's rank 1 (module doc): each capacity option's cost at the
    brief's utilization, the recommendation and why, the break-evens and the chart's curve."""
    winner = _best(table)
    if winner is None:
        return {}
    if winner.kind in PLAN_KINDS:
        return {
            "winner": winner.key,
            "note": "The winner is a serving plan of several quotes, each part on its own "
            "pricing term (see its parts): renting, reserving and buying are compared for one "
            "GPU configuration, so there is no comparison for it.",
        }
    reference = winner if winner.kind is CandidateKind.GPU else _best(table, CandidateKind.GPU)
    if reference is None or reference.quote_id is None or reference.gpu_id is None:
        return {
            "winner": winner.key,
            "note": "No GPU candidate meets the brief: there is no rent, reserve or buy "
            "option to compare with the winner.",
        }
    if ctx.quotes_costed is not None:  # a full compute: the quotes it costed, by id
        quotes = [q for q in ctx.quotes_costed.values() if q.gpu_id == reference.gpu_id]
        quotes.sort(key=lambda q: q.pk)
    elif ctx.gpu_quotes is not None:  # a batch's re-costing: read once for its tables
        quotes = ctx.gpu_quotes(reference.gpu_id)
    else:
        quotes = quote_facts(
            quotes_for_team(ctx.brief.team_id)
            .filter(Q(gpu_id=reference.gpu_id) | Q(system__gpu_id=reference.gpu_id))
            .order_by("pk")
        )
    mine = next((q for q in quotes if q.pk == reference.quote_id), None)
    if mine is None:
        return {}
    configured = ctx.configurator.configure(mine.gpu, mine.limit, mine.instance)
    if configured is None:
        return {}
    offered: list[tuple[int, QuoteTerms]] = []
    for facts in quotes:
        if ctx.configurator.configure(facts.gpu, facts.limit, facts.instance) is not configured:
            continue  # its own row is at another configuration
        try:
            offered.append((facts.pk, ctx.quote_terms(facts)))
        except FxMissing:
            continue  # listed as not costed in the table
    routes: list[tuple[int, ApiRouteTerms]] = []
    live = (
        list(ctx.routes_costed.values())
        if ctx.routes_costed is not None
        else route_facts(live_routes(ctx.brief.model_preset))
    )
    for route in live:
        try:
            routes.append((route.pk, route.terms(ctx.assumptions, ctx.demand)))
        except FxMissing:
            continue
    display = display_unit(ctx.brief.success_unit, ctx.currency)
    comparison = compare_capacity_models(
        demand=ctx.demand,
        capacity=configured.capacity,
        finance=ctx.finance,
        quotes=[terms for _, terms in offered],
        api_routes=[terms for _, terms in routes],
        display=display,
    )
    if not comparison.options:
        return {
            "winner": winner.key,
            "gpu": mine.gpu,
            "note": "no quote of this GPU offers renting, reserving or buying",
        }
    return _as_json(comparison, winner, reference, configured.gpus_per_replica,
                    configured.replicas, display, offered, routes, ctx)  # fmt: skip


def _as_json(
    comparison: CapacityComparison,
    winner: Row,
    reference: Row,
    gpu_count: int,
    replicas: int,
    display: UnitDisplay,
    offered: list[tuple[int, QuoteTerms]],
    routes: list[tuple[int, ApiRouteTerms]],
    ctx: TableContext,
) -> CapacityModel:
    recommended = comparison.option(comparison.recommended) if comparison.recommended else None
    scale = display.scale
    return {
        "winner": winner.key,
        "gpu": reference.configuration.gpu,
        # The configuration costed, as the rows are (replicas raised for retries).
        "configuration": {
            "gpu_count": gpu_count,
            "replicas": replicas,
            "paid_gpus": reference.configuration.paid_gpus,
        },
        "unit": ctx.brief.success_unit,
        "unit_scale": int(scale),
        "unit_label": display.label,
        "currency": display.currency,
        "utilization": _s(share(comparison.utilization)),
        "recommended": recommended.option.value if recommended else None,
        "recommended_label": recommended.label if recommended else None,
        "rationale": list(comparison.rationale),
        "options": [
            {
                "option": o.option.value,
                "label": o.label,
                "quote_id": offered[o.source][0] if o.hourly_rate_per_gpu is not None else None,
                "api_route_id": routes[o.source][0] if o.hourly_rate_per_gpu is None else None,
                "pricing_term": o.cost.pricing_term.value if o.cost.pricing_term else None,
                "hourly_rate_per_gpu": _s(o.hourly_rate_per_gpu),
                "monthly_cost": _s(o.cost.monthly_cost),
                "effective_unit_cost": _s(o.unit_cost, scale),
                "meets_constraints": o.cost.meets_constraints,
                "why_not": list(o.cost.why_not),
            }
            for o in comparison.options
        ],
        "break_evens": [
            {
                "cheaper_below": b.cheaper_below.value,
                "cheaper_above": b.cheaper_above.value,
                "utilization": _s(b.utilization),
                "explanation": b.explanation,
            }
            for b in comparison.break_evens
        ],
        "curve": [
            {
                "utilization": _s(share(p.utilization)),
                "at_brief": p.at_brief,
                "rent_on_demand": _s(p.rent_on_demand, scale),
                "rent_spot": _s(p.rent_spot, scale),
                "reserve_1y": _s(p.reserve_1y, scale),
                "reserve_3y": _s(p.reserve_3y, scale),
                "buy": _s(p.buy, scale),
                "api": _s(p.api, scale),
            }
            for p in comparison.curve
        ],
    }


class ShownCapacityOption(CapacityOption):
    """A capacity option as the finance page shows it: its figures in words, and the quote or
    route it is priced from (``source``, named by the view)."""

    display_unit_cost: str | None
    display_hourly_rate: str | None
    display_monthly_cost: str
    display_why_not: list[str]
    source: NotRequired[str]


class CapacityPage(TypedDict):
    """The finance page's capacity-model section (the view adds the ``NotRequired`` keys)."""

    capacity_options: list[ShownCapacityOption]
    capacity_utilization: str
    capacity_note: str
    capacity_gpu: NotRequired[str]
    capacity_rationale: NotRequired[list[str]]
    capacity_break_evens: NotRequired[list[str]]
    capacity_about_winner: NotRequired[bool]


def capacity_model_page(capacity_model: CapacityModel) -> CapacityPage:
    """What the finance page's capacity-model section shows beyond the JSON: each option's
    figures as money (its unit cost already in the table's unit), and the brief's utilization
    as a percentage."""
    options: list[ShownCapacityOption] = []
    # A table stored by an older build may lack a key of an option: read with .get.
    for option in capacity_model.get("options") or []:
        cost = option.get("effective_unit_cost")
        rate = option.get("hourly_rate_per_gpu")
        options.append(
            {
                **option,
                "display_unit_cost": None if cost is None else figure_text(Decimal(cost)),
                "display_hourly_rate": None if rate in (None, "") else money_text(rate),
                "display_monthly_cost": money_text(option.get("monthly_cost")),
                "display_why_not": [readable(w) for w in option.get("why_not") or []],
            }
        )
    utilization = capacity_model.get("utilization")
    return {
        "capacity_options": options,
        "capacity_utilization": f"{Decimal(utilization) * 100:.1f}%" if utilization else "",
        "capacity_note": capacity_model.get("note") or "",
    }
