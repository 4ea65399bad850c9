"""Writes of benchmark runs: import a results file as it was written (keeping the raw file),
or enter a Phase 1 / Phase 3 run by hand. Runs are never edited; a newer THROUGHPUT_LATENCY
run of the same candidate supersedes the older ones. Every new run asks for a recompute of
every candidate table (calibration can move other briefs on the same GPU)."""

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.db.models import FileField
from django.utils import timezone

from apps.briefs.models import WorkloadBrief
from apps.catalog.models import Gpu, GpuSystem
from apps.core.files import download_filename
from apps.engine.constants import MAX_GPU_COUNT
from apps.finance.services import candidate_tables_request_recompute
from apps.quotes.models import Quote

from .importers import CanonicalRun, ImportFormatError, content_sha256, parse_result_file
from .manual import conditions_clean, manual_results_clean
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


def _unique_labels(runs: list[CanonicalRun]) -> list[str]:
    """Labels that tell the runs of one file apart (the unique constraint includes them)."""
    seen: dict[str, int] = {}
    out = []
    for run in runs:
        label = _clean_json(run.label or "")[:180]
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} #{seen[label]}".strip())
    return out


def _raw_file_save(raw: bytes) -> str:
    """Store the file under a random name (the field's upload_to); the uploaded name is kept
    in ``raw_filename`` only, for the download."""
    field: FileField = BenchmarkRun._meta.get_field("raw_file")  # type: ignore[assignment]
    name = field.generate_filename(None, "")
    return field.storage.save(name, ContentFile(raw), max_length=field.max_length)


def _raw_file_delete(name: str) -> None:
    BenchmarkRun._meta.get_field("raw_file").storage.delete(name)  # type: ignore[union-attr]


def _supersede_older(new_runs: list[BenchmarkRun]) -> None:
    """Mark the candidate's older current THROUGHPUT_LATENCY runs superseded by the latest of
    ``new_runs`` (the runs of one file, e.g. a GuideLLM sweep, do not supersede each other)."""
    latest = new_runs[-1]
    BenchmarkRun.objects.filter(
        brief_id=latest.brief_id,
        gpu_id=latest.gpu_id,
        gpu_count=latest.gpu_count,
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
    candidate_tables_request_recompute(brief_ids=None)
    return runs


def benchmark_runs_import(
    *,
    brief: WorkloadBrief,
    gpu: Gpu,
    gpu_count: int,
    raw: bytes,
    filename: str,
    created_by: AbstractBaseUser,
    quote: Quote | None = None,
    system: GpuSystem | None = None,
    tool: str | None = None,
    conditions: dict[str, Any] | None = None,
) -> ImportOutcome:
    """Import one results file (one run, or several for a GuideLLM sweep) for a candidate.

    All or nothing: the raw file is stored, the rows are created in one transaction, and the
    stored file is deleted again if anything fails. The same file for the same candidate is
    recognised by its SHA-256 and returned as a duplicate without saving anything.
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
    system = _candidate_clean(brief=brief, gpu=gpu, gpu_count=gpu_count, quote=quote, system=system)
    extra = conditions_clean(conditions or {})
    sha = content_sha256(raw)
    same = {"brief": brief, "gpu_id": gpu.pk, "gpu_count": gpu_count, "raw_sha256": sha}
    existing = benchmark_runs_same_file(**same)
    if existing:
        return ImportOutcome(runs=existing, duplicate=True)

    prepared = []
    for canon, label in zip(parsed, _unique_labels(parsed), strict=True):
        run_conditions = {**_clean_json(canon.conditions), **extra}
        prepared.append(
            {
                "brief": brief,
                "team_id": brief.team_id,
                "gpu": gpu,
                "gpu_count": gpu_count,
                "quote": quote,
                "system": system,
                "phase": BenchmarkRun.Phase.THROUGHPUT_LATENCY,
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
    created_by: AbstractBaseUser,
    conditions: Any = None,
    label: str = "",
    quote: Quote | None = None,
    system: GpuSystem | None = None,
) -> BenchmarkRun:
    """A Phase 1 (MEMORY_FIT) or Phase 3 (FAILURE_OPS) run entered by hand."""
    system = _candidate_clean(brief=brief, gpu=gpu, gpu_count=gpu_count, quote=quote, system=system)
    run = BenchmarkRun(
        brief=brief,
        team_id=brief.team_id,
        gpu=gpu,
        gpu_count=gpu_count,
        quote=quote,
        system=system,
        phase=phase,
        tool=BenchmarkRun.Tool.MANUAL,
        label=_clean_json(label or ""),
        conditions=conditions_clean(conditions),
        results=manual_results_clean(phase, results),
        created_by=created_by,
    )
    run.full_clean()
    run.save()
    candidate_tables_request_recompute(brief_ids=None)
    return run
