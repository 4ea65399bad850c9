"""Only the team that entered a quote (or a superuser) edits or retires it, on the pages and
the API: another team's buyer gets 403 in words for a public quote and 404 for a confidential
one they cannot see, and nothing changes."""

from decimal import Decimal

import pytest

from apps.core.roles import Role
from apps.quotes.models import Quote
from tests.factories.core import UserFactory
from tests.factories.quotes import QuoteFactory
from tests.functional.test_quote_confidentiality import form_data

pytestmark = pytest.mark.django_db

REFUSAL = "was entered by buyer-a (ML Platform); only that team edits or retires it."


@pytest.fixture
def world(catalog, team, other_team, make_user):
    buyer_a = make_user(Role.PROCUREMENT, teams=[team], username="buyer-a")
    colleague_a = make_user(Role.PROCUREMENT, teams=[team], username="colleague-a")
    buyer_b = make_user(Role.PROCUREMENT, teams=[other_team], username="buyer-b")
    public = QuoteFactory(created_by=buyer_a, hourly_price_per_gpu=Decimal("2.50"))
    secret = QuoteFactory(created_by=buyer_a, confidential_to=team)
    return {"buyer_a": buyer_a, "colleague_a": colleague_a, "buyer_b": buyer_b,
            "public": public, "secret": secret}  # fmt: skip


def unchanged(quote: Quote) -> bool:
    fresh = Quote.objects.get(pk=quote.pk)
    return (fresh.hourly_price_per_gpu, fresh.retired, fresh.version) == (
        quote.hourly_price_per_gpu, False, 1,
    )  # fmt: skip


class TestOnTheApi:
    def test_another_teams_buyer_may_not_reprice_a_public_quote(self, world, token_client):
        api = token_client(user=world["buyer_b"])
        quote = world["public"]
        response = api.patch(
            f"/api/v1/quotes/{quote.pk}/", {"hourly_price_per_gpu": "0.01"}, format="json"
        )
        assert response.status_code == 403
        assert REFUSAL in response.json()["detail"]
        assert unchanged(quote)

    def test_another_teams_buyer_may_not_retire_a_public_quote(self, world, token_client):
        api = token_client(user=world["buyer_b"])
        quote = world["public"]
        response = api.post(f"/api/v1/quotes/{quote.pk}/retire")
        assert response.status_code == 403
        assert REFUSAL in response.json()["detail"]
        assert unchanged(quote)

    def test_another_teams_confidential_quote_is_404(self, world, token_client):
        api = token_client(user=world["buyer_b"])
        quote = world["secret"]
        assert (
            api.patch(
                f"/api/v1/quotes/{quote.pk}/", {"hourly_price_per_gpu": "0.01"}, format="json"
            ).status_code
            == 404
        )
        assert api.post(f"/api/v1/quotes/{quote.pk}/retire").status_code == 404
        assert unchanged(quote)

    def test_the_creators_team_and_a_superuser_may(self, world, token_client):
        colleague = token_client(user=world["colleague_a"])
        quote = world["public"]
        response = colleague.patch(
            f"/api/v1/quotes/{quote.pk}/", {"hourly_price_per_gpu": "2.40"}, format="json"
        )
        assert response.status_code == 200, response.json()
        assert response.json()["hourly_price_per_gpu"] == "2.4000"
        admin = token_client(user=UserFactory(is_superuser=True, teams=[]))
        assert admin.post(f"/api/v1/quotes/{world['secret'].pk}/retire").status_code == 200
        assert Quote.objects.get(pk=world["secret"].pk).retired

    def test_a_quote_with_no_recorded_creator_stays_shared(self, world, token_client):
        quote = QuoteFactory(created_by=None)
        api = token_client(user=world["buyer_b"])
        assert api.post(f"/api/v1/quotes/{quote.pk}/retire").status_code == 200


class TestOnThePages:
    def test_another_teams_buyer_gets_403_in_words(self, world, client):
        client.force_login(world["buyer_b"])
        quote = world["public"]
        edit = client.post(
            f"/quotes/{quote.pk}/edit/", form_data(quote, hourly_price_per_gpu="0.01")
        )
        assert edit.status_code == 403
        assert REFUSAL in edit.content.decode()
        assert client.get(f"/quotes/{quote.pk}/edit/").status_code == 403
        assert client.post(f"/quotes/{quote.pk}/retire/").status_code == 403
        assert unchanged(quote)

    def test_another_teams_confidential_quote_is_404(self, world, client):
        client.force_login(world["buyer_b"])
        quote = world["secret"]
        assert client.get(f"/quotes/{quote.pk}/edit/").status_code == 404
        assert client.post(f"/quotes/{quote.pk}/retire/").status_code == 404
        assert unchanged(quote)

    def test_the_edit_page_names_the_quote_in_words(self, world, client):
        client.force_login(world["colleague_a"])
        quote = world["public"]
        html = client.get(f"/quotes/{quote.pk}/edit/").content.decode()
        words = f"Edit quote: {quote.provider.name} · {quote.gpu.name} · "
        assert f"<h1>{words}{quote.get_pricing_term_display()}" in html
        assert f"quote #{quote.pk}" not in html

    def test_a_colleague_of_the_creator_may(self, world, client):
        client.force_login(world["colleague_a"])
        quote = world["public"]
        assert client.post(f"/quotes/{quote.pk}/retire/").status_code == 302
        assert Quote.objects.get(pk=quote.pk).retired


class TestTheQuoteList:
    def test_edit_and_retire_show_only_on_quotes_the_team_owns(self, world, client):
        shared = QuoteFactory(created_by=None)
        client.force_login(world["buyer_b"])
        rows = client.get("/quotes/").context["quotes"]
        may = {row["quote"].pk: row["may_change"] for row in rows}
        assert may == {world["public"].pk: False, shared.pk: True}  # the secret one is hidden
        client.force_login(world["colleague_a"])
        rows = client.get("/quotes/").context["quotes"]
        assert all(row["may_change"] for row in rows) and len(rows) == 3
        html = client.get("/quotes/").content.decode()
        assert f'href="/quotes/{world["public"].pk}/edit/"' in html
