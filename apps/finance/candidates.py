"""Build a brief's candidate table: engine estimates x quotes and API routes → costed rows.

Reads the database (brief, quotes, routes, assumptions) and maps rows to the engine's pure
costing dataclasses; the arithmetic is all in apps.engine.costing.
"""

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from apps.benchmarks.models import BenchmarkRun
from apps.benchmarks.selectors import calibration_by_gpu, throughput_runs_for_brief
from apps.briefs.contract import estimate_body_for_brief
from apps.briefs.models import WorkloadBrief
from apps.catalog.selectors import estimates_for_body, gpu_specs
from apps.engine import ENGINE_VERSION, EngineInputError
from apps.engine.capacity_model import compare_capacity_models, unit_cost_vs_utilization
from apps.engine.costing import (
    ApiRouteTerms,
    Basis,
    CandidateCost,
    CapacityFigures,
    Demand,
    OperatingBoundary,
    PricingTerm,
    QuoteTerms,
    SuccessUnit,
    cost_api_candidate,
    cost_gpu_candidate,
    rank_candidates,
)
from apps.engine.types import DutyCycle, WorkloadType
from apps.quotes.models import ApiRoute, Quote
from apps.quotes.selectors import api_route_list, quotes_for_team

from .assumptions import assumptions_version, engine_finance, resolved_assumptions
from .models import CandidateTable

SECONDS_PER_HOUR = Decimal(3600)


@dataclass
class BuiltTable:
    rows: list[dict[str, Any]] = field(default_factory=list)
    table_fields: dict[str, Any] = field(default_factory=dict)


def _d(value: Any) -> Decimal | None:
    return None if value is None else Decimal(str(value))


def estimates_key(body: dict[str, Any], calibration: dict[str, Any]) -> str:
    """What the engine's answer depends on: the brief's shape, the catalog, the calibration
    learnt from benchmark runs and the engine version. Prices are not in it."""
    catalog = [(s.slug, s.memory_gb, s.bf16_tflops, s.memory_bandwidth_tbps) for s in gpu_specs()]
    blob = json.dumps([body, catalog, calibration, ENGINE_VERSION], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def _percentile(figure: Any, *names: str) -> float | None:
    if not isinstance(figure, dict):
        return None
    for name in names:
        value = figure.get(name)
        if isinstance(value, int | float) and value > 0:
            return float(value)
    return None


def measured_estimate(
    estimate: dict[str, Any], run: BenchmarkRun, brief: WorkloadBrief
) -> dict[str, Any]:
    """The engine's answer for a candidate with a THROUGHPUT_LATENCY run's figures in place
    of the estimated ones (memory fit and replicas stay the engine's)."""
    results = run.results
    measured = {**estimate, "performance": {**estimate["performance"]}, "basis": "MEASURED"}
    perf = measured["performance"]
    throughput = results.get("output_tokens_per_s")
    if isinstance(throughput, int | float) and throughput > 0:
        perf["output_tokens_per_s"] = float(throughput)
    ttft = _percentile(results.get("ttft_ms"), "p95", "p99", "p90", "mean", "p50")
    tpot = _percentile(results.get("tpot_ms"), "p95", "p99", "p90", "mean", "p50")
    e2e = _percentile(results.get("e2e_latency_ms"), "p95", "p99", "p90", "mean", "p50")
    if ttft is not None:
        perf["ttft_ms"] = ttft
    if tpot is not None:
        perf["itl_ms"] = tpot
    if e2e is not None:
        perf["e2e_latency_s"] = e2e / 1000
    checks = []
    if brief.ttft_target_ms and ttft is not None:
        checks.append(ttft <= brief.ttft_target_ms)
    if brief.itl_target_ms and tpot is not None:
        checks.append(tpot <= brief.itl_target_ms)
    if brief.e2e_target_ms and e2e is not None:
        checks.append(e2e <= brief.e2e_target_ms)
    if checks:
        measured["meets_latency_target"] = all(checks)
    completed, failed = results.get("completed") or 0, results.get("failed") or 0
    if completed + failed > 0:
        measured["measured_failed_share"] = failed / (completed + failed)
    measured["notes"] = [
        *estimate["notes"],
        f"MEASURED: benchmark run #{run.pk} ({run.get_tool_display()}"
        f"{' ' + run.tool_version if run.tool_version else ''}) replaces the estimate",
    ]
    measured["benchmark_run_id"] = run.pk
    return measured


def _requests_per_month(brief: WorkloadBrief, estimates: list[dict[str, Any]]) -> Decimal | None:
    """The same monthly demand for every candidate: the brief's request rate, or its
    concurrency over the typical end-to-end latency (Little's law)."""
    hours = Decimal(brief.hours_per_month or 0)
    if brief.requests_per_second:
        return brief.requests_per_second * SECONDS_PER_HOUR * hours
    if brief.workload_type != WorkloadType.REALTIME_INFERENCE or not brief.concurrency:
        return None
    latencies = sorted(
        e["performance"]["e2e_latency_s"]
        for e in estimates
        if e["fits"] and e["performance"].get("e2e_latency_s")
    )
    if not latencies:
        return None
    median = Decimal(str(latencies[len(latencies) // 2]))
    return Decimal(brief.concurrency) / median * SECONDS_PER_HOUR * hours


def demand_for_brief(brief: WorkloadBrief, estimates: list[dict[str, Any]]) -> Demand:
    def mean(p50: int | None, p95: int | None) -> Decimal:
        return Decimal(p50 or p95 or 0)

    training = brief.is_training
    return Demand(
        workload_type=WorkloadType(brief.workload_type),
        success_unit=SuccessUnit(brief.success_unit),
        hours_per_month=Decimal(brief.hours_per_month or 0),
        duty_cycle=DutyCycle(brief.duty_cycle),
        input_tokens_mean=mean(brief.input_tokens_p50, brief.input_tokens_p95),
        output_tokens_mean=mean(brief.output_tokens_p50, brief.output_tokens_p95),
        requests_per_month=_requests_per_month(brief, estimates),
        records_per_job=_d(brief.records_per_job),
        training_tokens=_d(brief.training_tokens) if training else None,
        checkpoint_interval_minutes=_d(brief.checkpoint_interval_minutes),
        acceptance_rate=brief.acceptance_rate,
        operating_boundary=OperatingBoundary(brief.operating_boundary),
        clip_seconds=brief.clip_seconds,
    )


def _with_measurements(
    body: dict[str, Any],
    estimates: list[dict[str, Any]],
    runs: dict[tuple[str, int], BenchmarkRun],
    brief: WorkloadBrief,
    calibration: dict[str, Any],
) -> list[dict[str, Any]]:
    """Replace the estimate of every GPU that has a current THROUGHPUT_LATENCY run (at the
    run's GPU count, which may differ from the engine's pick)."""
    by_gpu = {e["gpu"]: e for e in estimates}
    for (slug, count), run in sorted(runs.items(), key=lambda item: item[1].pk):
        base = by_gpu.get(slug)
        if base is None:
            continue
        if base["gpu_count"] != count:
            forced = {**body, "gpus": [slug], "gpu_count": count}
            base = estimates_for_body(forced, calibration=calibration)[0]
        by_gpu[slug] = measured_estimate(base, run, brief)
    return [by_gpu[e["gpu"]] for e in estimates]


def capacity_from_estimate(estimate: dict[str, Any]) -> CapacityFigures:
    perf = estimate["performance"]
    capacity = estimate.get("capacity") or {}
    training = estimate.get("training") or {}
    gpu_count = estimate["gpu_count"]
    replicas = capacity.get("replicas") or 1
    e2e = perf.get("e2e_latency_s")
    items = perf.get("images_per_hour") or perf.get("clips_per_hour")
    return CapacityFigures(
        gpu_count=gpu_count,
        replicas=replicas,
        gpu_hours_per_month=_d(capacity.get("gpu_hours_per_month")) or Decimal(0),
        fits=estimate["fits"],
        output_tokens_per_s_per_replica=_d(perf.get("output_tokens_per_s")),
        p95_latency_ms=_d(e2e * 1000) if e2e is not None else None,
        meets_latency_target=estimate.get("meets_latency_target"),
        memory_headroom_gb=_d(estimate["memory"]["headroom_gb"]),
        basis=Basis(estimate.get("basis", "ESTIMATED")),
        time_to_train_hours=_d(training.get("time_to_train_hours")),
        checkpoint_write_s=_d(training.get("checkpoint_write_s")),
        gpus_total=gpu_count * replicas if training else None,
        items_per_hour_per_replica=_d(items),
        records_per_s_per_replica=_d(perf.get("records_per_s")),
        measured_failed_share=_d(estimate.get("measured_failed_share")),
    )


class FxMissing(Exception):
    pass


def _fx(amount: Decimal, currency: str, values: dict[str, Any]) -> Decimal:
    reporting = values["reporting_currency"]
    if currency == reporting:
        return amount
    rate = values["fx_rates"].get(currency)
    if rate is None:
        raise FxMissing(f"no FX rate {currency}→{reporting} in the finance assumptions")
    return amount * Decimal(str(rate))


def quote_terms(quote: Quote, values: dict[str, Any]) -> QuoteTerms:
    def fx(amount: Decimal) -> Decimal:
        return _fx(amount, quote.currency, values)

    gpu = quote.gpu or quote.system.gpu  # type: ignore[union-attr]
    return QuoteTerms(
        pricing_term=PricingTerm(quote.pricing_term),
        hourly_price_per_gpu=fx(quote.hourly_price_per_gpu),
        storage_price_per_tb_month=fx(quote.storage_price_per_tb_month),
        egress_price_per_gb=fx(quote.egress_price_per_gb),
        network_monthly=fx(quote.network_monthly),
        monthly_extras=fx(quote.monthly_extras),
        minimum_commitment_months=quote.minimum_commitment_months,
        gpu_tdp_w=Decimal(gpu.tdp_w),
    )


def route_terms(route: ApiRoute, values: dict[str, Any]) -> ApiRouteTerms:
    return ApiRouteTerms(
        input_price_per_mtok=_fx(route.input_price_per_mtok, route.currency, values),
        output_price_per_mtok=_fx(route.output_price_per_mtok, route.currency, values),
        batch_discount=route.batch_discount,
        rate_limit_rpm=route.rate_limit_rpm,
    )


def _basis_notes(estimate: dict[str, Any]) -> list[str]:
    if estimate.get("benchmark_run_id"):
        return [f"MEASURED: figures from benchmark run #{estimate['benchmark_run_id']}"]
    runs = estimate.get("calibrated_from_runs")
    if runs:
        return [f"ESTIMATED (calibrated from {runs} run{'s' if runs != 1 else ''})"]
    return []


def _row(cost: CandidateCost, *, basis_notes: Sequence[str] = (), **extra: Any) -> dict[str, Any]:
    return {
        "cost_lines": {name: str(value) for name, value in cost.cost_lines.items()},
        "monthly_cost": cost.monthly_cost,
        "accepted_outputs_per_month": cost.accepted_outputs_per_month,
        "effective_unit_cost": cost.effective_unit_cost,
        "meets_constraints": cost.meets_constraints,
        "why_not": list(cost.why_not),
        "notes": [*basis_notes, *cost.notes],
        **extra,
    }


def candidate_table_build(*, brief: WorkloadBrief, table: CandidateTable) -> BuiltTable:
    values, sources = resolved_assumptions(brief)
    built = BuiltTable()
    built.table_fields = {
        "currency": values["reporting_currency"],
        "success_unit": brief.success_unit,
        "engine_version": ENGINE_VERSION,
        "no_ranking_reason": "",
        "capacity_model": {},
    }
    missing = brief.missing_fields()
    if missing:
        built.table_fields["no_ranking_reason"] = "still missing: " + ", ".join(missing)
        return built
    body = estimate_body_for_brief(brief)
    calibration = calibration_by_gpu()
    runs = throughput_runs_for_brief(brief)
    key = estimates_key(
        body, {"calibration": calibration, "runs": sorted(r.pk for r in runs.values())}
    )
    if table.estimates_key == key and table.estimates:
        estimates = table.estimates  # only prices changed: the engine's answer still holds
    else:
        try:
            estimates = estimates_for_body(body, calibration=calibration)
            estimates = _with_measurements(body, estimates, runs, brief, calibration)
        except EngineInputError as exc:
            built.table_fields["no_ranking_reason"] = f"{exc.field}: {exc.message}"
            return built
    by_gpu = {e["gpu"]: e for e in estimates}
    finance = engine_finance(values)
    demand = demand_for_brief(brief, estimates)
    candidates: list[tuple[CandidateCost, dict[str, Any]]] = []
    skipped: list[str] = []
    quotes = list(quotes_for_team(brief.team_id))
    for quote in quotes:
        gpu = quote.gpu or quote.system.gpu  # type: ignore[union-attr]
        estimate = by_gpu.get(gpu.slug)
        if estimate is None:
            continue
        try:
            terms = quote_terms(quote, values)
        except FxMissing as exc:
            skipped.append(f"quote #{quote.pk}: {exc}")
            continue
        cost = cost_gpu_candidate(
            demand=demand, capacity=capacity_from_estimate(estimate), quote=terms, finance=finance
        )
        candidates.append(
            (
                cost,
                {
                    "candidate_kind": "GPU",
                    "quote": quote,
                    "gpu": gpu,
                    "gpu_count": estimate["gpu_count"],
                    "replicas": (estimate.get("capacity") or {}).get("replicas") or 1,
                    "pricing_term": quote.pricing_term,
                    "basis": estimate.get("basis", "ESTIMATED"),
                    "p95_latency_ms": _d(
                        round(estimate["performance"]["e2e_latency_s"] * 1000, 2)
                        if estimate["performance"].get("e2e_latency_s") is not None
                        else None
                    ),
                    "memory_headroom_gb": _d(estimate["memory"]["headroom_gb"]),
                    "basis_notes": _basis_notes(estimate),
                },
            )
        )
    routes = [
        r for r in api_route_list() if brief.model_preset and r.model_preset == brief.model_preset
    ]
    for route in routes:
        try:
            terms = route_terms(route, values)
        except FxMissing as exc:
            skipped.append(f"API route #{route.pk}: {exc}")
            continue
        cost = cost_api_candidate(demand=demand, route=terms, finance=finance)
        candidates.append(
            (cost, {"candidate_kind": "API_ROUTE", "api_route": route, "basis": "ESTIMATED"})
        )
    ranked = rank_candidates([cost for cost, _ in candidates])
    extras = {id(cost): extra for cost, extra in candidates}
    seen_ranks: set[int] = set()
    for rank, cost in ranked:
        if rank is not None:
            while rank in seen_ranks:  # ties share a place; the table stores distinct ranks
                rank += 1
            seen_ranks.add(rank)
        built.rows.append(_row(cost, rank=rank, **extras[id(cost)]))
    built.table_fields["estimates_key"] = key
    built.table_fields["estimates"] = estimates
    built.table_fields["inputs"] = {
        "brief_version": brief.inputs_version,
        "quotes": {str(q.pk): q.version for q in quotes},
        "api_routes": {str(r.pk): r.version for r in routes},
        "assumptions": assumptions_version(brief),
        "assumption_sources": sources,
        "skipped": skipped,
    }
    built.table_fields["capacity_model"] = capacity_model_for(
        demand=demand, by_gpu=by_gpu, quotes=quotes, routes=routes, values=values, finance=finance,
        ranked_rows=built.rows,
    )  # fmt: skip
    return built


def _cheapest(quotes: list[Quote], term: str, values: dict[str, Any]) -> Decimal | None:
    prices = []
    for quote in quotes:
        if quote.pricing_term == term:
            try:
                prices.append(quote_terms(quote, values).hourly_price_per_gpu)
            except FxMissing:
                continue
    return min(prices) if prices else None


def capacity_model_for(
    *,
    demand: Demand,
    by_gpu: dict[str, dict[str, Any]],
    quotes: list[Quote],
    routes: list[ApiRoute],
    values: dict[str, Any],
    finance: Any,
    ranked_rows: list[dict[str, Any]],
) -> dict[str, Any]:
    """Rent / reserve / buy / API for the GPU of the best-ranked GPU row, as plain JSON."""
    best = next(
        (r for r in sorted(ranked_rows, key=lambda r: r["rank"] or 10**9) if r.get("gpu")), None
    )
    if best is None or best["rank"] is None:
        return {}
    gpu = best["gpu"]
    same_gpu = [q for q in quotes if (q.gpu or q.system.gpu).pk == gpu.pk]  # type: ignore[union-attr]
    on_demand = _cheapest(same_gpu, "ON_DEMAND", values) or _cheapest(
        same_gpu, "MARKETPLACE", values
    )
    if on_demand is None:
        return {"gpu": gpu.slug, "note": "no on-demand quote for this GPU to compare against"}
    kwargs: dict[str, Any] = {
        "demand": demand,
        "capacity": capacity_from_estimate(by_gpu[gpu.slug]),
        "on_demand_hourly": on_demand,
        "finance": finance,
        "spot_hourly": _cheapest(same_gpu, "SPOT", values),
        "reserved_1y_hourly": _cheapest(same_gpu, "RESERVED_1Y", values),
        "reserved_3y_hourly": _cheapest(same_gpu, "RESERVED_3Y", values),
        "gpu_tdp_w": Decimal(gpu.tdp_w),
        "api_route": route_terms(routes[0], values) if routes else None,
    }
    comparison = compare_capacity_models(**kwargs)
    curve = unit_cost_vs_utilization(**kwargs)

    def s(value: Decimal | None) -> str | None:
        return None if value is None else str(value)

    return {
        "gpu": gpu.slug,
        "utilization": s(comparison.utilization),
        "recommended": comparison.recommended.value if comparison.recommended else None,
        "rationale": list(comparison.rationale),
        "options": [
            {
                "option": o.option.value,
                "hourly_rate_per_gpu": s(o.hourly_rate_per_gpu),
                "monthly_cost": s(o.cost.monthly_cost),
                "effective_unit_cost": s(o.cost.effective_unit_cost),
                "meets_constraints": o.cost.meets_constraints,
            }
            for o in comparison.options
        ],
        "break_evens": [
            {
                "cheaper_below": b.cheaper_below.value,
                "cheaper_above": b.cheaper_above.value,
                "utilization": s(b.utilization),
                "explanation": b.explanation,
            }
            for b in comparison.break_evens
        ],
        "curve": [
            {
                "utilization": s(p.utilization),
                "rent_on_demand": s(p.rent_on_demand),
                "rent_spot": s(p.rent_spot),
                "reserve_1y": s(p.reserve_1y),
                "reserve_3y": s(p.reserve_3y),
                "buy": s(p.buy),
                "api": s(p.api),
            }
            for p in curve
        ],
    }
