"""Build a brief's candidate table: engine estimates x quotes and API routes -> costed rows.

Two ways to bring a table up to date:
- full: every applicable quote and route is costed (the brief, the engine's answer, the
  assumptions or the calibration changed, or the table was never computed);
- incremental: only the quotes and routes whose version changed since the last compute are
  re-costed (a price edit), the rest of the rows stay as they are. This is what keeps one
  quote edit cheap across hundreds of briefs.
Reads the database through plain values (no model instances per quote), maps them to the
engine's costing dataclasses; the arithmetic is all in apps.engine.costing.
"""

import hashlib
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from apps.benchmarks.selectors import calibration_for_brief, throughput_runs_for_brief
from apps.briefs.contract import demand_for_brief, request_for_brief
from apps.briefs.models import WorkloadBrief, size_buckets_of
from apps.catalog.selectors import catalog_version, engine_estimates
from apps.engine import ENGINE_VERSION, EngineInputError
from apps.engine.costing import (
    ApiRouteTerms,
    CandidateCost,
    FinanceAssumptions,
    PricingTerm,
    QuoteTerms,
    cost_api_candidate,
    cost_gpu_quote,
    gpu_cost_basis,
)
from apps.engine.energy import EnergyFigures
from apps.quotes.models import OWNED_FIELDS, ApiRoute, Quote
from apps.quotes.selectors import quotes_for_team

from .assumptions import assumptions_version, engine_finance, resolved_assumptions
from .configuration import (
    LADDER_KEY,
    LADDER_VERSION,
    choose_configuration,
    latency_target_text,
    quote_limit,
    with_ladders,
)
from .estimates import (
    capacity_from_estimate,
    e2e_latencies_s,
    estimates_key,
    with_measurements,
)
from .fx import FxMissing, fx_convert
from .models import CandidateRow, CandidateTable
from .plans import plan_catalog, plan_rows, plans_unchanged
from .stored import engine_stamp, values_encode

ENERGY_COLUMNS = ("energy_kwh_per_month", "energy_j_per_output", "co2e_kg_per_month")
_Q4, _Q6 = Decimal("0.0001"), Decimal("0.000001")  # the columns' decimal places
QUOTE_FACTS = (
    "pk", "version", "pricing_term", "hourly_price_per_gpu", "currency",
    "storage_price_per_tb_month", "egress_price_per_gb", "network_monthly", "monthly_extras",
    "minimum_commitment_months", "gpu_id", "gpu__slug", "gpu__tdp_w", "system__gpu_id",
    "system__gpu__slug", "system__gpu__tdp_w", "gpus_per_node", "system__gpus_per_domain",
    *OWNED_FIELDS,
)  # fmt: skip
ROUTE_FACTS = (
    "pk", "version", "input_price_per_mtok", "output_price_per_mtok", "currency",
    "batch_discount", "rate_limit_rpm",
)  # fmt: skip


@dataclass
class TableContext:
    """Everything a row's cost depends on, except the quote or route itself."""

    brief: WorkloadBrief
    values: dict[str, Any]
    sources: dict[str, str]
    finance: FinanceAssumptions
    demand: Any
    estimates: list[dict[str, Any]]
    by_gpu: dict[str, dict[str, Any]]
    estimates_key: str
    fingerprint: str
    assumptions_version: list[int]
    # gpu_row's choice per (GPU slug, GPUs per replica offered): the same for every quote of
    # that GPU and size, so worked out once a table, not once a quote.
    configured: dict[tuple[str, int], Any] = field(default_factory=dict)
    # engine_stamp() when the engine's answer was computed.
    engine_stamp: str = ""
    # The quotes' plans for this table's rates (see _quote_plan).
    terms: dict[int, tuple[dict[str, Any], tuple[int, str, int, QuoteTerms]]] | None = None
    # The engine's request and calibration, for the serving plans (apps.finance.plans); None
    # on a context rebuilt from what a table stored (apps.finance.repricing) until needed.
    request: Any = None
    calibration: dict[str, Any] | None = None
    # On a rebuilt context, reads the calibration when the plans first need the engine.
    calibration_loader: Callable[[], dict[str, Any] | None] | None = None
    # The serving plans' bucket capacities as the table last kept them (apps.finance.plans).
    plan_capacities: dict[str, Any] | None = None
    # The request sizes of the brief's latest benchmark run with a request log, and where they
    # are from; on a context rebuilt from a table, the buckets its plans last used.
    request_log: tuple[Any, str] | None = None


@dataclass
class BuiltTable:
    """What a recompute writes. ``replace_all``: drop every old row first; otherwise drop the
    rows of ``stale_quote_ids`` / ``stale_route_ids`` only."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    table_fields: dict[str, Any] = field(default_factory=dict)
    replace_all: bool = True
    stale_quote_ids: list[int] = field(default_factory=list)
    stale_route_ids: list[int] = field(default_factory=list)
    # Drop the table's serving-plan rows (MIX, DISAGG) too: ``rows`` holds their new ones.
    replace_plans: bool = True
    context: TableContext | None = None
    capacity_model_affected: bool = True


def _fx(amount: Decimal, currency: str, values: dict[str, Any]) -> Decimal:
    return fx_convert(amount, currency, values["reporting_currency"], values["fx_rates"])


def quote_gpu(facts: dict[str, Any]) -> tuple[int, str, int]:
    """(gpu id, slug, TDP watts) of a quote for a GPU or for a system of GPUs."""
    if facts["gpu_id"] is not None:
        return facts["gpu_id"], facts["gpu__slug"], facts["gpu__tdp_w"]
    return facts["system__gpu_id"], facts["system__gpu__slug"], facts["system__gpu__tdp_w"]


def quote_terms(facts: dict[str, Any], values: dict[str, Any]) -> QuoteTerms:
    def fx(name: str) -> Decimal:
        return _fx(facts[name], facts["currency"], values)

    return QuoteTerms(
        pricing_term=PricingTerm(facts["pricing_term"]),
        hourly_price_per_gpu=fx("hourly_price_per_gpu"),
        storage_price_per_tb_month=fx("storage_price_per_tb_month"),
        egress_price_per_gb=fx("egress_price_per_gb"),
        network_monthly=fx("network_monthly"),
        monthly_extras=fx("monthly_extras"),
        minimum_commitment_months=facts["minimum_commitment_months"],
        gpu_tdp_w=Decimal(quote_gpu(facts)[2]),
        **owned_terms(facts, values),
    )


def owned_terms(facts: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """An owned quote's capex and running costs as the engine takes them (money converted to
    the reporting currency; blank figures stay None: the finance defaults apply)."""
    if facts.get("capex_per_gpu") is None:
        return {}
    money = ("capex_per_gpu", "electricity_per_kwh", "hosting_per_kw_month")
    return {
        name: _fx(facts[name], facts["currency"], values)
        if name in money and facts[name] is not None
        else facts[name]
        for name in OWNED_FIELDS
    }


def route_terms(facts: dict[str, Any], values: dict[str, Any]) -> ApiRouteTerms:
    return ApiRouteTerms(
        input_price_per_mtok=_fx(facts["input_price_per_mtok"], facts["currency"], values),
        output_price_per_mtok=_fx(facts["output_price_per_mtok"], facts["currency"], values),
        batch_discount=facts["batch_discount"],
        rate_limit_rpm=facts["rate_limit_rpm"],
    )


def live_routes(brief: WorkloadBrief) -> Any:
    """API routes that serve the brief's model (by preset)."""
    if not brief.model_preset:
        return ApiRoute.objects.none()
    return ApiRoute.objects.filter(retired=False, model_preset=brief.model_preset).order_by("pk")


def _basis_notes(estimate: dict[str, Any]) -> list[str]:
    if estimate.get("benchmark_run_id"):
        return [f"MEASURED: figures from benchmark run #{estimate['benchmark_run_id']}"]
    runs = estimate.get("calibrated_from_runs")
    if runs:
        named = ", ".join(f"#{pk}" for pk in estimate.get("calibrated_from_run_ids") or [])
        return [f"CALIBRATED from benchmark run{'s' if runs != 1 else ''} {named}".rstrip()]
    return []


def _row(
    cost: CandidateCost, notes: list[str], why_not: Iterable[str], extra: dict[str, Any]
) -> dict[str, Any]:
    """A row as written. A row that misses the brief has no unit cost: it is listed, unranked,
    with why, and never looks cheaper than the rows that meet it."""
    reasons = [*why_not, *cost.why_not]
    return {
        "cost_lines": {name: str(value) for name, value in cost.cost_lines.items()},
        "monthly_cost": cost.monthly_cost,
        "accepted_outputs_per_month": cost.accepted_outputs_per_month,
        "effective_unit_cost": None if reasons else cost.effective_unit_cost,
        "meets_constraints": not reasons,
        "why_not": reasons,
        "notes": [*notes, *cost.notes],
        "paid_gpu_hours_per_month": cost.paid_gpu_hours_per_month if cost.gpus_paid else None,
        **energy_columns(cost.energy),
        **extra,
    }


def energy_columns(energy: EnergyFigures | None) -> dict[str, Decimal | None]:
    """A row's energy columns, rounded as stored (None for an API route)."""
    if energy is None:
        return dict.fromkeys(ENERGY_COLUMNS)
    j, co2e = energy.j_per_output, energy.kg_co2e_per_month
    return {
        "energy_kwh_per_month": energy.kwh_per_month.quantize(_Q4),
        "energy_j_per_output": None if j is None else j.quantize(_Q6),
        "co2e_kg_per_month": None if co2e is None else co2e.quantize(_Q4),
    }


def _configured_capacity(ctx: TableContext, rung: dict[str, Any], meets: bool) -> Any:
    """The costing's capacity figures for the chosen rung. A rung that meets the target through
    its capacity plan (more replicas) meets it; a rung that cannot meet the brief is costed at
    its GPUs over the active hours, never at zero GPU-hours."""
    capacity = capacity_from_estimate(rung)
    changes: dict[str, Any] = {}
    if meets and capacity.meets_latency_target is False:
        changes["meets_latency_target"] = True
    if not meets:  # the row's why_not already says, for every size offered, what it misses
        changes.update(fits=True, meets_latency_target=None)
    if capacity.gpu_hours_per_month <= 0 and not ctx.brief.is_training:
        gpus = capacity.gpu_count * capacity.replicas
        changes["gpu_hours_per_month"] = Decimal(gpus) * Decimal(ctx.brief.hours_per_month or 0)
    at_target = (rung.get("capacity") or {}).get("requests_per_s_at_target")
    if ctx.brief.requests_per_second and at_target and capacity.basis != "MEASURED":
        # A brief given as a rate: a replica's throughput is what it completes at the latency
        # target (the engine's Little's-law figure the replicas were sized by), not the
        # single-request throughput the estimate's performance holds for such a brief.
        changes["output_tokens_per_s_per_replica"] = (
            Decimal(str(at_target)) * ctx.demand.output_tokens_mean
        ).quantize(Decimal("0.1"))
        # The engine sized the replicas for the brief's rate; retried requests are served
        # again (the costing's retry rate), so the replicas carry rate / (1 - retry rate).
        retried = float(ctx.brief.requests_per_second) / (1 - float(ctx.finance.retry_rate))
        needed = math.ceil(retried / at_target - 1e-9)
        if meets and needed > capacity.replicas:
            changes["replicas"] = needed
            changes["gpu_hours_per_month"] = (
                changes.get("gpu_hours_per_month", capacity.gpu_hours_per_month)
                * needed
                / capacity.replicas
            )
    replicas = changes.get("replicas", capacity.replicas)
    in_flight = _in_flight_per_replica(ctx.brief, rung, replicas)
    if in_flight is not None and capacity.batch_per_replica is not None:
        changes["batch_per_replica"] = max(1, min(capacity.batch_per_replica, in_flight))
    return replace(capacity, **changes) if changes else capacity


def _in_flight_per_replica(brief: WorkloadBrief, rung: dict[str, Any], replicas: int) -> int | None:
    """A real-time brief's requests in flight on each replica: its concurrency, or its rate x
    the rung's end-to-end latency (Little's law), spread over the replicas; None otherwise."""
    if brief.workload_type != "REALTIME_INFERENCE":
        return None
    plan = rung.get("capacity") or {}
    at_target, most = plan.get("requests_per_s_at_target"), plan.get("max_concurrency_at_target")
    if brief.concurrency:
        total = float(brief.concurrency)
    elif brief.requests_per_second and at_target and most:
        # rate x the mean time in the system, which is most / at_target (Little's law)
        total = float(brief.requests_per_second) * most / at_target
    else:
        e2e = rung["performance"].get("e2e_latency_s")
        if not brief.requests_per_second or not e2e:
            return None
        total = float(brief.requests_per_second) * e2e
    return math.ceil(total / max(replicas, 1))


def _rung(ctx: TableContext, slug: str, limit: int) -> tuple[dict[str, Any], str | None] | None:
    """The rung of the GPU's ladder a quote offering ``limit`` GPUs per replica is costed at,
    and why it misses the brief if it does; None without an estimate for the GPU."""
    estimate = ctx.by_gpu.get(slug)
    if estimate is None:
        return None
    ladder = estimate.get(LADDER_KEY) or [estimate]
    rung, missed = choose_configuration(ladder, limit, latency_target_text(ctx.brief))
    if rung["gpu_count"] == estimate["gpu_count"]:
        rung = estimate  # the per-GPU answer, with its notes (the fit table's configuration)
    return rung, missed


def quote_configuration(
    ctx: TableContext, facts: dict[str, Any]
) -> tuple[dict[str, Any], str | None, int, Any] | None:
    """The configuration a quote is costed at (its rung of the GPU's ladder), why it misses the
    brief if it does, the most GPUs per replica the quote offers, and the costing's capacity
    figures at that rung; None when the engine did not answer the quote's GPU."""
    _, slug, _ = quote_gpu(facts)
    limit = quote_limit(facts)
    found = _rung(ctx, slug, limit)
    if found is None:
        return None
    rung, missed = found
    return rung, missed, limit, _configured_capacity(ctx, rung, meets=missed is None)


def _configuration(ctx: TableContext, slug: str, limit: int) -> tuple[Any, ...] | None:
    """The configuration a quote of ``slug`` offering ``limit`` GPUs per replica is costed at:
    (capacity figures, notes, why not, the row's configuration columns); None without an
    estimate for the GPU. Memoised on the context (the same for every such quote)."""
    key = (slug, limit)
    if key in ctx.configured:
        return ctx.configured[key]
    found = _rung(ctx, slug, limit)
    if found is None:
        ctx.configured[key] = None
        return None
    rung, missed = found
    capacity = _configured_capacity(ctx, rung, meets=missed is None)
    notes = _basis_notes(rung)
    replicas = capacity.replicas
    if replicas > ((rung.get("capacity") or {}).get("replicas") or 1):
        notes.append(
            f"replicas raised to {replicas} to serve retried requests too (retry rate "
            f"{ctx.finance.retry_rate})"
        )
    notes.append(
        f"configuration: {replicas} replica{'s' if replicas != 1 else ''} x "
        f"{rung['gpu_count']} GPU{'s' if rung['gpu_count'] != 1 else ''} "
        f"(the quote offers up to {limit} per replica)"
    )
    e2e = rung["performance"].get("e2e_latency_s")
    columns = {
        "gpu_count": rung["gpu_count"],
        "replicas": replicas,
        "basis": rung.get("basis", "ESTIMATED"),
        "p95_latency_ms": None if e2e is None else Decimal(str(round(e2e * 1000, 2))),
        "memory_headroom_gb": Decimal(str(rung["memory"]["headroom_gb"])),
        "layout": str(rung.get("layout") or "")[:40],
    }
    # The quote-independent part of every such quote's cost, worked out once (the engine's
    # GpuCostBasis): each quote then costs only its own price against it.
    basis = gpu_cost_basis(demand=ctx.demand, capacity=capacity, finance=ctx.finance)
    configured = (basis, notes, [missed] if missed else [], columns)
    ctx.configured[key] = configured
    return configured


# What a table costs a quote with besides its configuration: its GPU (id, slug), the GPUs per
# replica it offers and its terms in the reporting currency. They depend on the quote's facts
# and on the reporting currency and FX rates alone (``quote_terms``), so a worker works them
# out once per quote and set of rates, not once a table: by the rates (as JSON), then by quote
# id, kept with the facts they were worked out from (``_quote_facts`` hands every table the
# same dict for a quote until it changes, so the check is usually ``is``; a dict read afresh
# is compared by value). Cleared when full.
_PLANS: dict[str, dict[int, tuple[dict[str, Any], tuple[int, str, int, QuoteTerms]]]] = {}
PLANS_CACHE_SIZE = 20_000


def _quote_plan(ctx: TableContext, facts: dict[str, Any]) -> tuple[int, str, int, QuoteTerms]:
    """(GPU id, GPU slug, GPUs per replica offered, ``quote_terms(facts, ctx.values)``) of a
    quote, worked out once per facts and rates (raises FxMissing, never kept)."""
    if ctx.terms is None:
        rates_key = json.dumps(
            [ctx.values["reporting_currency"], ctx.values["fx_rates"]], sort_keys=True, default=str
        )
        if sum(len(t) for t in _PLANS.values()) > PLANS_CACHE_SIZE:
            _PLANS.clear()
        ctx.terms = _PLANS.setdefault(rates_key, {})
    found = ctx.terms.get(facts["pk"])
    if found is not None and (found[0] is facts or found[0] == facts):
        return found[1]
    gpu_id, slug, _ = quote_gpu(facts)
    plan = (gpu_id, slug, quote_limit(facts), quote_terms(facts, ctx.values))
    ctx.terms[facts["pk"]] = (facts, plan)
    return plan


def gpu_row(ctx: TableContext, facts: dict[str, Any]) -> dict[str, Any] | None:
    gpu_id, slug, limit, terms = _quote_plan(ctx, facts)
    configured = _configuration(ctx, slug, limit)
    if configured is None:
        return None
    basis, notes, why_not, columns = configured
    cost = cost_gpu_quote(basis, terms)
    extra = {
        "candidate_kind": "GPU",
        "quote_id": facts["pk"],
        "api_route_id": None,
        "gpu_id": gpu_id,
        "pricing_term": facts["pricing_term"],
        **columns,
    }
    return _row(cost, notes, why_not, extra)


def route_row(ctx: TableContext, facts: dict[str, Any]) -> dict[str, Any]:
    cost = cost_api_candidate(
        demand=ctx.demand, route=route_terms(facts, ctx.values), finance=ctx.finance
    )
    return _row(
        cost,
        [],
        (),
        {
            "candidate_kind": "API_ROUTE",
            "quote_id": None,
            "api_route_id": facts["pk"],
            "gpu_id": None,
            "gpu_count": None,
            "replicas": None,
            "pricing_term": "",
            "basis": "ESTIMATED",
            "p95_latency_ms": None,
            "memory_headroom_gb": None,
        },
    )


def table_context(brief: WorkloadBrief, table: CandidateTable) -> TableContext | str:
    """The context of a recompute, or why the brief cannot be ranked."""
    missing = brief.missing_fields()
    if missing:
        return "still missing: " + ", ".join(missing)
    values, sources = resolved_assumptions(brief)
    versions = assumptions_version(brief)
    try:
        request = request_for_brief(brief)
    except EngineInputError as exc:
        return f"{exc.field}: {exc.message}"
    calibration = calibration_for_brief(brief)  # its team's runs of its model only
    runs = throughput_runs_for_brief(brief)
    key = estimates_key(
        request,
        {
            "calibration": calibration,
            "runs": sorted(r.pk for r in runs.values()),
            "configurations": LADDER_VERSION,
        },
    )
    if table.estimates_key == key and table.estimates:
        estimates = table.estimates  # only prices changed: the engine's answer still holds
    else:
        try:
            typed = engine_estimates(request, calibration=calibration)
            estimates = with_measurements(request, typed, runs, brief, calibration)
            estimates = with_ladders(request, estimates, calibration)
        except EngineInputError as exc:
            return f"{exc.field}: {exc.message}"
    fingerprint = hashlib.sha256(
        json.dumps(
            [key, brief.inputs_version, versions, values, ENGINE_VERSION],
            sort_keys=True,
            default=str,
        ).encode()
    ).hexdigest()
    logged = [r for r in runs.values() if (r.results or {}).get("request_size_buckets")]
    request_log = None
    if logged:
        run = max(logged, key=lambda r: (r.created_at, r.pk))
        try:
            request_log = (
                size_buckets_of(run.results["request_size_buckets"]),
                f"the request log of benchmark run #{run.pk} "
                f"({run.results.get('request_log_requests') or 'its'} requests)",
            )
        except EngineInputError:
            request_log = None  # a run stored before its buckets were checked: not used
    return TableContext(
        brief=brief,
        values=values,
        sources=sources,
        finance=engine_finance(values),
        demand=demand_for_brief(brief, e2e_latencies_s(estimates)),
        estimates=estimates,
        by_gpu={e["gpu"]: e for e in estimates},
        estimates_key=key,
        fingerprint=fingerprint,
        assumptions_version=versions,
        engine_stamp=engine_stamp(),
        request=request,
        calibration=calibration,
        request_log=request_log,
    )


def table_inputs(
    ctx: TableContext,
    quote_versions: dict[Any, int],
    route_versions: dict[Any, int],
    not_costed: list[dict[str, Any]],
    plans: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What a table records of the inputs its rows were computed from (``plans``: what the
    serving plans were chosen from, apps.finance.plans)."""
    return {
        "plans": plans or {},
        "fingerprint": ctx.fingerprint,
        "brief_version": ctx.brief.inputs_version,
        "quotes": {str(pk): v for pk, v in quote_versions.items()},
        "api_routes": {str(pk): v for pk, v in route_versions.items()},
        "assumptions": ctx.assumptions_version,
        "assumption_sources": ctx.sources,
        "values": values_encode(ctx.values),
        "engine_stamp": ctx.engine_stamp,
        "not_costed": not_costed,
    }


# Quote facts read in this process, by quote id: (version, updated_at, catalog stamp, facts).
# A full recompute of every brief reads the same ~2,000 quotes for each; a worker reads each
# once and then only those saved since (any save moves updated_at, a service's also the
# version) or whose GPU or system rows changed (the catalog stamp). Cleared when full.
_FACTS: dict[int, tuple[Any, Any, Any, dict[str, Any]]] = {}
FACTS_CACHE_SIZE = 50_000


def _quote_facts(seen: list[tuple[int, int, Any]]) -> list[dict[str, Any]]:
    """QUOTE_FACTS of the quotes ``seen`` ((id, version, updated_at), in order), read from the
    database only where this process has not read that version of the quote yet."""
    stamp = catalog_version()  # the GPU and system rows a quote's facts join
    missing = [
        pk
        for pk, version, updated_at in seen
        if _FACTS.get(pk, (None,) * 4)[:3] != (version, updated_at, stamp)
    ]
    if missing:
        if len(_FACTS) + len(missing) > FACTS_CACHE_SIZE:
            _FACTS.clear()
        found = Quote.objects.filter(pk__in=missing).values(*QUOTE_FACTS, "updated_at")
        for facts in found:
            updated_at = facts.pop("updated_at")
            _FACTS[facts["pk"]] = (facts["version"], updated_at, stamp, facts)
    # A quote saved again between the two reads is costed as read (its new version's
    # request recomputes the table again).
    return [_FACTS[pk][3] for pk, _, _ in seen if pk in _FACTS]


def _cost_all(
    ctx: TableContext, quotes: Iterable[dict[str, Any]], routes: Iterable[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The costed rows, and the quotes and routes that could not be costed, each with why
    (``{"quote_id": 7, "reason": "no FX rate for JPY ..."}``; shown as ``not_costed``)."""
    rows: list[dict[str, Any]] = []
    not_costed: list[dict[str, Any]] = []
    for facts in quotes:
        try:
            row = gpu_row(ctx, facts)
        except FxMissing as exc:
            not_costed.append({"quote_id": facts["pk"], "reason": str(exc)})
            continue
        if row is None:  # nothing is dropped without a word (issue 14: "or anything else")
            reason = "the engine has no estimate for this quote's GPU for this brief"
            not_costed.append({"quote_id": facts["pk"], "reason": reason})
        else:
            rows.append(row)
    for facts in routes:
        try:
            rows.append(route_row(ctx, facts))
        except FxMissing as exc:
            not_costed.append({"api_route_id": facts["pk"], "reason": str(exc)})
    return rows, not_costed


def candidate_table_build(*, brief: WorkloadBrief, table: CandidateTable) -> BuiltTable:
    """The rows to write for ``brief`` now: incremental when only quotes or routes changed
    since the last compute, else full. Ranks and the capacity model are set after writing."""
    ctx = table_context(brief, table)
    base_fields = {"success_unit": brief.success_unit, "engine_version": ENGINE_VERSION}
    if isinstance(ctx, str):
        return BuiltTable(
            table_fields={**base_fields, "no_ranking_reason": ctx, "capacity_model": {}}
        )
    seen = list(quotes_for_team(brief.team_id).values_list("pk", "version", "updated_at"))
    quote_versions = {pk: version for pk, version, _ in seen}
    route_versions = dict(live_routes(brief).values_list("pk", "version"))
    before = table.inputs or {}
    incremental = (
        table.computed_version > 0
        and before.get("fingerprint") == ctx.fingerprint
        and not before.get("not_costed")  # a quote left out is costed again in full
    )
    if incremental:
        old_quotes = {int(k): v for k, v in before.get("quotes", {}).items()}
        old_routes = {int(k): v for k, v in before.get("api_routes", {}).items()}
        changed_quotes = [pk for pk, v in quote_versions.items() if old_quotes.get(pk) != v]
        changed_routes = [pk for pk, v in route_versions.items() if old_routes.get(pk) != v]
        quotes = Quote.objects.filter(pk__in=changed_quotes).values(*QUOTE_FACTS)
        routes = ApiRoute.objects.filter(pk__in=changed_routes).values(*ROUTE_FACTS)
        stale_quotes = changed_quotes + [pk for pk in old_quotes if pk not in quote_versions]
        stale_routes = changed_routes + [pk for pk in old_routes if pk not in route_versions]
    else:
        quotes = _quote_facts(seen)
        routes = live_routes(brief).values(*ROUTE_FACTS)
        stale_quotes, stale_routes = [], []
    rows, not_costed = _cost_all(ctx, quotes, routes)
    replace_plans = True
    if incremental and plans_unchanged(ctx, before.get("plans"), quotes, stale_quotes, _quote_plan):
        plans, replace_plans = before.get("plans"), False
    else:
        ctx.plan_capacities = (before.get("plans") or {}).get("capacities")
        plan, plans = plan_rows(ctx, _quote_facts(seen), _quote_plan, plan_catalog())
        rows += plan
    fields: dict[str, Any] = {
        **base_fields,
        "currency": ctx.values["reporting_currency"],
        "no_ranking_reason": "",
        "inputs": table_inputs(ctx, quote_versions, route_versions, not_costed, plans),
    }
    if not incremental:  # the engine's answer is unchanged on the incremental path
        fields.update(estimates_key=ctx.estimates_key, estimates=ctx.estimates)
    return BuiltTable(
        rows=rows,
        replace_all=not incremental,
        replace_plans=replace_plans,
        stale_quote_ids=stale_quotes,
        stale_route_ids=stale_routes,
        context=ctx,
        table_fields=fields,
        capacity_model_affected=not incremental
        or _touches_capacity_model(table, rows, stale_quotes, stale_routes),
    )


def _touches_capacity_model(
    table: CandidateTable,
    rows: list[dict[str, Any]],
    stale_quote_ids: list[int],
    stale_route_ids: list[int],
) -> bool:
    """Whether an incremental change can move the rent/reserve/buy/API comparison. It compares
    the quotes of the best-ranked GPU (and the first API route), so it moves only when a route
    changed, a quote of that GPU changed, or a re-costed row undercuts the best one."""
    best = table.capacity_model.get("gpu") if table.capacity_model else None
    if stale_route_ids or not best:
        return True
    best_cost = (
        CandidateRow.objects.filter(
            table=table,
            candidate_kind="GPU",
            meets_constraints=True,
            effective_unit_cost__isnull=False,
        )
        .order_by("effective_unit_cost")
        .values_list("effective_unit_cost", flat=True)
        .first()
    )
    changed_gpus = Quote.objects.filter(pk__in=stale_quote_ids).values_list(
        "gpu__slug", "system__gpu__slug"
    )
    return capacity_model_touched(best, best_cost, rows, list(changed_gpus))


def capacity_model_touched(
    best_gpu: str, best_cost: Decimal | None, rows: list[dict[str, Any]], changed_gpus: list[Any]
) -> bool:
    """``_touches_capacity_model`` once its two reads are done (for many tables at once):
    ``best_cost`` the best GPU row's unit cost before the change, ``changed_gpus`` the (GPU
    slug, system GPU slug) of every re-costed or removed quote."""
    if best_cost is None:
        return True
    undercut = any(
        row["gpu_id"] and row["meets_constraints"] and row["effective_unit_cost"] is not None
        and row["effective_unit_cost"] <= best_cost
        for row in rows
    )  # fmt: skip
    return undercut or any(best_gpu in pair for pair in changed_gpus)
