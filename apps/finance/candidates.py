"""Build a brief's candidate table: the engine's answer x quotes and API routes -> costed rows.

Two ways to bring a table up to date, one function each:
- ``candidate_table_build``: from the database as it is now. When only quotes or routes changed
  since the last compute (the table's fingerprint still holds), only those are costed again
  (``recost``); otherwise every quote and route is (the brief, the engine's answer, the
  assumptions or the calibration changed, or the table was never computed);
- ``recost``: a plain function of a table's stored state (its ``TableInputs`` and engine answer,
  rebuilt into a ``TableContext``) and the quotes and routes that changed, shared by the path
  above and by the re-costing of many tables at once after a price change
  (apps.finance.repricing). This is what keeps one quote edit cheap across hundreds of briefs.

Every row is a typed ``apps.finance.state.Row`` built from one configuration
(apps.finance.configuration) and the engine's costing (apps.engine.costing).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from apps.benchmarks.selectors import calibration_for_brief, throughput_runs_for_brief
from apps.briefs.contract import demand_for_brief, request_for_brief
from apps.briefs.models import WorkloadBrief, size_buckets_of
from apps.catalog.selectors import gpu_specs
from apps.engine import ENGINE_VERSION, EngineInputError, EstimateRequest
from apps.engine.codec import encode
from apps.engine.costing import (
    CandidateCost,
    Demand,
    FinanceAssumptions,
    QuoteTerms,
    cost_api_candidate,
    cost_gpu_quote,
)
from apps.engine.energy import EnergyFigures
from apps.quotes.models import ApiRoute, Quote
from apps.quotes.selectors import quotes_for_team

from .assumptions import resolved_assumptions
from .configuration import Configurator, Configured
from .estimates import Calibration, answer_key, e2e_latencies_s, engine_answer
from .fx import FxMissing, fx_rates_json
from .models import CandidateRow, CandidateTable
from .offers import (
    QuoteFacts,
    RouteFacts,
    live_routes,
    quote_facts,
    quote_facts_seen,
    route_facts,
)
from .plans import PlanCatalog, plan_catalog, plan_rows, plans_unchanged
from .rows import UNCOSTABLE, own_overflow, row_overflow, shown_overflow, uncostable_reason
from .state import (
    STATE_FORMAT,
    Assumptions,
    BucketCapacities,
    CandidateKind,
    Configuration,
    EngineAnswer,
    Figures,
    NotCosted,
    PlanInputs,
    RequestLog,
    Row,
    Standing,
    TableInputs,
    TableState,
    Versions,
    answer_from_json,
    answer_to_json,
    inputs_to_json,
    winner_key_of,
)
from .version_sets import stored_inputs

_Q4, _Q6 = Decimal("0.0001"), Decimal("0.000001")  # the energy columns' decimal places
logger = logging.getLogger(__name__)


@dataclass
class TableContext:
    """Everything a row's cost depends on, except the quote or route itself: one table's
    computation (its configurator holds the memo of configurations)."""

    brief: WorkloadBrief
    assumptions: Assumptions
    demand: Demand
    configurator: Configurator
    fingerprint: str
    engine_stamp: str
    # The request sizes of the brief's latest benchmark run with a request log; on a context
    # rebuilt from a table, the buckets its plans last used.
    request_log: RequestLog | None = None
    # The serving plans' bucket capacities as the table last kept them (apps.finance.plans).
    plan_capacities: BucketCapacities | None = None
    _terms: dict[int, tuple[QuoteFacts, QuoteTerms]] | None = None
    parts: RowParts = field(default_factory=lambda: RowParts(), compare=False, repr=False)
    # On a full compute, the quotes and routes it costed (by id): what the rent / reserve /
    # buy comparison and the sensitivity read again (None on a re-costing: they query).
    quotes_costed: dict[int, QuoteFacts] | None = None
    routes_costed: dict[int, RouteFacts] | None = None
    # On a re-costing of many tables, the team's live quotes of one GPU (by GPU id), read once
    # for the batch: what the rent / reserve / buy comparison reads (apps.finance.repricing).
    gpu_quotes: Callable[[int], list[QuoteFacts]] | None = None

    @property
    def finance(self) -> FinanceAssumptions:
        return self.assumptions.finance

    @property
    def currency(self) -> str:
        return self.assumptions.currency

    @property
    def answer(self) -> EngineAnswer:
        return self.configurator.answer

    @property
    def request(self) -> EstimateRequest:
        return self.configurator.request

    def quote_terms(self, facts: QuoteFacts) -> QuoteTerms:
        """The quote's terms in the reporting currency, worked out once per quote version and
        set of FX rates in this process (raises FxMissing, never kept)."""
        if self._terms is None:
            key = json.dumps([self.currency, fx_rates_json(self.assumptions.fx_rates)])
            if sum(len(t) for t in _TERMS.values()) > TERMS_CACHE_SIZE:
                _TERMS.clear()
            self._terms = _TERMS.setdefault(key, {})
        found = self._terms.get(facts.pk)
        if found is not None and (found[0] is facts or found[0] == facts):
            return found[1]
        terms = facts.terms(self.assumptions)
        self._terms[facts.pk] = (facts, terms)
        return terms


# Quote terms by FX rates (as JSON), then by quote id with the facts they were worked out from
# (the cache of apps.finance.offers hands every table the same facts object for a quote until
# it changes, so the check is usually ``is``): the same for every table costed with those
# rates, so a worker works each out once.
_TERMS: dict[str, dict[int, tuple[QuoteFacts, QuoteTerms]]] = {}
TERMS_CACHE_SIZE = 20_000


@dataclass(frozen=True, kw_only=True, slots=True)
class TableFields:
    """What a compute sets on the CandidateTable itself; ``answer`` only when it changed."""

    success_unit: str
    engine_version: str = ENGINE_VERSION
    no_ranking_reason: str = ""
    currency: str | None = None
    inputs: TableInputs | None = None
    # The inputs a re-costing started from and their stored JSON (its unchanged parts are
    # written back as they were: apps.finance.state.inputs_to_json).
    inputs_stored: tuple[TableInputs, dict[str, Any]] | None = None
    answer: EngineAnswer | None = None

    def values(self) -> dict[str, object]:
        out: dict[str, object] = {
            "success_unit": self.success_unit,
            "engine_version": self.engine_version,
            "no_ranking_reason": self.no_ranking_reason,
        }
        if self.no_ranking_reason:
            # No rows: nothing costed, so no version sets named (the sweeper may drop them).
            out.update(capacity_model={}, quote_set="", route_set="")
        if self.currency is not None:
            out["currency"] = self.currency
        if self.inputs is not None:
            out["inputs"] = inputs_to_json(self.inputs, self.inputs_stored)
            # The versions, stored once a set (apps.finance.writes stores the sets).
            out["quote_set"] = self.inputs.quotes.digest
            out["route_set"] = self.inputs.api_routes.digest
        if self.answer is not None:
            out.update(estimates_key=self.answer.key, estimates=answer_to_json(self.answer))
        return out


@dataclass
class TableWrite:
    """What a recompute writes. ``replace_all``: drop every old row first; otherwise drop the
    rows of ``stale_quote_ids`` / ``stale_route_ids`` (and the serving plans' rows when
    ``replace_plans``) and add ``rows``."""

    fields: TableFields
    rows: list[Row] = field(default_factory=list)
    replace_all: bool = True
    stale_quote_ids: list[int] = field(default_factory=list)
    stale_route_ids: list[int] = field(default_factory=list)
    replace_plans: bool = True
    context: TableContext | None = None
    capacity_model_affected: bool = True


# --- rows ----------------------------------------------------------------------------------------


def with_energy(figures: Figures, energy: EnergyFigures | None) -> Figures:
    """``figures`` with a quote's energy figures, rounded as stored (none without its TDP)."""
    if energy is None:
        return replace(
            figures, energy_kwh_per_month=None, energy_j_per_output=None, co2e_kg_per_month=None
        )
    j, co2e = energy.j_per_output, energy.kg_co2e_per_month
    return replace(
        figures,
        energy_kwh_per_month=energy.kwh_per_month.quantize(_Q4),
        energy_j_per_output=None if j is None else j.quantize(_Q6),
        co2e_kg_per_month=None if co2e is None else co2e.quantize(_Q4),
    )


def hours_billed(cost: CandidateCost) -> Decimal | None:
    """The hours each paid GPU is billed a month (paid GPU-hours over the GPUs paid)."""
    if not cost.gpus_paid:
        return None
    return (cost.paid_gpu_hours_per_month / cost.gpus_paid).quantize(_Q4)


class RowParts:
    """The parts of one table's GPU rows that every row of a configuration shares, built once
    per compute (owned by its TableContext): the configuration's figures with a quote's energy,
    the configuration as a term bills it, and whether those fit the table's columns. Found by
    the identity of the objects they are made from (kept beside them, so an id is never
    another object's); the COPY writer finds the shared objects again the same way."""

    def __init__(self) -> None:
        self._figures: dict[tuple[int, int], tuple[Configured, EnergyFigures | None, Figures]] = {}
        self._configurations: dict[
            tuple[int, str, int, Decimal], tuple[Configured, Configuration]
        ] = {}
        self._shown: dict[tuple[int, int], tuple[Configuration, Figures, str | None]] = {}

    def figures(self, configured: Configured, energy: EnergyFigures | None) -> Figures:
        key = (id(configured), id(energy))
        found = self._figures.get(key)
        if found is None or found[0] is not configured or found[1] is not energy:
            figures = with_energy(configured.figures, energy)
            found = self._figures[key] = (configured, energy, figures)
        return found[2]

    def configuration(
        self, facts: QuoteFacts, configured: Configured, cost: CandidateCost
    ) -> Configuration:
        """The configuration a quote of ``facts``'s GPU and term is billed at (its GPUs paid
        and their hours follow from the basis and the kind of term)."""
        term = facts.pricing_term.value
        key = (id(configured), term, cost.gpus_paid, cost.paid_gpu_hours_per_month)
        found = self._configurations.get(key)
        if found is None or found[0] is not configured:
            configuration = Configuration(
                gpu=facts.gpu,
                gpus_per_replica=configured.gpus_per_replica,
                replicas=configured.replicas,
                paid_gpus=cost.gpus_paid,
                layout=configured.layout,
                pricing_term=term,
                hours_billed_per_month=hours_billed(cost),
            )
            found = self._configurations[key] = (configured, configuration)
        return found[1]

    def overflow(self, row: Row) -> str | None:
        """``apps.finance.rows.row_overflow(row)``, its configuration and figures checked once."""
        own = own_overflow(row)
        if own is not None:
            return own
        config, figures = row.configuration, row.figures
        key = (id(config), id(figures))
        found = self._shown.get(key)
        if found is None or found[0] is not config or found[1] is not figures:
            found = self._shown[key] = (config, figures, shown_overflow(config, figures))
        return found[2]


def gpu_row_of(
    facts: QuoteFacts, configured: Configured, cost: CandidateCost, parts: RowParts
) -> Row:
    """The row of a quote costed at ``configured``. A row that misses the brief has no unit
    cost: it is listed, unranked, with why, and never looks cheaper than the rows that meet
    it."""
    why_not = (
        tuple(dict.fromkeys(configured.why_not + cost.why_not))
        if cost.why_not
        else configured.why_not
    )
    return Row(
        kind=CandidateKind.GPU,
        quote_id=facts.pk,
        api_route_id=None,
        gpu_id=facts.gpu_id,
        configuration=parts.configuration(facts, configured, cost),
        figures=parts.figures(configured, cost.energy),
        cost_lines=cost.cost_lines,
        monthly_cost=cost.monthly_cost,
        accepted_outputs_per_month=cost.accepted_outputs_per_month,
        effective_unit_cost=None if why_not else cost.effective_unit_cost,
        meets_constraints=not why_not,
        why_not=why_not,
        notes=configured.notes + cost.notes,
        basis=cost.basis.value,
        paid_gpu_hours_per_month=cost.paid_gpu_hours_per_month if cost.gpus_paid else None,
    )


def gpu_row(ctx: TableContext, facts: QuoteFacts) -> Row | None:
    """The quote's row; None without an engine answer for its GPU (raises FxMissing)."""
    terms = ctx.quote_terms(facts)
    configured = ctx.configurator.configure(facts.gpu, facts.limit, facts.instance)
    if configured is None:
        return None
    return gpu_row_of(facts, configured, cost_gpu_quote(configured.basis, terms), ctx.parts)


NO_CONFIGURATION = Configuration(
    gpu=None,
    gpus_per_replica=None,
    replicas=None,
    paid_gpus=0,
    layout="",
    pricing_term="",
    hours_billed_per_month=None,
)


def route_row(ctx: TableContext, facts: RouteFacts) -> Row:
    """An API route's row (raises FxMissing)."""
    cost = cost_api_candidate(
        demand=ctx.demand, route=facts.terms(ctx.assumptions, ctx.demand), finance=ctx.finance
    )
    why_not = cost.why_not
    hours = facts.window_prices(ctx.demand)
    return Row(
        kind=CandidateKind.API_ROUTE,
        quote_id=None,
        api_route_id=facts.pk,
        gpu_id=None,
        configuration=NO_CONFIGURATION,
        figures=Figures(),
        cost_lines=cost.cost_lines,
        monthly_cost=cost.monthly_cost,
        accepted_outputs_per_month=cost.accepted_outputs_per_month,
        effective_unit_cost=None if why_not else cost.effective_unit_cost,
        meets_constraints=not why_not,
        why_not=why_not,
        notes=cost.notes if hours is None else (hours.note, *cost.notes),
        basis="ESTIMATED",
        paid_gpu_hours_per_month=None,
    )


def cost_offers(
    ctx: TableContext, quotes: Iterable[QuoteFacts], routes: Iterable[RouteFacts]
) -> tuple[list[Row], list[NotCosted]]:
    """The costed rows, and the quotes and routes that could not be costed, each with why
    (shown as ``not_costed``): a missing FX rate names it, and one candidate that cannot be
    costed never stops the rest of the table."""
    rows: list[Row] = []
    not_costed: list[NotCosted] = []
    for facts in quotes:
        try:
            row = gpu_row(ctx, facts)
        except FxMissing as exc:
            not_costed.append(NotCosted(quote_id=facts.pk, reason=str(exc)))
            continue
        except UNCOSTABLE as exc:
            not_costed.append(NotCosted(quote_id=facts.pk, reason=uncostable_reason(exc)))
            logger.warning("quote %s not costed for brief %s: %r", facts.pk, ctx.brief.pk, exc)
            continue
        if row is None:  # nothing is dropped without a word
            reason = "the engine has no estimate for this quote's GPU for this brief"
            not_costed.append(NotCosted(quote_id=facts.pk, reason=reason))
        elif (overflow := ctx.parts.overflow(row)) is not None:
            not_costed.append(NotCosted(quote_id=facts.pk, reason=overflow))
        else:
            rows.append(row)
    for route in routes:
        try:
            row = route_row(ctx, route)
        except FxMissing as exc:
            not_costed.append(NotCosted(api_route_id=route.pk, reason=str(exc)))
            continue
        except UNCOSTABLE as exc:
            not_costed.append(NotCosted(api_route_id=route.pk, reason=uncostable_reason(exc)))
            logger.warning("route %s not costed for brief %s: %r", route.pk, ctx.brief.pk, exc)
            continue
        overflow = row_overflow(row)
        if overflow is not None:
            not_costed.append(NotCosted(api_route_id=route.pk, reason=overflow))
        else:
            rows.append(row)
    return rows, not_costed


# --- the context of a compute --------------------------------------------------------------------


def engine_stamp() -> str:
    """What an engine answer depends on besides the brief and its benchmark runs: the catalog
    as the engine sees it, the engine's version and this state's format."""
    return answer_key(None, {"format": STATE_FORMAT})


def _request_log(runs: Iterable[object]) -> RequestLog | None:
    logged = [r for r in runs if (getattr(r, "results", None) or {}).get("request_size_buckets")]
    if not logged:
        return None
    run = max(logged, key=lambda r: (r.created_at, r.pk))  # type: ignore[attr-defined]
    results = run.results  # type: ignore[attr-defined]
    try:
        buckets = size_buckets_of(results["request_size_buckets"])
    except EngineInputError:
        return None  # a run stored before its buckets were checked: not used
    return RequestLog(
        buckets=buckets,
        source=f"the request log of benchmark run #{run.pk} "  # type: ignore[attr-defined]
        f"({results.get('request_log_requests') or 'its'} requests)",
    )


def fingerprint_of(brief: WorkloadBrief, key: str, assumptions: Assumptions) -> str:
    """Everything but prices a table's rows depend on: the engine answer's key, the brief's
    version, the assumption rows' versions and values, the FX rates, the engine version."""
    blob = json.dumps(
        [
            key,
            brief.inputs_version,
            list(assumptions.versions),
            encode(assumptions.finance),
            fx_rates_json(assumptions.fx_rates),
            ENGINE_VERSION,
            STATE_FORMAT,
        ],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def table_context(brief: WorkloadBrief, table: CandidateTable) -> TableContext | str:
    """The context of a full compute, or why the brief cannot be ranked. The engine's answer
    the table keeps is reused when nothing it depends on changed (only prices did)."""
    missing = brief.missing_fields()
    if missing:
        return "still missing: " + ", ".join(missing)
    assumptions = resolved_assumptions(brief)
    try:
        request = request_for_brief(brief)
    except EngineInputError as exc:
        return f"{exc.field}: {exc.message}"
    calibration = calibration_for_brief(brief)  # its team's runs of its model only
    runs = throughput_runs_for_brief(brief)
    specs = gpu_specs()
    key = answer_key(
        request, {"calibration": calibration, "runs": sorted(r.pk for r in runs.values())}, specs
    )
    answer = answer_from_json(table.estimates) if table.estimates_key == key else None
    if answer is None or answer.key != key:
        try:
            answer = engine_answer(
                request=request, brief=brief, calibration=calibration, runs=runs, key=key
            )
        except EngineInputError as exc:
            return f"{exc.field}: {exc.message}"
    return context_of(
        brief=brief,
        assumptions=assumptions,
        request=request,
        answer=answer,
        fingerprint=fingerprint_of(brief, key, assumptions),
        calibration=calibration,
        request_log=_request_log(runs.values()),
    )


def context_of(
    *,
    brief: WorkloadBrief,
    assumptions: Assumptions,
    request: EstimateRequest,
    answer: EngineAnswer,
    fingerprint: str,
    calibration: Calibration | None = None,
    calibration_loader: Callable[[], Calibration] | None = None,
    request_log: RequestLog | None = None,
    plan_capacities: BucketCapacities | None = None,
    stamp: str | None = None,
) -> TableContext:
    """A table's context from its parts (a fresh compute's, or a stored table's)."""
    demand = demand_for_brief(brief, e2e_latencies_s(answer))
    return TableContext(
        brief=brief,
        assumptions=assumptions,
        demand=demand,
        configurator=Configurator(
            brief=brief,
            request=request,
            answer=answer,
            demand=demand,
            finance=assumptions.finance,
            calibration=calibration,
            calibration_loader=calibration_loader,
        ),
        fingerprint=fingerprint,
        engine_stamp=stamp if stamp is not None else engine_stamp(),
        request_log=request_log,
        plan_capacities=plan_capacities,
    )


def table_inputs(
    ctx: TableContext,
    quote_versions: Versions,
    route_versions: Versions,
    not_costed: list[NotCosted],
    plans: PlanInputs,
) -> TableInputs:
    return TableInputs(
        format=STATE_FORMAT,
        fingerprint=ctx.fingerprint,
        brief_version=ctx.brief.inputs_version,
        quotes=quote_versions,
        api_routes=route_versions,
        assumptions=ctx.assumptions,
        engine_stamp=ctx.engine_stamp,
        not_costed=tuple(not_costed),
        plans=plans,
    )


# --- full and incremental ------------------------------------------------------------------------


def _not_costed_merged(
    before: Iterable[NotCosted],
    new: list[NotCosted],
    stale_quotes: set[int],
    stale_routes: set[int],
) -> list[NotCosted]:
    """The table's not-costed list with the entries of re-costed or removed candidates
    replaced, in the order a full compute lists them (quotes, then routes, by id)."""
    kept = [
        e for e in before if e.quote_id not in stale_quotes and e.api_route_id not in stale_routes
    ]
    return sorted(
        [*kept, *new],
        key=lambda e: (0, e.quote_id) if e.quote_id else (1, e.api_route_id or 0),
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class Changes:
    """What changed since a table's last compute: the versions it may cost now, the facts of
    the quotes and routes that changed (new ones included), and what a re-costing reads only if
    it must (every quote the team sees, for the serving plans; the catalog's names)."""

    quote_versions: Versions
    route_versions: Versions
    quotes: list[QuoteFacts]
    routes: list[RouteFacts]
    gone_quotes: list[int]
    gone_routes: list[int]
    every_quote: Callable[[], list[QuoteFacts]]
    catalog: Callable[[], PlanCatalog]


def recost(
    ctx: TableContext, stored: TableState, changes: Changes, *, gpus_of: dict[int, str]
) -> TableWrite:
    """A table whose fingerprint still holds, brought up to date with ``changes`` (a plain
    function: stored state + changed quotes -> what to write). The serving plans are solved
    again only when a quote they could choose from changed. ``gpus_of``: the GPU of each
    changed or removed quote (the rent / reserve / buy answer is recomputed when its GPU's
    quotes changed)."""
    before, standing = stored.inputs, stored.standing
    winner_key, capacity_gpu = standing.winner_key, standing.capacity_gpu
    answer_size = len(ctx.answer.at_load)
    rows, not_costed = cost_offers(ctx, changes.quotes, changes.routes)
    stale_quotes = [f.pk for f in changes.quotes] + changes.gone_quotes
    stale_routes = [f.pk for f in changes.routes] + changes.gone_routes
    plans = before.plans
    replace_plans = not plans_unchanged(ctx, plans, changes.quotes, changes.gone_quotes)
    if replace_plans:  # a quote the plans could choose from changed: solve them again
        ctx.plan_capacities = plans.capacities
        plan, plans = plan_rows(ctx, changes.every_quote(), changes.catalog())
        rows += plan
    merged = _not_costed_merged(before.not_costed, not_costed, set(stale_quotes), set(stale_routes))
    stale_keys = {f"quote:{pk}" for pk in stale_quotes} | {f"api_route:{pk}" for pk in stale_routes}
    bar = max(
        (c for c in (standing.winner_cost, standing.best_gpu_cost) if c is not None), default=None
    )
    undercut = bar is None or any(
        r.meets_constraints and r.effective_unit_cost is not None
        and r.effective_unit_cost <= bar
        for r in rows
    )  # fmt: skip
    affected = (
        bool(stale_routes)
        or (replace_plans and winner_key in ("mix", "disagg"))
        or undercut
        or winner_key in stale_keys
        or capacity_gpu is None
        or any(gpus_of.get(pk) == capacity_gpu for pk in stale_quotes)
    )
    fields = TableFields(
        success_unit=ctx.brief.success_unit,
        currency=ctx.currency,
        inputs=table_inputs(ctx, changes.quote_versions, changes.route_versions, merged, plans),
        inputs_stored=None if stored.inputs_json is None else (before, stored.inputs_json),
        # The configurations a new quote needed were asked of the engine: kept with the rest.
        answer=ctx.answer if len(ctx.answer.at_load) != answer_size else None,
    )
    return TableWrite(
        fields=fields,
        rows=rows,
        replace_all=False,
        replace_plans=replace_plans,
        stale_quote_ids=stale_quotes,
        stale_route_ids=stale_routes,
        context=ctx,
        capacity_model_affected=affected,
    )


def standing_of(table: CandidateTable) -> Standing:
    """Where the stored table's ranking stands (two reads of the ranking index)."""
    ranked = CandidateRow.objects.filter(
        table=table, meets_constraints=True, effective_unit_cost__isnull=False
    ).order_by("effective_unit_cost", "pk")
    found = ranked.values_list(
        "effective_unit_cost", "quote_id", "api_route_id", "candidate_kind"
    ).first()
    gpu = ranked.filter(candidate_kind="GPU").values_list("effective_unit_cost", flat=True).first()
    capacity_gpu = (table.capacity_model or {}).get("gpu")
    if found is None:
        return Standing(best_gpu_cost=gpu, capacity_gpu=capacity_gpu)
    cost, quote_id, route_id, kind = found
    return Standing(
        winner_cost=cost,
        winner_key=winner_key_of(quote_id, route_id, kind),
        best_gpu_cost=gpu,
        capacity_gpu=capacity_gpu,
    )


def candidate_table_build(*, brief: WorkloadBrief, table: CandidateTable) -> TableWrite:
    """What to write for ``brief`` now: incremental when only quotes or routes changed since
    the last compute, else full. Ranks, the capacity model and the sensitivity are set after
    writing (apps.finance.writes). A brief whose own figures are too large for decimal
    arithmetic (one candidate's never are: ``cost_offers``) gets a table without a ranking
    that says why, never one left pending."""
    try:
        return _table_build(brief=brief, table=table)
    except UNCOSTABLE as exc:
        logger.warning("brief %s not ranked: %r", brief.pk, exc)
        reason = f"the brief's figures are too large to compute ({type(exc).__name__}): "
        reason += "check its volumes, the FX rates and the finance assumptions"
        return TableWrite(
            fields=TableFields(success_unit=brief.success_unit, no_ranking_reason=reason)
        )


def _table_build(*, brief: WorkloadBrief, table: CandidateTable) -> TableWrite:
    ctx = table_context(brief, table)
    if isinstance(ctx, str):
        return TableWrite(
            fields=TableFields(success_unit=brief.success_unit, no_ranking_reason=ctx)
        )
    seen = list(quotes_for_team(brief.team_id).values_list("pk", "version", "updated_at"))
    quote_versions = Versions.of_map({str(pk): version for pk, version, _ in seen})
    route_versions = Versions.of_map(
        {str(pk): v for pk, v in live_routes(brief.model_preset).values_list("pk", "version")}
    )
    before = stored_inputs(table) if table.computed_version > 0 else None
    if before is not None and before.fingerprint == ctx.fingerprint and not before.not_costed:
        q_changed, q_gone = before.quotes.changes_to(quote_versions)
        r_changed, r_gone = before.api_routes.changes_to(route_versions)
        changes = Changes(
            quote_versions=quote_versions,
            route_versions=route_versions,
            quotes=quote_facts(Quote.objects.filter(pk__in=q_changed).order_by("pk")),
            routes=route_facts(ApiRoute.objects.filter(pk__in=r_changed).order_by("pk")),
            gone_quotes=q_gone,
            gone_routes=r_gone,
            every_quote=lambda: quote_facts_seen(seen),
            catalog=plan_catalog,
        )
        gpus = dict(
            Quote.objects.filter(pk__in=q_changed + q_gone).values_list("pk", "gpu__slug")
        ) | dict(
            Quote.objects.filter(pk__in=q_changed + q_gone, gpu__isnull=True).values_list(
                "pk", "system__gpu__slug"
            )
        )
        stored = TableState(
            inputs=before, answer=ctx.answer, standing=standing_of(table), inputs_json=table.inputs
        )
        return recost(ctx, stored, changes, gpus_of=gpus)
    every = quote_facts_seen(seen)
    routes = route_facts(live_routes(brief.model_preset))
    ctx.quotes_costed = {facts.pk: facts for facts in every}
    ctx.routes_costed = {facts.pk: facts for facts in routes}
    rows, not_costed = cost_offers(ctx, every, routes)
    ctx.plan_capacities = before.plans.capacities if before is not None else None
    plan, plans = plan_rows(ctx, every, plan_catalog())
    return TableWrite(
        fields=TableFields(
            success_unit=brief.success_unit,
            currency=ctx.currency,
            inputs=table_inputs(ctx, quote_versions, route_versions, not_costed, plans),
            answer=ctx.answer,
        ),
        rows=rows + plan,
        context=ctx,
    )
