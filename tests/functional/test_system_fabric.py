"""The engine takes a GPU's node-to-node bandwidth from its catalog systems when they state it
(issue 13: "take the fabric bandwidth from the system or quote when known, else a documented
default per interconnect")."""

import pytest

from apps.catalog.models import GpuSystem
from apps.catalog.selectors import gpu_specs, scale_out_gb_per_s_per_gpu
from apps.engine import performance

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("network", "gpus", "expected"),
    [
        ("8x 400 Gb/s InfiniBand NDR", 8, 50.0),  # one 400G NIC a GPU
        ("8x 200 Gb/s InfiniBand HDR", 8, 25.0),
        ("2x 200 Gb/s Ethernet", 8, 6.25),  # a PCIe server's two NICs shared by 8 GPUs
        ("ConnectX-8 SuperNIC (800 Gb/s) per GPU", 4, 100.0),
        ("ConnectX-7 / BlueField-3 per tray", 4, None),  # no rate stated
        ("", 8, None),
    ],
)
def test_the_stated_network_reads_as_gb_per_s_per_gpu(network, gpus, expected):
    assert scale_out_gb_per_s_per_gpu(network, gpus) == expected


def test_the_catalog_systems_give_the_engine_their_fabric(catalog):
    specs = {spec.slug: spec for spec in gpu_specs()}
    # HGX A100 nodes carry 200 Gb/s HDR per GPU: half the documented NVLink-node default.
    assert specs["a100-sxm4-80gb"].scale_out_gb_per_s == 25.0
    assert performance.scale_out_gb_per_s(specs["a100-sxm4-80gb"]) == 25.0
    assert specs["h100-sxm5-80gb"].scale_out_gb_per_s == 50.0
    # GB200 NVL72's trays state no rate: the engine keeps its documented default.
    assert specs["gb200-nvl72-186gb"].scale_out_gb_per_s is None
    assert performance.scale_out_gb_per_s(specs["gb200-nvl72-186gb"]) > 0


def test_a_gpu_whose_systems_disagree_keeps_the_default_and_a_change_is_seen(catalog):
    hgx = GpuSystem.objects.get(slug="hgx-h100-8")
    GpuSystem.objects.create(
        slug="h100-ethernet-8",
        name="H100 node on Ethernet",
        gpu=hgx.gpu,
        scale="NODE",
        gpus_per_node=8,
        gpus_per_domain=8,
        fabric=hgx.fabric,
        fabric_gbps_per_gpu=hgx.fabric_gbps_per_gpu,
        scale_out_network="2x 100 Gb/s Ethernet",
        source="test",
        checked_date=hgx.checked_date,
    )
    specs = {spec.slug: spec for spec in gpu_specs()}  # the cache follows the systems table
    assert specs["h100-sxm5-80gb"].scale_out_gb_per_s is None
