"""Writes to the catalog: loading the shipped datasheet figures and model presets."""

import csv
from dataclasses import asdict
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.db import transaction

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
    """Create or update every shipped GPU, system and model preset (idempotent)."""
    gpus = {}
    for row in read_gpu_csv():
        slug = row.pop("slug")
        gpu, _ = Gpu.objects.update_or_create(slug=slug, defaults=row)
        gpu.full_clean()
        gpus[slug] = gpu
    systems = 0
    for row in read_system_csv():
        slug = row.pop("slug")
        row["gpu"] = gpus[row["gpu"]]
        system, _ = GpuSystem.objects.update_or_create(slug=slug, defaults=row)
        system.full_clean()
        systems += 1
    for slug, spec in PRESETS.items():
        ModelPreset.objects.update_or_create(slug=slug, defaults=_preset_fields(spec))
    return {"gpus": len(gpus), "systems": systems, "presets": len(PRESETS)}


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
