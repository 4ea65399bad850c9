"""Catalog files -> quotes, without the database: accelerator names, per-GPU prices, the
cheapest zone, spot, and what is listed rather than guessed."""

from decimal import Decimal
from pathlib import Path

import pytest

from apps.quotes.catalog_names import UNKNOWN_GPU, parse_accelerator_name, resolve
from apps.quotes.catalog_rows import (
    GPUHUNT,
    SKYPILOT,
    CatalogFileError,
    read_catalog,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "catalogs"
AWS_HEADER = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,"
    "Region,AvailabilityZone"
)
GPUHUNT_HEADER = "instance_name,location,price,cpu,memory,gpu_count,gpu_name,gpu_memory,spot"


def read(name: str, fmt: str):
    return read_catalog((DATA / name).read_text(), fmt=fmt, max_rows=1000)


def by_key(result):
    return {(q.gpu_slug, q.region, q.term): q for q in result.quotes}


class TestAcceleratorNames:
    @pytest.mark.parametrize(
        ("name", "memory", "instance", "slug"),
        [
            ("H100", Decimal(80), "p5.48xlarge", "h100-sxm5-80gb"),  # AWS p5: HGX H100
            ("H100", Decimal(80), "a3-highgpu-8g", "h100-sxm5-80gb"),  # GCP A3
            ("H100-MEGA", None, "", "h100-sxm5-80gb"),  # GCP A3 Mega
            ("H100-SXM", None, "", "h100-sxm5-80gb"),
            ("H100-PCIe", None, "", "h100-pcie-80gb"),
            ("H100", Decimal(80), "gpu_1x_h100_pcie", "h100-pcie-80gb"),  # Lambda
            ("H100NVL", Decimal(94), "", "h100-nvl-94gb"),  # gpuhunt's NVL name
            ("H100", Decimal(94), "", "h100-nvl-94gb"),  # the memory says NVL
            ("H100", Decimal(80), "Standard_NC40ads_H100_v5", None),  # NVL, but 80 GB: no match
            ("A100", None, "p4d.24xlarge", "a100-sxm4-40gb"),  # SkyPilot: bare A100 is 40 GB
            ("A100-80GB", None, "p4de.24xlarge", "a100-sxm4-80gb"),
            ("A100", Decimal(80), "gpu_8x_a100_80gb_sxm4", "a100-sxm4-80gb"),
            ("A100", Decimal(40), "Standard_NC24ads_A100_v4", "a100-pcie-40gb"),
            ("A100", Decimal(40), "Standard_ND96asr_v4", "a100-sxm4-40gb"),
            ("H100", Decimal(80), "Standard_ND96isr_H100_v5", "h100-sxm5-80gb"),
            ("H200", Decimal(141), "p5en.48xlarge", "h200-sxm-141gb"),
            ("H200", None, "", "h200-sxm-141gb"),  # gpuhunt names the NVL part H200NVL
            ("H200NVL", Decimal(141), "", "h200-nvl-141gb"),
            ("B200", Decimal(180), "", "b200-sxm-180gb"),
            ("B300", Decimal(270), "", "b300-sxm-288gb"),  # gpuhunt's 270 GB, within tolerance
            ("L40S", Decimal("44.7"), "g6e.xlarge", "l40s-48gb"),  # AWS reports 45,776 MiB
            ("L4", None, "", "l4-24gb"),
            ("RTXPRO6000", Decimal(96), "", "rtx-pro-6000-96gb"),
            ("NVIDIA RTX 4090", None, "", "rtx-4090-24gb"),
            ("MI300X", Decimal(192), "", "mi300x-192gb"),
        ],
    )
    def test_names_map_to_the_catalog_slug_the_source_means(self, name, memory, instance, slug):
        assert resolve(name, memory_gb=memory, instance=instance).slug == slug

    def test_a_bare_h100_without_a_hint_is_not_guessed(self):
        found = resolve("H100", memory_gb=Decimal(80), instance="1H100.80S.30V")
        assert found.slug is None
        assert found.known_family
        assert "h100-sxm5-80gb or h100-pcie-80gb" in found.reason
        assert "PCIe or SXM" in found.reason

    def test_an_a100_of_unknown_form_is_not_guessed(self):
        assert resolve("A100", memory_gb=Decimal(40), instance="gpu_1x_a100").slug is None

    @pytest.mark.parametrize("name", ["T4", "A10G", "V100", "GH200", "L40", "tpu-v5p-8", ""])
    def test_names_the_catalog_lacks_are_unknown(self, name):
        found = resolve(name)
        assert (found.slug, found.known_family, found.reason) == (None, False, UNKNOWN_GPU)

    def test_a_name_is_read_into_family_form_and_memory(self):
        parsed = parse_accelerator_name("NVIDIA A100-SXM4-80GB")
        assert (parsed.family, parsed.form, parsed.memory_gb) == ("A100", "SXM", Decimal(80))


class TestSkyPilotAws:
    def test_per_gpu_price_is_the_instance_price_over_its_gpus(self):
        quotes = by_key(read("skypilot_aws_vms.csv", SKYPILOT))
        # p5.48xlarge: 55.04 an hour for 8 H100 = 6.88 per GPU-hour.
        assert quotes[("h100-sxm5-80gb", "us-east-1", "ON_DEMAND")].hourly_price_per_gpu == (
            Decimal("6.8800")
        )
        # p4de.24xlarge: 27.44705 / 8 = 3.43088125, stored to 4 places.
        assert quotes[("a100-sxm4-80gb", "us-east-1", "ON_DEMAND")].hourly_price_per_gpu == (
            Decimal("3.4309")
        )

    def test_spot_is_a_separate_quote_at_the_cheapest_zone(self):
        quotes = by_key(read("skypilot_aws_vms.csv", SKYPILOT))
        spot = quotes[("h100-sxm5-80gb", "us-east-1", "SPOT")]
        # use1-az2 24.6819, use1-az4 21.3184: the cheaper zone, / 8.
        assert (spot.hourly_price_per_gpu, spot.offer.zone) == (Decimal("2.6648"), "use1-az4")

    def test_no_spot_quote_without_a_spot_price(self):
        quotes = by_key(read("skypilot_aws_vms.csv", SKYPILOT))
        assert ("h100-sxm5-80gb", "us-west-2", "ON_DEMAND") in quotes
        assert ("h100-sxm5-80gb", "us-west-2", "SPOT") not in quotes
        assert ("a100-sxm4-80gb", "us-east-1", "SPOT") not in quotes  # p4de: SpotPrice empty

    def test_one_quote_per_gpu_region_and_term_with_the_largest_node(self):
        result = read("skypilot_aws_vms.csv", SKYPILOT)
        keys = [(q.gpu_slug, q.region, q.term) for q in result.quotes]
        assert len(keys) == len(set(keys)) == 10
        # p5.4xlarge (1 GPU) and p5.48xlarge (8) both at 6.88 per GPU: a node holds 8.
        assert by_key(result)[("h100-sxm5-80gb", "us-east-1", "ON_DEMAND")].gpus_per_node == 8

    def test_cpu_rows_are_ignored_and_unknown_or_fractional_gpus_listed(self):
        result = read("skypilot_aws_vms.csv", SKYPILOT)
        assert result.problems == []
        assert result.skipped.unknown_names() == ["A10G", "T4"]
        reasons = {(s["name"], s["reason"]) for s in result.skipped.as_list()}
        assert ("L4", "a fractional GPU (a slice of one), not a GPU quote") in reasons


class TestSkyPilotGcp:
    def test_the_other_column_order_is_read_by_header_name(self):
        result = read("skypilot_gcp_vms.csv", SKYPILOT)
        assert result.problems == []
        assert {q.gpu_slug for q in result.quotes} == {
            "a100-sxm4-40gb", "h100-sxm5-80gb", "l4-24gb",
        }  # fmt: skip

    def test_an_accelerator_row_is_priced_with_its_host_vm(self):
        quotes = by_key(read("skypilot_gcp_vms.csv", SKYPILOT))
        # 8 H100 78.79488 + a3-highgpu-8g 9.46008 = 88.25496 an hour: 11.0319 per GPU-hour.
        h100 = quotes[("h100-sxm5-80gb", "us-central1", "ON_DEMAND")]
        assert (h100.hourly_price_per_gpu, h100.offer.instance) == (
            Decimal("11.0319"), "a3-highgpu-8g",
        )  # fmt: skip
        # Spot: zone b's 17.55208 + 2.17544 beats zone a's 19.03416 + 2.17544.
        spot = quotes[("h100-sxm5-80gb", "us-central1", "SPOT")]
        assert (spot.hourly_price_per_gpu, spot.offer.zone) == (Decimal("2.4659"), "us-central1-b")

    def test_the_cheapest_host_vm_of_several_is_taken(self):
        quotes = by_key(read("skypilot_gcp_vms.csv", SKYPILOT))
        l4 = quotes[("l4-24gb", "us-central1", "ON_DEMAND")]
        assert (l4.offer.instance, l4.hourly_price_per_gpu) == ("g2-standard-4", Decimal("0.7073"))

    def test_an_accelerator_without_its_host_vm_in_the_file_is_listed(self):
        result = read("skypilot_gcp_vms.csv", SKYPILOT)
        assert ("h100-sxm5-80gb", "europe-west4", "ON_DEMAND") not in by_key(result)
        names = {s["name"] for s in result.skipped.as_list() if "host VM" in str(s["reason"])}
        assert names == {"H100"}


class TestGpuhunt:
    def test_lambda_rows_resolve_by_instance_name(self):
        quotes = by_key(read("gpuhunt_lambdalabs.csv", GPUHUNT))
        assert quotes[("h100-pcie-80gb", "us-east-1", "ON_DEMAND")].hourly_price_per_gpu == (
            Decimal("2.4900")
        )
        # 8x SXM5 at 23.92 (2.99 a GPU) beats 1x SXM5 at 3.29.
        sxm = quotes[("h100-sxm5-80gb", "us-east-1", "ON_DEMAND")]
        assert (sxm.hourly_price_per_gpu, sxm.gpus_per_node) == (Decimal("2.9900"), 8)

    def test_ambiguous_and_unknown_names_are_listed(self):
        result = read("gpuhunt_lambdalabs.csv", GPUHUNT)
        assert result.skipped.unknown_names() == ["A10", "GH200"]
        ambiguous = [s for s in result.skipped.as_list() if s["reason"] != UNKNOWN_GPU]
        assert [(s["name"], s["first_row"]) for s in ambiguous] == [("A100", 3)]

    def test_spot_rows_are_spot_quotes(self):
        quotes = by_key(read("gpuhunt_aws_v2_2025.csv", GPUHUNT))
        assert quotes[("h100-sxm5-80gb", "us-east-1", "SPOT")].hourly_price_per_gpu == (
            Decimal("2.6648")
        )
        assert quotes[("l40s-48gb", "us-east-1", "SPOT")].hourly_price_per_gpu == Decimal("0.7024")

    def test_a_file_of_several_providers_is_refused(self):
        text = (
            "provider,instance_name,location,price,gpu_count,gpu_name,gpu_memory,spot\n"
            "aws,p5.48xlarge,us-east-1,55.04,8,H100,80,False\n"
            "gcp,a3-highgpu-8g,us-central1-a,88.25,8,H100,80,False\n"
        )
        result = read_catalog(text, fmt=GPUHUNT, max_rows=10)
        assert [(p.row, p.field) for p in result.problems] == [(1, "provider")]


class TestRowProblems:
    def test_bad_values_are_reported_row_by_row(self):
        text = "\n".join([
            AWS_HEADER,
            "p5.48xlarge,H100,8,192,2048,,abc,,us-east-1,use1-az2",
            "p5.48xlarge,H100,8,192,2048,,-1,,us-east-1,use1-az2",
            "p5.48xlarge,H100,eight,192,2048,,55.04,,us-east-1,use1-az2",
            "p5.48xlarge,H100,8,192,2048,,55.04,,,use1-az2",
            "p5.48xlarge,H100,8,192,2048,,,,us-east-1,use1-az2",
        ])  # fmt: skip
        result = read_catalog(text, fmt=SKYPILOT, max_rows=10)
        assert [(p.row, p.field) for p in result.problems] == [
            (2, "Price"), (3, "Price"), (4, "AcceleratorCount"), (5, "Region"), (6, "Price"),
        ]  # fmt: skip

    def test_a_missing_column_is_named(self):
        with pytest.raises(CatalogFileError) as caught:
            read_catalog("InstanceType,AcceleratorName,Price\n", fmt=SKYPILOT, max_rows=10)
        assert [p.field for p in caught.value.problems] == ["AcceleratorCount", "Region"]

    def test_gpuhunt_spot_must_be_true_or_false(self):
        text = f"{GPUHUNT_HEADER}\np5.48xlarge,us-east-1,55.04,192,2048,8,H100,80,maybe\n"
        result = read_catalog(text, fmt=GPUHUNT, max_rows=10)
        assert [(p.row, p.field) for p in result.problems] == [(2, "spot")]

    def test_too_many_rows(self):
        rows = [f"m6i.large,,,2,8,,0.096,,us-east-1,use1-az{i}" for i in range(5)]
        result = read_catalog("\n".join([AWS_HEADER, *rows]), fmt=SKYPILOT, max_rows=3)
        assert [p.row for p in result.problems] == [5]
