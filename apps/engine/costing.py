"""Costing: a candidate's monthly cost lines and its effective unit cost per accepted output.

The rule (docs/design.md, "The engine"): effective unit cost = all-in monthly workload cost /
accepted outputs per month, where accepted = generated x (1 - failure_rate) x acceptance_rate.

GPU compute. Pay-per-use terms (ON_DEMAND, SPOT, MARKETPLACE) bill the GPU-hours the work needs;
spot bills them at price x (1 + SPOT_INTERRUPTION_OVERHEAD) for work lost to reclaims. Committed
terms (RESERVED_1Y/3Y, DEDICATED_CLUSTER, OWNED) bill GPUs x 730 h whatever the load: the busy part
is `gpu_compute` (and its waste lines), the rest `idle_capacity`. GPUs committed = the deployment's
GPUs, or more (whole replicas / runs) when the month's work needs more than they give in 730 h.
OWNED with `capex_per_gpu`: (capex / depreciation months + kW x PUE x 730 h x electricity + kW x
hosting per kW-month + hands-on hours x labour rate) per GPU-month, over 730 h
(`costing_rates.owned_gpu_month`); without it, the quote's hourly figure. Owned hardware is not
the public cloud: a bought quote misses a PUBLIC_CLOUD brief.

Retries: retry_waste = work x retry_rate / (1 - retry_rate) (a request retried until it succeeds
costs 1 / (1 - r) attempts). Shares of the GPU bill (every GPU line): observability (finance),
serving_stack (real-time), queue_overhead (media). Media: failed_renders is the failure_rate
share of the render compute, which produced nothing (so not counted twice: gpu_compute holds the
rest). Platform labour = hours x labour rate, the hours as finance allocates them (per
deployment, or the organisation's pool shared by GPU-hours: `costing_labour`); an owned GPU's
datacentre hours are in its GPU-month. Which lines each kind gets: `LINES_BY_KIND`.

Lines are quantized to 4 dp (half-even); monthly_cost is their exact sum; the unit cost is
rounded to 10 significant digits. Arithmetic runs in its own 28-digit decimal context, so the
caller's context does not change results.
"""

from __future__ import annotations

from decimal import (
    ROUND_CEILING,
    Decimal,
    localcontext,
)

from apps.engine.costing_constants import (
    HOURS_PER_MONTH,
    MINUTES_PER_HOUR,
    OUTPUT_QUANTUM,
    QUEUE_OVERHEAD_SHARE,
    RATE_QUANTUM,
    SERVING_STACK_SHARE,
    TOKENS_PER_MTOK,
)
from apps.engine.costing_labour import platform_labour_hours
from apps.engine.costing_rates import (
    COSTING_CONTEXT,
    commitment_months,
    egress_gb,
    gpu_hourly_rate,
    money,
    owned_gpu_month,
    significant,
)
from apps.engine.costing_types import (
    BATCHABLE_WORKLOADS,
    COMMITTED_TERMS,
    LINES_BY_KIND,
    ONE,
    ZERO,
    ApiRouteTerms,
    Basis,
    CandidateCost,
    CapacityFigures,
    CostKind,
    Demand,
    FinanceAssumptions,
    LabourAllocation,
    OperatingBoundary,
    OperatingModel,
    PricingTerm,
    QuoteTerms,
    SuccessUnit,
    cost_kind,
)
from apps.engine.costing_work import accepted_share, demand_volumes, gpu_workload
from apps.engine.types import DutyCycle, WorkloadType

__all__ = [
    "LINES_BY_KIND",
    "ApiRouteTerms",
    "Basis",
    "CandidateCost",
    "CapacityFigures",
    "CostKind",
    "Demand",
    "DutyCycle",
    "FinanceAssumptions",
    "LabourAllocation",
    "OperatingBoundary",
    "OperatingModel",
    "PricingTerm",
    "QuoteTerms",
    "SuccessUnit",
    "WorkloadType",
    "commitment_months",
    "cost_api_candidate",
    "cost_gpu_candidate",
    "gpu_hourly_rate",
    "owned_gpu_month",
]


def _finish(
    *,
    raw: dict[str, Decimal],
    kind: CostKind,
    generated: Decimal,
    accepted: Decimal,
    demand: Demand,
    why_not: list[str],
    notes: list[str],
    utilization: Decimal,
    finance: FinanceAssumptions,
    basis: Basis,
    term: PricingTerm | None,
    gpus: int,
    busy: Decimal,
    paid: Decimal,
) -> CandidateCost:
    lines = {key: money(raw.get(key, ZERO)) for key in LINES_BY_KIND[kind]}
    monthly = sum(lines.values(), ZERO)
    accepted_q = accepted.quantize(OUTPUT_QUANTUM)
    unit_cost = significant(monthly / accepted_q) if accepted_q > ZERO else None
    if unit_cost is None:
        notes.append("no accepted outputs: no unit cost")
    return CandidateCost(
        cost_lines=lines,
        monthly_cost=monthly,
        generated_outputs_per_month=generated.quantize(OUTPUT_QUANTUM),
        accepted_outputs_per_month=accepted_q,
        effective_unit_cost=unit_cost,
        success_unit=demand.success_unit,
        meets_constraints=not why_not,
        why_not=tuple(why_not),
        notes=tuple(notes),
        utilization=utilization.quantize(RATE_QUANTUM),
        currency=finance.reporting_currency,
        basis=basis,
        pricing_term=term,
        gpus_paid=gpus,
        busy_gpu_hours_per_month=busy.quantize(OUTPUT_QUANTUM),
        paid_gpu_hours_per_month=paid.quantize(OUTPUT_QUANTUM),
    )


def cost_gpu_candidate(
    *,
    demand: Demand,
    capacity: CapacityFigures,
    quote: QuoteTerms,
    finance: FinanceAssumptions,
) -> CandidateCost:
    """Cost one GPU candidate (provider quote x GPU x count) for a brief. See the module doc."""
    with localcontext(COSTING_CONTEXT):
        return _cost_gpu(demand, capacity, quote, finance)


def _cost_gpu(
    demand: Demand, capacity: CapacityFigures, quote: QuoteTerms, finance: FinanceAssumptions
) -> CandidateCost:
    retry_rate = finance.retry_rate
    work = gpu_workload(demand, capacity, retry_rate=retry_rate)
    kind = cost_kind(demand.workload_type)
    notes = list(work.notes)
    why_not = list(work.why_not)
    term = quote.pricing_term
    rate, rate_notes = gpu_hourly_rate(quote, finance)
    notes.extend(rate_notes)

    failure = finance.failure_rate
    if capacity.measured_failed_share is not None:
        failure = capacity.measured_failed_share
        notes.append(f"failure rate: measured {failure} (benchmark) replaces the assumption")
    acceptance = demand.acceptance_rate
    if acceptance is None:
        acceptance = finance.acceptance_rate
    retry = ZERO if kind is CostKind.TRAINING else retry_rate

    busy = work.busy_gpu_hours
    if kind is CostKind.REALTIME:
        # Provisioned replicas absorb retries: the retried share r of the attempts is carved
        # out of the serving hours (first-attempt hours x r / (1 - r) = serving hours x r).
        retry_hours = busy * retry
        busy -= retry_hours
    else:
        retry_hours = busy * retry / (ONE - retry)
    work_hours = busy + retry_hours + work.checkpoint_gpu_hours + work.failed_run_gpu_hours
    gpus = work.min_gpus
    if term in COMMITTED_TERMS:
        capacity_hours = work.unit_gpus * HOURS_PER_MONTH
        units = (work_hours / capacity_hours).to_integral_value(ROUND_CEILING)
        gpus = max(gpus, int(units) * work.unit_gpus)
        if gpus > work.min_gpus:
            notes.append(
                f"committed capacity raised to {gpus} GPUs to carry {work_hours:.2f} GPU-h"
            )
        paid = gpus * HOURS_PER_MONTH
        idle_hours = paid - work_hours
        utilization = work_hours / paid if paid else ZERO
        notes.append(
            f"idle capacity: {term} pays {paid} GPU-h/month ({gpus} GPUs x 730 h), "
            f"the workload uses {work_hours:.2f} ({demand.hours_per_month} active h a month)"
        )
    else:
        paid, idle_hours, utilization = work_hours, ZERO, ONE
        notes.append(f"{term}: billed for the {work_hours:.2f} GPU-h the work runs")

    raw: dict[str, Decimal] = {
        "gpu_compute": busy * rate,
        "retry_waste": retry_hours * rate,
        "checkpointing": work.checkpoint_gpu_hours * rate,
        "failed_run_waste": work.failed_run_gpu_hours * rate,
        "idle_capacity": idle_hours * rate,
    }
    volumes = work.volumes
    successes = volumes.items * (ONE - failure)
    if kind is CostKind.MEDIA:
        raw["failed_renders"] = busy * failure * rate
        raw["gpu_compute"] = busy * (ONE - failure) * rate
    gpu_bill = sum(raw.values(), ZERO)
    if kind is CostKind.REALTIME:
        raw["serving_stack"] = gpu_bill * SERVING_STACK_SHARE
        notes.append(f"serving stack: {SERVING_STACK_SHARE} of the GPU bill")
    if kind is CostKind.MEDIA:
        raw["queue_overhead"] = gpu_bill * QUEUE_OVERHEAD_SHARE
        if demand.workload_type is WorkloadType.VIDEO_GENERATION:
            clip_minutes = demand.clip_seconds_or_default / MINUTES_PER_HOUR
            raw["moderation"] = successes * clip_minutes * finance.moderation_cost_per_video_minute
            review_minutes = finance.operator_review_minutes_per_clip
            notes.append(f"moderation: {clip_minutes:.4f} min a clip")
        else:
            raw["moderation"] = successes * finance.moderation_cost_per_image
            review_minutes = finance.operator_review_minutes_per_image
        raw["operator_review"] = (
            successes
            * finance.operator_review_share
            * review_minutes
            / MINUTES_PER_HOUR
            * finance.labour_rate_per_hour
        )
        notes.append(
            f"media: queue {QUEUE_OVERHEAD_SHARE} of the GPU bill; review "
            f"{finance.operator_review_share} of renders x {review_minutes} min"
        )
    storage_tb = demand.storage_tb
    if storage_tb is None:
        storage_tb = finance.storage_tb_default
        notes.append(f"storage: default {storage_tb} TB")
    raw["storage"] = storage_tb * quote.storage_price_per_tb_month
    egress = egress_gb(demand, volumes, kind)
    raw["network_egress"] = egress * quote.egress_price_per_gb + quote.network_monthly
    raw["provider_extras"] = quote.monthly_extras
    raw["observability"] = gpu_bill * finance.observability_share
    hours, labour_note = platform_labour_hours(
        finance=finance,
        operating_model=quote.operating_model,
        paid_gpu_hours=paid,
    )
    raw["platform_labour"] = hours * finance.labour_rate_per_hour
    notes.append(labour_note)

    if (
        demand.operating_boundary is OperatingBoundary.MANAGED_API
        and quote.operating_model is OperatingModel.SELF_MANAGED
    ):
        why_not.append("brief asks for a managed API; this candidate is self-managed GPUs")
    if quote.is_bought and demand.operating_boundary is OperatingBoundary.PUBLIC_CLOUD:
        why_not.append("brief runs in the public cloud; this candidate is bought hardware")
    months = commitment_months(quote, finance)
    if demand.horizon_months is not None and months > demand.horizon_months:
        why_not.append(
            f"minimum commitment {months} months exceeds the {demand.horizon_months}-month horizon"
        )
    if term is PricingTerm.SPOT and kind is CostKind.REALTIME:
        notes.append("spot: capacity can be reclaimed; real-time serving needs a fallback")

    generated = volumes.generated
    return _finish(
        raw=raw,
        kind=kind,
        generated=generated,
        accepted=generated * accepted_share(failure_rate=failure, acceptance_rate=acceptance),
        demand=demand,
        why_not=why_not,
        notes=notes,
        utilization=utilization,
        finance=finance,
        basis=capacity.basis,
        term=term,
        gpus=gpus,
        busy=work_hours,
        paid=paid,
    )


def cost_api_candidate(
    *, demand: Demand, route: ApiRouteTerms, finance: FinanceAssumptions
) -> CandidateCost:
    """Cost a model/API route for a brief.

    api_input_tokens / api_output_tokens = tokens / 1e6 x price per Mtok, less the batch discount
    for BATCH_INFERENCE / EMBEDDINGS / EVALUATION; retry_waste = tokens cost x r / (1 - r);
    observability = share x token bill; platform labour = API hours x rate. No idle capacity.
    Training and media briefs cannot be priced per token: a why-not, no outputs.
    """
    with localcontext(COSTING_CONTEXT):
        return _cost_api(demand, route, finance)


def _cost_api(demand: Demand, route: ApiRouteTerms, finance: FinanceAssumptions) -> CandidateCost:
    kind = cost_kind(demand.workload_type)
    volumes = demand_volumes(demand, None)
    notes = list(volumes.notes)
    why_not = list(volumes.why_not)
    generated = volumes.generated
    if kind in (CostKind.TRAINING, CostKind.MEDIA):
        why_not = [f"an API route priced per token cannot serve {demand.workload_type}"]
        generated = ZERO
    discount = ZERO
    if demand.workload_type in BATCHABLE_WORKLOADS and route.batch_discount:
        discount = route.batch_discount
        notes.append(f"API batch discount {discount}")
    keep = ONE - discount
    retry = finance.retry_rate
    raw: dict[str, Decimal] = {}
    if kind not in (CostKind.TRAINING, CostKind.MEDIA):
        raw["api_input_tokens"] = (
            volumes.input_tokens / TOKENS_PER_MTOK * route.input_price_per_mtok * keep
        )
        raw["api_output_tokens"] = (
            volumes.output_tokens / TOKENS_PER_MTOK * route.output_price_per_mtok * keep
        )
    tokens_bill = sum(raw.values(), ZERO)
    raw["retry_waste"] = tokens_bill * retry / (ONE - retry)
    raw["observability"] = (tokens_bill + raw["retry_waste"]) * finance.observability_share
    hours, labour_note = platform_labour_hours(
        finance=finance, operating_model=OperatingModel.API, paid_gpu_hours=ZERO
    )
    raw["platform_labour"] = hours * finance.labour_rate_per_hour
    notes.append(labour_note)
    if route.rate_limit_rpm is not None and volumes.requests is not None:
        needed = volumes.requests / (ONE - retry) / (demand.hours_per_month * MINUTES_PER_HOUR)
        notes.append(f"API load: {needed:.1f} requests a minute on average over active hours")
        if route.rate_limit_rpm < needed:
            why_not.append(
                f"API rate limit {route.rate_limit_rpm} rpm below demand {needed:.1f} rpm"
            )
    acceptance = demand.acceptance_rate
    if acceptance is None:
        acceptance = finance.acceptance_rate
    share = accepted_share(failure_rate=finance.failure_rate, acceptance_rate=acceptance)
    return _finish(
        raw=raw,
        kind=CostKind.API,
        generated=generated,
        accepted=generated * share,
        demand=demand,
        why_not=why_not,
        notes=notes,
        utilization=ONE,
        finance=finance,
        basis=Basis.ESTIMATED,
        term=None,
        gpus=0,
        busy=ZERO,
        paid=ZERO,
    )
