"""Finance's FX-rate table: a quote in another currency is listed as not costed (naming the
currency) until finance posts a rate; the table then recomputes and costs it at that rate; a
newer rate changes the cost; bad input is a field-level 400 that saves nothing; only finance
posts; a decision record freezes the rates it was costed with."""

from decimal import Decimal

import pytest
from django.test import Client

from apps.catalog.models import Gpu
from apps.core.roles import Role
from apps.finance.fx import rate_text
from apps.finance.models import CandidateTable, FxRate
from apps.finance.services import candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.decisions import make_record
from tests.factories.quotes import ApiRouteFactory
from tests.factories.quotes_extra import FreshQuoteFactory

pytestmark = pytest.mark.django_db

JPY_HOURLY = Decimal("375")  # yen per GPU-hour
FIRST, SECOND = "0.0067", "0.0070"  # USD per yen
GOOD = {"currency": "JPY", "rate": FIRST, "as_of": "2026-12-01", "source": "ECB reference rate"}


@pytest.fixture
def market(catalog, team, django_capture_on_commit_callbacks):
    """A brief priced against a yen quote and two dollar quotes for the same GPU at exactly
    the yen price converted at FIRST and at SECOND (so equal costs mean the right rate)."""
    h100 = Gpu.objects.get(slug="h100-sxm5-80gb")
    brief = BriefFactory(team=team)
    yen = FreshQuoteFactory(gpu=h100, currency="JPY", hourly_price_per_gpu=JPY_HOURLY)
    at_first = FreshQuoteFactory(gpu=h100, hourly_price_per_gpu=JPY_HOURLY * Decimal(FIRST))
    at_second = FreshQuoteFactory(gpu=h100, hourly_price_per_gpu=JPY_HOURLY * Decimal(SECOND))
    route = ApiRouteFactory(model_preset="llama-3.1-8b", currency="JPY")
    with django_capture_on_commit_callbacks(execute=True):
        candidate_tables_request_recompute(brief_ids=[brief.pk])
    return {"brief": brief, "yen": yen, "first": at_first, "second": at_second, "route": route}


def rankings(client, brief):
    response = client.get(f"/api/v1/briefs/{brief.pk}/rankings", {"limit": 1000})
    assert response.status_code == 200, response.content
    return response.json()


def row_of(body, quote):
    return next((r for r in body["rows"] if r["quote_id"] == quote.pk), None)


def post_rate(client, capture, **changes):
    with capture(execute=True):
        return client.post("/api/v1/fx-rates/", {**GOOD, **changes}, format="json")


class TestFxFlow:
    def test_a_yen_quote_is_not_costed_until_finance_posts_a_rate_then_the_newest_applies(
        self, market, token_client, django_capture_on_commit_callbacks
    ):
        finance = token_client(Role.FINANCE)
        body = rankings(finance, market["brief"])
        assert row_of(body, market["yen"]) is None
        left_out = {(e.get("quote_id"), e.get("api_route_id")): e for e in body["not_costed"]}
        assert "JPY" in left_out[(market["yen"].pk, None)]["reason"]
        assert "JPY" in left_out[(None, market["route"].pk)]["reason"]

        response = post_rate(finance, django_capture_on_commit_callbacks)
        assert response.status_code == 201, response.content
        body = rankings(finance, market["brief"])
        assert body["not_costed"] == []
        assert (
            row_of(body, market["yen"])["monthly_cost"]
            == (row_of(body, market["first"])["monthly_cost"])
        )
        assert any(r["api_route_id"] == market["route"].pk for r in body["rows"])

        newer = post_rate(
            finance, django_capture_on_commit_callbacks, rate=SECOND, as_of="2026-12-02"
        )
        assert newer.status_code == 201, newer.content
        body = rankings(finance, market["brief"])
        assert (
            row_of(body, market["yen"])["monthly_cost"]
            == (row_of(body, market["second"])["monthly_cost"])
        )

    def test_an_older_rate_entered_later_does_not_apply(
        self, market, token_client, django_capture_on_commit_callbacks
    ):
        finance = token_client(Role.FINANCE)
        post_rate(finance, django_capture_on_commit_callbacks, rate=SECOND, as_of="2026-12-02")
        post_rate(finance, django_capture_on_commit_callbacks, rate=FIRST, as_of="2026-11-01")
        body = rankings(finance, market["brief"])
        assert (
            row_of(body, market["yen"])["monthly_cost"]
            == (row_of(body, market["second"])["monthly_cost"])
        )

    def test_the_finance_page_lists_what_is_not_costed(self, market, make_user):
        client = Client()
        client.force_login(make_user(Role.PLATFORM))
        page = client.get(f"/briefs/{market['brief'].pk}/finance/").content.decode()
        assert 'id="not-costed"' in page
        assert "no FX rate for JPY" in page
        # Named in words (provider · GPU · term · region); the id stays in the JSON.
        yen = market["yen"]
        assert f"{yen.provider.name} · NVIDIA H100 SXM5 · On demand · {yen.region}" in page
        assert f"quote #{yen.pk}" not in page


class TestFxRateApi:
    @pytest.mark.parametrize("role", [Role.PLATFORM, Role.PROCUREMENT, Role.API_CLIENT])
    def test_only_finance_posts_a_rate(self, catalog, token_client, role):
        response = token_client(role).post("/api/v1/fx-rates/", GOOD, format="json")
        assert response.status_code == 403
        assert not FxRate.objects.exists()

    @pytest.mark.parametrize(
        ("field", "value"),
        [
            ("currency", "USD"),  # the base currency
            ("currency", "XYZ"),  # not in the product's list
            ("rate", "0"),
            ("rate", "-0.0067"),
            ("rate", "abc"),
            ("rate", "NaN"),
            ("as_of", "yesterday"),
            ("source", ""),
            ("source", "x" * 201),
            ("source", -508934206),  # a number where the schema says text
            ("as_of", 20260101),
            ("currency", ["JPY"]),
            ("recorded_by", "me"),  # a field the endpoint does not take
        ],
    )
    def test_bad_input_is_a_400_naming_the_field_and_saves_nothing(
        self, catalog, token_client, field, value
    ):
        response = token_client(Role.FINANCE).post(
            "/api/v1/fx-rates/", {**GOOD, field: value}, format="json"
        )
        assert response.status_code == 400, response.content
        assert field in response.json()["errors"]
        assert not FxRate.objects.exists()

    def test_everyone_reads_the_table(
        self, catalog, token_client, django_capture_on_commit_callbacks
    ):
        post_rate(token_client(Role.FINANCE), django_capture_on_commit_callbacks)
        body = token_client(Role.API_CLIENT).get("/api/v1/fx-rates/").json()
        assert [(r["currency"], r["rate"], r["as_of"]) for r in body["results"]] == [
            ("JPY", "0.0067000000", "2026-12-01")
        ]


class TestFxRatePage:
    def test_finance_adds_a_rate_on_the_page(self, catalog, make_user):
        client = Client()
        client.force_login(make_user(Role.FINANCE))
        response = client.post("/finance/fx-rates/", GOOD)
        assert response.status_code == 302
        assert FxRate.objects.get().rate == Decimal(FIRST)
        assert "ECB reference rate" in client.get("/finance/fx-rates/").content.decode()

    def test_a_bad_rate_on_the_page_is_shown_and_saves_nothing(self, catalog, make_user):
        client = Client()
        client.force_login(make_user(Role.FINANCE))
        response = client.post("/finance/fx-rates/", {**GOOD, "rate": "0"})
        assert response.status_code == 200
        assert "greater than 0" in response.content.decode()
        assert not FxRate.objects.exists()

    def test_others_read_the_page_but_cannot_add(self, catalog, make_user):
        client = Client()
        client.force_login(make_user(Role.PROCUREMENT))
        page = client.get("/finance/fx-rates/")
        assert page.status_code == 200 and 'id="fx-rate-form"' not in page.content.decode()
        assert client.post("/finance/fx-rates/", GOOD).status_code == 403
        assert not FxRate.objects.exists()


class TestSnapshot:
    def test_a_decision_record_freezes_the_rates_it_was_costed_with(
        self, market, token_client, make_user, django_capture_on_commit_callbacks
    ):
        post_rate(token_client(Role.FINANCE), django_capture_on_commit_callbacks)
        assert CandidateTable.objects.get(brief=market["brief"]).inputs["not_costed"] == []
        author = make_user(Role.PROCUREMENT)
        record = make_record(brief=market["brief"], user=author, quote=market["yen"])
        (frozen,) = record.snapshot["fx_rates"]
        assert (frozen["currency"], frozen["rate"], frozen["as_of"]) == (
            "JPY", "0.0067", "2026-12-01",
        )  # fmt: skip
        assert frozen["source"] == "ECB reference rate"
        # A later rate does not change what the record froze.
        post_rate(token_client(Role.FINANCE), django_capture_on_commit_callbacks,
                  rate=SECOND, as_of="2026-12-02")  # fmt: skip
        record.refresh_from_db()
        assert record.snapshot["fx_rates"][0]["rate"] == "0.0067"
        client = Client()
        client.force_login(author)
        page = client.get(f"/decisions/{record.pk}/").content.decode()
        assert 'id="frozen-fx-rates"' in page and "0.0067" in page


def test_a_round_rate_is_written_plainly():
    assert rate_text(Decimal("100.0000000000")) == "100"
    assert rate_text(Decimal("0.0067000000")) == "0.0067"
