"""Re-costing candidate tables when only quotes or API routes changed, many tables at once.

A table none of whose other inputs (its brief, finance assumptions, FX rates, benchmark runs)
changed since its last compute (``CandidateTable.full_version`` at most its
``computed_version``) keeps its stored state: its ``TableInputs`` (the assumption values and FX
rates applied) and its engine answer are read back as they were (apps.finance.state) and only
the rows of the quotes and routes whose version differs are costed again, by the plain function
``apps.finance.candidates.recost``. Done for a batch of tables together, that is a fixed number
of queries (the live quotes' and routes' versions, the changed ones' facts, the tables, the
briefs, the winner of each table) and no engine estimate, instead of about twenty queries and the
assumptions, calibration and runs read per table. The rows are written by
``apps.finance.services`` (one delete, one COPY, one update a table).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from django.db import connection
from django.db.models import OuterRef, Q, Subquery

from apps.benchmarks.selectors import calibrations_for_briefs
from apps.briefs.contract import request_for_brief
from apps.briefs.models import WorkloadBrief
from apps.engine import ENGINE_VERSION, EngineInputError
from apps.quotes.models import ApiRoute, Quote
from apps.quotes.selectors import quotes_for_team

from .candidates import (
    Changes,
    TableContext,
    TableWrite,
    context_of,
    engine_stamp,
    recost,
)
from .estimates import Calibration
from .models import CandidateRow, CandidateTable
from .offers import QUOTE_VALUES, QuoteFacts, quote_facts, route_facts
from .plans import PlanCatalog, plan_catalog, stored_request_log
from .state import (
    ANSWERS,
    EngineAnswer,
    Standing,
    TableInputs,
    TableState,
    Versions,
    answer_from_json,
    inputs_from_json,
    winner_key_of,
)
from .version_sets import SETS_KEPT, version_sets_read


@dataclass
class Repriced:
    """One table's re-costing: write ``built`` if the table is still at ``base``."""

    table_id: int
    brief_id: int
    version: int
    base: int
    built: TableWrite


def stored_context(
    brief: WorkloadBrief,
    inputs: TableInputs,
    answer: EngineAnswer,
    calibration_loader: Callable[[], Calibration] | None = None,
) -> TableContext | None:
    """The context of a table's last compute, rebuilt from what it stored (its inputs and
    engine answer); None when the brief can no longer be read by the engine."""
    try:
        request = request_for_brief(brief)
    except EngineInputError:
        return None
    return context_of(
        brief=brief,
        assumptions=inputs.assumptions,
        request=request,
        answer=answer,
        fingerprint=inputs.fingerprint,
        calibration_loader=calibration_loader,
        request_log=stored_request_log(inputs.plans),
        plan_capacities=inputs.plans.capacities,
        stamp=inputs.engine_stamp,
    )


def _answers(tables: dict[int, CandidateTable]) -> dict[int, EngineAnswer | None]:
    """Each table's stored engine answer, read (one query) only where not kept (ANSWERS)."""
    if connection.vendor != "postgresql":
        ANSWERS.clear()
    need = [t.pk for t in tables.values() if t.estimates_key not in ANSWERS]
    if need:
        found = []
        for key, stored in CandidateTable.objects.filter(pk__in=need).values_list(
            "estimates_key", "estimates"
        ):
            answer = answer_from_json(stored)
            if key and answer is not None and answer.key == key:
                found.append(answer)
        ANSWERS.keep(found)
    return {pk: ANSWERS.get(t.estimates_key) for pk, t in tables.items()}


class _BatchCalibrations:
    """The calibration of the briefs of a batch of tables, read for all of them in one query
    the first time one of them needs the engine (a configuration the table did not keep)."""

    def __init__(self, briefs: Iterable[WorkloadBrief]) -> None:
        self.briefs = list(briefs)
        self.read: dict[int, dict[str, dict[str, object]]] | None = None

    def of(self, brief: WorkloadBrief) -> Callable[[], Calibration]:
        def load() -> Calibration:
            if self.read is None:
                self.read = calibrations_for_briefs(self.briefs)
            return self.read[brief.pk]

        return load


# The distinct sets a LiveSeen keeps (teams that see the same quotes share one); cleared when
# full, like apps.finance.version_sets.SETS_KEPT (about 1.5 MB a set at 20,000 quotes).
LIVE_SETS_KEPT = SETS_KEPT


class LiveSeen:
    """The versions each team (or model) sees among one read of the live quotes (or routes),
    and each table's changes from the set it costed, worked out once a team (a pair of sets).
    Teams that see the same quotes share one set; at most LIVE_SETS_KEPT distinct ones."""

    def __init__(self, live: tuple[tuple[object, ...], ...]) -> None:
        self.live = live
        self.by_key: dict[object, Versions] = {}
        self.by_digest: dict[str, Versions] = {}
        self.changes_of: dict[tuple[str, str], tuple[list[int], list[int]]] = {}

    def versions(self, key: object, build: Callable[[], dict[str, int]]) -> Versions:
        found = self.by_key.get(key)
        if found is None:
            built = Versions.of_map(build())
            if built.digest not in self.by_digest and len(self.by_digest) >= LIVE_SETS_KEPT:
                self.by_key, self.by_digest, self.changes_of = {}, {}, {}
            found = self.by_key[key] = self.by_digest.setdefault(built.digest, built)
        return found

    def changes(self, seen: Versions, now: Versions) -> tuple[list[int], list[int]]:
        key = (seen.digest, now.digest)
        if key not in self.changes_of:
            self.changes_of[key] = seen.changes_to(now)
        return self.changes_of[key]


class LiveVersions:
    """The ``LiveSeen`` of the latest live quotes (or routes) a batch read, kept for the next
    batch while the live quotes read are the same (the two reads compared as whole tuples, a
    fast C loop): a price change's batches work each team's set out once, not once a batch.
    Each batch works with the one ``read`` gave it, so batches that overlap (threads) never
    mix versions from different reads."""

    def __init__(self) -> None:
        self.now = LiveSeen(())

    def read(self, live: tuple[tuple[object, ...], ...]) -> LiveSeen:
        now = self.now
        if live != now.live:
            now = self.now = LiveSeen(live)
        return now


LIVE_QUOTES = LiveVersions()
LIVE_ROUTES = LiveVersions()


@dataclass
class _Plan:
    state: dict[str, int]
    table: CandidateTable
    ctx: TableContext
    inputs: TableInputs
    quote_versions: Versions
    route_versions: Versions
    q_changed: list[int]
    q_gone: list[int]
    r_changed: list[int]
    r_gone: list[int]


def tables_reprice(states: list[dict[str, int]]) -> tuple[list[Repriced], list[int]]:
    """Re-cost the tables of ``states`` (``pk``, ``brief_id``, ``requested_version``,
    ``computed_version``, read under lock by the caller). Returns what to write, and the brief
    ids whose table stored too little to be re-costed (the caller recomputes those in full)."""
    tables = {
        t.pk: t
        for t in CandidateTable.objects.filter(pk__in=[s["pk"] for s in states]).only(
            "pk", "brief_id", "inputs", "estimates_key", "capacity_model", "no_ranking_reason",
            "engine_version", "quote_set", "route_set",
        )
    }  # fmt: skip
    sets = version_sets_read(d for t in tables.values() for d in (t.quote_set, t.route_set))
    answers = _answers(tables)
    briefs = WorkloadBrief.objects.in_bulk([s["brief_id"] for s in states])
    live_quotes = tuple(
        Quote.objects.filter(retired=False)
        .order_by("pk")
        .values_list("pk", "version", "confidential_to_id")
    )
    live_routes = tuple(
        ApiRoute.objects.filter(retired=False)
        .order_by("pk")
        .values_list("pk", "version", "model_preset")
    )
    quotes_live, routes_live = LIVE_QUOTES.read(live_quotes), LIVE_ROUTES.read(live_routes)

    def quotes_seen_by(team_id: int) -> Versions:
        # What apps.quotes.selectors.quotes_for_team serves the team: live, not confidential
        # to another team.
        return quotes_live.versions(
            team_id,
            lambda: {str(pk): v for pk, v, conf in live_quotes if conf is None or conf == team_id},
        )

    def routes_serving(preset: str) -> Versions:
        # apps.finance.offers.live_routes
        return routes_live.versions(
            preset, lambda: {str(pk): v for pk, v, p in live_routes if preset and p == preset}
        )

    stamp = engine_stamp()  # the catalog or engine changed since: recompute in full
    calibrations = _BatchCalibrations(briefs.values())
    plans: list[_Plan] = []
    fallback: list[int] = []
    for state in states:
        table, brief = tables.get(state["pk"]), briefs.get(state["brief_id"])
        answer = answers.get(state["pk"])
        inputs = (
            inputs_from_json(table.inputs, sets.get(table.quote_set), sets.get(table.route_set))
            if table is not None
            else None
        )
        if (
            table is None
            or brief is None
            or answer is None
            or inputs is None
            or table.no_ranking_reason
            or table.engine_version != ENGINE_VERSION
            or inputs.engine_stamp != stamp
        ):
            fallback.append(state["brief_id"])
            continue
        ctx = stored_context(brief, inputs, answer, calibrations.of(brief))
        if ctx is None:
            fallback.append(state["brief_id"])
            continue
        quote_versions = quotes_seen_by(brief.team_id)
        route_versions = routes_serving(brief.model_preset or "")
        q_changed, q_gone = quotes_live.changes(inputs.quotes, quote_versions)
        r_changed, r_gone = routes_live.changes(inputs.api_routes, route_versions)
        plans.append(
            _Plan(
                state,
                table,
                ctx,
                inputs,
                quote_versions,
                route_versions,
                q_changed,
                q_gone,
                r_changed,
                r_gone,
            )
        )

    wanted_quotes = {pk for p in plans for pk in p.q_changed}
    wanted_routes = {pk for p in plans for pk in p.r_changed}
    quote_by_id = {
        f.pk: f for f in quote_facts(Quote.objects.filter(pk__in=wanted_quotes).order_by("pk"))
    }
    route_by_id = {
        f.pk: f for f in route_facts(ApiRoute.objects.filter(pk__in=wanted_routes).order_by("pk"))
    }
    stale_all = wanted_quotes | {pk for p in plans for pk in p.q_gone}
    gpus_of = {
        pk: slug or system_slug
        for pk, slug, system_slug in Quote.objects.filter(pk__in=stale_all).values_list(
            "pk", "gpu__slug", "system__gpu__slug"
        )
    }
    winners = _winners([p.table.pk for p in plans])
    every: dict[int, QuoteFacts] | None = None
    catalog: PlanCatalog | None = None

    def every_quote(versions: Versions) -> Callable[[], list[QuoteFacts]]:
        def read() -> list[QuoteFacts]:
            nonlocal every
            if every is None:  # every live quote's facts, one read for all the tables
                every = {f.pk: f for f in quote_facts(Quote.objects.filter(retired=False))}
            return [every[int(pk)] for pk in versions.of if int(pk) in every]

        return read

    def the_catalog() -> PlanCatalog:
        nonlocal catalog
        if catalog is None:
            catalog = plan_catalog()
        return catalog

    by_team_gpu: dict[tuple[int, int], list[QuoteFacts]] = {}

    def gpu_quotes(team_id: int) -> Callable[[int], list[QuoteFacts]]:
        """The team's live quotes of one GPU, by id: what the rent / reserve / buy comparison
        compares, one query a team and GPU for the batch (not every quote's facts)."""

        def read(gpu_id: int) -> list[QuoteFacts]:
            if (team_id, gpu_id) not in by_team_gpu:
                by_team_gpu[team_id, gpu_id] = quote_facts(
                    quotes_for_team(team_id)
                    .filter(Q(gpu_id=gpu_id) | Q(system__gpu_id=gpu_id))
                    .order_by("pk")
                )
            return by_team_gpu[team_id, gpu_id]

        return read

    out = []
    for p in plans:
        standing = replace(
            winners.get(p.table.pk, Standing()),
            capacity_gpu=(p.table.capacity_model or {}).get("gpu"),
        )
        changes = Changes(
            quote_versions=p.quote_versions,
            route_versions=p.route_versions,
            quotes=[quote_by_id[pk] for pk in p.q_changed if pk in quote_by_id],
            routes=[route_by_id[pk] for pk in p.r_changed if pk in route_by_id],
            gone_quotes=p.q_gone,
            gone_routes=p.r_gone,
            every_quote=every_quote(p.quote_versions),
            catalog=the_catalog,
        )
        stored = TableState(
            inputs=p.inputs, answer=p.ctx.answer, standing=standing, inputs_json=p.table.inputs
        )
        built = recost(p.ctx, stored, changes, gpus_of=gpus_of)
        if built.capacity_model_affected:
            # The rent / reserve / buy comparison reads the team's quotes of its GPU: read once
            # for the batch's tables of the team, not a query of its own per table.
            p.ctx.gpu_quotes = gpu_quotes(briefs[p.table.brief_id].team_id)
        out.append(
            Repriced(
                table_id=p.table.pk,
                brief_id=p.table.brief_id,
                version=p.state["requested_version"],
                base=p.state["computed_version"],
                built=built,
            )
        )
    return out, fallback


def _winners(table_ids: list[int]) -> dict[int, Standing]:
    """Each table's rank 1 and its best GPU row's unit cost: one query, a subquery a figure that
    reads the first entries of the ranking index (row_ranking_order)."""
    if not table_ids:
        return {}
    best = CandidateRow.objects.filter(
        table_id=OuterRef("pk"), meets_constraints=True, effective_unit_cost__isnull=False
    ).order_by("-meets_constraints", "effective_unit_cost", "pk")
    found = (
        CandidateTable.objects.filter(pk__in=table_ids)
        .annotate(
            best=Subquery(best.values("effective_unit_cost")[:1]),
            quote=Subquery(best.values("quote_id")[:1]),
            route=Subquery(best.values("api_route_id")[:1]),
            kind=Subquery(best.values("candidate_kind")[:1]),
            gpu=Subquery(best.filter(candidate_kind="GPU").values("effective_unit_cost")[:1]),
        )
        .values_list("pk", "best", "quote", "route", "kind", "gpu")
    )
    return {
        pk: Standing(best_gpu_cost=gpu)
        if cost is None
        else Standing(
            winner_cost=cost, winner_key=winner_key_of(quote, route, str(kind)), best_gpu_cost=gpu
        )
        for pk, cost, quote, route, kind, gpu in found
    }


__all__ = ["QUOTE_VALUES", "Repriced", "stored_context", "tables_reprice"]
