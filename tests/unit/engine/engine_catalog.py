"""Build engine GpuSpecs from the catalog CSV (tests and bench only; never through Django)."""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path

from apps.engine import GpuSpec

CATALOG_CSV = Path(__file__).resolve().parents[3] / "apps" / "catalog" / "data" / "gpus.csv"


def _opt(value: str) -> float | None:
    return float(value) if value.strip() else None


@cache
def load_gpus(path: Path = CATALOG_CSV) -> tuple[GpuSpec, ...]:
    with path.open(newline="") as fh:
        return tuple(
            GpuSpec(
                slug=row["slug"],
                name=row["name"],
                vendor=row["vendor"],
                form_factor=row["form_factor"],
                memory_gb=float(row["memory_gb"]),
                memory_bandwidth_tbps=float(row["memory_bandwidth_tbps"]),
                bf16_tflops=float(row["bf16_dense_tflops"]),
                fp8_tflops=_opt(row["fp8_dense_tflops"]),
                fp4_tflops=_opt(row["fp4_dense_tflops"]),
                int8_tops=_opt(row["int8_dense_tops"]),
                tdp_w=float(row["tdp_w"]),
                interconnect=row["interconnect"],
                interconnect_gbps=float(row["interconnect_gbps_bidirectional"]),
                max_gpus_per_node=int(row["max_gpus_per_node"]),
                architecture=row["architecture"],
                device_memory_mib=int(row["device_memory_mib"])
                if row["device_memory_mib"].strip()
                else None,
            )
            for row in csv.DictReader(fh)
        )


def gpu(slug: str) -> GpuSpec:
    for g in load_gpus():
        if g.slug == slug:
            return g
    raise KeyError(slug)
