"""The catalog ships the datasheet figures exactly as the CSV has them."""

import csv
from decimal import Decimal

import pytest

from apps.catalog.models import Gpu, GpuSystem, ModelPreset
from apps.catalog.services import GPU_CSV, catalog_load
from apps.engine import PRESETS

pytestmark = pytest.mark.django_db

NUMERIC = {
    "memory_gb", "memory_bandwidth_tbps", "bf16_dense_tflops", "fp8_dense_tflops",
    "fp4_dense_tflops", "int8_dense_tops", "interconnect_gbps_bidirectional",
}  # fmt: skip


class TestCatalogLoad:
    def test_the_catalog_matches_the_csv_row_for_row(self, catalog):
        with GPU_CSV.open(newline="") as handle:
            rows = list(csv.DictReader(handle))
        assert Gpu.objects.count() == len(rows) == 17
        for row in rows:
            gpu = Gpu.objects.get(slug=row["slug"])
            for column, text in row.items():
                stored = getattr(gpu, column)
                if column in NUMERIC:
                    assert stored == (Decimal(text) if text else None), (row["slug"], column)
                elif column in {"tdp_w", "max_gpus_per_node"}:
                    assert stored == int(text), (row["slug"], column)
                elif column == "checked_date":
                    assert stored.isoformat() == text
                else:
                    assert stored == text, (row["slug"], column)

    def test_loading_twice_changes_nothing(self, catalog):
        before = list(Gpu.objects.order_by("slug").values_list("slug", "memory_gb", "updated_at"))
        counts = catalog_load()
        assert counts["gpus"] == len(before)
        after = list(Gpu.objects.order_by("slug").values_list("slug", "memory_gb"))
        assert after == [(s, m) for s, m, _ in before]
        assert ModelPreset.objects.count() == len(PRESETS) >= 25

    def test_rack_scale_systems_are_described_as_systems(self, catalog):
        nvl72 = GpuSystem.objects.get(slug="gb200-nvl72")
        assert nvl72.gpus_per_domain == 72
        assert nvl72.gpu.slug == "gb200-nvl72-186gb"
