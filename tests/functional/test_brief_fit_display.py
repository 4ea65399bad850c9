"""The brief page's fit table: TIGHT rows stand out and say what to change."""

import re

import pytest

from apps.catalog.selectors import estimates_for_body
from tests.factories.briefs import BriefFactory

pytestmark = pytest.mark.django_db

# Llama-3.1-70B FP8 at an 8K context on one H100: 92% of its 85.5 GB, so TIGHT.
TIGHT_BODY = {
    "workload_type": "REALTIME_INFERENCE",
    "model": {"preset": "llama-3.1-70b"},
    "weight_precision": "FP8",
    "input_tokens": {"p50": 7000, "p95": 7000},
    "output_tokens": {"p50": 1000, "p95": 1000},
    "concurrency": 1,
    "gpus": ["h100-sxm5-80gb", "h200-sxm-141gb"],
    "gpu_count": 1,
}


@pytest.fixture
def page(client, platform_user, team):
    client.force_login(platform_user)
    return client


def _row(html: str, slug: str) -> str:
    match = re.search(
        rf'<tr class="([^"]*)" data-fit="(\w*)" data-gpu="{slug}" data-meets="\w+">(.*?)</tr>',
        html,
        re.S,
    )
    assert match, slug
    return match.group(0)


class TestFitTable:
    def test_a_tight_row_is_marked_and_says_what_to_change(self, catalog, page, team):
        tight, fits = estimates_for_body(TIGHT_BODY)
        assert (tight["fit"], fits["fit"]) == ("TIGHT", "FITS")
        # The same brief: on one H100 it fits only tight, and one tight GPU is fewer GPUs in
        # all than two that fit, so the fit table (the table's configuration) shows it tight.
        brief = BriefFactory(
            team=team,
            model_preset="llama-3.1-70b",
            weight_precision="FP8",
            kv_cache_precision="BF16",
            input_tokens_p50=7000,
            input_tokens_p95=7000,
            output_tokens_p50=1000,
            output_tokens_p95=1000,
            concurrency=1,
            ttft_target_ms=None,
            itl_target_ms=None,
            e2e_target_ms=None,
            latency_percentile="",
        )
        html = page.get(f"/briefs/{brief.pk}/").content.decode()
        h100 = _row(html, "h100-sxm5-80gb")
        assert 'class="tight" data-fit="TIGHT"' in h100
        assert '<strong class="fit-tight">tight</strong>' in h100
        assert "--gpu-memory-utilization 0.92" in h100
        assert 'title="capacity: device (nvidia-smi MiB)"' in h100
        h200 = _row(html, "h200-sxm-141gb")
        assert 'class="" data-fit="FITS"' in h200 and '<td class="fit">yes</td>' in h200

    def test_every_catalog_gpu_has_a_row_with_its_verdict(self, catalog, page, team):
        brief = BriefFactory(team=team)
        html = page.get(f"/briefs/{brief.pk}/").content.decode()
        verdicts = re.findall(r'data-fit="(\w+)"', html)
        assert len(verdicts) == 31
        assert set(verdicts) <= {"FITS", "TIGHT", "NO"}
