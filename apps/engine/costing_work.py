"""What a brief asks for in a month, and the GPU-hours that takes on one candidate.

`demand_volumes` turns a brief into monthly volumes (requests, tokens, records, items, runs) and
the outputs generated in its success unit; `gpu_workload` adds the GPU side from the performance
engine's capacity figures. Both are arithmetic only; every assumption is returned as a note.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal

from apps.engine.costing_constants import (
    CHECKPOINT_RESTART_MINUTES,
    DEFAULT_CHECKPOINT_INTERVAL_MINUTES,
    GPU_INTERRUPTION_RATE_PER_GPU_HOUR,
    MINUTES_PER_HOUR,
    SECONDS_PER_HOUR,
)
from apps.engine.costing_types import (
    ONE,
    ZERO,
    CapacityFigures,
    CostKind,
    Demand,
    SuccessUnit,
    cost_kind,
)
from apps.engine.types import WorkloadType
from apps.engine.units import unit_applies

_TWO = Decimal(2)


@dataclass(frozen=True, kw_only=True, slots=True)
class Volumes:
    """Monthly demand volumes of a brief. `generated` is in the brief's success unit."""

    requests: Decimal | None  # calls an API would see (None: unknown)
    input_tokens: Decimal
    output_tokens: Decimal
    items: Decimal  # records, images or clips, or training runs
    generated: Decimal
    notes: tuple[str, ...]
    why_not: tuple[str, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class GpuWorkload:
    """The GPU side of one candidate for one brief, per month."""

    volumes: Volumes
    busy_gpu_hours: Decimal  # first-attempt work (or provisioned serving hours)
    checkpoint_gpu_hours: Decimal  # training only
    failed_run_gpu_hours: Decimal  # training only: work lost to interruptions
    unit_gpus: int  # GPUs added per step when capacity must grow (a replica, or a run)
    min_gpus: int  # GPUs the deployment holds at once
    notes: tuple[str, ...]
    why_not: tuple[str, ...]


def _unit_mismatch(demand: Demand) -> str:
    return (
        f"success unit {demand.success_unit} does not apply to "
        f"{demand.workload_type} (no outputs counted)"
    )


def _records(demand: Demand) -> Decimal | None:
    if demand.records_per_job is not None:
        return demand.records_per_job * demand.jobs_per_month
    return demand.requests_per_month


def demand_volumes(demand: Demand, capacity: CapacityFigures | None) -> Volumes:
    """Monthly volumes. Real-time demand without a request count falls back on the capacity's
    throughput over the active hours (the engine sized replicas for the brief's concurrency).

    - REALTIME_INFERENCE: requests_per_month x tokens per request; outputs are output tokens
      (TOKEN) or requests (REQUEST).
    - BATCH_INFERENCE / EVALUATION: records = records_per_job x jobs_per_month (or
      requests_per_month); outputs are output tokens (TOKEN), records (RECORD/REQUEST) or
      completed jobs (EVALUATION).
    - EMBEDDINGS: records as above; outputs are records (RECORD/REQUEST) or input tokens (TOKEN).
    - IMAGE/VIDEO_GENERATION: items = requests_per_month (or records_per_job x jobs); outputs are
      items (IMAGE/CLIP/REQUEST), or items x clip seconds (VIDEO_SECOND, video only).
    - Code agents (real-time or batch inference): one request or record is one task, its token
      counts the whole task's; outputs are tasks (PATCH), accepted at the acceptance rate.
    - Training types: runs = jobs_per_month; outputs are runs (TRAINING_RUN), or the fine-tuned
      checkpoints they leave (CHECKPOINT, fine-tune types only).
    Which units apply to which workload: `apps.engine.units.unit_applies`.
    """
    notes: list[str] = []
    why_not: list[str] = []
    unit = demand.success_unit
    kind = cost_kind(demand.workload_type)
    requests: Decimal | None = None
    items = ZERO
    generated = ZERO
    applies = unit_applies(unit, demand.workload_type)
    if kind is CostKind.TRAINING:
        items = demand.jobs_per_month
        if applies:  # a completed run, or the fine-tuned checkpoint it leaves
            generated = items
        else:
            why_not.append(_unit_mismatch(demand))
        return Volumes(
            requests=None,
            input_tokens=ZERO,
            output_tokens=ZERO,
            items=items,
            generated=generated,
            notes=(f"training runs started per month: {items}",),
            why_not=tuple(why_not),
        )
    if kind is CostKind.REALTIME:
        requests = demand.requests_per_month
        if requests is None:
            if (
                capacity is not None
                and capacity.output_tokens_per_s_per_replica
                and demand.output_tokens_mean > ZERO
            ):
                tokens = (
                    capacity.output_tokens_per_s_per_replica
                    * capacity.replicas
                    * demand.hours_per_month
                    * SECONDS_PER_HOUR
                )
                requests = tokens / demand.output_tokens_mean
                notes.append(
                    "demand: no request volume given; the replicas' throughput at the "
                    f"target ({capacity.output_tokens_per_s_per_replica} tok/s x "
                    f"{capacity.replicas}) over {demand.hours_per_month} active h"
                )
            else:
                requests = None
                why_not.append("demand has no request volume")
    else:
        requests = _records(demand)
        if requests is None:
            why_not.append("demand has no records_per_job or requests_per_month")
    n = requests if requests is not None else ZERO
    input_tokens = n * demand.input_tokens_mean
    output_tokens = n * demand.output_tokens_mean
    items = n
    wt = demand.workload_type
    if kind is CostKind.MEDIA:
        input_tokens = output_tokens = ZERO
        generated = n
        if unit is SuccessUnit.VIDEO_SECOND:
            seconds = demand.clip_seconds_or_default
            generated = n * seconds
            notes.append(f"seconds of video: {n} clips x {seconds} s")
    elif wt is WorkloadType.EMBEDDINGS:
        output_tokens = ZERO
        generated = input_tokens if unit is SuccessUnit.TOKEN else n
    elif unit is SuccessUnit.TOKEN:
        generated = output_tokens
    elif unit is SuccessUnit.EVALUATION:
        generated = demand.jobs_per_month
    else:  # requests, records, or a code agent's patches / tasks (one request or record each)
        generated = n
    if not applies:
        why_not.append(_unit_mismatch(demand))
        generated = ZERO
    return Volumes(
        requests=requests,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        items=items,
        generated=generated,
        notes=tuple(notes),
        why_not=tuple(why_not),
    )


def _ceil(x: Decimal) -> Decimal:
    return x.to_integral_value(rounding=ROUND_CEILING)


def gpu_workload(
    demand: Demand, capacity: CapacityFigures, *, retry_rate: Decimal = ZERO
) -> GpuWorkload:
    """GPU-hours per month for the brief on this candidate.

    - Training: busy = time_to_train_hours x gpus_total x jobs_per_month. Checkpointing =
      ceil(run minutes / interval) saves x checkpoint_write_s x gpus_total per run. Failed-run
      waste = expected interruptions (gpus_total x run hours x GPU_INTERRUPTION_RATE_PER_GPU_HOUR)
      x (interval / 2 + CHECKPOINT_RESTART_MINUTES) x gpus_total per run.
    - Real-time: busy = the engine's gpu_hours_per_month (replicas provisioned over the active
      hours); a why-not when the replicas' throughput is below the demanded tokens/s including
      retries (demand / (1 - retry_rate)).
    - Batch/evaluation: busy = output tokens / (tokens/s per replica x 3600) x GPUs per replica.
    - Embeddings: busy = records / (records/s per replica x 3600) x GPUs per replica.
    - Media: busy = items / items per hour per replica x GPUs per replica.
    Without the throughput figure, busy falls back on the engine's gpu_hours_per_month.
    """
    volumes = demand_volumes(demand, capacity)
    notes: list[str] = list(volumes.notes)
    why_not: list[str] = list(volumes.why_not)
    kind = cost_kind(demand.workload_type)
    per_replica = capacity.gpu_count
    busy = capacity.gpu_hours_per_month
    checkpoint_hours = failed_hours = ZERO
    unit_gpus = per_replica
    min_gpus = capacity.gpu_count * capacity.replicas
    throughput: Decimal | None = None
    work = ZERO
    if kind is CostKind.TRAINING:
        gpus = capacity.run_gpus
        unit_gpus = min_gpus = gpus
        runs = demand.jobs_per_month
        run_hours = capacity.time_to_train_hours
        if run_hours is None:
            run_hours = busy / (gpus * runs) if runs > ZERO else ZERO
            notes.append(f"run length from the engine's {busy} GPU-h a month")
        busy = run_hours * gpus * runs
        interval = demand.checkpoint_interval_minutes
        if interval is None:
            interval = DEFAULT_CHECKPOINT_INTERVAL_MINUTES
            notes.append(f"checkpoint interval: default {interval} min")
        run_minutes = run_hours * MINUTES_PER_HOUR
        saves = _ceil(run_minutes / interval)
        if capacity.checkpoint_write_s is None:
            notes.append("checkpointing: write time unknown, not costed")
        else:
            checkpoint_hours = saves * capacity.checkpoint_write_s / SECONDS_PER_HOUR * gpus * runs
            notes.append(
                f"checkpointing: {saves} saves a run x {capacity.checkpoint_write_s} s "
                f"x {gpus} GPUs"
            )
        interruptions = gpus * run_hours * GPU_INTERRUPTION_RATE_PER_GPU_HOUR
        lost_hours = (interval / _TWO + CHECKPOINT_RESTART_MINUTES) / MINUTES_PER_HOUR
        failed_hours = interruptions * lost_hours * gpus * runs
        notes.append(
            f"failed-run waste: {interruptions:.4f} expected interruptions a run "
            f"({GPU_INTERRUPTION_RATE_PER_GPU_HOUR}/GPU-h, Llama 3), each losing "
            f"{interval / _TWO} + {CHECKPOINT_RESTART_MINUTES} min on {gpus} GPUs"
        )
    elif kind is CostKind.REALTIME:
        tok_s = capacity.output_tokens_per_s_per_replica
        demanded = (
            volumes.output_tokens / (ONE - retry_rate) / (demand.hours_per_month * SECONDS_PER_HOUR)
        )
        if tok_s is not None and demanded > tok_s * capacity.replicas:
            why_not.append(
                f"replicas serve {tok_s * capacity.replicas} tok/s, "
                f"demand needs {demanded:.1f} tok/s"
            )
    elif demand.workload_type is WorkloadType.EMBEDDINGS:
        throughput, work = capacity.records_per_s_per_replica, volumes.items
        if throughput:
            busy = work / (throughput * SECONDS_PER_HOUR) * per_replica
    elif kind is CostKind.OFFLINE:
        throughput, work = capacity.output_tokens_per_s_per_replica, volumes.output_tokens
        if throughput:
            busy = work / (throughput * SECONDS_PER_HOUR) * per_replica
    else:  # media
        throughput, work = capacity.items_per_hour_per_replica, volumes.items
        if throughput:
            busy = work / throughput * per_replica
    if kind in (CostKind.OFFLINE, CostKind.MEDIA):
        if throughput:
            notes.append(f"GPU-hours: {work} / {throughput} per replica x {per_replica} GPUs")
        else:
            notes.append(f"GPU-hours: engine's {busy} GPU-h a month (no throughput figure)")
    if not capacity.fits:
        why_not.append("does not fit in memory")
    if capacity.meets_latency_target is False:
        why_not.append("misses the p95 TTFT/ITL target")
    return GpuWorkload(
        volumes=volumes,
        busy_gpu_hours=busy,
        checkpoint_gpu_hours=checkpoint_hours,
        failed_run_gpu_hours=failed_hours,
        unit_gpus=unit_gpus,
        min_gpus=min_gpus,
        notes=tuple(notes),
        why_not=tuple(why_not),
    )


def accepted_share(*, failure_rate: Decimal, acceptance_rate: Decimal) -> Decimal:
    """Share of generated outputs that count: (1 - failure_rate) x acceptance_rate."""
    return (ONE - failure_rate) * acceptance_rate
