"""Real SkyPilot catalogs (tests/data/catalogs/SOURCES.md), read without the database: each
instance size its own quote, the providers' GPU names and memory units."""

from decimal import Decimal
from pathlib import Path

from apps.quotes.catalog_names import UNKNOWN_GPU
from apps.quotes.catalog_rows import SKYPILOT, read_catalog

DATA = Path(__file__).resolve().parents[1] / "data" / "catalogs"


def read(name: str):
    result = read_catalog((DATA / name).read_text(encoding="utf-8"), fmt=SKYPILOT, max_rows=10_000)
    assert result.problems == []
    return result


def quotes(result, slug: str, region: str, term: str = "ON_DEMAND"):
    """(GPUs per node, price a GPU-hour) of each instance size of ``slug`` in ``region``."""
    return sorted(
        (q.gpus_per_node, q.hourly_price_per_gpu)
        for q in result.quotes
        if (q.gpu_slug, q.region, q.term) == (slug, region, term)
    )


class TestLambda:
    def test_every_h100_instance_size_keeps_its_own_price(self):
        result = read("skypilot_lambda_vms_v8.csv")
        assert quotes(result, "h100-sxm5-80gb", "us-east-1") == [
            (1, Decimal("3.2900")), (2, Decimal("3.1900")), (4, Decimal("3.0900")),
            (8, Decimal("2.9900")),
        ]  # fmt: skip

    def test_the_a100_80gb_and_v100_are_8_gpu_instances_only(self):
        result = read("skypilot_lambda_vms_v8.csv")
        assert quotes(result, "a100-sxm4-80gb", "us-west-1") == [(8, Decimal("1.7900"))]
        assert quotes(result, "v100-sxm2-16gb", "us-west-1") == [(8, Decimal("0.5500"))]

    def test_the_gpus_the_catalog_gained_are_read(self):
        result = read("skypilot_lambda_vms_v8.csv")
        assert quotes(result, "gh200-96gb", "us-east-1") == [(1, Decimal("1.4900"))]
        assert quotes(result, "a10-24gb", "us-east-1") == [(1, Decimal("0.7500"))]
        # "A6000" (Lambda) is the RTX A6000: 1x, 2x and 4x instances at 0.80 a GPU.
        assert [n for n, _ in quotes(result, "rtx-a6000-48gb", "us-east-1")] == [1, 2, 4]

    def test_the_quadro_rtx_6000_is_not_taken_for_the_ada_card(self):
        result = read("skypilot_lambda_vms_v8.csv")
        unknown = [s for s in result.skipped.as_list() if s["reason"] == UNKNOWN_GPU]
        assert unknown == [{"name": "RTX6000", "reason": UNKNOWN_GPU, "rows": 17, "first_row": 172}]


class TestNebius:
    def test_a_4_gpu_l40s_is_costed_at_its_own_price_not_the_cheapest_1_gpu(self):
        result = read("skypilot_nebius_vms_v8.csv")
        l40s = quotes(result, "l40s-48gb", "eu-north1")
        # gpu-l40s-a_1gpu-8vcpu-32gb is 1.5484; gpu-l40s-d_4gpu-128vcpu-768gb is 9.1376 / 4.
        assert (1, Decimal("1.5484")) in l40s
        assert (4, Decimal("2.2844")) in l40s
        assert len(l40s) == 12  # one per instance type

    def test_the_b200_is_an_8_gpu_instance(self):
        result = read("skypilot_nebius_vms_v8.csv")
        assert quotes(result, "b200-sxm-180gb", "us-central1") == [(8, Decimal("5.5000"))]
        assert quotes(result, "h100-sxm5-80gb", "eu-north1", "SPOT") == [
            (1, Decimal("1.2500")), (8, Decimal("1.2500")),
        ]  # fmt: skip


class TestVerda:
    def test_the_b300_in_mib_matches_the_catalogs_gb(self):
        result = read("skypilot_verda_vms_v8.csv")
        # 268,288 MiB (262 GiB) per GPU: 281 GB against the catalog's 288.
        assert quotes(result, "b300-sxm-288gb", "FIN-03") == [
            (1, Decimal("6.9900")), (4, Decimal("6.9900")),
        ]  # fmt: skip
        # 2B300.60V has a spot price only: a spot quote, no on-demand one.
        assert (2, Decimal("2.4465")) in quotes(result, "b300-sxm-288gb", "FIN-03", "SPOT")

    def test_verdas_names_for_the_rtx_cards(self):
        result = read("skypilot_verda_vms_v8.csv")
        assert quotes(result, "rtx-6000-ada-48gb", "FIN-03") == [
            (1, Decimal("0.8262")), (2, Decimal("0.8260")),
        ]  # fmt: skip
        assert [n for n, _ in quotes(result, "rtx-pro-6000-96gb", "FIN-03")] == [1, 2, 4]

    def test_an_h100_or_a100_that_does_not_say_its_form_is_listed_not_guessed(self):
        result = read("skypilot_verda_vms_v8.csv")
        listed = {s["name"]: s["rows"] for s in result.skipped.as_list()}
        assert listed == {"A100-80GB": 3, "H100": 1}


class TestRunPod:
    def test_gb_written_as_mib_and_the_gpuinfo_name(self):
        result = read("skypilot_runpod_vms_v8_slice.csv")
        # SizeInMiB 80 is GB; GpuInfo "A100 PCIe" / "H100 PCIe" says the form factor.
        assert quotes(result, "a100-pcie-80gb", "US") == [(1, Decimal("1.3900"))]
        assert quotes(result, "h100-pcie-80gb", "US") == [(7, Decimal("2.8900"))]
        assert quotes(result, "h100-nvl-94gb", "US") == [(8, Decimal("3.1900"))]
        assert quotes(result, "h200-sxm-141gb", "US") == [(3, Decimal("4.5900"))]
        assert result.skipped.as_list() == []
