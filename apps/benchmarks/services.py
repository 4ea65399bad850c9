"""Writes of benchmark runs: import a results file as it was written (keeping the raw file),
or enter a Phase 1 / Phase 3 run by hand. Runs are never edited; a newer THROUGHPUT_LATENCY
run of the same candidate supersedes the older ones. A run belongs to a model: a file whose
model is not the brief's is refused unless it is imported as a proxy. Every new run asks for a
recompute of its team's candidate tables (calibration moves that team's briefs of the same model
on the same GPU, and no other team's)."""

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.db.models import FileField
from django.utils import timezone

from apps.briefs.models import WorkloadBrief
from apps.briefs.selectors import brief_weight_precision
from apps.catalog.models import Gpu, GpuSystem
from apps.core.files import download_filename
from apps.engine.constants import MAX_GPU_COUNT
from apps.finance.services import candidate_tables_request_recompute
from apps.quotes.models import Quote

from .file_facts import facts_clean, file_facts, load_clean
from .importers import (
    CanonicalRun,
    ImportFormatError,
    content_sha256,
    parse_result_file,
    results_fingerprint,
)
from .manual import conditions_clean, manual_results_clean
from .model_identity import brief_model_identity, brief_model_names, model_key, model_named_in
from .models import BenchmarkRun
from .selectors import benchmark_runs_same_file, estimate_for_run

MAX_STRING = 500
#: The download name of a raw file uploaded without a usable name (the importers read JSON).
DEFAULT_RAW_FILENAME = "result.json"
# Runs one results file may hold. A GuideLLM sweep is ~10 rates and a vLLM ``--append-result``
# file one line per run of a session; each run costs an engine estimate, a full_clean and a row
# (~12 queries; 90 ms a run measured by bench/imports.py on a 2-core machine at load 9), so 50
# runs import in under 5 s even there, well within a request.
# A longer file is refused in words: split it, or import the runs that matter.
MAX_RUNS_PER_FILE = 50


@dataclass(frozen=True)
class ImportOutcome:
    runs: list[BenchmarkRun]
    duplicate: bool  # the same file was already imported for this candidate: nothing new saved


def _clean_json(value: Any) -> Any:
    """Strings without NUL (PostgreSQL refuses it) and of bounded length, at any depth."""
    if isinstance(value, str):
        return value.replace("\x00", "")[:MAX_STRING]
    if isinstance(value, dict):
        return {_clean_json(str(k)): _clean_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_json(v) for v in value]
    return value


def _candidate_clean(
    *,
    brief: WorkloadBrief,
    gpu: Gpu,
    gpu_count: int,
    quote: Quote | None,
    system: GpuSystem | None,
) -> GpuSystem | None:
    """Check that the quote and system are of the run's GPU; the system the run ran on."""
    if not 1 <= gpu_count <= MAX_GPU_COUNT:
        raise ValidationError({"gpu_count": f"must be between 1 and {MAX_GPU_COUNT}"})
    if quote is not None:
        if quote.confidential_to_id not in (None, brief.team_id):
            # Worded as for an id that does not exist: the answer must not say that it does.
            raise ValidationError({"quote": f"no quote #{quote.pk}"})
        quote_gpu = quote.gpu or (quote.system.gpu if quote.system else None)
        if quote_gpu is None or quote_gpu.pk != gpu.pk:
            named = quote_gpu.slug if quote_gpu else "no GPU"
            raise ValidationError(
                {"quote": f"quote #{quote.pk} is for {named}, not for the run's GPU {gpu.slug}"}
            )
        system = system or quote.system
    if system is not None and system.gpu_id != gpu.pk:
        raise ValidationError(
            {"system": f"system {system.slug} is built from {system.gpu.slug}, not {gpu.slug}"}
        )
    return system


def _team_recompute(brief: WorkloadBrief) -> None:
    """A run changes the figures of its own team's briefs only (calibration is per team)."""
    team_briefs = WorkloadBrief.objects.filter(team_id=brief.team_id).values_list("pk", flat=True)
    candidate_tables_request_recompute(brief_ids=list(team_briefs))


def _precision_of(brief: WorkloadBrief) -> str:
    found = brief_weight_precision(brief)
    return found[0] if found else ""


@dataclass(frozen=True)
class RunModel:
    identity: str  # the brief's model (BenchmarkRun.model)
    named: str  # as the file, or the import's ``model`` field, names it
    proxy: bool


def run_model_clean(
    *, brief: WorkloadBrief, file_models: list[str], stated: str, proxy: bool
) -> RunModel:
    """Which model the runs of a file belong to; refuses (naming ``model``) a file of another
    model than the brief's unless ``proxy``, a file that names no model without ``model``, and a
    brief that names no model without ``model`` (see apps.benchmarks.model_identity)."""
    stated = stated.strip()[:200]
    identity = brief_model_identity(brief)
    names = brief_model_names(brief)
    if not identity:
        if not model_key(stated):
            raise ValidationError(
                {
                    "model": "the brief names no model (it is given as numbers): say in model "
                    "which model was benchmarked"
                }
            )
        identity = model_key(stated)
        names = {identity}
    named_in_file = sorted({name for name in file_models if name}, key=str.lower)
    distinct = {model_key(name) for name in named_in_file}
    if len(distinct) > 1:
        raise ValidationError(
            {"model": "the file's runs name different models: " + ", ".join(named_in_file)}
        )
    if named_in_file and model_key(stated) and model_key(stated) not in distinct:
        raise ValidationError(
            {"model": f"the file was run with {named_in_file[0]}, but model says {stated}"}
        )
    named = named_in_file[0] if named_in_file else stated
    if not model_key(named):
        raise ValidationError(
            {
                "model": f"the file names no model: say in model which model was benchmarked "
                f"(the brief's is {identity})"
            }
        )
    if model_key(named) not in names and not proxy:
        raise ValidationError(
            {
                "model": f"the file was run with {named}, not the brief's model {identity}; "
                "import it with proxy=true if it is the closest proxy (it then calibrates this "
                "brief only and is never its measurement)"
            }
        )
    return RunModel(identity=identity, named=named, proxy=proxy)


def _unique_labels(runs: list[CanonicalRun]) -> list[str]:
    """Labels that tell the runs of one file apart (the unique constraint includes them)."""
    seen: dict[str, int] = {}
    out = []
    for run in runs:
        label = _clean_json(run.label or "")[:180]
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} #{seen[label]}".strip())
    return out


def _same_run_elsewhere(*, brief: WorkloadBrief, sha: str, fingerprint: str) -> int | None:
    """The first run of the brief's team imported from another file with the very same
    figures (the same results fingerprint), or None: one indexed query, however many runs the
    team has (index run_team_results_sha256)."""
    return (
        BenchmarkRun.objects.filter(team_id=brief.team_id, results_sha256=fingerprint)
        .exclude(raw_sha256=sha)
        .exclude(raw_sha256="")
        .order_by("pk")
        .values_list("pk", flat=True)
        .first()
    )


def _raw_file_save(raw: bytes) -> str:
    """Store the file under a random name (the field's upload_to); the uploaded name is kept
    in ``raw_filename`` only, for the download."""
    field: FileField = BenchmarkRun._meta.get_field("raw_file")  # type: ignore[assignment]
    name = field.generate_filename(None, "")  # type: ignore[arg-type]  # upload_to ignores it
    return field.storage.save(name, ContentFile(raw), max_length=field.max_length)


def _raw_file_delete(name: str) -> None:
    BenchmarkRun._meta.get_field("raw_file").storage.delete(name)  # type: ignore[union-attr]


def _supersede_older(new_runs: list[BenchmarkRun]) -> None:
    """Mark the candidate's older current THROUGHPUT_LATENCY runs of the same model (and the same
    proxy status: a proxy never supersedes a measurement of the brief's model, nor the reverse)
    superseded by the latest of ``new_runs`` (the runs of one file, e.g. a GuideLLM sweep, do not
    supersede each other)."""
    latest = new_runs[-1]
    BenchmarkRun.objects.filter(
        brief_id=latest.brief_id,
        gpu_id=latest.gpu_id,
        gpu_count=latest.gpu_count,
        model=latest.model,
        proxy=latest.proxy,
        phase=BenchmarkRun.Phase.THROUGHPUT_LATENCY,
        superseded_by__isnull=True,
    ).exclude(pk__in=[run.pk for run in new_runs]).update(
        superseded_by=latest, updated_at=timezone.now()
    )


@transaction.atomic
def _imported_runs_create(*, prepared: list[dict[str, Any]], raw_name: str) -> list[BenchmarkRun]:
    runs = []
    for fields in prepared:
        run = BenchmarkRun(**fields)
        run.raw_file.name = raw_name
        run.full_clean()
        run.save()
        runs.append(run)
    _supersede_older(runs)
    _team_recompute(runs[0].brief)
    return runs


def benchmark_runs_import(
    *,
    brief: WorkloadBrief,
    gpu: Gpu | None,
    gpu_count: int | None,
    raw: bytes,
    filename: str,
    created_by: User,
    quote: Quote | None = None,
    system: GpuSystem | None = None,
    tool: str | None = None,
    conditions: dict[str, Any] | None = None,
    proxy: bool = False,
) -> ImportOutcome:
    """Import one results file (one run, or several for a GuideLLM sweep) for a candidate.

    All or nothing: the raw file is stored, the rows are created in one transaction, and the
    stored file is deleted again if anything fails. The same file for the same candidate is
    recognised by its SHA-256 and returned as a duplicate without saving anything.
    ``conditions["model"]`` names the model benchmarked where the file does not; ``proxy``
    accepts a file of another model as the closest proxy of the brief's. The file's own facts
    (GPU, GPUs per replica, replicas, precision, load) are what the runs record; ``gpu``,
    ``gpu_count``, ``conditions["precision"]``, ``conditions["concurrency"]`` and
    ``conditions["request_rate"]`` fill in what it does not say, and one that contradicts it is
    refused naming the field (apps.benchmarks.file_facts), proxy or not.
    Raises ``ValidationError`` naming the field (``file`` for a bad results file).
    """
    limit = settings.BENCHMARK_MAX_UPLOAD_BYTES
    if len(raw) > limit:
        raise ValidationError({"file": f"file too large: {len(raw)} bytes, the limit is {limit}"})
    try:
        parsed = parse_result_file(raw, tool=tool or None)
    except ImportFormatError as exc:
        raise ValidationError({"file": exc.message}) from exc
    if len(parsed) > MAX_RUNS_PER_FILE:
        raise ValidationError(
            {
                "file": f"the file holds {len(parsed):,} runs; one import takes at most "
                f"{MAX_RUNS_PER_FILE} (split the file, or keep the runs that matter)"
            }
        )
    extra = conditions_clean(conditions or {})
    facts = file_facts(parsed)
    load_clean(parsed, extra)
    stated_precision = extra.get("precision")
    gpu, gpu_count = facts_clean(
        facts,
        gpu=gpu,
        gpu_count=gpu_count,
        precision=stated_precision if isinstance(stated_precision, str) else "",
    )
    system = _candidate_clean(brief=brief, gpu=gpu, gpu_count=gpu_count, quote=quote, system=system)
    if facts.precision:
        extra.pop("precision", None)  # the file's, recorded below
    stated = extra.get("model")
    run_model = run_model_clean(
        brief=brief,
        file_models=[model_named_in(_clean_json(canon.conditions)) for canon in parsed],
        stated=stated if isinstance(stated, str) else "",
        proxy=proxy,
    )
    precision = facts.precision or _precision_of(brief)
    sha = content_sha256(raw)
    same: dict[str, Any] = {
        "brief": brief,
        "gpu_id": gpu.pk,
        "gpu_count": gpu_count,
        "raw_sha256": sha,
    }
    existing = benchmark_runs_same_file(**same)
    if existing:
        return ImportOutcome(runs=existing, duplicate=True)

    prepared = []
    for canon, label in zip(parsed, _unique_labels(parsed), strict=True):
        run_conditions = {**_clean_json(canon.conditions), **extra}
        fingerprint = results_fingerprint(canon.results)
        twin = _same_run_elsewhere(brief=brief, sha=sha, fingerprint=fingerprint)
        if twin is not None:
            # The same measurement in another file (a copy, or a tool's two exports of one run):
            # kept, and flagged so that it is not counted twice by whoever reads the runs.
            run_conditions["duplicate_of_run"] = twin
        if facts.replicas:
            run_conditions["replicas"] = facts.replicas
        if facts.precision:
            run_conditions["precision"] = facts.precision
        prepared.append(
            {
                "brief": brief,
                "team_id": brief.team_id,
                "gpu": gpu,
                "gpu_count": gpu_count,
                "quote": quote,
                "system": system,
                "phase": BenchmarkRun.Phase.THROUGHPUT_LATENCY,
                "model": run_model.identity,
                "model_named": run_model.named,
                "proxy": run_model.proxy,
                "weight_precision": precision,
                "tool": canon.tool,
                "tool_version": _clean_json(canon.tool_version or "")[:40],
                "label": label,
                "conditions": run_conditions,
                "results": canon.results,
                "source_names": _clean_json(canon.source_names),
                "estimate_at_import": estimate_for_run(
                    brief=brief,
                    gpu_slug=gpu.slug,
                    gpu_count=gpu_count,
                    results=canon.results,
                    conditions=run_conditions,
                ),
                "raw_sha256": sha,
                "results_sha256": fingerprint,
                "raw_filename": download_filename(filename, default=DEFAULT_RAW_FILENAME),
                "created_by": created_by,
            }
        )
    raw_name = _raw_file_save(raw)
    try:
        runs = _imported_runs_create(prepared=prepared, raw_name=raw_name)
    except (IntegrityError, ValidationError):
        _raw_file_delete(raw_name)
        existing = benchmark_runs_same_file(**same)
        if existing:  # imported by a concurrent request meanwhile
            return ImportOutcome(runs=existing, duplicate=True)
        raise
    except BaseException:
        _raw_file_delete(raw_name)
        raise
    return ImportOutcome(runs=runs, duplicate=False)


@transaction.atomic
def benchmark_run_create_manual(
    *,
    brief: WorkloadBrief,
    gpu: Gpu,
    gpu_count: int,
    phase: str,
    results: Any,
    created_by: User,
    conditions: Any = None,
    label: str = "",
    quote: Quote | None = None,
    system: GpuSystem | None = None,
) -> BenchmarkRun:
    """A Phase 1 (MEMORY_FIT) or Phase 3 (FAILURE_OPS) run entered by hand."""
    system = _candidate_clean(brief=brief, gpu=gpu, gpu_count=gpu_count, quote=quote, system=system)
    clean_conditions = conditions_clean(conditions)
    stated = clean_conditions.get("model")
    run = BenchmarkRun(
        brief=brief,
        team_id=brief.team_id,
        gpu=gpu,
        gpu_count=gpu_count,
        quote=quote,
        system=system,
        phase=phase,
        # A hand-entered Phase 1 / 3 run never calibrates: it is filed under the brief's model.
        model=brief_model_identity(brief) or model_key(stated),
        model_named=stated.strip()[:200] if isinstance(stated, str) else "",
        weight_precision=_precision_of(brief),
        tool=BenchmarkRun.Tool.MANUAL,
        label=_clean_json(label or ""),
        conditions=clean_conditions,
        results=manual_results_clean(phase, results),
        created_by=created_by,
    )
    run.full_clean()
    run.save()
    _team_recompute(brief)
    return run
