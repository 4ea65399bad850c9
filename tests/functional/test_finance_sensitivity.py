"""What would change the winner: computed with the recompute, in the rankings JSON, on the
finance page and in a decision record's snapshot."""

import json
from decimal import Decimal

import pytest

from apps.catalog.models import Gpu
from apps.core.roles import Role
from apps.finance.models import CandidateTable
from apps.finance.services import candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, ProviderFactory
from tests.factories.quotes_extra import FreshQuoteFactory

pytestmark = pytest.mark.django_db


def gpu(slug):
    return Gpu.objects.get(slug=slug)


@pytest.fixture
def market(catalog, team, django_capture_on_commit_callbacks):
    brief = BriefFactory(team=team, ttft_target_ms=200)
    quotes = {
        "h100": FreshQuoteFactory(
            provider=ProviderFactory(name="Alpha"),
            gpu=gpu("h100-sxm5-80gb"),
            hourly_price_per_gpu=Decimal("2.50"),
        ),
        "h100-reserved": FreshQuoteFactory(
            provider=ProviderFactory(name="Beta"),
            gpu=gpu("h100-sxm5-80gb"),
            pricing_term="RESERVED_1Y",
            hourly_price_per_gpu=Decimal("1.90"),
            minimum_commitment_months=12,
        ),
        "l40s-spot": FreshQuoteFactory(
            provider=ProviderFactory(name="Gamma"),
            gpu=gpu("l40s-48gb"),
            pricing_term="SPOT",
            hourly_price_per_gpu=Decimal("0.90"),
        ),
    }
    route = ApiRouteFactory(provider=ProviderFactory(name="Epsilon"), model_preset="llama-3.1-8b")
    with django_capture_on_commit_callbacks(execute=True):
        candidate_tables_request_recompute(brief_ids=[brief.pk])
    return {"brief": brief, "quotes": quotes, "route": route}


def test_probe(market, token_client):
    api = token_client(Role.FINANCE)
    body = api.get(f"/api/v1/briefs/{market['brief'].pk}/rankings").json()
    print(json.dumps(body["sensitivity"], indent=1))
    for r in body["rows"]:
        print(r["rank"], r["quote_id"], r["api_route_id"], r["effective_unit_cost"], r["monthly_cost"], r["why_not"])
    assert 0
