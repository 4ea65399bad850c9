from decimal import Decimal
import time
import pytest
from apps.catalog.models import Gpu
from apps.finance.models import CandidateRow
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import QuoteFactory

pytestmark = pytest.mark.django_db

@pytest.mark.parametrize("rps,buckets,ttft", [
    (200, [{"input_tokens": 512, "output_tokens": 128, "share": 0.9}, {"input_tokens": 32000, "output_tokens": 256, "share": 0.1}], 1500),
    (200, [{"input_tokens": 512, "output_tokens": 128, "share": 0.9}, {"input_tokens": 16000, "output_tokens": 256, "share": 0.1}], 1000),
    (100, [{"input_tokens": 300, "output_tokens": 100, "share": 0.8}, {"input_tokens": 8000, "output_tokens": 400, "share": 0.2}], 800),
])
def test_scratch(catalog, team, rps, buckets, ttft):
    brief = BriefFactory(team=team, concurrency=None, requests_per_second=Decimal(rps), request_size_buckets=buckets, ttft_target_ms=ttft, input_tokens_p95=32000, output_tokens_p95=512)
    for slug, price in (("h100-sxm5-80gb", "2.50"), ("l4-24gb", "0.25"), ("l40s-48gb", "0.45")):
        QuoteFactory(gpu=Gpu.objects.get(slug=slug), hourly_price_per_gpu=Decimal(price))
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    t = time.perf_counter()
    table = candidate_table_recompute(brief_id=brief.pk)
    print("recompute s", time.perf_counter() - t, table.no_ranking_reason)
    print(table.inputs.get("plans", {}).get("missing"))
    for r in CandidateRow.objects.filter(table=table).order_by("-meets_constraints", "effective_unit_cost"):
        print(r.candidate_kind, r.gpu_id, r.gpu_count, r.replicas, r.monthly_cost, r.meets_constraints, r.why_not[:1])
        if r.candidate_kind == "MIX":
            print("  ", r.notes)

def test_debug(catalog, team):
    from apps.finance.candidates import table_context
    from apps.finance.models import CandidateTable
    from apps.finance.plans import bucket_capacities, plan_counts
    from apps.briefs.models import brief_size_buckets
    brief = BriefFactory(team=team, concurrency=None, requests_per_second=Decimal(200), request_size_buckets=[{"input_tokens": 512, "output_tokens": 128, "share": 0.9}, {"input_tokens": 32000, "output_tokens": 256, "share": 0.1}], ttft_target_ms=1500, input_tokens_p95=32000, output_tokens_p95=512)
    table = CandidateTable.objects.create(brief=brief)
    ctx = table_context(brief, table)
    print({s: (e["gpu_count"], plan_counts(e)) for s, e in ctx.by_gpu.items() if s in ("l4-24gb", "h100-sxm5-80gb")})
    rates, batches = bucket_capacities(ctx, brief_size_buckets(brief)[0])
    for k, v in rates.items():
        print(k, [round(x, 2) for x in v])
