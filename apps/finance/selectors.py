"""Reads of candidate tables: the ranking as the API, the CSV, the page and a decision record
snapshot show it. Ranks are computed here, when read: competition ranks (1, 2, 2, 4) by
effective unit cost among the rows that meet the brief; the other rows follow, unranked."""

from datetime import date
from decimal import Decimal
from typing import TypedDict, cast

from django.conf import settings
from django.core.cache import cache
from django.db.models import F, Q
from django.utils import timezone
from rest_framework.renderers import JSONRenderer

from apps.briefs.models import WorkloadBrief
from apps.quotes.models import Quote
from apps.quotes.selectors import dates_are_stale

from .models import CandidateRow, CandidateTable
from .sensitivity import in_table_unit
from .shown import NotCostedEntry, PlanNotListed, Ranking, ShownMixPart, ShownRow
from .state import ROW_READ, CandidateKind, Row, row_from_columns
from .units import scaled, unit_for

# What a reader reads of each row besides its own columns: names for words, quote dates for
# staleness.
ROW_EXTRAS = (
    "pk", "quote__provider__name", "quote__system__slug", "quote__region", "quote__quote_date",
    "quote__valid_until", "api_route__provider__name", "api_route__model",
)  # fmt: skip
# A computed ranking is reused until its table is recomputed (or the day changes: staleness).
RANKING_CACHE_SECONDS = 600


def tables_left_pending() -> list[int]:
    """The briefs whose table a recompute has not brought up to date: stale, or still queued
    (what the live fuzz and its in-process twin check after their run: no table is left
    pending)."""
    left = CandidateTable.objects.filter(
        Q(computed_version__lt=F("requested_version")) | Q(queued_at__isnull=False)
    )
    return list(left.order_by("brief_id").values_list("brief_id", flat=True))


def candidate_table_for_brief(brief: WorkloadBrief) -> CandidateTable | None:
    """The table as a ranking reads it: without the recompute's own bookkeeping (``inputs``
    holds a version per quote, ``estimates`` the engine's answer), which no reader needs."""
    return CandidateTable.objects.filter(brief=brief).defer("inputs", "estimates").first()


def _s(value: Decimal | None) -> str | None:
    """Decimals travel as strings so that they round-trip exactly."""
    return None if value is None else format(value.normalize(), "f")


# What ranking and filtering need of each row: cheap to read for a whole table.
ORDER_VALUES = ("pk", "meets_constraints", "effective_unit_cost", "basis", "pricing_term")


class RankedEntry(TypedDict):
    """A row's place in the ranking and what the filters read (``_ranking_order``)."""

    pk: int
    meets_constraints: bool
    basis: str
    pricing_term: str
    rank: int | None


def _ranking_order(table: CandidateTable, team_id: int) -> tuple[list[RankedEntry], bool]:
    """Every row of the table that ``team_id`` may see, in ranking order, with its rank and
    what the filters read; the full rows are fetched only for the ones a reader is sent
    (``_full_rows``). Also whether any row was left out: a row of a quote confidential to
    another team, written by a recompute that began before the quote (or the brief's team)
    changed; the next recompute removes it."""
    order = list(
        CandidateRow.objects.filter(table=table)
        .order_by(
            F("meets_constraints").desc(), F("effective_unit_cost").asc(nulls_last=True), "pk"
        )
        .values(*ORDER_VALUES, "quote__confidential_to_id")
    )
    visible = [r for r in order if r["quote__confidential_to_id"] in (None, team_id)]
    entries: list[RankedEntry] = []
    rank, previous = 0, None
    for position, r in enumerate(visible, start=1):
        ranked = r["meets_constraints"] and r["effective_unit_cost"] is not None
        if ranked and r["effective_unit_cost"] != previous:
            rank, previous = position, r["effective_unit_cost"]
        entries.append(
            {
                "pk": r["pk"],
                "meets_constraints": r["meets_constraints"],
                "basis": r["basis"],
                "pricing_term": r["pricing_term"],
                "rank": rank if ranked else None,
            }
        )
    return entries, len(visible) != len(order)


def not_costed_for(table: CandidateTable | None, team_id: int) -> list[NotCostedEntry]:
    """The quotes and API routes the last compute could not cost, each with why (a missing FX
    rate names the currency), as ``team_id`` may see them: an entry for a quote confidential
    to another team is left out like its row would be."""
    if table is None:
        return []
    found = (
        CandidateTable.objects.filter(pk=table.pk)
        .values_list("inputs__not_costed", flat=True)
        .first()
    )
    # Stored JSON of ``state.NotCosted`` (``CandidateTable.inputs``), taken as such.
    entries = cast(list[NotCostedEntry], [e for e in (found or []) if isinstance(e, dict)])
    quote_ids = [qid for e in entries if (qid := e.get("quote_id"))]
    hidden = set(
        Quote.objects.filter(pk__in=quote_ids)
        .exclude(confidential_to__isnull=True)
        .exclude(confidential_to_id=team_id)
        .values_list("pk", flat=True)
    ) if quote_ids else set()  # fmt: skip
    return [e for e in entries if e.get("quote_id") not in hidden or not e.get("quote_id")]


def plans_not_listed(table: CandidateTable | None) -> list[PlanNotListed]:
    """The serving plans (apps.finance.plans) the last compute built no row for, each with why
    ({"candidate_kind": "MIX", "reason": ...})."""
    if table is None:
        return []
    found = (
        CandidateTable.objects.filter(pk=table.pk)
        .values_list("inputs__plans__missing", flat=True)
        .first()
    )
    # Stored JSON of ``state.PlanMissing``, taken as such.
    return cast(list[PlanNotListed], [e for e in (found or []) if isinstance(e, dict)])


def _full_rows(
    table: CandidateTable,
    wanted: list[RankedEntry],
    today: date,
    *,
    whole_table: bool,
    scale: int = 1,
) -> list[ShownRow]:
    """The rows in ``wanted`` (from ``_ranking_order``), in that order, as readers see them,
    unit costs in the table's unit (``scale`` outputs, apps.finance.units); a row that a
    recompute has replaced meanwhile is left out."""
    qs = CandidateRow.objects.filter(table=table)
    if not whole_table:
        qs = qs.filter(pk__in=[w["pk"] for w in wanted])
    by_pk = {r["pk"]: r for r in qs.values(*ROW_READ, *ROW_EXTRAS)}
    rows = []
    for w in wanted:
        r = by_pk.get(w["pk"])
        if r is None:  # replaced by a recompute since the order was read; the caller retries
            continue
        quote_date = r["quote__quote_date"]
        age = (today - quote_date).days if quote_date else None
        stale = (
            dates_are_stale(quote_date, r["quote__valid_until"], today=today)
            if quote_date
            else None
        )
        row = row_from_columns(r)
        out = row_json(row, rank=w["rank"], scale=scale)
        if stale:
            out["notes"].insert(0, f"quote #{r['quote_id']} is stale ({age} days old)")
        out["provider"] = r["quote__provider__name"] or r["api_route__provider__name"]
        out["system"] = r["quote__system__slug"]
        out["region"] = r["quote__region"] or None
        out["api_model"] = r["api_route__model"]
        out["quote_age_days"] = age
        out["quote_stale"] = stale
        rows.append(out)
    return rows


def row_json(row: Row, *, rank: int | None, scale: int) -> ShownRow:
    """A row as the rankings (JSON and CSV), the finance page and a decision snapshot give it:
    its configuration and the figures the engine gives at it, its cost lines and verdict, every
    cost per output in the table's unit (``scale`` outputs)."""
    config = row.configuration
    figures = row.figures
    plan = row.plan_json()
    return {
        "rank": rank,
        "candidate_kind": row.kind.value,
        "provider": None,
        "gpu": config.gpu,
        "system": None,
        "region": None,
        "api_model": None,
        "gpu_count": config.gpus_per_replica,
        "replicas": config.replicas,
        "paid_gpus": config.paid_gpus or None,
        "pricing_term": config.pricing_term or None,
        "quote_id": row.quote_id,
        "api_route_id": row.api_route_id,
        "plan_quote_ids": list(row.plan_quote_ids),
        "configuration": {
            "gpu": config.gpu,
            "gpus_per_replica": config.gpus_per_replica,
            "replicas": config.replicas,
            "paid_gpus": config.paid_gpus,
            "layout": config.layout or None,
            "pricing_term": config.pricing_term or None,
            "hours_billed_per_month": _s(config.hours_billed_per_month),
            "text": config.text(),
        },
        "figures": {
            "fit": figures.fit,
            "ttft_p95_ms": _s(figures.ttft_p95_ms),
            "itl_p95_ms": _s(figures.itl_p95_ms),
            "latency_p95_ms": _s(figures.latency_p95_ms),
            "throughput": _s(figures.throughput),
            "throughput_unit": figures.throughput_unit or None,
            "memory_headroom_gb": _s(figures.memory_headroom_gb),
            "in_flight_per_replica": figures.in_flight_per_replica,
            "time_to_train_days": _s(figures.time_to_train_days),
            "energy_kwh_per_month": _s(figures.energy_kwh_per_month),
            "energy_j_per_output": _s(figures.energy_j_per_output),
            "co2e_kg_per_month": _s(figures.co2e_kg_per_month),
        },
        "cost_lines": {name: str(value) for name, value in row.cost_lines.items()},
        "monthly_cost": _s(row.monthly_cost),
        "vendor_monthly_cost": _s(row.vendor_monthly_cost),
        "accepted_outputs_per_month": _s(row.accepted_outputs_per_month),
        "effective_unit_cost": _s(scaled(row.effective_unit_cost, scale)),
        "meets_constraints": row.meets_constraints,
        "why_not": list(row.why_not),
        "basis": row.basis,
        "p95_latency_ms": _s(figures.latency_p95_ms),
        "memory_headroom_gb": _s(figures.memory_headroom_gb),
        "layout": config.layout or None,
        "paid_gpu_hours_per_month": _s(row.paid_gpu_hours_per_month),
        "energy_kwh_per_month": _s(figures.energy_kwh_per_month),
        "energy_j_per_output": _s(figures.energy_j_per_output),
        "co2e_kg_per_month": _s(figures.co2e_kg_per_month),
        "mix": mix_parts(row) if row.mix is not None else None,
        "pools": plan.get("pools") if row.kind is CandidateKind.DISAGG else None,
        "plan": plan or None,
        "quote_age_days": None,
        "quote_stale": None,
        "notes": list(row.notes),
    }


def mix_parts(row: Row) -> list[ShownMixPart]:
    """A MIX row's parts as the rankings give them: each GPU type, its count and replicas, its
    quote, and the buckets it serves (with the share of each bucket's requests it takes)."""
    plan = row.mix
    if plan is None:
        return []
    return [
        {
            "gpu": part.gpu,
            "gpu_count": part.gpu_count,
            "replicas": part.replicas,
            "quote_id": part.quote_id,
            "pricing_term": part.pricing_term,
            "request_share": part.request_share,
            "monthly_cost": str(part.monthly_cost),
            "buckets": [
                {
                    "input_tokens": b.input_tokens,
                    "output_tokens": b.output_tokens,
                    "share_served": served,
                }
                for b, served in zip(plan.buckets, part.bucket_shares, strict=False)
                if served > 0
            ],
        }
        for part in plan.parts
    ]


def _matches(row: RankedEntry, filters: dict[str, str]) -> bool:
    """Filters as the API documents them: ``basis`` and ``pricing_term`` as stored,
    ``meets_constraints`` as ``true`` or ``false``."""
    if filters.get("basis") and row["basis"] != filters["basis"]:
        return False
    if filters.get("pricing_term") and row["pricing_term"] != filters["pricing_term"]:
        return False
    meets = filters.get("meets_constraints")
    return not meets or row["meets_constraints"] == (meets == "true")


def _cache_key(kind: str, table: CandidateTable, today: date, **filters: str) -> str:
    """A computed table changes only with its version; quote staleness changes with the day."""
    stamp = table.computed_at.timestamp() if table.computed_at else 0
    wanted = ",".join(f"{k}={v}" for k, v in sorted(filters.items()))
    return (
        f"{kind}:{table.pk}:{table.computed_version}:{table.requested_version}:"
        f"{table.queued_at is not None}:{stamp}:"
        f"{today.isoformat()}:{settings.QUOTE_MAX_AGE_DAYS}:{wanted}"
    )


def ranking_json_for_brief(brief: WorkloadBrief, *, limit: int | None, **filters: str) -> bytes:
    """The ranking rendered as the API sends it, cached as bytes: a table of ~2,000 rows is
    a megabyte of JSON, and rendering it again for every reader is the endpoint's main cost."""
    table = candidate_table_for_brief(brief)
    if table is None:
        return JSONRenderer().render(_ranking(brief, table, limit, filters))
    key = _cache_key(
        "ranking-json",
        table,
        timezone.localdate(),
        limit=str(limit),
        team=str(brief.team_id),
        **filters,
    )
    body: bytes | None = cache.get(key)
    if body is None:
        body = JSONRenderer().render(_ranking(brief, table, limit, filters))
        cache.set(key, body, RANKING_CACHE_SECONDS)
    return body


def ranking_for_brief(
    brief: WorkloadBrief,
    *,
    limit: int | None = None,
    team_id: int | None = None,
    **filters: str,
) -> Ranking:
    """The brief's ranking as ``team_id`` (default: the brief's team) may see it; filters
    keep each row's rank in the whole table; ``limit`` keeps the first rows (``total_rows``
    says how many there are)."""
    return _ranking(brief, candidate_table_for_brief(brief), limit, filters, team_id=team_id)


def _ranking(
    brief: WorkloadBrief,
    table: CandidateTable | None,
    limit: int | None,
    filters: dict[str, str],
    *,
    team_id: int | None = None,
) -> Ranking:
    today = timezone.localdate()
    team_id = brief.team_id if team_id is None else team_id
    # The unit the rows were computed in (the brief's until a table exists).
    unit = unit_for((table.success_unit if table else "") or brief.success_unit)
    scale = unit.scale if unit else 1
    rows: list[ShownRow] = []
    total = 0
    hidden = False
    for attempt in range(2):
        if table is None:
            break
        key = _cache_key("ranking-order", table, today, team=str(team_id))
        cached = cache.get(key) if attempt == 0 else None
        if cached is None:
            cached = _ranking_order(table, team_id)
            cache.set(key, cached, RANKING_CACHE_SECONDS)
        order, hidden = cached
        wanted = [r for r in order if _matches(r, filters)] if filters else order
        total = len(wanted)
        if limit is not None:
            wanted = wanted[:limit]
        rows = _full_rows(table, wanted, today, whole_table=len(wanted) == len(order), scale=scale)
        if len(rows) == len(wanted):
            break
        # A recompute replaced rows between the two reads: read the table again, once.
        table = candidate_table_for_brief(brief)
    return {
        "brief": brief.pk,
        "computed_at": table.computed_at if table else None,
        "stale": table.stale if table else True,
        "pending": bool(table and (table.stale or table.queued_at)),
        "currency": table.currency if table else None,
        "unit": unit.label if unit else None,
        "success_unit": unit.success_unit.value if unit else None,
        "unit_scale": scale,
        "no_ranking_reason": (table.no_ranking_reason if table else "not computed yet") or None,
        # Left out while rows are hidden: it may quote a hidden row's price.
        "capacity_model": table.capacity_model if table and not hidden else {},
        # What would change the winner (apps.finance.sensitivity), without its bookkeeping.
        "sensitivity": in_table_unit(table.sensitivity) if table and not hidden else {},
        "total_rows": total,
        "rows": rows,
        "not_costed": not_costed_for(table, team_id),
        "serving_plans_not_listed": plans_not_listed(table),
    }
