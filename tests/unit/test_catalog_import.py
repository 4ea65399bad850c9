"""Catalog files -> quotes, without the database: accelerator names, per-GPU prices, one quote
per instance size at its cheapest zone, spot, and what is listed rather than guessed."""

from decimal import Decimal
from pathlib import Path

import pytest

from apps.quotes.catalog_names import (
    UNKNOWN_GPU,
    memory_from_mib,
    parse_accelerator_name,
    resolve,
)
from apps.quotes.catalog_rows import (
    GPUHUNT,
    NO_PRICE,
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
    """Quotes by (GPU, instance type, region, term): one each."""
    found = {(q.gpu_slug, q.instance, q.region, q.term): q for q in result.quotes}
    assert len(found) == len(result.quotes)
    return found


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
            # Providers' own spellings (RunPod's GPU type ids, Verda and Lambda in SkyPilot):
            ("H100-80GB-HBM3", None, "", "h100-sxm5-80gb"),  # HBM3 at 80 GB: the SXM part
            ("NVIDIA H100 80GB HBM3", None, "", "h100-sxm5-80gb"),
            ("A100-80GB-SXM4", None, "", "a100-sxm4-80gb"),
            ("NVIDIA A100-SXM4-80GB", None, "", "a100-sxm4-80gb"),
            ("NVIDIA A100 80GB PCIe", None, "", "a100-pcie-80gb"),
            ("RTX6000-Ada", None, "", "rtx-6000-ada-48gb"),
            ("RTX-6000-Ada", Decimal(48), "1RTX6000ADA.10V", "rtx-6000-ada-48gb"),  # Verda
            ("NVIDIA RTX 6000 Ada Generation", None, "", "rtx-6000-ada-48gb"),
            ("RTX-PRO-6000", Decimal(96), "", "rtx-pro-6000-96gb"),  # Verda
            ("A6000", Decimal(48), "gpu_1x_a6000", "rtx-a6000-48gb"),  # Lambda
            ("NVIDIA RTX A6000", None, "", "rtx-a6000-48gb"),
            ("A10G", Decimal(24), "g5.xlarge", "a10g-24gb"),  # AWS G5
            ("A10", Decimal(24), "gpu_1x_a10", "a10-24gb"),
            ("A40", None, "", "a40-48gb"),
            ("L40", None, "", "l40-48gb"),
            ("NVIDIA L40S", None, "", "l40s-48gb"),
            ("T4", Decimal(16), "g4dn.xlarge", "t4-16gb"),
            ("Tesla V100-SXM2-16GB", None, "", "v100-sxm2-16gb"),
            ("V100", Decimal(16), "gpu_8x_v100", "v100-sxm2-16gb"),  # Lambda
            ("V100", Decimal(32), "p3dn.24xlarge", "v100-sxm2-32gb"),
            ("GH200", Decimal(96), "gpu_1x_gh200", "gh200-96gb"),
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

    # Lambda's RTX6000 is the Turing Quadro RTX 6000 (24 GB): not the 48 GB Ada card.
    @pytest.mark.parametrize("name", ["RTX6000", "K80", "A800", "tpu-v5p-8", ""])
    def test_names_the_catalog_lacks_are_unknown(self, name):
        found = resolve(name)
        assert (found.slug, found.known_family, found.reason) == (None, False, UNKNOWN_GPU)

    def test_a_name_is_read_into_family_form_and_memory(self):
        parsed = parse_accelerator_name("NVIDIA A100-SXM4-80GB")
        assert (parsed.family, parsed.form, parsed.memory_gb) == ("A100", "SXM", Decimal(80))

    def test_a_memory_type_token_is_read_apart_from_the_family(self):
        parsed = parse_accelerator_name("H100-80GB-HBM3")
        assert (parsed.family, parsed.memory_gb, parsed.memory_type) == (
            "H100", Decimal(80), "HBM3",
        )  # fmt: skip

    def test_the_sources_own_gpu_name_says_the_form_factor(self):
        # RunPod (SkyPilot v8): AcceleratorName H100, GpuInfo Name "H100 PCIe", 80 (GB).
        found = resolve(
            "H100", memory_gb=memory_from_mib(Decimal(80)), instance="7x_H100_SECURE",
            source_name="H100 PCIe",
        )  # fmt: skip
        assert found.slug == "h100-pcie-80gb"


class TestMemoryUnits:
    """Memory compared in one unit, GB (10**9 bytes): a MiB figure is converted."""

    def test_verdas_b300_in_mib_matches_the_catalogs_288_gb(self):
        # 268,288 MiB = 262 GiB = 281.3 GB: within tolerance of 288 GB only once converted.
        readings = memory_from_mib(Decimal(268288))
        assert [round(r, 1) for r in readings] == [Decimal("262.0"), Decimal("281.3")]
        assert resolve("B300", memory_gb=readings).slug == "b300-sxm-288gb"

    def test_skypilots_nominal_mib_still_names_the_nominal_part(self):
        # SkyPilot writes an "80 GB" A100 as 81,920 MiB (80 x 1024), which is 85.9 GB.
        readings = memory_from_mib(Decimal(81920))
        assert resolve("A100", memory_gb=readings, instance="p4de.24xlarge").slug == (
            "a100-sxm4-80gb"
        )
        assert resolve("H100", memory_gb=readings, instance="").slug is None  # SXM or PCIe

    def test_runpods_gb_written_as_mib_is_read_as_gb(self):
        assert memory_from_mib(Decimal(141)) == (Decimal(141),)
        assert resolve("H200-SXM", memory_gb=(Decimal(141),)).slug == "h200-sxm-141gb"

    def test_the_reason_names_the_memory_in_gb(self):
        found = resolve("H200", memory_gb=memory_from_mib(Decimal(98304)))
        assert found.slug is None
        assert found.reason == "no H200 in the GPU catalog matches SXM, 103.1 GB"


class TestSkyPilotAws:
    def test_per_gpu_price_is_the_instance_price_over_its_gpus(self):
        quotes = by_key(read("skypilot_aws_vms.csv", SKYPILOT))
        # p5.48xlarge: 55.04 an hour for 8 H100 = 6.88 per GPU-hour.
        p5 = quotes[("h100-sxm5-80gb", "p5.48xlarge", "us-east-1", "ON_DEMAND")]
        assert (p5.hourly_price_per_gpu, p5.gpus_per_node) == (Decimal("6.8800"), 8)
        # p4de.24xlarge: 27.44705 / 8 = 3.43088125, stored to 4 places.
        p4de = quotes[("a100-sxm4-80gb", "p4de.24xlarge", "us-east-1", "ON_DEMAND")]
        assert p4de.hourly_price_per_gpu == Decimal("3.4309")

    def test_spot_is_a_separate_quote_at_the_cheapest_zone(self):
        quotes = by_key(read("skypilot_aws_vms.csv", SKYPILOT))
        spot = quotes[("h100-sxm5-80gb", "p5.48xlarge", "us-east-1", "SPOT")]
        # use1-az2 24.6819, use1-az4 21.3184: the cheaper zone, / 8.
        assert (spot.hourly_price_per_gpu, spot.offer.zone) == (Decimal("2.6648"), "use1-az4")

    def test_no_spot_quote_without_a_spot_price(self):
        quotes = by_key(read("skypilot_aws_vms.csv", SKYPILOT))
        assert ("h100-sxm5-80gb", "p5.48xlarge", "us-west-2", "ON_DEMAND") in quotes
        assert ("h100-sxm5-80gb", "p5.48xlarge", "us-west-2", "SPOT") not in quotes
        # p4de: SpotPrice empty.
        assert ("a100-sxm4-80gb", "p4de.24xlarge", "us-east-1", "SPOT") not in quotes

    def test_each_instance_size_is_its_own_quote(self):
        quotes = by_key(read("skypilot_aws_vms.csv", SKYPILOT))
        # p5.4xlarge (1 H100) and p5.48xlarge (8): two quotes, each its own node size.
        one = quotes[("h100-sxm5-80gb", "p5.4xlarge", "us-east-1", "ON_DEMAND")]
        eight = quotes[("h100-sxm5-80gb", "p5.48xlarge", "us-east-1", "ON_DEMAND")]
        assert (one.gpus_per_node, eight.gpus_per_node) == (1, 8)
        # g6e.xlarge (1 L40S, 1.861) and g6e.48xlarge (8, 30.13 / 8 = 3.7664): never mixed.
        small = quotes[("l40s-48gb", "g6e.xlarge", "us-east-1", "ON_DEMAND")]
        large = quotes[("l40s-48gb", "g6e.48xlarge", "us-east-1", "ON_DEMAND")]
        assert (small.hourly_price_per_gpu, small.gpus_per_node) == (Decimal("1.8610"), 1)
        assert (large.hourly_price_per_gpu, large.gpus_per_node) == (Decimal("3.7664"), 8)
        assert len(quotes) == 17

    def test_cpu_rows_are_ignored_and_fractional_gpus_listed(self):
        result = read("skypilot_aws_vms.csv", SKYPILOT)
        assert result.problems == []
        assert result.skipped.unknown_names() == []
        reasons = {(s["name"], s["reason"]) for s in result.skipped.as_list()}
        assert reasons == {("L4", "a fractional GPU (a slice of one), not a GPU quote")}
        assert {q.gpu_slug for q in result.quotes} >= {"t4-16gb", "a10g-24gb"}


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
        h100 = quotes[("h100-sxm5-80gb", "H100 x 8", "us-central1", "ON_DEMAND")]
        assert (h100.hourly_price_per_gpu, h100.offer.instance) == (
            Decimal("11.0319"), "a3-highgpu-8g",
        )  # fmt: skip
        # Spot: zone b's 17.55208 + 2.17544 beats zone a's 19.03416 + 2.17544.
        spot = quotes[("h100-sxm5-80gb", "H100 x 8", "us-central1", "SPOT")]
        assert (spot.hourly_price_per_gpu, spot.offer.zone) == (Decimal("2.4659"), "us-central1-b")

    def test_the_cheapest_host_vm_of_several_is_taken(self):
        quotes = by_key(read("skypilot_gcp_vms.csv", SKYPILOT))
        l4 = quotes[("l4-24gb", "L4 x 1", "us-central1", "ON_DEMAND")]
        assert (l4.offer.instance, l4.hourly_price_per_gpu) == ("g2-standard-4", Decimal("0.7073"))

    def test_an_accelerator_without_its_host_vm_in_the_file_is_listed(self):
        result = read("skypilot_gcp_vms.csv", SKYPILOT)
        assert not [q for q in result.quotes if q.region == "europe-west4"]
        names = {s["name"] for s in result.skipped.as_list() if "host VM" in str(s["reason"])}
        # T4 runs on any N1 VM in SkyPilot (no host table in gcp_catalog.py), so it is listed too.
        assert names == {"H100", "T4"}


class TestGpuhunt:
    def test_lambda_rows_resolve_by_instance_name(self):
        quotes = by_key(read("gpuhunt_lambdalabs.csv", GPUHUNT))
        pcie = quotes[("h100-pcie-80gb", "gpu_1x_h100_pcie", "us-east-1", "ON_DEMAND")]
        assert pcie.hourly_price_per_gpu == Decimal("2.4900")
        # The 8x SXM5 instance at 23.92 (2.99 a GPU) and the 1x at 3.29: two quotes.
        eight = quotes[("h100-sxm5-80gb", "gpu_8x_h100_sxm5", "us-east-1", "ON_DEMAND")]
        one = quotes[("h100-sxm5-80gb", "gpu_1x_h100_sxm5", "us-east-1", "ON_DEMAND")]
        assert (eight.hourly_price_per_gpu, eight.gpus_per_node) == (Decimal("2.9900"), 8)
        assert (one.hourly_price_per_gpu, one.gpus_per_node) == (Decimal("3.2900"), 1)

    def test_ambiguous_names_are_listed(self):
        result = read("gpuhunt_lambdalabs.csv", GPUHUNT)
        assert result.skipped.unknown_names() == []
        ambiguous = [s for s in result.skipped.as_list() if s["reason"] != UNKNOWN_GPU]
        assert [(s["name"], s["first_row"]) for s in ambiguous] == [("A100", 3)]

    def test_spot_rows_are_spot_quotes(self):
        quotes = by_key(read("gpuhunt_aws_v2_2025.csv", GPUHUNT))
        h100 = quotes[("h100-sxm5-80gb", "p5.48xlarge", "us-east-1", "SPOT")]
        assert h100.hourly_price_per_gpu == Decimal("2.6648")
        l40s = quotes[("l40s-48gb", "g6e.xlarge", "us-east-1", "SPOT")]
        assert l40s.hourly_price_per_gpu == Decimal("0.7024")

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
        ])  # fmt: skip
        result = read_catalog(text, fmt=SKYPILOT, max_rows=10)
        assert [(p.row, p.field) for p in result.problems] == [
            (2, "Price"), (3, "Price"), (4, "AcceleratorCount"), (5, "Region"),
        ]  # fmt: skip

    def test_a_row_without_any_price_is_skipped_and_counted_not_an_error(self):
        text = "\n".join([
            AWS_HEADER,
            "p5.48xlarge,H100,8,192,2048,,,,us-east-1,use1-az2",
            "p5.48xlarge,H100,8,192,2048,,,,us-east-1,use1-az4",
            "p5.48xlarge,H100,8,192,2048,,55.04,,us-west-2,usw2-az1",
        ])  # fmt: skip
        result = read_catalog(text, fmt=SKYPILOT, max_rows=10)
        assert result.problems == []
        assert result.skipped.as_list() == [
            {"name": "H100", "reason": NO_PRICE, "rows": 2, "first_row": 2},
        ]
        assert [(q.region, q.hourly_price_per_gpu) for q in result.quotes] == [
            ("us-west-2", Decimal("6.8800")),
        ]

    def test_a_gpuhunt_row_without_a_price_is_skipped_too(self):
        text = f"{GPUHUNT_HEADER}\np5.48xlarge,us-east-1,,192,2048,8,H100,80,False\n"
        result = read_catalog(text, fmt=GPUHUNT, max_rows=10)
        assert (result.problems, result.skipped.as_list()[0]["reason"]) == ([], NO_PRICE)

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
