"""Making a quote confidential through the pages: only its owners may, the refusal is a
field error in words, and other teams' rankings lose the quote at once."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from apps.catalog.models import Gpu
from apps.core.roles import Role
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from apps.quotes.models import Quote
from apps.quotes.services import quote_update
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ProviderFactory, QuoteFactory

pytestmark = pytest.mark.django_db


def form_data(quote, **changes):
    data = {
        "provider": str(quote.provider_id),
        "gpu": str(Gpu.objects.get(slug="h100-sxm5-80gb").pk),
        "system": "",
        "gpus_per_node": "8",
        "region": quote.region,
        "pricing_term": quote.pricing_term,
        "hourly_price_per_gpu": str(quote.hourly_price_per_gpu),
        "currency": "USD",
        "storage_price_per_tb_month": "0",
        "egress_price_per_gb": "0",
        "network_monthly": "0",
        "monthly_extras": "0",
        "minimum_commitment_months": "0",
        "quote_date": quote.quote_date.isoformat(),
        "valid_until": quote.valid_until.isoformat(),
        "source": quote.source,
        "confidential_to": "",
        **changes,
    }
    return data


@pytest.fixture
def world(catalog, team, other_team, make_user):
    buyer_a = make_user(Role.PROCUREMENT, teams=[team], username="buyer-a")
    buyer_b = make_user(Role.PROCUREMENT, teams=[other_team], username="buyer-b")
    quote = QuoteFactory(created_by=buyer_a, hourly_price_per_gpu=Decimal("2.50"))
    brief_b = BriefFactory(team=other_team)
    candidate_tables_request_recompute(brief_ids=[brief_b.pk])
    candidate_table_recompute(brief_id=brief_b.pk)
    return {"a": team, "b": other_team, "buyer_a": buyer_a, "buyer_b": buyer_b,
            "quote": quote, "brief_b": brief_b}  # fmt: skip


class TestMakingAQuoteConfidentialOnThePage:
    def test_a_buyer_of_another_team_is_refused_and_nothing_changes(self, world, client):
        """Another team may not edit the quote at all (tests/functional/test_quote_ownership)."""
        client.force_login(world["buyer_b"])
        quote = world["quote"]
        response = client.post(
            f"/quotes/{quote.pk}/edit/", form_data(quote, confidential_to=str(world["b"].pk))
        )
        assert response.status_code == 403
        assert "only that team edits or retires it" in response.content.decode()
        quote.refresh_from_db()
        assert (quote.confidential_to, quote.version) == (None, 1)

    def test_the_field_error_still_guards_the_service(self, world):
        quote = world["quote"]
        with pytest.raises(ValidationError) as caught:
            quote_update(quote=quote, user=world["buyer_b"], confidential_to=world["b"])
        assert caught.value.message_dict["confidential_to"] == [
            f"Quote #{quote.pk} was entered by buyer-a; only they or a member of their team "
            "(ML Platform) can make it confidential. Enter your own quote, confidential to "
            "Other Team, instead."
        ]

    def test_its_creator_may_and_other_teams_rankings_lose_it_at_once(
        self, world, client, token_client
    ):
        client.force_login(world["buyer_a"])
        quote = world["quote"]
        rankings = f"/api/v1/briefs/{world['brief_b'].pk}/rankings"
        reader_b = token_client(user=world["buyer_b"])
        assert [r["quote_id"] for r in reader_b.get(rankings).json()["rows"]] == [quote.pk]
        response = client.post(
            f"/quotes/{quote.pk}/edit/", form_data(quote, confidential_to=str(world["a"].pk))
        )
        assert response.status_code == 302
        body = reader_b.get(rankings).json()  # no recompute has run yet
        assert (body["rows"], body["pending"]) == ([], True)

    def test_a_new_quote_records_who_entered_it(self, world, client):
        client.force_login(world["buyer_b"])
        provider = ProviderFactory(name="Acme Cloud")
        data = form_data(world["quote"], provider=str(provider.pk))
        assert client.post("/quotes/new/", data).status_code == 302
        assert Quote.objects.get(provider=provider).created_by == world["buyer_b"]

    def test_the_api_records_who_entered_it_too(self, world, token_client):
        api = token_client(user=world["buyer_b"])
        body = {
            "provider": world["quote"].provider_id, "gpu": "h100-sxm5-80gb", "region": "eu",
            "pricing_term": "ON_DEMAND", "hourly_price_per_gpu": "2.00",
            "quote_date": "2026-11-01", "source": "sales call",
        }  # fmt: skip
        response = api.post("/api/v1/quotes/", body, format="json")
        assert response.status_code == 201, response.json()
        assert Quote.objects.get(pk=response.json()["id"]).created_by == world["buyer_b"]
