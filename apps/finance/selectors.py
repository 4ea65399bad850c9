"""Reads of candidate tables: the ranking as the API, the CSV and the page show it."""

from decimal import Decimal
from typing import Any

from django.db.models import F, QuerySet
from django.utils import timezone

from apps.briefs.models import WorkloadBrief
from apps.quotes.selectors import quote_is_stale

from .models import CandidateRow, CandidateTable

ROW_FILTERS = ("basis", "pricing_term", "meets_constraints")


def candidate_table_for_brief(brief: WorkloadBrief) -> CandidateTable | None:
    return CandidateTable.objects.filter(brief=brief).first()


def candidate_rows(table: CandidateTable, **filters: str) -> QuerySet[CandidateRow]:
    qs = CandidateRow.objects.filter(table=table).select_related(
        "quote", "quote__provider", "quote__system", "api_route", "api_route__provider", "gpu"
    )
    if filters.get("basis"):
        qs = qs.filter(basis=filters["basis"].upper())
    if filters.get("pricing_term"):
        qs = qs.filter(pricing_term=filters["pricing_term"].upper())
    if filters.get("meets_constraints"):
        qs = qs.filter(meets_constraints=filters["meets_constraints"].lower() == "true")
    # Ranked rows first by rank, then the rows that fail a constraint by unit cost.
    return qs.order_by(
        F("rank").asc(nulls_last=True), F("effective_unit_cost").asc(nulls_last=True), "id"
    )


def ranking_row(row: CandidateRow, *, today: Any) -> dict[str, Any]:
    quote, route = row.quote, row.api_route
    provider = (quote or route).provider.name if (quote or route) else None  # type: ignore[union-attr]
    notes = list(row.notes)
    age = (today - quote.quote_date).days if quote else None
    if quote is not None and quote_is_stale(quote, today=today):
        notes.insert(0, f"quote #{quote.pk} is stale ({age} days old)")
    return {
        "rank": row.rank,
        "candidate_kind": row.candidate_kind,
        "provider": provider,
        "gpu": row.gpu.slug if row.gpu else None,
        "system": quote.system.slug if quote and quote.system else None,
        "api_model": route.model if route else None,
        "gpu_count": row.gpu_count,
        "replicas": row.replicas,
        "pricing_term": row.pricing_term or None,
        "quote_id": quote.pk if quote else None,
        "api_route_id": route.pk if route else None,
        "cost_lines": row.cost_lines,
        "monthly_cost": _s(row.monthly_cost),
        "accepted_outputs_per_month": _s(row.accepted_outputs_per_month),
        "effective_unit_cost": _s(row.effective_unit_cost),
        "meets_constraints": row.meets_constraints,
        "why_not": row.why_not,
        "basis": row.basis,
        "p95_latency_ms": _s(row.p95_latency_ms),
        "memory_headroom_gb": _s(row.memory_headroom_gb),
        "quote_age_days": age,
        "quote_stale": quote_is_stale(quote, today=today) if quote else None,
        "notes": notes,
    }


def _s(value: Decimal | None) -> str | None:
    """Decimals travel as strings so that they round-trip exactly."""
    return None if value is None else format(value.normalize(), "f")


def ranking_for_brief(brief: WorkloadBrief, **filters: str) -> dict[str, Any]:
    table = candidate_table_for_brief(brief)
    today = timezone.localdate()
    rows = [ranking_row(r, today=today) for r in candidate_rows(table, **filters)] if table else []
    return {
        "brief": brief.pk,
        "computed_at": table.computed_at if table else None,
        "stale": table.stale if table else True,
        "pending": bool(table and (table.stale or table.queued_at)),
        "currency": table.currency if table else None,
        "unit": brief.success_unit or None,
        "no_ranking_reason": (table.no_ranking_reason if table else "not computed yet") or None,
        "capacity_model": table.capacity_model if table else {},
        "rows": rows,
    }
