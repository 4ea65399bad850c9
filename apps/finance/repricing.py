"""Re-costing candidate tables when only quotes or API routes changed, many tables at once.

A table none of whose other inputs (its brief, finance assumptions, FX rates, benchmark runs)
changed since its last compute (``CandidateTable.full_version`` at most its
``computed_version``) keeps its stored engine answer, its stored assumption values and every
other row: only the rows of the quotes and routes whose version differs from the one it costed
(a price edit, a new, retired or re-scoped quote) are costed again. Done for a batch of tables
together, that is a fixed number of queries (the live quotes' and routes' versions, the changed
ones' terms, the tables, the briefs, the best row of each table) and no engine estimate,
instead of about twenty queries and the assumptions, calibration and runs read per table.
The rows are written by ``apps.finance.services`` (one delete, one COPY, one update a table).
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import connection
from django.db.models import OuterRef, Subquery

from apps.benchmarks.selectors import calibrations_for_briefs
from apps.briefs.contract import demand_for_brief, request_for_brief
from apps.briefs.models import WorkloadBrief
from apps.engine import ENGINE_VERSION, EngineInputError
from apps.quotes.models import ApiRoute, Quote

from .assumptions import engine_finance
from .candidates import (
    QUOTE_FACTS,
    ROUTE_FACTS,
    BuiltTable,
    TableContext,
    _cost_all,
    _quote_plan,
    capacity_model_touched,
    table_inputs,
)
from .estimates import e2e_latencies_s
from .models import CandidateRow, CandidateTable
from .plans import (
    PlanCatalog,
    plan_catalog,
    plan_rows,
    plans_unchanged,
    stored_request_log,
)
from .stored import engine_stamp, values_decode


@dataclass
class Repriced:
    """One table's re-costing: write ``built`` if the table is still at ``base``."""

    table_id: int
    brief_id: int
    version: int
    base: int
    built: BuiltTable


def stored_context(brief: WorkloadBrief, table: CandidateTable) -> TableContext | None:
    """The context of the table's last compute, from what it stored (engine answer, assumption
    values, fingerprint), for re-costing changed quotes when nothing else changed since
    (``CandidateTable.full_version``); None if it stored too little for that."""
    inputs = table.inputs or {}
    values = values_decode(inputs.get("values"))
    estimates = table.estimates
    if values is None or not estimates or "quotes" not in inputs or table.no_ranking_reason:
        return None
    if not inputs.get("engine_stamp"):
        return None
    return TableContext(
        brief=brief,
        values=values,
        sources=inputs.get("assumption_sources") or {},
        finance=engine_finance(values),
        demand=demand_for_brief(brief, e2e_latencies_s(estimates)),
        estimates=estimates,
        by_gpu={e["gpu"]: e for e in estimates},
        estimates_key=table.estimates_key,
        fingerprint=inputs.get("fingerprint") or "",
        assumptions_version=inputs.get("assumptions") or [],
        engine_stamp=inputs["engine_stamp"],
    )


def _not_costed_merged(
    before: list[dict[str, Any]],
    new: list[dict[str, Any]],
    stale_quotes: set[int],
    stale_routes: set[int],
) -> list[dict[str, Any]]:
    """The table's not-costed list with the entries of re-costed or removed candidates
    replaced, in the order a full compute lists them (quotes, then routes, by id)."""
    kept = [
        e
        for e in before
        if isinstance(e, dict)
        and e.get("quote_id") not in stale_quotes
        and e.get("api_route_id") not in stale_routes
    ]
    merged = kept + new
    return sorted(
        merged,
        key=lambda e: (0, e["quote_id"]) if e.get("quote_id") else (1, e.get("api_route_id") or 0),
    )


def _changed(seen: dict[str, Any], now: dict[str, int]) -> tuple[list[int], list[int]]:
    """(changed or new ids, ids gone) between the versions a table costed and those now."""
    if seen == now:
        return [], []
    changed = [int(k) for k, v in now.items() if seen.get(k) != v]
    gone = [int(k) for k in seen if k not in now]
    return changed, gone


# Decoded engine answers by estimates key (a hash of everything an answer depends on: one key
# always names the same answer, as the full recompute assumes when it reuses a stored one), so
# that a worker re-costing price change after price change decodes each table's large stored
# answer once, not at every change. Cleared when full; PostgreSQL only (ids never reused).
_ESTIMATES: dict[str, list[dict[str, Any]]] = {}
ESTIMATES_CACHE_SIZE = 1024


def _with_estimates(tables: dict[int, CandidateTable]) -> None:
    """Set each table's stored engine answer, read (one query) only where not cached."""
    if connection.vendor != "postgresql":  # SQLite reuses ids after a rollback (the tests)
        _ESTIMATES.clear()
    need = [t.pk for t in tables.values() if t.estimates_key not in _ESTIMATES]
    if need:
        if len(_ESTIMATES) + len(need) > ESTIMATES_CACHE_SIZE:
            _ESTIMATES.clear()
        for pk, key, estimates in CandidateTable.objects.filter(pk__in=need).values_list(
            "pk", "estimates_key", "estimates"
        ):
            if key and estimates:
                _ESTIMATES[key] = estimates
            tables[pk].estimates = estimates
    for table in tables.values():
        if table.pk not in need:
            table.estimates = _ESTIMATES[table.estimates_key]


def tables_reprice(states: list[dict[str, Any]]) -> tuple[list[Repriced], list[int]]:
    """Re-cost the tables of ``states`` (``pk``, ``brief_id``, ``requested_version``,
    ``computed_version``, read under lock by the caller). Returns what to write, and the
    brief ids whose table stored too little to be re-costed (the caller recomputes those in
    full)."""
    tables = {
        t.pk: t
        for t in CandidateTable.objects.filter(pk__in=[s["pk"] for s in states]).only(
            "pk", "brief_id", "inputs", "estimates_key", "capacity_model", "no_ranking_reason",
            "engine_version",
        )
    }  # fmt: skip
    _with_estimates(tables)
    briefs = WorkloadBrief.objects.in_bulk([s["brief_id"] for s in states])
    live_quotes = list(
        Quote.objects.filter(retired=False).values_list("pk", "version", "confidential_to_id")
    )
    live_routes = list(
        ApiRoute.objects.filter(retired=False).values_list("pk", "version", "model_preset")
    )
    by_team: dict[int, dict[str, int]] = {}
    by_preset: dict[str, dict[str, int]] = {}

    def quotes_seen_by(team_id: int) -> dict[str, int]:
        # What apps.quotes.selectors.quotes_for_team serves the team: live, not confidential
        # to another team.
        if team_id not in by_team:
            by_team[team_id] = {
                str(pk): v for pk, v, conf in live_quotes if conf is None or conf == team_id
            }
        return by_team[team_id]

    def routes_serving(preset: str) -> dict[str, int]:
        # apps.finance.candidates.live_routes
        if preset not in by_preset:
            by_preset[preset] = {str(pk): v for pk, v, p in live_routes if preset and p == preset}
        return by_preset[preset]

    stamp = engine_stamp()  # the catalog or engine changed since: recompute in full
    plans = []
    fallback: list[int] = []
    for state in states:
        table, brief = tables.get(state["pk"]), briefs.get(state["brief_id"])
        if table is None or brief is None or table.engine_version != ENGINE_VERSION:
            fallback.append(state["brief_id"])
            continue
        ctx = stored_context(brief, table)
        if ctx is None or ctx.engine_stamp != stamp:
            fallback.append(state["brief_id"])
            continue
        quote_versions = quotes_seen_by(brief.team_id)
        route_versions = routes_serving(brief.model_preset or "")
        q_changed, q_gone = _changed(table.inputs.get("quotes") or {}, quote_versions)
        r_changed, r_gone = _changed(table.inputs.get("api_routes") or {}, route_versions)
        plans.append((state, table, ctx, quote_versions, route_versions, q_changed, q_gone,
                      r_changed, r_gone))  # fmt: skip

    wanted_quotes = {pk for plan in plans for pk in plan[5]}
    wanted_routes = {pk for plan in plans for pk in plan[7]}
    quote_facts = {
        f["pk"]: f for f in Quote.objects.filter(pk__in=wanted_quotes).values(*QUOTE_FACTS)
    }
    route_facts = {
        f["pk"]: f for f in ApiRoute.objects.filter(pk__in=wanted_routes).values(*ROUTE_FACTS)
    }
    stale_all = wanted_quotes | {pk for plan in plans for pk in plan[6]}
    gpus_of = {
        pk: (slug, system_slug)
        for pk, slug, system_slug in Quote.objects.filter(pk__in=stale_all).values_list(
            "pk", "gpu__slug", "system__gpu__slug"
        )
    }
    best_costs = _best_gpu_costs([plan[1].pk for plan in plans])
    every_quote: dict[int, dict[str, Any]] | None = None
    catalog: PlanCatalog | None = None
    calibrations = _BatchCalibrations(briefs[plan[0]["brief_id"]] for plan in plans)

    out = []
    for (
        state,
        table,
        ctx,
        quote_versions,
        route_versions,
        q_changed,
        q_gone,
        r_changed,
        r_gone,
    ) in plans:
        quotes = [quote_facts[pk] for pk in q_changed if pk in quote_facts]
        routes = [route_facts[pk] for pk in r_changed if pk in route_facts]
        rows, not_costed = _cost_all(ctx, quotes, routes)
        stale_quotes, stale_routes = q_changed + q_gone, r_changed + r_gone
        stored_plans = (table.inputs or {}).get("plans")
        replace_plans = not plans_unchanged(ctx, stored_plans, quotes, q_gone, _quote_plan)
        if replace_plans:  # a quote the plans could choose from changed: re-solve them
            if every_quote is None:  # every live quote's facts, one read for all the tables
                every_quote = {
                    f["pk"]: f for f in Quote.objects.filter(retired=False).values(*QUOTE_FACTS)
                }
            if catalog is None:
                catalog = plan_catalog()
            ctx.plan_capacities = (stored_plans or {}).get("capacities")
            ctx.request_log = stored_request_log(stored_plans)
            plan, stored_plans = _plans_again(
                ctx, quote_versions, every_quote, catalog, calibrations
            )
            rows += plan
        before = (table.inputs or {}).get("not_costed") or []
        not_costed = _not_costed_merged(before, not_costed, set(stale_quotes), set(stale_routes))
        best = table.capacity_model.get("gpu") if table.capacity_model else None
        affected = (
            bool(stale_routes)
            or not best
            or capacity_model_touched(
                best, best_costs.get(table.pk), rows, [gpus_of.get(pk, ()) for pk in stale_quotes]
            )
        )
        fields: dict[str, Any] = {
            "success_unit": ctx.brief.success_unit,
            "engine_version": ENGINE_VERSION,
            "currency": ctx.values["reporting_currency"],
            "no_ranking_reason": "",
            "inputs": table_inputs(ctx, quote_versions, route_versions, not_costed, stored_plans),
        }
        built = BuiltTable(
            rows=rows,
            table_fields=fields,
            replace_all=False,
            replace_plans=replace_plans,
            stale_quote_ids=stale_quotes,
            stale_route_ids=stale_routes,
            context=ctx,
            capacity_model_affected=affected,
        )
        out.append(
            Repriced(
                table_id=table.pk,
                brief_id=table.brief_id,
                version=state["requested_version"],
                base=state["computed_version"],
                built=built,
            )
        )
    return out, fallback


class _BatchCalibrations:
    """The calibration of the briefs of a batch of tables, read for all of them in one query
    the first time one of their plans needs the engine (a capacity the table did not keep)."""

    def __init__(self, briefs: Iterable[WorkloadBrief]) -> None:
        self.briefs = list(briefs)
        self.read: dict[int, dict[str, Any]] | None = None

    def of(self, brief: WorkloadBrief) -> Callable[[], dict[str, Any]]:
        def load() -> dict[str, Any]:
            if self.read is None:
                self.read = calibrations_for_briefs(self.briefs)
            return self.read[brief.pk]

        return load


def _plans_again(
    ctx: TableContext,
    quote_versions: dict[Any, int],
    every_quote: dict[int, dict[str, Any]],
    catalog: PlanCatalog | None,
    calibrations: _BatchCalibrations,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A table's serving plans rebuilt over every quote its team sees (apps.finance.plans),
    from the bucket capacities the table kept (the engine's calibration is read only when
    a capacity it did not keep is needed)."""
    try:
        ctx.request = request_for_brief(ctx.brief)
    except EngineInputError:
        return [], {}
    ctx.calibration_loader = calibrations.of(ctx.brief)  # read only if the engine runs
    facts = [every_quote[int(pk)] for pk in quote_versions if int(pk) in every_quote]
    return plan_rows(ctx, facts, _quote_plan, catalog or plan_catalog())


def _best_gpu_costs(table_ids: list[int]) -> dict[int, Decimal]:
    """Each table's lowest unit cost among its GPU rows that meet the brief: one query, a
    subquery a table that reads the first entry of the ranking index (row_ranking_order)."""
    if not table_ids:
        return {}
    best = (
        CandidateRow.objects.filter(
            table_id=OuterRef("pk"),
            candidate_kind="GPU",
            meets_constraints=True,
            effective_unit_cost__isnull=False,
        )
        .order_by("-meets_constraints", "effective_unit_cost")
        .values("effective_unit_cost")[:1]
    )
    found = (
        CandidateTable.objects.filter(pk__in=table_ids)
        .annotate(best=Subquery(best))
        .values_list("pk", "best")
    )
    return {pk: cost for pk, cost in found if cost is not None}
