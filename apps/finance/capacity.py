"""Rent, reserve, buy or API: the capacity-model comparison of a brief, as plain JSON."""

from decimal import Decimal
from typing import Any

from django.db.models import Q

from apps.engine.capacity_model import compare_capacity_models, unit_cost_vs_utilization
from apps.quotes.selectors import quotes_for_team

from .candidates import (
    QUOTE_FACTS,
    ROUTE_FACTS,
    FxMissing,
    TableContext,
    live_routes,
    quote_gpu,
    quote_terms,
    route_terms,
)
from .estimates import capacity_from_estimate
from .models import CandidateRow, CandidateTable


def _cheapest(quotes: list[dict[str, Any]], term: str, values: dict[str, Any]) -> Decimal | None:
    prices = []
    for facts in quotes:
        if facts["pricing_term"] == term:
            try:
                prices.append(quote_terms(facts, values).hourly_price_per_gpu)
            except FxMissing:
                continue
    return min(prices) if prices else None


def _first_costed_route(ctx: TableContext, values: dict[str, Any]) -> Any:
    """The first live API route that can be costed (a route with no FX rate is listed as not
    costed in the table and is no comparison here), or None."""
    for facts in live_routes(ctx.brief).values(*ROUTE_FACTS).iterator():
        try:
            return route_terms(facts, values)
        except FxMissing:
            continue
    return None


def _s(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


def capacity_model_for(ctx: TableContext, table: CandidateTable) -> dict[str, Any]:
    """For the GPU of the best-ranked GPU row: each capacity model's cost at the brief's
    utilization, the recommendation, the break-even utilizations and the chart's curve."""
    best = (
        CandidateRow.objects.filter(
            table=table,
            candidate_kind="GPU",
            meets_constraints=True,
            effective_unit_cost__isnull=False,
        )
        .order_by("effective_unit_cost", "id")
        .values_list("gpu_id", flat=True)
        .first()
    )
    if best is None:
        return {}
    quotes = list(
        quotes_for_team(ctx.brief.team_id)
        .filter(Q(gpu_id=best) | Q(system__gpu_id=best))
        .values(*QUOTE_FACTS)
    )
    _, slug, tdp = quote_gpu(quotes[0])
    values = ctx.values
    on_demand = _cheapest(quotes, "ON_DEMAND", values) or _cheapest(quotes, "MARKETPLACE", values)
    if on_demand is None:
        return {"gpu": slug, "note": "no on-demand quote for this GPU to compare against"}
    api_route = _first_costed_route(ctx, values)
    kwargs: dict[str, Any] = {
        "demand": ctx.demand,
        "capacity": capacity_from_estimate(ctx.by_gpu[slug]),
        "on_demand_hourly": on_demand,
        "finance": ctx.finance,
        "spot_hourly": _cheapest(quotes, "SPOT", values),
        "reserved_1y_hourly": _cheapest(quotes, "RESERVED_1Y", values),
        "reserved_3y_hourly": _cheapest(quotes, "RESERVED_3Y", values),
        "gpu_tdp_w": Decimal(tdp),
        "api_route": api_route,
    }
    comparison = compare_capacity_models(**kwargs)
    curve = unit_cost_vs_utilization(**kwargs)
    return {
        "gpu": slug,
        "utilization": _s(comparison.utilization),
        "recommended": comparison.recommended.value if comparison.recommended else None,
        "rationale": list(comparison.rationale),
        "options": [
            {
                "option": o.option.value,
                "hourly_rate_per_gpu": _s(o.hourly_rate_per_gpu),
                "monthly_cost": _s(o.cost.monthly_cost),
                "effective_unit_cost": _s(o.cost.effective_unit_cost),
                "meets_constraints": o.cost.meets_constraints,
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
                "utilization": _s(p.utilization),
                "rent_on_demand": _s(p.rent_on_demand),
                "rent_spot": _s(p.rent_spot),
                "reserve_1y": _s(p.reserve_1y),
                "reserve_3y": _s(p.reserve_3y),
                "buy": _s(p.buy),
                "api": _s(p.api),
            }
            for p in curve
        ],
    }
