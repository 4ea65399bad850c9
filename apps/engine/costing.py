"""Costing: a candidate's monthly cost lines and its effective unit cost per accepted output.

The rule (docs/design.md, "The engine"): effective unit cost = all-in monthly workload cost /
accepted outputs per month, where accepted = generated x (1 - failure_rate) x acceptance_rate.

GPU compute. Pay-per-use terms (ON_DEMAND, SPOT, MARKETPLACE) bill the GPU-hours the work needs,
or, for capacity kept up through the brief's active hours (`CapacityFigures.provisioned`: a
service with a latency target), every active hour of whole replicas (the rest of them is
`idle_capacity`); spot bills at price x (1 + SPOT_INTERRUPTION_OVERHEAD) for work lost to
reclaims, and misses a brief that does not tolerate interruptions. Committed
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

from dataclasses import dataclass, field
from decimal import (
    ROUND_CEILING,
    Decimal,
    localcontext,
)

from apps.engine.costing_constants import (
    HOURS_PER_MONTH,
    MINUTES_PER_HOUR,
    MONEY_QUANTUM,
    OUTPUT_QUANTUM,
    RATE_QUANTUM,
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
    share_text,
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
from apps.engine.costing_work import (
    GpuWorkload,
    accepted_share,
    demand_volumes,
    gpu_workload,
)
from apps.engine.energy import EnergyFigures, candidate_energy
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
    "GpuCostBasis",
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
    "cost_gpu_quote",
    "gpu_cost_basis",
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
    return cost_gpu_quote(gpu_cost_basis(demand=demand, capacity=capacity, finance=finance), quote)


@dataclass(frozen=True, kw_only=True, slots=True)
class GpuCostBasis:
    """Everything of a GPU candidate's cost that does not depend on its quote: the work, its
    volumes and the lines and notes the brief, the capacity and the finance assumptions alone
    decide. A table costs every quote of one GPU configuration against one basis
    (``gpu_cost_basis`` once, ``cost_gpu_quote`` per quote): the same result as
    ``cost_gpu_candidate`` for each, without working the quote-independent part out again."""

    demand: Demand
    capacity: CapacityFigures
    finance: FinanceAssumptions
    kind: CostKind
    work: GpuWorkload
    lead_notes: tuple[str, ...]  # before the quote's rate notes
    rate_notes_after: tuple[str, ...]  # after them (the measured failure rate)
    tail_notes: tuple[str, ...]  # after the billing note (serving stack, media, storage)
    busy: Decimal  # first-attempt GPU-hours (the real-time retry share carved out)
    retry_hours: Decimal
    work_hours: Decimal
    work_hours_text: str  # f"{work_hours:.2f}"
    busy_ok: Decimal  # media: the renders that succeed, busy x (1 - failure)
    busy_failed: Decimal  # media: busy x failure
    media_lines: tuple[tuple[str, Decimal], ...]  # moderation, operator review
    storage_tb: Decimal
    egress_gb: Decimal
    # Committed terms: the GPUs held, their paid GPU-hours, idle hours and utilization, and
    # the note when the work raised the GPUs.
    committed_gpus: int
    committed_paid: Decimal
    committed_idle: Decimal
    committed_raised_note: str | None
    # Quantized as a CandidateCost holds them: outputs, the work's GPU-hours, and the paid
    # GPU-hours and utilization of a committed term.
    generated_q: Decimal
    accepted_q: Decimal
    work_hours_q: Decimal
    committed_paid_q: Decimal
    committed_utilization_q: Decimal
    # Pay-per-use terms: the GPUs billed, their paid GPU-hours (the work's, or every active
    # hour of provisioned replicas), the idle part, and the same quantized.
    payg_gpus: int
    payg_paid: Decimal
    payg_idle: Decimal
    payg_paid_q: Decimal
    payg_utilization_q: Decimal
    # By (pricing term, operating model), as met: the platform labour hours and the notes of
    # a quote of that term and model around its rate notes (``_term_notes``).
    by_term: dict[tuple[PricingTerm, OperatingModel], tuple[Decimal, tuple[str, ...]]] = field(
        default_factory=dict, compare=False, repr=False
    )
    # By (committed or not, TDP, PUE), as met: the energy of a quote of that kind (``_energy``).
    energy_by: dict[tuple[bool, Decimal, Decimal], EnergyFigures] = field(
        default_factory=dict, compare=False, repr=False
    )


def gpu_cost_basis(
    *, demand: Demand, capacity: CapacityFigures, finance: FinanceAssumptions
) -> GpuCostBasis:
    """The quote-independent part of a GPU candidate's cost (``GpuCostBasis``)."""
    with localcontext(COSTING_CONTEXT):
        return _gpu_basis(demand, capacity, finance)


def _gpu_basis(
    demand: Demand, capacity: CapacityFigures, finance: FinanceAssumptions
) -> GpuCostBasis:
    retry_rate = finance.retry_rate
    work = gpu_workload(demand, capacity, retry_rate=retry_rate)
    kind = cost_kind(demand.workload_type)
    after_rate: list[str] = []
    failure = finance.failure_rate
    if capacity.measured_failed_share is not None:
        failure = capacity.measured_failed_share
        after_rate.append(f"failure rate: measured {failure} (benchmark) replaces the assumption")
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
    capacity_hours = work.unit_gpus * HOURS_PER_MONTH
    units = (work_hours / capacity_hours).to_integral_value(ROUND_CEILING)
    gpus = max(work.min_gpus, int(units) * work.unit_gpus)
    raised = (
        f"committed capacity raised to {gpus} GPUs to carry {work_hours:.2f} GPU-h"
        if gpus > work.min_gpus
        else None
    )
    paid = gpus * HOURS_PER_MONTH
    # Pay-per-use: capacity kept up through the active hours (a service) is billed for all of
    # them, whole replicas; other work for the GPU-hours it runs.
    payg_gpus, payg_paid = work.min_gpus, work_hours
    if capacity.provisioned:
        up = work.unit_gpus * demand.hours_per_month
        needed = int((work_hours / up).to_integral_value(ROUND_CEILING)) * work.unit_gpus
        payg_gpus = max(work.min_gpus, needed)
        payg_paid = payg_gpus * demand.hours_per_month

    tail: list[str] = []
    volumes = work.volumes
    successes = volumes.items * (ONE - failure)
    media: list[tuple[str, Decimal]] = []
    if kind is CostKind.REALTIME:
        tail.append(f"serving stack: {share_text(finance.serving_stack_share)} of the GPU bill")
    if kind is CostKind.MEDIA:
        if demand.workload_type is WorkloadType.VIDEO_GENERATION:
            clip_minutes = demand.clip_seconds_or_default / MINUTES_PER_HOUR
            media.append(
                ("moderation", successes * clip_minutes * finance.moderation_cost_per_video_minute)
            )
            review_minutes = finance.operator_review_minutes_per_clip
            tail.append(f"moderation: {clip_minutes:.4f} min a clip")
        else:
            media.append(("moderation", successes * finance.moderation_cost_per_image))
            review_minutes = finance.operator_review_minutes_per_image
        media.append(
            (
                "operator_review",
                successes
                * finance.operator_review_share
                * review_minutes
                / MINUTES_PER_HOUR
                * finance.review_rate_per_hour,
            )
        )
        tail.append(
            f"media: queue {share_text(finance.queue_overhead_share)} of the GPU bill; review "
            f"{share_text(finance.operator_review_share)} of renders x {review_minutes} min at "
            f"{finance.review_rate_per_hour} an hour"
        )
    storage_tb = demand.storage_tb
    if storage_tb is None:
        storage_tb = finance.storage_tb_default
        tail.append(f"storage: default {storage_tb} TB")
    generated = volumes.generated
    return GpuCostBasis(
        demand=demand,
        capacity=capacity,
        finance=finance,
        kind=kind,
        work=work,
        lead_notes=work.notes,
        rate_notes_after=tuple(after_rate),
        tail_notes=tuple(tail),
        busy=busy,
        retry_hours=retry_hours,
        work_hours=work_hours,
        work_hours_text=f"{work_hours:.2f}",
        busy_ok=busy * (ONE - failure),
        busy_failed=busy * failure,
        media_lines=tuple(media),
        storage_tb=storage_tb,
        egress_gb=egress_gb(demand, volumes, kind),
        committed_gpus=gpus,
        committed_paid=paid,
        committed_idle=paid - work_hours,
        committed_raised_note=raised,
        generated_q=generated.quantize(OUTPUT_QUANTUM),
        accepted_q=(
            generated * accepted_share(failure_rate=failure, acceptance_rate=acceptance)
        ).quantize(OUTPUT_QUANTUM),
        work_hours_q=work_hours.quantize(OUTPUT_QUANTUM),
        committed_paid_q=paid.quantize(OUTPUT_QUANTUM),
        committed_utilization_q=(work_hours / paid if paid else ZERO).quantize(RATE_QUANTUM),
        payg_gpus=payg_gpus,
        payg_paid=payg_paid,
        payg_idle=payg_paid - work_hours,
        payg_paid_q=payg_paid.quantize(OUTPUT_QUANTUM),
        payg_utilization_q=(work_hours / payg_paid if payg_paid else ONE).quantize(RATE_QUANTUM),
    )


def cost_gpu_quote(basis: GpuCostBasis, quote: QuoteTerms) -> CandidateCost:
    """Cost one quote against a ``GpuCostBasis`` (``cost_gpu_candidate`` in two steps)."""
    with localcontext(COSTING_CONTEXT):
        return _cost_quote(basis, quote)


# Why a spot quote misses a brief whose work cannot be interrupted (a real-time or always-on
# service): the provider may take the capacity back at any time.
SPOT_NOT_TOLERATED = (
    "spot capacity can be reclaimed at any time, and the brief's work does not tolerate "
    "interruptions"
)
_NO_UNIT_COST = "no accepted outputs: no unit cost"


def _term_notes(
    basis: GpuCostBasis, term: PricingTerm, operating_model: OperatingModel
) -> tuple[Decimal, tuple[str, ...]]:
    """(platform labour hours, the notes after the rate notes) of a quote of ``term`` run
    ``operating_model``: the same for every such quote of the basis, worked out once."""
    found = basis.by_term.get((term, operating_model))
    if found is not None:
        return found
    notes = list(basis.rate_notes_after)
    if term in COMMITTED_TERMS:
        paid = basis.committed_paid
        if basis.committed_raised_note is not None:
            notes.append(basis.committed_raised_note)
        notes.append(
            f"idle capacity: {term} pays {paid} GPU-h/month ({basis.committed_gpus} GPUs x "
            f"730 h), the workload uses {basis.work_hours_text} "
            f"({basis.demand.hours_per_month} active h a month)"
        )
    elif basis.capacity.provisioned:
        paid = basis.payg_paid
        notes.append(
            f"{term}: {basis.payg_gpus} GPUs kept up through the {basis.demand.hours_per_month} "
            f"active h, {paid} GPU-h billed; the work uses {basis.work_hours_text}"
        )
    else:
        paid = basis.work_hours
        notes.append(f"{term}: billed for the {basis.work_hours_text} GPU-h the work runs")
    notes.extend(basis.tail_notes)
    hours, labour_note = platform_labour_hours(
        finance=basis.finance, operating_model=operating_model, paid_gpu_hours=paid
    )
    notes.append(labour_note)
    found = basis.by_term[(term, operating_model)] = (hours, tuple(notes))
    return found


# Work that keeps the GPU's compute busy whatever its batch draws the saturated share.
_COMPUTE_BOUND = frozenset({CostKind.TRAINING, CostKind.MEDIA})


def _energy(basis: GpuCostBasis, quote: QuoteTerms) -> EnergyFigures | None:
    """The month's energy of a quote of the basis (None without the GPU's TDP): the same for
    every quote of one kind of term, TDP and PUE, worked out once."""
    if quote.gpu_tdp_w is None:
        return None
    committed = quote.pricing_term in COMMITTED_TERMS
    pue = basis.finance.pue if quote.pue is None else quote.pue
    key = (committed, quote.gpu_tdp_w, pue)
    found = basis.energy_by.get(key)
    if found is None:
        found = basis.energy_by[key] = candidate_energy(
            tdp_w=quote.gpu_tdp_w,
            busy_gpu_hours=basis.work_hours,
            paid_gpu_hours=basis.committed_paid if committed else basis.payg_paid,
            batch=basis.capacity.batch_per_replica,
            pue=pue,
            accepted_outputs=basis.accepted_q,
            compute_bound=basis.kind in _COMPUTE_BOUND,
            carbon_kg_per_kwh=basis.finance.carbon_kg_per_kwh,
        )
    return found


def _cost_quote(basis: GpuCostBasis, quote: QuoteTerms) -> CandidateCost:
    demand, finance, kind, work = basis.demand, basis.finance, basis.kind, basis.work
    term = quote.pricing_term
    operating_model = quote.operating_model
    energy = _energy(basis, quote)
    # A bought GPU's electricity is its modelled average draw (GPU + host share), not its
    # nameplate kW all month.
    average_kw = energy.average_kw_per_gpu if energy is not None and quote.is_bought else None
    rate, rate_notes = gpu_hourly_rate(quote, finance, average_kw)
    hours, term_notes = _term_notes(basis, term, operating_model)
    notes = (*basis.lead_notes, *rate_notes, *term_notes) if rate_notes else None
    if term in COMMITTED_TERMS:
        gpus = basis.committed_gpus
        paid_q = basis.committed_paid_q
        idle_hours = basis.committed_idle
        utilization_q = basis.committed_utilization_q
    else:
        gpus = basis.payg_gpus
        paid_q = basis.payg_paid_q
        idle_hours = basis.payg_idle
        utilization_q = basis.payg_utilization_q

    raw: dict[str, Decimal] = {
        "gpu_compute": basis.busy * rate,
        "retry_waste": basis.retry_hours * rate,
        "checkpointing": work.checkpoint_gpu_hours * rate,
        "failed_run_waste": work.failed_run_gpu_hours * rate,
        "idle_capacity": idle_hours * rate,
    }
    if kind is CostKind.MEDIA:
        raw["failed_renders"] = basis.busy_failed * rate
        raw["gpu_compute"] = basis.busy_ok * rate
    gpu_bill = sum(raw.values(), ZERO)
    if kind is CostKind.REALTIME:
        raw["serving_stack"] = gpu_bill * finance.serving_stack_share
    elif kind is CostKind.MEDIA:
        raw["queue_overhead"] = gpu_bill * finance.queue_overhead_share
        raw.update(basis.media_lines)
    raw["storage"] = basis.storage_tb * quote.storage_price_per_tb_month
    raw["network_egress"] = basis.egress_gb * quote.egress_price_per_gb + quote.network_monthly
    raw["provider_extras"] = quote.monthly_extras
    raw["observability"] = gpu_bill * finance.observability_share
    raw["platform_labour"] = hours * finance.labour_rate_per_hour

    why_not = work.why_not
    if term is PricingTerm.SPOT and not demand.tolerates_interruptions:
        why_not += (SPOT_NOT_TOLERATED,)
    boundary = demand.operating_boundary
    if boundary is OperatingBoundary.MANAGED_API and operating_model is OperatingModel.SELF_MANAGED:
        why_not += ("brief asks for a managed API; this candidate is self-managed GPUs",)
    if quote.is_bought and boundary is OperatingBoundary.PUBLIC_CLOUD:
        why_not += ("brief runs in the public cloud; this candidate is bought hardware",)
    if demand.horizon_months is not None:
        months = commitment_months(quote, finance)
        if months > demand.horizon_months:
            why_not += (
                f"minimum commitment {months} months exceeds the {demand.horizon_months}-month "
                "horizon",
            )

    # _finish, for a basis: its outputs and GPU-hours are quantized once.
    quantum = MONEY_QUANTUM
    get = raw.get
    lines = {key: get(key, ZERO).quantize(quantum) for key in LINES_BY_KIND[kind]}
    monthly = sum(lines.values(), ZERO)
    accepted_q = basis.accepted_q
    unit_cost = significant(monthly / accepted_q) if accepted_q > ZERO else None
    if notes is None:
        notes = basis.lead_notes + term_notes
    if unit_cost is None:
        notes += (_NO_UNIT_COST,)
    return CandidateCost(
        cost_lines=lines,
        monthly_cost=monthly,
        generated_outputs_per_month=basis.generated_q,
        accepted_outputs_per_month=accepted_q,
        effective_unit_cost=unit_cost,
        success_unit=demand.success_unit,
        meets_constraints=not why_not,
        why_not=why_not,
        notes=notes,
        utilization=utilization_q,
        currency=finance.reporting_currency,
        basis=basis.capacity.basis,
        pricing_term=term,
        gpus_paid=gpus,
        busy_gpu_hours_per_month=basis.work_hours_q,
        paid_gpu_hours_per_month=paid_q,
        energy=energy,
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
