"""Writes to the catalog: loading the shipped datasheet figures and model presets."""

import csv
from dataclasses import asdict
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.engine import PRESETS

from .models import Gpu, GpuSystem, ModelPreset

DATA_DIR = Path(__file__).resolve().parent / "data"
GPU_CSV = DATA_DIR / "gpus.csv"
SYSTEM_CSV = DATA_DIR / "systems.csv"

_GPU_DECIMALS = (
    "memory_gb",
    "memory_bandwidth_tbps",
    "bf16_dense_tflops",
    "fp8_dense_tflops",
    "fp4_dense_tflops",
    "int8_dense_tops",
    "interconnect_gbps_bidirectional",
)


def read_gpu_csv(path: Path = GPU_CSV) -> list[dict[str, Any]]:
    """The catalog CSV as model field values, one dict per row."""
    rows = []
    with path.open(newline="", encoding="utf-8") as handle:
        for raw in csv.DictReader(handle):
            row: dict[str, Any] = dict(raw)
            for name in _GPU_DECIMALS:
                row[name] = Decimal(row[name]) if row[name] else None
            row["tdp_w"] = int(row["tdp_w"])
            row["max_gpus_per_node"] = int(row["max_gpus_per_node"])
            # Empty where no driver-reported figure is on file (GB200, MI325X, B300, ...).
            mib = row.get("device_memory_mib", "")
            row["device_memory_mib"] = int(mib) if mib else None
            row["checked_date"] = date.fromisoformat(row["checked_date"])
            rows.append(row)
    return rows


def read_system_csv(path: Path = SYSTEM_CSV) -> list[dict[str, Any]]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = []
        for raw in csv.DictReader(handle):
            row: dict[str, Any] = dict(raw)
            row["gpus_per_node"] = int(row["gpus_per_node"])
            row["gpus_per_domain"] = int(row["gpus_per_domain"])
            row["fabric_gbps_per_gpu"] = Decimal(row["fabric_gbps_per_gpu"])
            row["checked_date"] = date.fromisoformat(row["checked_date"])
            rows.append(row)
        return rows


@transaction.atomic
def catalog_load() -> dict[str, int]:
    """Create or update every shipped GPU, system and model preset (idempotent).

    A handful of queries whatever the catalog's size: the rows that exist are read once, the
    new ones written with one bulk INSERT and the others with one bulk UPDATE per table (the
    test suite loads the catalog for most tests, and deployments on every start). Each row is
    validated first; slugs are unique in the shipped files and the database enforces it."""
    gpus = _load(Gpu, read_gpu_csv(), exclude=())
    system_rows = read_system_csv()
    for row in system_rows:
        row["gpu"] = gpus[row["gpu"]]
    # The GPU foreign key was just resolved from the rows above: no query to validate it.
    systems = _load(GpuSystem, system_rows, exclude=("gpu",))
    _load(ModelPreset, [{"slug": slug, **_preset_fields_cached(slug)} for slug in PRESETS])
    return {"gpus": len(gpus), "systems": len(systems), "presets": len(PRESETS)}


def _load(model: Any, rows: list[dict[str, Any]], exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """Create or update `rows` (field values by name, `slug` the natural key) of `model`."""
    existing = {obj.slug: obj for obj in model.objects.filter(slug__in=[r["slug"] for r in rows])}
    fields = sorted({name for row in rows for name in row} - {"slug"})
    new: list[Any] = []
    changed: list[Any] = []
    by_slug: dict[str, Any] = {}
    for row in rows:
        obj = existing.get(row["slug"]) or model(slug=row["slug"])
        by_slug[row["slug"]] = obj
        if obj.pk and all(getattr(obj, name) == row.get(name) for name in fields):
            continue  # unchanged since the last load
        for name in fields:
            setattr(obj, name, row.get(name))
        obj.full_clean(exclude=list(exclude), validate_unique=False, validate_constraints=False)
        (changed if obj.pk else new).append(obj)
    model.objects.bulk_create(new)
    if changed:
        now = timezone.now()  # bulk_update skips auto_now
        for obj in changed:
            obj.updated_at = now
        model.objects.bulk_update(changed, [*fields, "updated_at"])
    return by_slug


_PRESET_FIELDS: dict[str, dict[str, Any]] = {}


def _preset_fields_cached(slug: str) -> dict[str, Any]:
    """`_preset_fields` of a shipped preset, computed once per process (presets are constants,
    and `asdict` of a model spec is the slow part of a load)."""
    if slug not in _PRESET_FIELDS:
        _PRESET_FIELDS[slug] = _preset_fields(PRESETS[slug])
    return dict(_PRESET_FIELDS[slug])


def _preset_fields(spec: Any) -> dict[str, Any]:
    values = asdict(spec)
    return {
        "name": values.get("display_name") or values["name"],
        "kind": str(values.get("kind", "DECODER")),
        "params_billion": Decimal(str(round(values["params_billion"], 3))),
        "active_params_billion": Decimal(
            str(round(values.get("active_params_billion") or values["params_billion"], 3))
        ),
        "layers": values.get("layers") or None,
        "hidden_size": values.get("hidden_size") or None,
        "attention_heads": values.get("attention_heads") or None,
        "kv_heads": values.get("kv_heads") or None,
        "head_dim": values.get("head_dim") or None,
        "vocab_size": values.get("vocab_size") or None,
        "intermediate_size": values.get("intermediate_size") or None,
        "experts": values.get("experts") or 1,
        "active_experts": values.get("active_experts") or 1,
        "source": (values.get("source") or "")[:300],
    }
