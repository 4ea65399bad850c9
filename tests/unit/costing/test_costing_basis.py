"""The costing split into a quote-independent basis (``gpu_cost_basis``) and a per-quote step
(``cost_gpu_quote``) gives exactly what the costing gave before the split, for any brief,
capacity, finance assumptions and quotes, also when one basis costs many quotes in turn (its
memo by pricing term and operating model must not carry one quote's figures to the next).

The reference is the costing as it was before the split (commit ad3a378), kept verbatim but for
the energy model issue 16 added (each candidate's energy, and a bought GPU's electricity at its
modelled average draw) and what issue 23 added: provisioned capacity billed for every active hour
on pay-per-use terms, spot missing a brief that does not tolerate interruptions, and the serving
stack, queue and review figures as finance assumptions."""

from __future__ import annotations

from dataclasses import replace
from decimal import ROUND_CEILING, Decimal, localcontext

from hypothesis import given, settings
from hypothesis import strategies as st

from apps.engine.costing import (
    SPOT_NOT_TOLERATED,
    Basis,
    CandidateCost,
    CapacityFigures,
    CostKind,
    Demand,
    FinanceAssumptions,
    OperatingBoundary,
    OperatingModel,
    PricingTerm,
    QuoteTerms,
    WorkloadType,
    cost_gpu_candidate,
    cost_gpu_quote,
    gpu_cost_basis,
)
from apps.engine.costing_constants import (
    HOURS_PER_MONTH,
    MINUTES_PER_HOUR,
    OUTPUT_QUANTUM,
    RATE_QUANTUM,
)
from apps.engine.costing_labour import platform_labour_hours
from apps.engine.costing_rates import (
    COSTING_CONTEXT,
    commitment_months,
    egress_gb,
    gpu_hourly_rate,
    money,
    share_text,
    significant,
)
from apps.engine.costing_types import COMMITTED_TERMS, LINES_BY_KIND, ONE, ZERO, cost_kind
from apps.engine.costing_work import accepted_share, gpu_workload
from apps.engine.energy import EnergyFigures, candidate_energy
from tests.unit.costing.test_costing_properties import capacities, demands, finances, quotes

# --- the reference: apps/engine/costing.py before the split ----------------------------------


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
    energy: EnergyFigures | None = None,
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
        energy=energy,
    )


def _cost_gpu(
    demand: Demand, capacity: CapacityFigures, quote: QuoteTerms, finance: FinanceAssumptions
) -> CandidateCost:
    retry_rate = finance.retry_rate
    work = gpu_workload(demand, capacity, retry_rate=retry_rate)
    kind = cost_kind(demand.workload_type)
    notes = list(work.notes)
    why_not = list(work.why_not)
    term = quote.pricing_term
    rate_notes_at = len(notes)  # the rate's notes go here once the rate is known (below)

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
    elif capacity.provisioned:
        # Issue 23: replicas kept up through the active hours are billed for all of them.
        up = work.unit_gpus * demand.hours_per_month
        units = (work_hours / up).to_integral_value(ROUND_CEILING)
        gpus = max(gpus, int(units) * work.unit_gpus)
        paid = gpus * demand.hours_per_month
        idle_hours = paid - work_hours
        utilization = work_hours / paid if paid else ONE
        notes.append(
            f"{term}: {gpus} GPUs kept up through the {demand.hours_per_month} active h, "
            f"{paid} GPU-h billed; the work uses {work_hours:.2f}"
        )
    else:
        paid, idle_hours, utilization = work_hours, ZERO, ONE
        notes.append(f"{term}: billed for the {work_hours:.2f} GPU-h the work runs")
    # Energy (added with issue 16): the GPU's modelled draw over the paid hours; a bought GPU's
    # electricity is that average, not its nameplate kW all month.
    energy = None
    if quote.gpu_tdp_w is not None:
        energy = candidate_energy(
            tdp_w=quote.gpu_tdp_w,
            busy_gpu_hours=work_hours,
            paid_gpu_hours=paid,
            batch=capacity.batch_per_replica,
            pue=finance.pue if quote.pue is None else quote.pue,
            accepted_outputs=(
                work.volumes.generated
                * accepted_share(failure_rate=failure, acceptance_rate=acceptance)
            ).quantize(OUTPUT_QUANTUM),
            compute_bound=kind in (CostKind.TRAINING, CostKind.MEDIA),
            carbon_kg_per_kwh=finance.carbon_kg_per_kwh,
        )
    average_kw = energy.average_kw_per_gpu if energy is not None and quote.is_bought else None
    rate, rate_notes = gpu_hourly_rate(quote, finance, average_kw)
    notes[rate_notes_at:rate_notes_at] = rate_notes

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
        raw["serving_stack"] = gpu_bill * finance.serving_stack_share
        notes.append(f"serving stack: {share_text(finance.serving_stack_share)} of the GPU bill")
    if kind is CostKind.MEDIA:
        raw["queue_overhead"] = gpu_bill * finance.queue_overhead_share
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
            * finance.review_rate_per_hour
        )
        notes.append(
            f"media: queue {share_text(finance.queue_overhead_share)} of the GPU bill; review "
            f"{share_text(finance.operator_review_share)} of renders x {review_minutes} min at "
            f"{finance.review_rate_per_hour} an hour"
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

    if term is PricingTerm.SPOT and not demand.tolerates_interruptions:
        why_not.append(SPOT_NOT_TOLERATED)
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
        energy=energy,
    )


def reference(demand, capacity, quote, finance) -> CandidateCost:
    with localcontext(COSTING_CONTEXT):
        return _cost_gpu(demand, capacity, quote, finance)


# --- the checks -------------------------------------------------------------------------------

boundaries = st.one_of(st.none(), st.sampled_from(list(OperatingBoundary)))
models = st.sampled_from(list(OperatingModel))


def varied(demand: Demand, boundary, horizon, clip) -> Demand:
    return replace(demand, operating_boundary=boundary, horizon_months=horizon, clip_seconds=clip)


class TestBasisGivesTheCostingAsBefore:
    @settings(max_examples=300, deadline=None)
    @given(
        demand=demands,
        boundary=boundaries,
        horizon=st.one_of(st.none(), st.integers(1, 60)),
        clip=st.one_of(st.none(), st.decimals("1", "20", places=1)),
        capacity=capacities,
        measured=st.one_of(st.none(), st.decimals("0", "0.5", places=3)),
        fin=finances,
        quote_list=st.lists(st.tuples(quotes, models), min_size=1, max_size=6),
        tolerant=st.booleans(),
        provisioned=st.booleans(),
    )
    def test_one_basis_for_many_quotes_equals_the_reference_for_each(
        self,
        demand,
        boundary,
        horizon,
        clip,
        capacity,
        measured,
        fin,
        quote_list,
        tolerant,
        provisioned,
    ):
        demand = varied(demand, boundary, horizon, clip)
        demand = replace(demand, tolerates_interruptions=tolerant)
        capacity = replace(capacity, measured_failed_share=measured, provisioned=provisioned)
        basis = gpu_cost_basis(demand=demand, capacity=capacity, finance=fin)
        for quote, model in quote_list:
            quote = replace(quote, operating_model=model)
            expected = reference(demand, capacity, quote, fin)
            got = cost_gpu_quote(basis, quote)
            assert got == expected
            assert list(got.cost_lines) == list(expected.cost_lines)
            # Same figures, same digits (a Decimal's exponent shows in the stored text).
            assert [str(v) for v in got.cost_lines.values()] == [
                str(v) for v in expected.cost_lines.values()
            ]
            assert str(got.monthly_cost) == str(expected.monthly_cost)
            assert str(got.effective_unit_cost) == str(expected.effective_unit_cost)
            assert str(got.paid_gpu_hours_per_month) == str(expected.paid_gpu_hours_per_month)
            assert (
                cost_gpu_candidate(demand=demand, capacity=capacity, quote=quote, finance=fin)
                == expected
            )

    @settings(max_examples=100, deadline=None)
    @given(demand=demands, capacity=capacities, quote=quotes)
    def test_shared_labour_is_costed_as_before(self, demand, capacity, quote):
        from apps.engine.costing import LabourAllocation
        from tests.unit.costing.builders import finance

        fin = finance(
            labour_allocation=LabourAllocation.SHARED_BY_GPU_HOURS,
            platform_labour_pool_hours=Decimal(160),
            self_managed_gpu_hours_per_month=Decimal(5000),
        )
        basis = gpu_cost_basis(demand=demand, capacity=capacity, finance=fin)
        assert cost_gpu_quote(basis, quote) == reference(demand, capacity, quote, fin)
