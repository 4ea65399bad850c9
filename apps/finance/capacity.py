"""Rent, reserve, buy or API: the capacity-model comparison of a brief, as plain JSON.

The comparison is made for the GPU of the best-ranked GPU row, at that row's configuration (GPUs
per replica and replicas), so every option shares one utilization of committed GPU-hours. Its
options are that GPU's quotes that offer the configuration, and the brief's API routes, each
costed exactly as its candidate-table row is (a quote that offers the configuration is costed
at it in the table too: the table takes the smallest configuration that meets the brief within
what the quote offers). Amounts in the JSON are per accepted output, as the table's
``effective_unit_cost``; ``unit_scale`` and ``unit_label`` say how the table shows them, and the
rationale and break-evens are written in that unit.
"""

from decimal import Decimal
from typing import Any

from django.db.models import Q

from apps.engine.capacity_model import (
    CapacityComparison,
    UnitDisplay,
    compare_capacity_models,
)
from apps.engine.costing_breakeven import share
from apps.quotes.selectors import quotes_for_team

from .candidates import (
    QUOTE_FACTS,
    ROUTE_FACTS,
    FxMissing,
    TableContext,
    live_routes,
    quote_configuration,
    quote_gpu,
    quote_terms,
    route_terms,
)
from .configuration import quote_limit
from .lines import figure_text, readable
from .models import CandidateRow, CandidateTable
from .units import money_text, unit_for, unit_text


def display_unit(success_unit: str, currency: str) -> UnitDisplay:
    """The candidate table's unit (apps.finance.units: one rule for every reader), for the
    comparison's words and chart."""
    unit = unit_for(success_unit)
    return UnitDisplay(
        currency=currency, scale=Decimal(unit.scale if unit else 1), label=unit_text(unit)
    )


def _s(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


def capacity_model_for(ctx: TableContext, table: CandidateTable) -> dict[str, Any]:
    """For the GPU of the best-ranked GPU row: each capacity option's cost at the brief's
    utilization, the recommendation and why, the break-evens and the chart's curve."""
    best = (
        CandidateRow.objects.filter(
            table=table,
            candidate_kind="GPU",
            meets_constraints=True,
            effective_unit_cost__isnull=False,
        )
        .order_by("effective_unit_cost", "id")
        .values_list("gpu_id", "quote_id")
        .first()
    )
    if best is None:
        return {}
    gpu_id, quote_id = best
    quotes = list(
        quotes_for_team(ctx.brief.team_id)
        .filter(Q(gpu_id=gpu_id) | Q(system__gpu_id=gpu_id))
        .order_by("pk")
        .values(*QUOTE_FACTS)
    )
    if not quotes:
        return {}
    reference = next((f for f in quotes if f["pk"] == quote_id), quotes[0])
    slug = quote_gpu(reference)[1]
    configured = quote_configuration(ctx, reference)
    if configured is None:
        return {}
    rung, _, _, capacity = configured
    offered: list[tuple[int, Any]] = []
    for facts in quotes:
        if quote_limit(facts) < rung["gpu_count"]:
            continue  # cannot offer this configuration (its own row is at another)
        try:
            offered.append((facts["pk"], quote_terms(facts, ctx.values)))
        except FxMissing:
            continue  # listed as not costed in the table
    routes: list[tuple[int, Any]] = []
    for facts in live_routes(ctx.brief).order_by("pk").values(*ROUTE_FACTS).iterator():
        try:
            routes.append((facts["pk"], route_terms(facts, ctx.values)))
        except FxMissing:
            continue
    display = display_unit(ctx.brief.success_unit, ctx.finance.reporting_currency)
    comparison = compare_capacity_models(
        demand=ctx.demand,
        capacity=capacity,
        finance=ctx.finance,
        quotes=[terms for _, terms in offered],
        api_routes=[terms for _, terms in routes],
        display=display,
    )
    if not comparison.options:
        return {"gpu": slug, "note": "no quote of this GPU offers renting, reserving or buying"}
    return _as_json(
        comparison, slug, rung["gpu_count"], capacity.replicas, display, offered, routes, ctx
    )


def _as_json(
    comparison: CapacityComparison,
    slug: str,
    gpu_count: int,
    replicas: int,
    display: UnitDisplay,
    offered: list[tuple[int, Any]],
    routes: list[tuple[int, Any]],
    ctx: TableContext,
) -> dict[str, Any]:
    recommended = comparison.option(comparison.recommended) if comparison.recommended else None
    return {
        "gpu": slug,
        # The configuration costed (as the rows are: replicas raised for retries), not the
        # engine's rung it started from.
        "configuration": {"gpu_count": gpu_count, "replicas": replicas},
        "unit": ctx.brief.success_unit,
        "unit_scale": str(display.scale),
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
                "effective_unit_cost": _s(o.unit_cost),
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
                "rent_on_demand": _s(p.rent_on_demand),
                "rent_spot": _s(p.rent_spot),
                "reserve_1y": _s(p.reserve_1y),
                "reserve_3y": _s(p.reserve_3y),
                "buy": _s(p.buy),
                "api": _s(p.api),
            }
            for p in comparison.curve
        ],
    }


def capacity_model_page(capacity_model: dict[str, Any]) -> dict[str, Any]:
    """What the finance page's capacity-model section shows beyond the JSON: each option's
    figures as money (its unit cost in the table's unit, apps.finance.units), and the brief's
    utilization as a percentage."""
    scale = Decimal(capacity_model.get("unit_scale") or 1)
    options = []
    for option in capacity_model.get("options") or []:
        cost = option.get("effective_unit_cost")
        rate = option.get("hourly_rate_per_gpu")
        options.append(
            {
                **option,
                "display_unit_cost": None if cost is None else figure_text(Decimal(cost) * scale),
                "display_hourly_rate": None if rate in (None, "") else money_text(rate),
                "display_monthly_cost": money_text(option.get("monthly_cost")),
                "display_why_not": [readable(w) for w in option.get("why_not") or []],
            }
        )
    utilization = capacity_model.get("utilization")
    return {
        "capacity_options": options,
        "capacity_utilization": f"{Decimal(utilization) * 100:.1f}%" if utilization else "",
    }
