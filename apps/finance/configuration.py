"""The configuration a GPU candidate is costed at: GPUs per replica and replicas.

The engine answers each GPU at every size it could be deployed at (its "ladder": 1, 2, 4, 8 GPUs
per replica, and 16, 32, 72 within a rack-scale NVLink domain), each with its capacity plan
(replicas needed at the latency target, GPUs in all, GPU-hours a month). A candidate is costed
at the smallest configuration within what it offers (a quote's node, a system's NVLink domain,
the GPU's own node limit) that fits in memory and meets the latency target; a candidate with no
such configuration says why in words and is never costed as if it ran for nothing.

The brief page's fit table shows each GPU at the configuration chosen within the GPU's own node
limit, the same one a quote offering a full node is costed at.
"""

from dataclasses import replace
from typing import Any

from apps.benchmarks.selectors import calibration_for_brief, throughput_runs_for_brief
from apps.briefs.contract import request_for_brief
from apps.catalog.selectors import engine_estimates, estimates_for_request, gpu_specs
from apps.engine import EstimateRequest
from apps.engine.constants import AUTO_GPU_COUNTS, AUTO_GPU_COUNTS_LARGE_DOMAIN

from .estimates import with_measurements

# Every size the engine tries for one replica (apps.engine.estimator.candidate_counts).
LADDER_COUNTS = (*AUTO_GPU_COUNTS, *AUTO_GPU_COUNTS_LARGE_DOMAIN)
# Where the ladder is kept on each per-GPU answer in a table's stored estimates.
LADDER_KEY = "configurations"
# Part of a table's estimates key: bumping it makes every table recompute its engine answer
# once (tables stored before the ladder existed hold one rung per GPU).
LADDER_VERSION = 1


def _compact(estimate: dict[str, Any]) -> dict[str, Any]:
    """A ladder rung as stored: the answer without its notes (the chosen rung's notes are on
    the per-GPU answer), to keep a table's stored estimates small."""
    return {k: v for k, v in estimate.items() if k not in ("notes", LADDER_KEY)}


def with_ladders(
    request: EstimateRequest,
    estimates: list[dict[str, Any]],
    calibration: dict[str, Any] | None,
) -> list[dict[str, Any]]:
    """``estimates`` (one per GPU, measured where a run exists) with each GPU's ladder, and the
    per-GPU answer replaced by the configuration chosen within the GPU's own node limit.

    One engine call per size for every GPU that needs it (not one per GPU and size); a
    measured answer replaces the estimated rung at the run's GPU count. A GPU needs the sizes
    below the engine's pick (quotes offering fewer GPUs, or fewer GPUs in all over more
    replicas), and the sizes above it only when the pick cannot meet the brief or needs more
    than one replica: otherwise one replica of the pick is already the fewest GPUs in all."""
    limits = {spec.slug: spec.max_gpus_per_node for spec in gpu_specs()}
    picks = {e["gpu"]: e for e in estimates}
    ladders: dict[str, dict[int, dict[str, Any]]] = {slug: {} for slug in picks}

    def needs(slug: str, count: int) -> bool:
        pick = picks[slug]
        if count > limits.get(slug, 1) or count == pick["gpu_count"]:
            return False
        return count < pick["gpu_count"] or not viable(pick) or replicas_of(pick) > 1

    for count in LADDER_COUNTS:
        slugs = [slug for slug in picks if needs(slug, count)]
        if not slugs:
            continue
        forced = replace(request, gpus=tuple(slugs), gpu_count=count)
        for rung in estimates_for_request(forced, calibration=calibration):
            ladders[rung["gpu"]][count] = rung
    out: list[dict[str, Any]] = []
    for estimate in estimates:
        rungs = ladders[estimate["gpu"]]
        rungs[estimate["gpu_count"]] = estimate  # measured (or the engine's pick) wins
        ladder = [_compact(rungs[n]) for n in sorted(rungs)]
        chosen, _ = choose_configuration(ladder, limits.get(estimate["gpu"], 1))
        full = rungs[chosen["gpu_count"]]
        out.append({**full, LADDER_KEY: ladder})
    return out


def replicas_of(rung: dict[str, Any]) -> int:
    return (rung.get("capacity") or {}).get("replicas") or 1


def gpus_total(rung: dict[str, Any]) -> int:
    return int(rung["gpu_count"]) * replicas_of(rung)


def has_latency_target(rung: dict[str, Any]) -> bool:
    return rung.get("meets_latency_target") is not None


def meets_target(rung: dict[str, Any]) -> bool:
    """Whether the rung meets the latency target: measured figures say so themselves; the
    engine's estimate meets it when its capacity plan has replicas (each replica carries no more
    sequences than meet the target), even where one replica at the whole concurrency would not."""
    if not has_latency_target(rung):
        return True
    if rung.get("basis") == "MEASURED":
        return bool(rung["meets_latency_target"])
    capacity = rung.get("capacity")
    if capacity is None:
        return bool(rung["meets_latency_target"])
    return capacity.get("replicas") is not None


def viable(rung: dict[str, Any]) -> bool:
    return bool(rung["fits"]) and meets_target(rung)


def latency_target_text(brief: Any) -> str:
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


def choose_configuration(
    ladder: list[dict[str, Any]], limit: int, target: str = ""
) -> tuple[dict[str, Any], str | None]:
    """(the rung to cost, None) for the smallest viable configuration with at most ``limit`` GPUs
    per replica: fewest GPUs in all, then a full fit before a tight one, then fewer GPUs per
    replica. Else (the largest rung within the limit, why no size works, in words)."""
    within = [r for r in ladder if r["gpu_count"] <= limit] or ladder[:1]
    good = [r for r in within if viable(r)]
    if good:
        return min(
            good, key=lambda r: (gpus_total(r), r.get("fit") == "TIGHT", r["gpu_count"])
        ), None
    largest = max(within, key=lambda r: r["gpu_count"])
    top = largest["gpu_count"]
    fitting = [r for r in within if r["fits"]]
    if not fitting:
        return largest, f"does not fit in memory at any size up to {top} GPU{_s(top)}"
    best = min(fitting, key=lambda r: r["performance"].get("ttft_ms") or float("inf"))
    perf = best["performance"]
    figures = [
        f"{name} {perf[key]:.0f} ms"
        for name, key in (("TTFT", "ttft_ms"), ("ITL", "itl_ms"))
        if perf.get(key) is not None
    ]
    wanted = f" ({target})" if target else ""
    return best, (
        f"misses the latency target{wanted} at every size up to {top} GPU{_s(top)}: "
        f"best {', '.join(figures) or 'unknown'} on {best['gpu_count']}"
    )


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def quote_limit(facts: dict[str, Any]) -> int:
    """GPUs per replica a quote offers: a system's NVLink domain, or the quote's node size."""
    if facts.get("system__gpus_per_domain"):
        return int(facts["system__gpus_per_domain"])
    return int(facts.get("gpus_per_node") or 1)


def fit_table_estimates(brief: Any) -> list[dict[str, Any]]:
    """The brief page's fit table: each GPU at the configuration and on the basis (measured,
    calibrated, estimated) its candidate rows are costed at (raises EngineInputError)."""
    request = request_for_brief(brief)
    calibration = calibration_for_brief(brief)  # its team's runs of its model only
    typed = engine_estimates(request, calibration=calibration)
    estimates = with_measurements(
        request, typed, throughput_runs_for_brief(brief), brief, calibration
    )
    return with_ladders(request, estimates, calibration)
