"""The configuration a GPU candidate is costed at, and the figures the engine gives at it.

The engine answers each GPU at every size one replica could be (its ladder: 1, 2, 4, 8 GPUs per
replica, and 16, 32, 72 within a rack-scale NVLink domain; ``apps.finance.estimates``). For a
quote offering up to ``limit`` GPUs per replica (a node, or a system's NVLink domain) the
configuration is:

- GPUs per replica: the smallest rung within the limit that fits in memory and meets the latency
  target *per replica*, once the load is spread over as many replicas as it needs (fewest GPUs
  in all, then a full fit before a tight one, then fewer GPUs per replica);
- replicas: for LLM serving, as many as the engine's capacity plan needs at the target (raised to
  carry retried requests of a rate-given brief), then each replica's share of the load asked of
  the engine again, and raised while that share misses a target; for batch, embeddings and
  media, as many as finish the month's work within the brief's active hours; for training, as
  many data-parallel copies of the layout as finish the run within its deadline
  (``training.deadline_days``, else ``DEFAULT_DEADLINE_DAYS``), up to ``MAX_TRAINING_GPUS``.

The row's figures (``apps.finance.state.Figures``) are the engine's answer at that configuration
with that share of the load, and its verdict is taken on them: every target met by the figures
shown, or a reason naming the target that binds. A candidate with no such configuration is
costed at the one closest to it and says why, never as if it ran for nothing.

``Configurator`` owns the memo of one table's computation (the same for every quote of one GPU
and limit); the brief page's fit table shows each GPU at its own node limit, the configuration
a quote offering a full node is costed at.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal

from apps.benchmarks.selectors import calibration_for_brief, throughput_runs_for_brief
from apps.briefs.contract import demand_for_brief, request_for_brief
from apps.briefs.models import WorkloadBrief
from apps.catalog.selectors import engine_estimates, gpu_specs
from apps.engine import Estimate, EstimateRequest, GpuSpec, estimate_to_dict
from apps.engine.costing import (
    Basis,
    CapacityFigures,
    CostKind,
    Demand,
    FinanceAssumptions,
    GpuCostBasis,
    gpu_cost_basis,
)
from apps.engine.costing_types import cost_kind
from apps.engine.deployment import choose_rung, in_flight_share, spread, whole_replicas
from apps.engine.measured import apply_measurement
from apps.engine.types import Fit, WorkloadType

from .assumptions import resolved_assumptions
from .estimates import Calibration, answer_key, e2e_latencies_s, engine_answer, latency_targets
from .state import EngineAnswer, Figures, GpuAnswer, shown

# Training to a deadline (issue 23): a brief that gives none is held to these, never to "the
# fewest GPUs" (which would take a pre-training run years). Product defaults, each a planning
# horizon teams commonly budget: a month of GPU-hours for pre-training (the costing's own period;
# Meta's Llama 3 405B run took 54 days on 16k GPUs, "The Llama 3 Herd of Models", 2024, so a
# month is a deliberate, stated target), a week for a full fine-tune, two days for an adapter.
DEFAULT_DEADLINE_DAYS = {
    WorkloadType.TRAINING: 30,
    WorkloadType.FULL_FINETUNE: 7,
    WorkloadType.LORA_FINETUNE: 2,
    WorkloadType.QLORA_FINETUNE: 2,
}
# The largest training run one provider quote is taken to supply without a capacity agreement of
# its own: Lambda's 1-Click Clusters start "from 16 to over 1,500 GPUs" (Lambda, B200 cluster
# tour, 2025); 1,536 is 192 nodes of 8. A run that needs more fails naming the deadline.
MAX_TRAINING_GPUS = 1536
# Data-parallel copies of a training layout are added in steps of an eighth while the run misses
# its deadline (the engine's training throughput need not scale exactly with the GPUs).
MAX_DEADLINE_STEPS = 8


def latency_target_text(brief: WorkloadBrief) -> str:
    """The brief's latency target in words, e.g. "TTFT <= 200 ms, ITL <= 50 ms"."""
    parts = [
        f"{name} <= {value} ms"
        for name, value in (
            ("TTFT", brief.ttft_target_ms),
            ("ITL", brief.itl_target_ms),
            ("end-to-end", brief.e2e_target_ms),
        )
        if value
    ]
    return ", ".join(parts)


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def quote_limit(gpus_per_node: int | None, gpus_per_domain: int | None) -> int:
    """GPUs per replica a quote offers: a system's NVLink domain, or the quote's node size."""
    if gpus_per_domain:
        return int(gpus_per_domain)
    return int(gpus_per_node or 1)


# --- figures and the verdict taken on them -------------------------------------------------------


def figures_of(estimate: Estimate, *, replicas: int, in_flight: int | None) -> Figures:
    """What a row shows of the engine's answer at its configuration (energy is the quote's,
    added by the costing): latencies and throughput as shown (``state.shown``), throughput for
    all ``replicas`` together."""
    perf = estimate.performance
    training = estimate.training
    throughput: float | None
    unit = ""
    if training is not None:
        throughput, unit = training.tokens_per_s_total, "training tokens/s"
    elif perf.images_per_hour is not None:
        throughput, unit = perf.images_per_hour * replicas, "images/h"
    elif perf.clips_per_hour is not None:
        throughput, unit = perf.clips_per_hour * replicas, "clips/h"
    elif perf.records_per_s is not None:
        throughput, unit = perf.records_per_s * replicas, "records/s"
    elif perf.output_tokens_per_s is not None:
        throughput, unit = perf.output_tokens_per_s * replicas, "output tokens/s"
    else:
        throughput = None
    hours = training.time_to_train_hours if training is not None else None
    e2e = perf.e2e_latency_s
    return Figures(
        fit=estimate.fit.value,
        ttft_p95_ms=shown(perf.ttft_ms),
        itl_p95_ms=shown(perf.itl_ms),
        latency_p95_ms=shown(e2e * 1000 if e2e is not None else None),
        throughput=shown(throughput),
        throughput_unit=unit if throughput is not None else "",
        memory_headroom_gb=shown(estimate.memory.headroom_gb),
        in_flight_per_replica=in_flight,
        time_to_train_days=shown(hours / 24 if hours is not None else None),
    )


# The verdict of figures that do not fit (said once: when no size fits, the size's own reason
# already says so).
MEMORY_MISS = "does not fit in memory on a replica at its share of the load"


def target_misses(
    brief: WorkloadBrief, figures: Figures, deadline_days: int | None = None
) -> list[str]:
    """Each target the figures miss, in words naming it: the verdict a row takes on what it
    shows (an empty list: every target met)."""
    misses = []
    if figures.fit == Fit.NO.value:
        misses.append(MEMORY_MISS)
    load = (
        f" at {figures.in_flight_per_replica} in flight per replica"
        if figures.in_flight_per_replica
        else ""
    )
    for name, figure, target in (
        ("TTFT", figures.ttft_p95_ms, brief.ttft_target_ms),
        ("ITL", figures.itl_p95_ms, brief.itl_target_ms),
        ("end-to-end", figures.latency_p95_ms, brief.e2e_target_ms),
    ):
        if target and figure is not None and figure > target:
            misses.append(f"misses the {name} target: {figure} ms{load} > {target} ms")
    days = figures.time_to_train_days
    if deadline_days is not None and days is not None and days > deadline_days:
        misses.append(f"misses the {deadline_days}-day deadline: {days} days to train")
    return misses


# --- one table's configurations ------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class Configured:
    """A GPU at one quote's limit, as the table costs every such quote: the engine's answer at
    the configuration (``estimate``), its figures, the capacity figures the costing takes, the
    quote-independent part of the cost (``basis``), why it misses the brief (empty: it meets
    every target) and the notes the row carries."""

    gpu: str
    gpus_per_replica: int
    replicas: int
    layout: str
    estimate: Estimate
    figures: Figures
    capacity: CapacityFigures
    basis: GpuCostBasis
    why_not: tuple[str, ...]
    notes: tuple[str, ...]

    @property
    def gpus(self) -> int:
        return self.gpus_per_replica * self.replicas


def capacity_figures(
    *,
    estimate: Estimate,
    gpus_per_replica: int,
    replicas: int,
    hours_per_month: Decimal,
    fits: bool = True,
    meets_latency_target: bool | None = None,
    provisioned: bool = True,
    batch: int | None = None,
    tokens_per_s_per_replica: Decimal | None = None,
    gpus_total: int | None = None,
    measured_failed_share: float | None = None,
) -> CapacityFigures:
    """The costing's capacity figures of a configuration: the one way rows, serving-plan parts
    and the rent / reserve / buy comparison build them."""
    perf = estimate.performance
    training = estimate.training
    items = perf.images_per_hour or perf.clips_per_hour
    e2e = perf.e2e_latency_s
    tokens = tokens_per_s_per_replica
    if tokens is None and perf.output_tokens_per_s is not None:
        tokens = Decimal(repr(perf.output_tokens_per_s))
    return CapacityFigures(
        gpu_count=gpus_total if gpus_total is not None else gpus_per_replica,
        replicas=1 if gpus_total is not None else replicas,
        gpu_hours_per_month=Decimal(gpus_per_replica * replicas) * hours_per_month
        if training is None
        else Decimal(repr(estimate.capacity.gpu_hours_per_month or 0))
        if estimate.capacity is not None
        else Decimal(0),
        fits=fits,
        output_tokens_per_s_per_replica=tokens,
        p95_latency_ms=Decimal(repr(e2e * 1000)) if e2e is not None else None,
        meets_latency_target=meets_latency_target,
        memory_headroom_gb=Decimal(repr(estimate.memory.headroom_gb)),
        basis=Basis(estimate.basis),
        time_to_train_hours=_d(training.time_to_train_hours) if training else None,
        checkpoint_write_s=_d(training.checkpoint_write_s) if training else None,
        gpus_total=gpus_total,
        items_per_hour_per_replica=_d(items),
        records_per_s_per_replica=_d(perf.records_per_s),
        measured_failed_share=_d(measured_failed_share),
        batch_per_replica=batch,
        provisioned=provisioned,
    )


def _d(value: float | None) -> Decimal | None:
    return None if value is None else Decimal(repr(value))


@dataclass
class Configurator:
    """Chooses and costs the configurations of one table (module doc), memoised per (GPU,
    limit); asks the engine only for a configuration's load it has not answered yet
    (``EngineAnswer.at_load``, kept with the table)."""

    brief: WorkloadBrief
    request: EstimateRequest
    answer: EngineAnswer
    demand: Demand
    finance: FinanceAssumptions
    calibration: Calibration | None
    # Reads the calibration when the engine must run on a context rebuilt from a stored table.
    calibration_loader: Callable[[], Calibration] | None = None
    specs: Sequence[GpuSpec] | None = None
    _memo: dict[tuple[str, int, int | None], Configured | None] = field(default_factory=dict)

    @property
    def kind(self) -> CostKind:
        return cost_kind(WorkloadType(self.brief.workload_type))

    @property
    def deadline_days(self) -> int | None:
        if self.kind is not CostKind.TRAINING:
            return None
        given = self.brief.deadline_days
        return given or DEFAULT_DEADLINE_DAYS[WorkloadType(self.brief.workload_type)]

    def calibration_now(self) -> Calibration:
        """The calibration, read now if the configurator was built without it."""
        if self.calibration is None:
            loader = self.calibration_loader
            self.calibration = loader() if loader is not None else {}
            self.calibration_loader = None
        return self.calibration

    def _engine(self, slug: str, gpu_count: int, in_flight: int | None) -> Estimate:
        """The engine's answer for ``slug`` at ``gpu_count`` GPUs a replica with ``in_flight``
        sequences on it (None: the brief's own load on one replica), memoised on the answer."""
        key = f"{slug}|{gpu_count}|{in_flight if in_flight is not None else ''}"
        found = self.answer.at_load.get(key)
        if found is None:
            request = replace(self.request, gpus=(slug,), gpu_count=gpu_count)
            if in_flight is not None:
                request = replace(request, concurrency=in_flight, requests_per_second=None)
            if self.specs is None:
                self.specs = gpu_specs()
            found = engine_estimates(request, calibration=self.calibration_now(), specs=self.specs)[
                0
            ]
            self.answer.at_load[key] = found
        return found

    def configure(self, slug: str, limit: int, instance: int | None = None) -> Configured | None:
        """The configuration of ``slug`` for a quote offering ``limit`` GPUs per replica (and
        renting whole instances of ``instance`` GPUs, if so: the replicas then fill the
        instances they need, ``whole_replicas``); None without an engine answer for the GPU."""
        key = (slug, limit, instance)
        if key not in self._memo:
            gpu = self.answer.for_gpu(slug)
            self._memo[key] = None if gpu is None else self._configure(gpu, limit, instance)
        return self._memo[key]

    def _configure(self, gpu: GpuAnswer, limit: int, instance: int | None) -> Configured:
        rung, missed = choose_rung(gpu.ladder, limit, latency_target_text(self.brief), instance)
        if self.kind is CostKind.TRAINING:
            found = self._training(gpu, rung, missed, instance)
        elif self.kind is CostKind.REALTIME:
            found = self._serving(gpu, rung, missed, instance)
        else:
            found = self._throughput_sized(gpu, rung, missed, instance)
        if instance is None:
            return found
        rented = max(1, math.ceil(found.gpus / instance))
        note = f"rents {rented} instance{_s(rented)} of {instance} GPUs, whole (the quote's size)"
        return replace(found, notes=(*found.notes, note))

    # --- LLM serving ---

    def _rate(self) -> float:
        """The brief's requests a second, retried ones included (served again)."""
        rps = self.brief.requests_per_second
        return float(rps) / (1 - float(self.finance.retry_rate)) if rps else 0.0

    def _serving(
        self, gpu: GpuAnswer, rung: Estimate, missed: str, instance: int | None
    ) -> Configured:
        count = rung.gpu_count
        measured = gpu.measured_count == count and gpu.measurement is not None
        deployed = spread(
            self.request,
            rung,
            lambda in_flight: self._at_load(gpu, count, in_flight, measured),
            rate=self._rate(),
            missed=bool(missed),
        )
        notes: list[str] = []
        if deployed.raised:
            notes.append(
                f"replicas raised to {deployed.raised} to serve retried requests too (retry "
                f"rate {self.finance.retry_rate})"
            )
        replicas, in_flight, estimate = deployed.replicas, deployed.in_flight, deployed.estimate
        filled = whole_replicas(replicas, count, instance)
        if filled != replicas:  # the instances' other GPUs are paid: they carry load too
            replicas = filled
            in_flight = in_flight_share(self.request, rung, replicas, self._rate())
            estimate = self._at_load(gpu, count, in_flight, measured)
            notes.append(f"replicas raised to {replicas} to fill the whole instances rented")
        figures = figures_of(estimate, replicas=replicas, in_flight=in_flight)
        misses = target_misses(self.brief, figures)
        plan = rung.capacity
        at_target = plan.requests_per_s_at_target if plan is not None else None
        tokens = None
        if self.brief.requests_per_second and at_target and not measured:
            # A rate-given brief: a replica completes what the engine's Little's-law figure at
            # the target says (the replicas were sized by it).
            tokens = (Decimal(repr(at_target)) * self.demand.output_tokens_mean).quantize(
                Decimal("0.1")
            )
        return self._finish(
            gpu, rung, estimate, figures, replicas, in_flight, missed, misses, notes,
            provisioned=True, tokens=tokens,
        )  # fmt: skip

    def _at_load(self, gpu: GpuAnswer, count: int, in_flight: int, measured: bool) -> Estimate:
        estimate = self._engine(gpu.gpu, count, in_flight)
        if measured and gpu.measurement is not None:
            estimate = apply_measurement(estimate, gpu.measurement, latency_targets(self.brief))
        return estimate

    # --- batch, embeddings and media: sized by the month's work ---

    def _throughput_sized(
        self, gpu: GpuAnswer, rung: Estimate, missed: str, instance: int | None
    ) -> Configured:
        count = rung.gpu_count
        provisioned = self.request.has_latency_target
        one = self._basis(rung, count, 1, provisioned)
        hours = self.demand.hours_per_month
        replicas = max(1, math.ceil(one.work_hours / (count * hours) - Decimal("1e-9")))
        replicas = whole_replicas(replicas, count, instance)
        figures = figures_of(rung, replicas=replicas, in_flight=None)
        misses = target_misses(self.brief, figures)
        notes = [
            f"{replicas} replica{_s(replicas)} of {count} GPU{_s(count)} to carry "
            f"{one.work_hours_text} GPU-h of work in the {hours} active h a month"
        ]
        return self._finish(
            gpu, rung, rung, figures, replicas, None, missed, misses, notes,
            provisioned=provisioned,
        )  # fmt: skip

    def _basis(
        self, estimate: Estimate, count: int, replicas: int, provisioned: bool
    ) -> GpuCostBasis:
        capacity = capacity_figures(
            estimate=estimate,
            gpus_per_replica=count,
            replicas=replicas,
            hours_per_month=self.demand.hours_per_month,
            provisioned=provisioned,
            batch=_batch(estimate),
        )
        return gpu_cost_basis(demand=self.demand, capacity=capacity, finance=self.finance)

    # --- training: to a deadline ---

    def _training(
        self, gpu: GpuAnswer, rung: Estimate, missed: str, instance: int | None
    ) -> Configured:
        layout = rung.gpu_count
        deadline = self.deadline_days
        assert deadline is not None  # noqa: S101 - training briefs have one
        hours = rung.training.time_to_train_hours if rung.training is not None else None
        notes: list[str] = []
        if not self.brief.deadline_days:
            notes.append(
                f"deadline: the default {deadline} days for this kind of training "
                "(set the brief's deadline to change it)"
            )
        copies = 1
        if hours is not None and not missed:
            copies = max(1, math.ceil(hours / (deadline * 24) - 1e-9))
        most = max(1, MAX_TRAINING_GPUS // layout)
        copies = min(copies, most)
        estimate = rung if copies == 1 else self._engine(gpu.gpu, layout * copies, None)
        for _ in range(MAX_DEADLINE_STEPS):
            days = figures_of(estimate, replicas=1, in_flight=None).time_to_train_days
            if days is None or days <= deadline or copies >= most or missed:
                break
            copies = min(most, copies + max(1, copies // 8))
            estimate = self._engine(gpu.gpu, layout * copies, None)
        filled = whole_replicas(copies, layout, instance)
        if filled != copies:  # the instances' other GPUs are paid: they train too
            copies = filled
            estimate = self._engine(gpu.gpu, layout * copies, None)
        figures = figures_of(estimate, replicas=1, in_flight=None)
        misses = target_misses(self.brief, figures, deadline)
        if misses and copies >= most and figures.time_to_train_days is not None:
            misses = [
                f"cannot finish within the {deadline}-day deadline at the most GPUs one quote "
                f"offers ({layout * most}): {figures.time_to_train_days} days"
            ]
        notes.append(
            f"training: {copies} data-parallel cop{'ies' if copies != 1 else 'y'} of "
            f"{layout} GPU{_s(layout)} ({layout * copies} in all) to finish within "
            f"{deadline} days"
        )
        return self._finish(
            gpu, rung, estimate, figures, copies, None, missed, misses, notes,
            provisioned=False, gpus_total=layout * copies,
        )  # fmt: skip

    # --- the rest ---

    def _finish(
        self,
        gpu: GpuAnswer,
        rung: Estimate,
        estimate: Estimate,
        figures: Figures,
        replicas: int,
        in_flight: int | None,
        missed: str,
        misses: list[str],
        notes: list[str],
        *,
        provisioned: bool,
        tokens: Decimal | None = None,
        gpus_total: int | None = None,
    ) -> Configured:
        count = rung.gpu_count
        if missed and "does not fit" in missed:
            misses = [m for m in misses if m != MEMORY_MISS]
        why_not = tuple(dict.fromkeys([missed, *misses] if missed else misses))
        measured_share = gpu.measurement.failed_share if (
            gpu.measurement is not None and gpu.measured_count == count
        ) else None  # fmt: skip
        capacity = capacity_figures(
            estimate=estimate,
            gpus_per_replica=count,
            replicas=replicas,
            hours_per_month=self.demand.hours_per_month,
            provisioned=provisioned,
            batch=in_flight if in_flight is not None else _batch(estimate),
            tokens_per_s_per_replica=tokens,
            gpus_total=gpus_total,
            measured_failed_share=measured_share,
        )
        basis = gpu_cost_basis(demand=self.demand, capacity=capacity, finance=self.finance)
        layout = estimate.layout or ""
        row_notes = [*_basis_notes(gpu, estimate), *notes]
        row_notes.append(
            f"configuration: {replicas} replica{_s(replicas)} x {count} GPU{_s(count)}"
            + (f" ({layout})" if layout else "")
            + (f", {in_flight} in flight on each" if in_flight else "")
        )
        if gpu.pick == count:
            row_notes += [n for n in gpu.chosen.notes if n not in row_notes]
        return Configured(
            gpu=gpu.gpu,
            gpus_per_replica=count,
            replicas=replicas,
            layout=layout,
            estimate=estimate,
            figures=figures,
            capacity=capacity,
            basis=basis,
            why_not=why_not,
            notes=tuple(row_notes),
        )


def _batch(estimate: Estimate) -> int | None:
    """Sequences in flight on a replica at full load: the most that meet the latency target,
    else the most that fit (the energy model's batch; None for training and media)."""
    plan = estimate.capacity
    for found in (plan.max_concurrency_at_target if plan else None, estimate.max_concurrency):
        if isinstance(found, int) and found > 0 and estimate.layout is not None:
            return found
    return None


def _basis_notes(gpu: GpuAnswer, estimate: Estimate) -> list[str]:
    if estimate.basis == Basis.MEASURED and gpu.measurement is not None:
        return [f"MEASURED: figures from benchmark run #{gpu.measurement.run_id}"]
    if gpu.calibrated_from:
        named = ", ".join(f"#{pk}" for pk in gpu.calibrated_from)
        return [f"CALIBRATED from benchmark run{_s(len(gpu.calibrated_from))} {named}"]
    return []


def configurator_for_brief(brief: WorkloadBrief) -> Configurator:
    """A configurator over the brief's engine answer as its table would compute it now (raises
    EngineInputError)."""
    request = request_for_brief(brief)
    calibration = calibration_for_brief(brief)  # its team's runs of its model only
    runs = throughput_runs_for_brief(brief)
    specs = gpu_specs()
    key = answer_key(
        request, {"calibration": calibration, "runs": sorted(r.pk for r in runs.values())}, specs
    )
    answer = engine_answer(
        request=request, brief=brief, calibration=calibration, runs=runs, key=key
    )
    assumptions = resolved_assumptions(brief)
    return Configurator(
        brief=brief,
        request=request,
        answer=answer,
        demand=demand_for_brief(brief, e2e_latencies_s(answer)),
        finance=assumptions.finance,
        calibration=calibration,
        specs=specs,
    )


def fit_table(brief: WorkloadBrief) -> list[Configured]:
    """The brief page's fit table: each GPU at the configuration a quote offering a full node
    (or its NVLink domain) is costed at, with the figures the table shows for it (raises
    EngineInputError)."""
    configurator = configurator_for_brief(brief)
    limits = {spec.slug: spec.max_gpus_per_node for spec in configurator.specs or gpu_specs()}
    out = []
    for gpu in configurator.answer.gpus:
        found = configurator.configure(gpu.gpu, limits.get(gpu.gpu, 1))
        if found is not None:
            out.append(found)
    return out


def fit_row(configured: Configured) -> dict[str, object]:
    """One fit-table row as plain data for the brief page (apps.briefs.display): the engine's
    answer at the configuration as its JSON, the configuration, its figures and verdict."""
    f = configured.figures
    return {
        "gpu": configured.gpu,
        "estimate": estimate_to_dict(configured.estimate),
        "gpus_per_replica": configured.gpus_per_replica,
        "replicas": configured.replicas,
        "gpus": configured.gpus,
        "layout": configured.layout,
        "figures": {
            "fit": f.fit,
            "ttft_p95_ms": f.ttft_p95_ms,
            "itl_p95_ms": f.itl_p95_ms,
            "latency_p95_ms": f.latency_p95_ms,
            "throughput": f.throughput,
            "throughput_unit": f.throughput_unit,
            "memory_headroom_gb": f.memory_headroom_gb,
            "in_flight_per_replica": f.in_flight_per_replica,
            "time_to_train_days": f.time_to_train_days,
        },
        "meets": not configured.why_not,
        "why_not": list(configured.why_not),
        "notes": list(configured.notes),
        "basis": configured.estimate.basis,
    }
