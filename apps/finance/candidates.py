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
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from apps.benchmarks.selectors import calibration_for_brief, throughput_runs_for_brief
from apps.briefs.contract import demand_for_brief, request_for_brief
from apps.briefs.models import WorkloadBrief
from apps.catalog.selectors import engine_estimates
from apps.engine import ENGINE_VERSION, EngineInputError
from apps.engine.costing import (
    ApiRouteTerms,
    CandidateCost,
    FinanceAssumptions,
    PricingTerm,
    QuoteTerms,
    cost_api_candidate,
    cost_gpu_candidate,
)
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


@dataclass
class BuiltTable:
    """What a recompute writes. ``replace_all``: drop every old row first; otherwise drop the
    rows of ``stale_quote_ids`` / ``stale_route_ids`` only."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    table_fields: dict[str, Any] = field(default_factory=dict)
    replace_all: bool = True
    stale_quote_ids: list[int] = field(default_factory=list)
    stale_route_ids: list[int] = field(default_factory=list)
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
    return ApiRoute.objects.filter(retired=False, model_preset=brief.model_preset)


def _basis_notes(estimate: dict[str, Any]) -> list[str]:
    if estimate.get("benchmark_run_id"):
        return [f"MEASURED: figures from benchmark run #{estimate['benchmark_run_id']}"]
    runs = estimate.get("calibrated_from_runs")
    if runs:
        named = ", ".join(f"#{pk}" for pk in estimate.get("calibrated_from_run_ids") or [])
        return [f"CALIBRATED from benchmark run{'s' if runs != 1 else ''} {named}".rstrip()]
    return []


def _row(
    cost: CandidateCost, notes: list[str], why_not: Iterable[str] = (), **extra: Any
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
        **extra,
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
    return replace(capacity, **changes) if changes else capacity


def quote_configuration(
    ctx: TableContext, facts: dict[str, Any]
) -> tuple[dict[str, Any], str | None, int, Any] | None:
    """The configuration a quote is costed at (its rung of the GPU's ladder), why it misses the
    brief if it does, the most GPUs per replica the quote offers, and the costing's capacity
    figures at that rung; None when the engine did not answer the quote's GPU."""
    _, slug, _ = quote_gpu(facts)
    estimate = ctx.by_gpu.get(slug)
    if estimate is None:
        return None
    limit = quote_limit(facts)
    ladder = estimate.get(LADDER_KEY) or [estimate]
    rung, missed = choose_configuration(ladder, limit, latency_target_text(ctx.brief))
    if rung["gpu_count"] == estimate["gpu_count"]:
        rung = estimate  # the per-GPU answer, with its notes (the fit table's configuration)
    return rung, missed, limit, _configured_capacity(ctx, rung, meets=missed is None)


def gpu_row(ctx: TableContext, facts: dict[str, Any]) -> dict[str, Any] | None:
    gpu_id = quote_gpu(facts)[0]
    configured = quote_configuration(ctx, facts)
    if configured is None:
        return None
    estimate, missed, limit, capacity = configured
    cost = cost_gpu_candidate(
        demand=ctx.demand,
        capacity=capacity,
        quote=quote_terms(facts, ctx.values),
        finance=ctx.finance,
    )
    notes = _basis_notes(estimate)
    replicas = (estimate.get("capacity") or {}).get("replicas") or 1
    notes.append(
        f"configuration: {replicas} replica{'s' if replicas != 1 else ''} x "
        f"{estimate['gpu_count']} GPU{'s' if estimate['gpu_count'] != 1 else ''} "
        f"(the quote offers up to {limit} per replica)"
    )
    e2e = estimate["performance"].get("e2e_latency_s")
    return _row(
        cost,
        notes,
        [missed] if missed else [],
        candidate_kind="GPU",
        quote_id=facts["pk"],
        api_route_id=None,
        gpu_id=gpu_id,
        gpu_count=estimate["gpu_count"],
        replicas=replicas,
        pricing_term=facts["pricing_term"],
        basis=estimate.get("basis", "ESTIMATED"),
        p95_latency_ms=None if e2e is None else Decimal(str(round(e2e * 1000, 2))),
        memory_headroom_gb=Decimal(str(estimate["memory"]["headroom_gb"])),
    )


def route_row(ctx: TableContext, facts: dict[str, Any]) -> dict[str, Any]:
    cost = cost_api_candidate(
        demand=ctx.demand, route=route_terms(facts, ctx.values), finance=ctx.finance
    )
    return _row(
        cost,
        [],
        candidate_kind="API_ROUTE",
        quote_id=None,
        api_route_id=facts["pk"],
        gpu_id=None,
        gpu_count=None,
        replicas=None,
        pricing_term="",
        basis="ESTIMATED",
        p95_latency_ms=None,
        memory_headroom_gb=None,
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
    )


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
        if row is not None:
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
    quote_versions = dict(quotes_for_team(brief.team_id).values_list("pk", "version"))
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
        quotes = quotes_for_team(brief.team_id).values(*QUOTE_FACTS)
        routes = live_routes(brief).values(*ROUTE_FACTS)
        stale_quotes, stale_routes = [], []
    rows, not_costed = _cost_all(ctx, quotes, routes)
    fields: dict[str, Any] = {
        **base_fields,
        "currency": ctx.values["reporting_currency"],
        "no_ranking_reason": "",
        "inputs": {
            "fingerprint": ctx.fingerprint,
            "brief_version": brief.inputs_version,
            "quotes": {str(pk): v for pk, v in quote_versions.items()},
            "api_routes": {str(pk): v for pk, v in route_versions.items()},
            "assumptions": ctx.assumptions_version,
            "assumption_sources": ctx.sources,
            "not_costed": not_costed,
        },
    }
    if not incremental:  # the engine's answer is unchanged on the incremental path
        fields.update(estimates_key=ctx.estimates_key, estimates=ctx.estimates)
    return BuiltTable(
        rows=rows,
        replace_all=not incremental,
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
    if best_cost is None:
        return True
    undercut = any(
        row["gpu_id"] and row["meets_constraints"] and row["effective_unit_cost"] is not None
        and row["effective_unit_cost"] <= best_cost
        for row in rows
    )  # fmt: skip
    changed_gpus = Quote.objects.filter(pk__in=stale_quote_ids).values_list(
        "gpu__slug", "system__gpu__slug"
    )
    return undercut or any(best in pair for pair in changed_gpus)
