"""Every candidate row at a configuration that meets the brief (issue 14, item 1)."""

from decimal import Decimal

import pytest

from apps.catalog.models import Gpu, GpuSystem
from apps.finance.selectors import ranking_for_brief
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import QuoteFactory

pytestmark = pytest.mark.django_db


def _gpu(slug):
    return Gpu.objects.get(slug=slug).pk


def recompute(brief):
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    return candidate_table_recompute(brief_id=brief.pk)


def test_dump(catalog):
    brief = BriefFactory(model_preset="llama-3.1-8b", ttft_target_ms=2000, itl_target_ms=30, concurrency=int(__import__("os").environ["C"]))
    for slug in ("h100-sxm5-80gb", "l40s-48gb"):
        QuoteFactory(gpu_id=_gpu(slug), hourly_price_per_gpu=Decimal("2.50"))
    QuoteFactory(gpu_id=_gpu("h100-sxm5-80gb"), gpus_per_node=1, hourly_price_per_gpu=Decimal("2.50"))
    recompute(brief)
    for r in ranking_for_brief(brief)["rows"]:
        print(r["rank"], r["gpu"], r["gpu_count"], r["replicas"], r["effective_unit_cost"], r["why_not"], r["cost_lines"].get("gpu_compute"))
