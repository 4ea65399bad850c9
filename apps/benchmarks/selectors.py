"""Reads of benchmark runs (scoped to the user's teams), what the engine predicted for a run's
conditions, and the figures the finance code calibrates with."""

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any, Final

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet
from django.http import Http404

from apps.briefs.contract import request_for_brief
from apps.briefs.models import WorkloadBrief
from apps.briefs.selectors import brief_weight_precision
from apps.catalog.selectors import estimates_for_request
from apps.engine import ENGINE_VERSION, EngineInputError
from apps.engine.types import Precision

from .display import chart_label
from .importers.common import LATENCY_METRICS, SCALARS, STATS
from .model_identity import brief_model_identity
from .models import BenchmarkRun

CALIBRATION_CLAMP: Final = (0.25, 4.0)
#: Estimated figure -> the measured canonical figure it is compared with.
COMPARED: Final = {
    "output_tokens_per_s": "output_tokens_per_s",
    "ttft_ms": "ttft_ms",
    "tpot_ms": "tpot_ms",
    "e2e_latency_ms": "e2e_latency_ms",
}


def benchmark_run_list_for_user(
    user: AbstractBaseUser | AnonymousUser,
    *,
    brief_id: int | None = None,
    gpu: str | None = None,
    phase: str | None = None,
) -> QuerySet[BenchmarkRun]:
    """Runs of the user's teams, newest first."""
    qs = BenchmarkRun.objects.select_related("brief", "gpu", "quote", "system").order_by(
        "-created_at", "-id"
    )
    if not getattr(user, "is_superuser", False):
        qs = qs.filter(team__members=user)  # type: ignore[misc]
    if brief_id is not None:
        qs = qs.filter(brief_id=brief_id)
    if gpu:
        qs = qs.filter(gpu__slug=gpu)
    if phase:
        qs = qs.filter(phase=phase)
    return qs


def benchmark_run_get_for_user(user: AbstractBaseUser | AnonymousUser, pk: int) -> BenchmarkRun:
    """The run, or 404 when it does not exist or belongs to another team."""
    try:
        return benchmark_run_list_for_user(user).get(pk=pk)
    except BenchmarkRun.DoesNotExist:
        raise Http404("No such benchmark run.") from None


def benchmark_runs_for_brief(brief: WorkloadBrief) -> list[BenchmarkRun]:
    """Every run of a brief, oldest first (the order they were imported)."""
    return list(
        BenchmarkRun.objects.filter(brief=brief)
        .select_related("gpu", "quote", "quote__provider", "system")
        .order_by("created_at", "id")
    )


def benchmark_runs_same_file(
    *, brief: WorkloadBrief, gpu_id: int, gpu_count: int, raw_sha256: str
) -> list[BenchmarkRun]:
    """Runs already imported from the same file for the same candidate."""
    return list(
        BenchmarkRun.objects.filter(
            brief=brief, gpu_id=gpu_id, gpu_count=gpu_count, raw_sha256=raw_sha256
        )
        .select_related("brief", "gpu", "quote", "system")
        .order_by("id")
    )


def _current_throughput_runs() -> QuerySet[BenchmarkRun]:
    return BenchmarkRun.objects.filter(
        phase=BenchmarkRun.Phase.THROUGHPUT_LATENCY, superseded_by__isnull=True
    )


def throughput_runs_for_brief(brief: WorkloadBrief) -> dict[tuple[str, int], BenchmarkRun]:
    """The brief's measurements: the latest non-superseded THROUGHPUT_LATENCY run per (GPU
    slug, GPU count) of the brief that is of the brief's model as it is now (not a proxy) and
    at its weight precision (where the run recorded one). Any other run of the brief can only
    calibrate it (``calibration_for_brief``)."""
    runs = _current_throughput_runs().filter(brief=brief, proxy=False)
    identity = brief_model_identity(brief)
    if identity:
        runs = runs.filter(model=identity)
    found = brief_weight_precision(brief)
    if found:
        runs = runs.filter(weight_precision__in=("", found[0]))
    runs = runs.select_related("gpu").order_by("created_at", "id")
    return {(run.gpu.slug, run.gpu_count): run for run in runs}


def calibration_runs_for_brief(brief: WorkloadBrief) -> QuerySet[BenchmarkRun]:
    """The runs that calibrate a brief's estimates: its team's current THROUGHPUT_LATENCY runs
    of the brief's model (any brief of the team), plus the proxy runs the brief itself imported.
    Runs of another model or another team never change its figures. A brief that names no model
    is calibrated by its own runs only."""
    runs = _current_throughput_runs().filter(team_id=brief.team_id)
    identity = brief_model_identity(brief)
    own = Q(brief_id=brief.pk)
    if identity:
        return runs.filter((Q(model=identity) & Q(proxy=False)) | (own & Q(proxy=True)))
    return runs.filter(own)


# --- measured vs estimated ------------------------------------------------------------------


def _positive(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) and value > 0 else None


def measured_value(results: dict[str, Any], figure: str) -> float | None:
    """One comparable measured figure: a scalar, or a latency's p50 (else its mean)."""
    value = results.get(figure)
    if isinstance(value, dict):
        return _positive(value.get("p50")) or _positive(value.get("mean"))
    return _positive(value)


def estimated_value(estimate: dict[str, Any], figure: str) -> float | None:
    if not isinstance(estimate, dict) or "error" in estimate:
        return None
    return _positive(estimate.get(figure))


def run_concurrency(conditions: dict[str, Any]) -> int | None:
    """The concurrency a run was measured at, from its conditions (None when unknown)."""
    for key in ("concurrency", "max_concurrency"):
        value = conditions.get(key)
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        number = _positive(value)
        if number is not None and number == math.floor(number) and number <= 1_000_000:
            return int(number)
    return None


def run_replicas(conditions: dict[str, Any]) -> int:
    """Replicas the run's figures are over (a Benchmark Report's stack; 1 when unsaid)."""
    value = conditions.get("replicas")
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 4096:
        return value
    return 1


def run_load_concurrency(conditions: dict[str, Any], results: dict[str, Any]) -> int | None:
    """The requests in flight a run was measured at: its concurrency, else its request rate x
    its mean end-to-end latency (Little's law: what a rate-driven run kept in flight)."""
    found = run_concurrency(conditions)
    if found is not None:
        return found
    rate = _positive(conditions.get("request_rate"))
    e2e = results.get("e2e_latency_ms")
    mean = _positive(e2e.get("mean")) if isinstance(e2e, dict) else None
    if rate is None or mean is None:
        return None
    return max(1, min(1_000_000, round(rate * mean / 1000.0)))


def _tokens(results: dict[str, Any], key: str) -> int | None:
    mean = _positive(results.get(key))
    if mean is None or mean > 10_000_000:
        return None
    return max(1, round(mean))


def estimate_for_run(
    *,
    brief: WorkloadBrief,
    gpu_slug: str,
    gpu_count: int,
    results: dict[str, Any],
    conditions: dict[str, Any],
) -> dict[str, Any]:
    """What the engine predicts for the brief's model under the run's conditions, or
    ``{"error": ...}`` when it cannot estimate them."""
    inputs: dict[str, Any] = {}
    tokens: dict[str, int | None] = {}
    for key in ("input_tokens", "output_tokens"):
        tokens[key] = _tokens(results, f"{key}_mean")
        inputs[key] = tokens[key]
        inputs[f"{key}_from"] = "run" if tokens[key] is not None else "brief"
    # The file's own load, spread over its replicas: each replica is estimated at its share.
    replicas = run_replicas(conditions)
    load = run_load_concurrency(conditions, results)
    concurrency = None if load is None else max(1, -(-load // replicas))
    inputs["concurrency"] = concurrency if concurrency is not None else brief.concurrency
    inputs["concurrency_from"] = (
        "brief" if load is None
        else "run" if run_concurrency(conditions) is not None
        else "run (request rate x mean latency)"
    )  # fmt: skip
    inputs["replicas"] = replicas
    precision = conditions.get("precision")
    try:
        request = request_for_brief(
            brief,
            input_tokens=tokens["input_tokens"],
            output_tokens=tokens["output_tokens"],
            concurrency=concurrency,
        )
        forced = replace(request, gpus=(gpu_slug,), gpu_count=gpu_count)
        if isinstance(precision, str) and precision in Precision.__members__:
            forced = replace(forced, weight_precision=Precision(precision))
            inputs["weight_precision"] = precision
        estimates = estimates_for_request(forced)
    except EngineInputError as exc:
        return {"error": f"{exc.field}: {exc.message}", "engine_version": ENGINE_VERSION}
    found = next((e for e in estimates if e["gpu"] == gpu_slug), None)
    if found is None:
        return {"error": f"the engine gave no estimate for {gpu_slug}"}
    perf = found["performance"]
    e2e_s = perf.get("e2e_latency_s")
    tok_s = perf.get("output_tokens_per_s")
    return {
        # Over every replica, as the run's own figure is.
        "output_tokens_per_s": None if tok_s is None else tok_s * replicas,
        "ttft_ms": perf.get("ttft_ms"),
        # The engine's inter-token figure is decode time per output token (first excluded).
        "tpot_ms": perf.get("itl_ms"),
        "e2e_latency_ms": None if e2e_s is None else round(e2e_s * 1000, 1),
        "engine_version": ENGINE_VERSION,
        "fits": found["fits"],
        "basis": found["basis"],
        "inputs": inputs,
    }


def _geometric_mean(ratios: list[float]) -> float:
    lo, hi = CALIBRATION_CLAMP
    if not ratios:
        return 1.0
    mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    return min(hi, max(lo, mean))


def calibration_from_runs(runs: QuerySet[BenchmarkRun]) -> dict[str, dict[str, Any]]:
    """Per GPU slug, multipliers for the engine from the given runs with a usable estimate:
    ``decode_bw_efficiency`` = geometric mean of measured / estimated output tokens/s,
    ``prefill_mfu`` = geometric mean of estimated / measured TTFT (p50, else mean); each clamped
    to [0.25, 4] (1.0 when no run gives that ratio); ``runs`` = how many runs were used and
    ``run_ids`` which (the estimate names them)."""
    rows = runs.order_by("id").values_list("pk", "gpu__slug", "results", "estimate_at_import")
    return _calibration_from_rows(rows)


def _calibration_from_rows(rows: Iterable[tuple[Any, ...]]) -> dict[str, dict[str, Any]]:
    """``calibration_from_runs`` of (pk, GPU slug, results, estimate at import) rows, by pk."""
    decode: dict[str, list[float]] = defaultdict(list)
    prefill: dict[str, list[float]] = defaultdict(list)
    used: dict[str, list[int]] = defaultdict(list)
    for pk, slug, results, estimate in rows:
        if not isinstance(results, dict) or not isinstance(estimate, dict):
            continue
        took = False
        measured_tps = measured_value(results, "output_tokens_per_s")
        estimated_tps = estimated_value(estimate, "output_tokens_per_s")
        if measured_tps and estimated_tps:
            decode[slug].append(measured_tps / estimated_tps)
            took = True
        measured_ttft = measured_value(results, "ttft_ms")
        estimated_ttft = estimated_value(estimate, "ttft_ms")
        if measured_ttft and estimated_ttft:
            prefill[slug].append(estimated_ttft / measured_ttft)
            took = True
        if took:
            used[slug].append(pk)
    return {
        slug: {
            "decode_bw_efficiency": _geometric_mean(decode[slug]),
            "prefill_mfu": _geometric_mean(prefill[slug]),
            "runs": len(ids),
            "run_ids": ids,
        }
        for slug, ids in sorted(used.items())
    }


def calibration_for_brief(brief: WorkloadBrief) -> dict[str, dict[str, Any]]:
    """Per GPU slug, the calibration of this brief's estimates (``calibration_runs_for_brief``)."""
    return calibration_from_runs(calibration_runs_for_brief(brief))


def calibrations_for_briefs(
    briefs: Iterable[WorkloadBrief],
) -> dict[int, dict[str, dict[str, Any]]]:
    """``calibration_for_brief`` of each brief, by brief id, in one query: the runs of the
    briefs' teams, each brief taking those ``calibration_runs_for_brief`` selects."""
    briefs = list(briefs)
    rows = list(
        _current_throughput_runs()
        .filter(team_id__in={b.team_id for b in briefs})
        .order_by("id")
        .values_list(
            "pk", "gpu__slug", "results", "estimate_at_import", "team_id", "model", "proxy",
            "brief_id",
        )
    )  # fmt: skip
    out: dict[int, dict[str, dict[str, Any]]] = {}
    for brief in briefs:
        identity = brief_model_identity(brief)
        out[brief.pk] = _calibration_from_rows(
            row[:4] for row in rows if _calibrates(brief, identity, *row[4:])
        )
    return out


def _calibrates(
    brief: WorkloadBrief, identity: str, team: int, model: str, proxy: bool, run_brief: int | None
) -> bool:
    """Whether a run of these fields is one of ``calibration_runs_for_brief(brief)``."""
    if team != brief.team_id:
        return False
    own = run_brief == brief.pk
    if identity:
        return (model == identity and not proxy) or (own and proxy)
    return own


def calibration_for_gpu_page(
    user: AbstractBaseUser | AnonymousUser, gpu_slug: str
) -> list[dict[str, Any]]:
    """The GPU's calibration as the user's teams' briefs get it: one entry per (team, model)
    with runs on this GPU (proxy runs are left out: each calibrates one brief only)."""
    runs = _current_throughput_runs().filter(gpu__slug=gpu_slug, proxy=False).exclude(model="")
    if not getattr(user, "is_superuser", False):
        runs = runs.filter(team__members=user)  # type: ignore[misc]
    groups = sorted(set(runs.values_list("team_id", "team__name", "model")), key=lambda g: g[1:])
    out = []
    for team_id, team_name, model in groups:
        factors = calibration_from_runs(runs.filter(team_id=team_id, model=model)).get(gpu_slug)
        if factors:
            out.append({"team": team_name, "model": model, **factors})
    return out


# --- what the pages show ----------------------------------------------------------------------


def results_table(run: BenchmarkRun) -> list[dict[str, Any]]:
    """One row per canonical figure the run holds, with the tool's own name for it."""
    results, names = run.results or {}, run.source_names or {}
    estimate = run.estimate_at_import or {}
    rows: list[dict[str, Any]] = []
    for metric in LATENCY_METRICS:
        stats = results.get(metric)
        if not isinstance(stats, dict):
            continue
        for stat in STATS:
            if stat in stats:
                rows.append(
                    {
                        "figure": f"{metric}.{stat}",
                        "value": stats[stat],
                        "source": names.get(f"{metric}.{stat}", names.get(metric, "")),
                        "estimated": estimated_value(estimate, metric) if stat == "p50" else None,
                    }
                )
    for name in SCALARS:
        if results.get(name) is not None:
            rows.append(
                {
                    "figure": name,
                    "value": results[name],
                    "source": names.get(name, ""),
                    "estimated": estimated_value(estimate, name),
                }
            )
    return rows


def comparison_rows(runs: list[BenchmarkRun]) -> list[dict[str, Any]]:
    """Measured vs estimated figures of each THROUGHPUT_LATENCY run, for the charts."""
    rows = []
    for run in runs:
        if run.phase != BenchmarkRun.Phase.THROUGHPUT_LATENCY:
            continue
        estimate = run.estimate_at_import or {}
        rows.append(
            {
                "label": chart_label(run),
                "superseded": run.superseded_by_id is not None,
                "measured": {f: measured_value(run.results or {}, f) for f in COMPARED},
                "estimated": {f: estimated_value(estimate, f) for f in COMPARED},
            }
        )
    return rows


def brief_estimates(
    brief: WorkloadBrief, *, calibration: Mapping[str, Mapping[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """The engine's answer for a stored brief on every catalog GPU (raises EngineInputError),
    with the efficiency factors calibrated from its team's benchmark runs of its model."""
    if calibration is None:
        calibration = calibration_for_brief(brief)
    return estimates_for_request(request_for_brief(brief), calibration=calibration)
