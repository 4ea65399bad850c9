"""Measured beats estimated (docs/design.md, "The engine"): a benchmark run's figures in place of
the estimate's performance, the latency verdict taken on them, memory fit and capacity left as
the engine sized them."""

from __future__ import annotations

from dataclasses import dataclass, replace

from apps.engine.costing_types import Basis
from apps.engine.types import Estimate

BASIS_MEASURED = Basis.MEASURED.value  # Estimate.basis: performance figures from a benchmark run


@dataclass(frozen=True, kw_only=True, slots=True)
class Measurement:
    """A throughput/latency run's canonical figures (None: the run did not report it)."""

    run_id: int
    source: str  # the tool (and version) that measured it, for the note
    output_tokens_per_s: float | None = None
    ttft_ms: float | None = None  # tail figures: p95, else the nearest the run reported
    itl_ms: float | None = None  # inter-token latency, first token excluded
    e2e_latency_ms: float | None = None
    failed_share: float | None = None  # failed / (completed + failed) requests


@dataclass(frozen=True, kw_only=True, slots=True)
class LatencyTargets:
    ttft_ms: float | None = None
    itl_ms: float | None = None
    e2e_ms: float | None = None


def apply_measurement(
    estimate: Estimate, measurement: Measurement, targets: LatencyTargets
) -> Estimate:
    """``estimate`` with the run's figures in place of the estimated ones (basis MEASURED).
    The latency verdict is the run's wherever the run measured a targeted figure; otherwise
    the estimate's stands."""
    m = measurement
    perf = estimate.performance
    performance = replace(
        perf,
        output_tokens_per_s=m.output_tokens_per_s or perf.output_tokens_per_s,
        ttft_ms=m.ttft_ms if m.ttft_ms is not None else perf.ttft_ms,
        itl_ms=m.itl_ms if m.itl_ms is not None else perf.itl_ms,
        e2e_latency_s=m.e2e_latency_ms / 1000
        if m.e2e_latency_ms is not None
        else perf.e2e_latency_s,
    )
    checks = [
        figure <= target
        for figure, target in (
            (m.ttft_ms, targets.ttft_ms),
            (m.itl_ms, targets.itl_ms),
            (m.e2e_latency_ms, targets.e2e_ms),
        )
        if target and figure is not None
    ]
    return replace(
        estimate,
        performance=performance,
        meets_latency_target=all(checks) if checks else estimate.meets_latency_target,
        basis=BASIS_MEASURED,
        notes=(
            *estimate.notes,
            f"MEASURED: benchmark run #{m.run_id} ({m.source}) replaces the estimate",
        ),
    )
