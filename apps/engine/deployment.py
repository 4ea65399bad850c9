"""How a GPU is deployed for a brief: the size of one replica, and how many replicas carry the
load, each at its own share of it.

The engine answers a GPU at every size one replica could be (its ladder: one ``Estimate`` per
GPU count). Memory fit and latency are judged *per replica*: a load that one replica cannot hold
is spread over as many replicas as it needs, and each replica's share is asked of the engine
again (``spread``), so that the figures a candidate shows are those of the deployment it is
costed at. The candidate table (apps.finance.configuration) and the stateless estimate API both
deploy through here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal

from apps.engine.types import LLM_SERVING_TYPES, Estimate, EstimateRequest, Fit, GpuSpec

__all__ = [
    "MAX_REPLICA_RAISES",
    "SHOWN_DIGITS",
    "Deployment",
    "Spread",
    "choose_rung",
    "deploy",
    "in_flight_share",
    "shown",
    "spread",
    "viable",
    "whole_replicas",
]

# Figures are kept to the digits a person is shown (four significant ones: "46.02 ms",
# "8,805 ms", "3,206 tok/s"), so a verdict taken on a figure is the verdict on the figure shown.
SHOWN_DIGITS = 4


def shown(value: float | Decimal | None, digits: int = SHOWN_DIGITS) -> Decimal | None:
    """``value`` to ``digits`` significant digits (at most two decimal places), as stored and
    shown; None for none or a value that is not finite."""
    if value is None:
        return None
    d = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    if not d.is_finite():
        return None
    if d == 0:
        return Decimal(0)
    exponent = max(d.adjusted() - digits + 1, -2)
    return d.quantize(Decimal(1).scaleb(exponent)).normalize() + Decimal(0)


# Replicas added one at a time while a replica's share of the load misses a target (the capacity
# plan sized them at the largest batch meeting it, so one more is usually enough).
MAX_REPLICA_RAISES = 8
_BASIS_MEASURED = "MEASURED"


def replicas_of(rung: Estimate) -> int:
    plan = rung.capacity
    return (plan.replicas if plan is not None else None) or 1


def viable(rung: Estimate) -> bool:
    """Whether the rung serves the brief once the load is spread over the replicas its
    capacity plan asks for: for LLM serving, the weights and at least one sequence fit on a
    replica and a replica meets the latency target at some load; otherwise it fits and meets
    the target as it is. Measured figures say so themselves."""
    if rung.basis == _BASIS_MEASURED:
        return rung.fits and rung.meets_latency_target is not False
    plan = rung.capacity
    if rung.layout is not None and plan is not None:  # LLM serving
        return rung.max_concurrency >= 1 and plan.replicas is not None
    return rung.fits and rung.meets_latency_target is not False


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def whole_replicas(replicas: int, gpus_per_replica: int, instance: int | None) -> int:
    """The replicas that fill the whole instances of ``instance`` GPUs that ``replicas`` need (a
    replica never spans instances: an 8-GPU instance of 2-GPU replicas runs 4); ``replicas``
    itself where GPUs are rented one by one (``instance`` None)."""
    if instance is None:
        return replicas
    per = max(instance // gpus_per_replica, 1)
    return math.ceil(replicas / per) * per


def choose_rung(
    ladder: Sequence[Estimate], limit: int, target: str = "", instance: int | None = None
) -> tuple[Estimate, str]:
    """(the rung to deploy, "") for the smallest viable size with at most ``limit`` GPUs per
    replica: fewest GPUs in all, then a full fit before a tight one, then fewer GPUs per
    replica. Renting whole instances of ``instance`` GPUs, only sizes that divide an instance
    are deployed, and the GPUs counted are those of the instances rented. Else (the rung
    closest to serving within the limit, why no size works, in words)."""
    within = [r for r in ladder if r.gpu_count <= limit] or list(ladder[:1])
    if instance is not None:
        dividing = [r for r in within if instance % r.gpu_count == 0]
        if not dividing:
            return within[-1], f"no replica size divides the quote's {instance}-GPU instance"
        within = dividing
    good = [r for r in within if viable(r)]
    if good:
        return min(
            good,
            key=lambda r: (
                r.gpu_count * whole_replicas(replicas_of(r), r.gpu_count, instance),
                r.fit is Fit.TIGHT,
                r.gpu_count,
            ),
        ), ""
    largest = max(within, key=lambda r: r.gpu_count)
    top = largest.gpu_count
    # A precision the GPU lacks (BF16 on Volta / Turing) refuses every size: the engine's
    # reason, not memory or latency.
    refused = next((r.fit_advice for r in within if r.fit is Fit.NO and r.fit_advice), None)
    fitting = [r for r in within if r.fits or (r.max_concurrency >= 1 and not refused)]
    if not fitting:
        return largest, refused or f"does not fit in memory at any size up to {top} GPU{_s(top)}"
    best = min(fitting, key=lambda r: r.performance.ttft_ms or math.inf)
    perf = best.performance
    figures = [
        f"{name} {value:.0f} ms"
        for name, value in (("TTFT", perf.ttft_ms), ("ITL", perf.itl_ms))
        if value is not None
    ]
    wanted = f" ({target})" if target else ""
    return best, (
        f"misses the latency target{wanted} at every size up to {top} GPU{_s(top)}: "
        f"best {', '.join(figures) or 'unknown'} on {best.gpu_count}"
    )


def in_flight_share(request: EstimateRequest, rung: Estimate, replicas: int, rate: float) -> int:
    """Each replica's share of the requests in flight: the brief's concurrency, or its rate
    (``rate``: requests a second, retried ones included) x the time a request spends in the
    system at the target (Little's law), spread over ``replicas``."""
    if request.concurrency:
        return math.ceil(request.concurrency / replicas)
    plan = rung.capacity
    at_target = plan.requests_per_s_at_target if plan is not None else None
    most = plan.max_concurrency_at_target if plan is not None else None
    if rate and at_target and most:
        return max(1, math.ceil(rate * most / at_target / replicas - 1e-9))
    e2e = rung.performance.e2e_latency_s or 0.0
    return max(1, math.ceil(rate * e2e / replicas - 1e-9))


@dataclass(frozen=True, kw_only=True, slots=True)
class Spread:
    """An LLM-serving deployment: ``replicas`` of the rung's GPU count, ``in_flight``
    sequences on each, and the engine's answer for one replica at that share (``estimate``);
    ``raised``: replicas added beyond the capacity plan's to carry retried requests."""

    replicas: int
    in_flight: int
    estimate: Estimate
    raised: int | None = None


def spread(
    request: EstimateRequest,
    rung: Estimate,
    estimate_at: Callable[[int], Estimate],
    *,
    rate: float,
    missed: bool = False,
) -> Spread:
    """The replicas that carry the brief's load on ``rung``'s GPU count, each replica's share
    asked of the engine (``estimate_at(in_flight)``): the capacity plan's replicas (raised to
    carry ``rate``, requests a second with retries, at the target), then one more at a time
    while a replica's share misses a target or does not fit. ``missed``: no size meets the
    brief; the load is spread as the plan says and left there."""
    replicas = replicas_of(rung)
    plan = rung.capacity
    at_target = plan.requests_per_s_at_target if plan is not None else None
    raised = None
    if rate and at_target and rung.basis != _BASIS_MEASURED:
        needed = math.ceil(rate / at_target - 1e-9)
        if needed > replicas:
            replicas = raised = needed
    in_flight = in_flight_share(request, rung, replicas, rate)
    estimate = estimate_at(in_flight)
    for _ in range(MAX_REPLICA_RAISES):
        ok = estimate.fit is not Fit.NO and estimate.meets_latency_target is not False
        if ok or missed or in_flight <= 1:
            break
        replicas += 1
        in_flight = in_flight_share(request, rung, replicas, rate)
        estimate = estimate_at(in_flight)
    return Spread(replicas=replicas, in_flight=in_flight, estimate=estimate, raised=raised)


@dataclass(frozen=True, kw_only=True, slots=True)
class Deployment:
    """A GPU deployed for a request as a candidate table would cost it (LLM serving): the size
    of a replica, the replicas, each replica's share of the load, and the engine's answer for
    one replica at that share (its figures), with why it misses the brief ("" when it
    meets it). No retries: a stateless estimate has no finance assumptions."""

    gpus_per_replica: int
    replicas: int
    in_flight: int
    estimate: Estimate
    why_not: str

    @property
    def gpus(self) -> int:
        return self.gpus_per_replica * self.replicas


def deploy(
    request: EstimateRequest,
    spec: GpuSpec,
    estimate_at: Callable[[EstimateRequest, GpuSpec, int], Estimate],
    counts: Sequence[int],
) -> Deployment | None:
    """``spec`` deployed for ``request`` at a node's worth of GPUs per replica at most: its
    ladder over ``counts``, the rung chosen as a table chooses it, the load spread over the
    replicas (``spread``); None for work that is not LLM serving."""
    if request.workload_type not in LLM_SERVING_TYPES:
        return None
    ladder = [estimate_at(request, spec, n) for n in counts]
    rung, missed = choose_rung(ladder, spec.max_gpus_per_node)
    count = rung.gpu_count

    def at(in_flight: int) -> Estimate:
        share = replace(request, concurrency=in_flight, requests_per_second=None)
        return estimate_at(share, spec, count)

    deployed = spread(
        request, rung, at, rate=request.requests_per_second or 0.0, missed=bool(missed)
    )
    estimate = deployed.estimate
    why = missed
    if not why:
        if estimate.fit is Fit.NO:
            why = "does not fit in memory on a replica at its share of the load"
        elif estimate.meets_latency_target is False:
            why = "misses the latency target at each replica's share of the load"
    return Deployment(
        gpus_per_replica=count,
        replicas=deployed.replicas,
        in_flight=deployed.in_flight,
        estimate=estimate,
        why_not=why,
    )
