"""What a results file itself says about the run: the GPU, GPUs per replica, replicas and
weight precision, and its load (concurrency or request rate, in the run's conditions as the
importers read them). The file's facts win over the import form's: a form value that contradicts
one is refused naming the field and what the file says (``facts_clean``, ``load_clean``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

from django.core.exceptions import ValidationError

from apps.catalog.models import Gpu
from apps.quotes.catalog_names import FAMILIES, parse_accelerator_name, resolve

from .importers import CanonicalRun

#: Condition keys the importers fill with the file's own hardware: an llm-d Benchmark Report's
#: ``accelerator`` / ``accelerator_count`` (per replica) / ``replicas``, trtllm-bench's
#: ``machine.name`` as ``gpu_name`` and its ``world_size`` (every GPU of the one engine).
GPU_KEYS = ("accelerator", "gpu_name")
COUNT_KEYS = ("accelerator_count", "world_size")
#: The file's precision, as the tools spell it (trtllm-bench ``engine.quantization``, a
#: Benchmark Report's ``model.quantization`` or the engine's ``--quantization`` / ``--dtype``),
#: in the engine's words. A spelling not listed is kept in the conditions, not guessed.
PRECISION_NAMES = {
    "NVFP4": "FP4", "FP4": "FP4", "MXFP4": "FP4", "W4A4_NVFP4": "FP4", "W4A4_MXFP4": "FP4",
    "FP8": "FP8", "FP8_BLOCK_SCALES": "FP8", "FP8_PER_CHANNEL_PER_TOKEN": "FP8", "W8A8_FP8": "FP8",
    "INT8": "INT8", "W8A8": "INT8", "W8A8_SQ_PER_CHANNEL": "INT8", "INT8_WO": "INT8",
    "W8A16": "INT8",
    "INT4": "INT4", "W4A16": "INT4", "W4A16_AWQ": "INT4", "W4A16_GPTQ": "INT4", "AWQ": "INT4",
    "GPTQ": "INT4", "INT4_AWQ": "INT4", "INT4_WO": "INT4",
    "BF16": "BF16", "BFLOAT16": "BF16", "FP16": "FP16", "FLOAT16": "FP16", "HALF": "FP16",
    "FP32": "FP32", "FLOAT32": "FP32", "FLOAT": "FP32",
}  # fmt: skip
PRECISION_KEYS = ("quantization", "dtype")


@dataclass(frozen=True, kw_only=True)
class FileFacts:
    gpu_named: str  # as the file names it ("" when it does not)
    gpu: Gpu | None  # the catalog GPU it is, where the name alone says
    gpu_count: int | None
    replicas: int | None
    precision: str  # the engine's Precision value ("" when the file does not say)
    precision_named: str


def _whole(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        return None
    return int(value) if value >= 1 else None


def _one(runs: list[CanonicalRun], keys: tuple[str, ...]) -> Any:
    """The value the runs' conditions give under the first of ``keys`` any run has; a file
    whose runs disagree is refused (its runs ran on different hardware: import them apart)."""
    for key in keys:
        values = {str(run.conditions[key]) for run in runs if run.conditions.get(key) is not None}
        if len(values) > 1:
            raise ValidationError(
                {"file": f"the file's runs name different {key} ({', '.join(sorted(values))}): "
                 "import each run's file apart"}
            )  # fmt: skip
        if values:
            return next(run.conditions[key] for run in runs if run.conditions.get(key) is not None)
    return None


def file_facts(runs: list[CanonicalRun]) -> FileFacts:
    named = _one(runs, GPU_KEYS)
    named = named.strip()[:80] if isinstance(named, str) else ""
    gpu = None
    if named:
        found = resolve(named)
        if found.slug is not None:
            gpu = Gpu.objects.filter(slug=found.slug).first()
    precision_named = _one(runs, PRECISION_KEYS)
    precision_named = str(precision_named).strip()[:40] if precision_named is not None else ""
    key = precision_named.upper().replace("-", "_").replace(" ", "_")
    return FileFacts(
        gpu_named=named,
        gpu=gpu,
        gpu_count=_whole(_one(runs, COUNT_KEYS)),
        replicas=_whole(_one(runs, ("replicas",))),
        precision=PRECISION_NAMES.get(key, ""),
        precision_named=precision_named,
    )


def _same_family(named: str, gpu: Gpu) -> bool:
    variants = FAMILIES.get(parse_accelerator_name(named).family, ())
    return any(v.slug == gpu.slug for v in variants)


def facts_clean(
    facts: FileFacts, *, gpu: Gpu | None, gpu_count: int | None, precision: str
) -> tuple[Gpu, int]:
    """The run's GPU and GPUs per replica: the file's where it says them, the form's where it
    does not. A form value that contradicts the file is a ValidationError naming the field and
    what the file says; a candidate neither gives is one naming the missing field."""
    chosen = gpu
    if facts.gpu_named:
        if facts.gpu is not None:
            if gpu is not None and gpu.pk != facts.gpu.pk:
                raise ValidationError(
                    {"gpu": f"the file says it ran on {facts.gpu_named} ({facts.gpu.slug}), "
                     f"not {gpu.slug}"}
                )  # fmt: skip
            chosen = facts.gpu
        elif gpu is None or not _same_family(facts.gpu_named, gpu):
            reason = resolve(facts.gpu_named).reason
            said = f" (which the file does not tell apart: {reason})" if gpu is None else ""
            raise ValidationError(
                {"gpu": f"the file says it ran on {facts.gpu_named}{said}"
                 + ("" if gpu is None else f", not {gpu.slug}")
                 + ("" if resolve(facts.gpu_named).known_family else
                    "; the GPU catalog has no such GPU")}
            )  # fmt: skip
    if chosen is None:
        raise ValidationError({"gpu": "the file does not say which GPU it ran on: choose it"})
    count = gpu_count
    if facts.gpu_count is not None:
        if gpu_count is not None and gpu_count != facts.gpu_count:
            raise ValidationError(
                {"gpu_count": f"the file says {facts.gpu_count} GPUs per replica "
                 f"({facts.gpu_named or 'its accelerator count'}), not {gpu_count}"}
            )  # fmt: skip
        count = facts.gpu_count
    if count is None:
        raise ValidationError({"gpu_count": "the file does not say how many GPUs: give it"})
    if facts.precision and precision:
        stated = PRECISION_NAMES.get(precision.strip().upper().replace("-", "_"), precision)
        if stated.upper() != facts.precision:
            raise ValidationError(
                {"precision": f"the file says {facts.precision_named} ({facts.precision}), "
                 f"not {precision}"}
            )  # fmt: skip
    return chosen, count


#: The load a form may state, with the condition keys the importers fill with the file's own
#: setting (apps.benchmarks.selectors.run_concurrency reads the same keys) and its unit in words.
#: SGLang's measured ``concurrency`` is stored as ``measured_concurrency`` and is not a setting.
LOAD_FIELDS: Final = {
    "concurrency": (("concurrency", "max_concurrency"), "requests in flight"),
    "request_rate": (("request_rate",), "requests per second"),
}
#: Two rates closer than this (relative) are the same setting: a form's 2.5 against a file's
#: 2.5000001 is one value written twice, not a contradiction.
SAME_LOAD_TOLERANCE: Final = 1e-6


def _load_value(value: Any) -> float | str | None:
    """A file's load setting as a number (inf for an unbounded one), or its text when it is not
    a number (a list of rates, say), or None when absent."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and value.strip().lower() in ("inf", "infinity"):
        return math.inf
    return str(value)[:60]


def _same_load(said: float | str, stated: float) -> bool:
    if isinstance(said, str):
        return False
    return math.isclose(said, stated, rel_tol=SAME_LOAD_TOLERANCE)


def _load_order(value: float | str) -> tuple[int, float, str]:
    """Numbers in order (unbounded last among them), then texts."""
    if isinstance(value, str):
        return (1, 0.0, value)
    return (0, value, "")


def _shown(value: float | str) -> str:
    if isinstance(value, str):
        return value
    return "unbounded (inf)" if math.isinf(value) else f"{value:g}"


def load_clean(runs: list[CanonicalRun], stated: dict[str, Any]) -> None:
    """Refuse a form's concurrency or request rate that a run of the file contradicts: a
    ValidationError naming the field and what the file says. A run that states no load takes
    the form's (it is recorded in the run's conditions)."""
    for field, (keys, unit) in LOAD_FIELDS.items():
        value = stated.get(field)
        if value is None:
            continue
        said: set[float | str] = set()
        for run in runs:
            for key in keys:
                found = _load_value(run.conditions.get(key))
                if found is not None:
                    said.add(found)
                    break
        wrong = sorted((v for v in said if not _same_load(v, float(value))), key=_load_order)
        if wrong:
            runs_word = "its runs were" if len(runs) > 1 else "it ran at"
            raise ValidationError(
                {field: f"the file says {runs_word} {field.replace('_', ' ')} "
                 f"{', '.join(_shown(v) for v in wrong)} ({unit}), not {float(value):g}"}
            )  # fmt: skip
