"""The catalog ships the datasheet figures exactly as the CSV has them."""

import csv
from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction

from apps.catalog.models import Gpu, GpuSystem, ModelPreset
from apps.catalog.selectors import gpu_specs
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
        assert Gpu.objects.count() == len(rows) == 31
        for row in rows:
            gpu = Gpu.objects.get(slug=row["slug"])
            for column, text in row.items():
                stored = getattr(gpu, column)
                if column in NUMERIC:
                    assert stored == (Decimal(text) if text else None), (row["slug"], column)
                elif column in {"tdp_w", "max_gpus_per_node"}:
                    assert stored == int(text), (row["slug"], column)
                elif column == "device_memory_mib":
                    assert stored == (int(text) if text else None), (row["slug"], column)
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

    def test_loading_again_restores_an_edited_row_and_its_preset(self, catalog):
        Gpu.objects.filter(slug="h100-sxm5-80gb").update(memory_gb=1, device_memory_mib=None)
        ModelPreset.objects.filter(slug="llama-3.1-8b").update(layers=1)
        catalog_load()
        h100 = Gpu.objects.get(slug="h100-sxm5-80gb")
        assert (h100.memory_gb, h100.device_memory_mib) == (80, 81559)
        assert ModelPreset.objects.get(slug="llama-3.1-8b").layers == 32

    def test_rack_scale_systems_are_described_as_systems(self, catalog):
        nvl72 = GpuSystem.objects.get(slug="gb200-nvl72")
        assert nvl72.gpus_per_domain == 72
        assert nvl72.gpu.slug == "gb200-nvl72-186gb"

    def test_gb300_nvl72_is_a_72_gpu_rack_of_blackwell_ultra(self, catalog):
        nvl72 = GpuSystem.objects.get(slug="gb300-nvl72")
        assert (nvl72.scale, nvl72.gpus_per_domain) == (GpuSystem.Scale.RACK, 72)
        assert nvl72.gpu.slug == "gb300-nvl72-288gb"
        assert nvl72.gpu.architecture == Gpu.Architecture.BLACKWELL_ULTRA


class TestNewGpus:
    """The four GPUs the shared catalog gained, with their architectures and memory figures."""

    def test_the_new_gpus_are_loaded_with_their_architectures(self, catalog):
        new = ["b300-sxm-288gb", "gb300-nvl72-288gb", "mi355x-288gb", "rtx-pro-6000-96gb"]
        architectures = dict(Gpu.objects.filter(slug__in=new).values_list("slug", "architecture"))
        assert architectures == {
            "b300-sxm-288gb": "BLACKWELL_ULTRA",
            "gb300-nvl72-288gb": "BLACKWELL_ULTRA",
            "mi355x-288gb": "CDNA4",
            "rtx-pro-6000-96gb": "BLACKWELL",
        }

    def test_empty_int8_and_device_memory_are_stored_as_null(self, catalog):
        b300 = Gpu.objects.get(slug="b300-sxm-288gb")
        assert b300.int8_dense_tops is None and b300.device_memory_mib is None
        assert Gpu.objects.get(slug="rtx-pro-6000-96gb").device_memory_mib == 97887

    def test_the_engine_sizes_against_device_memory_where_known(self, catalog):
        specs = {s.slug: s for s in gpu_specs()}
        assert len(specs) == 31
        assert specs["h100-sxm5-80gb"].device_memory_mib == 81559
        assert specs["mi355x-288gb"].device_memory_mib is None
        assert specs["mi355x-288gb"].architecture == "CDNA4"

    def test_a_non_positive_device_memory_is_refused_by_the_database(self, catalog):
        with pytest.raises(IntegrityError), transaction.atomic():
            Gpu.objects.filter(slug="l4-24gb").update(device_memory_mib=0)


class TestTheGpusPeopleRent:
    """The six GPUs the shared file gained (issue 26) and the catalog's own rows beyond it."""

    SHARED = {
        "a10-24gb": "AMPERE",
        "a40-48gb": "AMPERE",
        "rtx-a6000-48gb": "AMPERE",
        "l40-48gb": "ADA",
        "rtx-6000-ada-48gb": "ADA",
        "gh200-96gb": "HOPPER",
    }
    OWN = {
        "a10g-24gb": "AMPERE",
        "t4-16gb": "TURING",
        "v100-sxm2-16gb": "VOLTA",
        "v100-sxm2-32gb": "VOLTA",
    }

    def test_the_shared_files_new_gpus_load_with_their_architectures(self, catalog):
        got = dict(Gpu.objects.filter(slug__in=self.SHARED).values_list("slug", "architecture"))
        assert got == self.SHARED
        gh200 = Gpu.objects.get(slug="gh200-96gb")
        assert (gh200.memory_gb, gh200.max_gpus_per_node) == (96, 1)

    def test_the_catalogs_own_rows_load_and_each_cites_a_datasheet(self, catalog):
        rows = Gpu.objects.filter(slug__in=self.OWN)
        assert {g.slug: g.architecture for g in rows} == self.OWN
        for gpu in rows:
            assert "datasheet" in gpu.source.lower() or "spec sheet" in gpu.source.lower()
        memory = dict(rows.values_list("slug", "memory_gb"))
        assert memory == {
            "a10g-24gb": 24, "t4-16gb": 16, "v100-sxm2-16gb": 16, "v100-sxm2-32gb": 32,
        }  # fmt: skip

    def test_turing_and_volta_carry_their_fp16_rate_in_the_16_bit_column(self, catalog):
        t4 = Gpu.objects.get(slug="t4-16gb")
        v100 = Gpu.objects.get(slug="v100-sxm2-32gb")
        assert (t4.bf16_dense_tflops, t4.int8_dense_tops, t4.fp8_dense_tflops) == (65, 130, None)
        assert (v100.bf16_dense_tflops, v100.int8_dense_tops) == (125, None)
        assert "FP16" in t4.source and "FP16" in v100.source
