"""Owned (bought) quotes: capex and depreciation months required, running costs optional,
refused with a field-level error on any other term; the API, the quote page and the CSV import
agree, and bad input saves nothing."""

import json
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.catalog.models import Gpu
from apps.core.roles import Role
from apps.quotes.models import Quote
from tests.factories.quotes import ProviderFactory
from tests.factories.quotes_extra import days_ago, gpu_catalog_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalog(db):
    gpu_catalog_create()


@pytest.fixture
def api(catalog, token_client):
    return token_client(Role.PROCUREMENT)


@pytest.fixture
def acme(db):
    return ProviderFactory(name="Acme Cloud")


def owned_body(provider, **changes):
    body = {
        "provider": provider.pk,
        "gpu": "h100-sxm5-80gb",
        "region": "our-dc",
        "pricing_term": "OWNED",
        "capex_per_gpu": "34000",
        "depreciation_months": 48,
        "quote_date": days_ago(5).isoformat(),
        "source": "vendor quote 2026-11",
    }
    body.update(changes)
    return {k: v for k, v in body.items() if v is not ...}


def post(api, body):
    return api.post("/api/v1/quotes/", json.dumps(body), content_type="application/json")


class TestOwnedQuoteApi:
    def test_an_owned_quote_with_capex_is_stored_without_an_hourly_price(self, api, acme):
        response = post(api, owned_body(acme, pue="1.30", power_kw_per_gpu="1.2"))

        assert response.status_code == 201, response.json()
        body = response.json()
        assert (body["capex_per_gpu"], body["depreciation_months"], body["pue"]) == (
            "34000.00",
            48,
            "1.30",
        )
        assert (body["hourly_price_per_gpu"], body["electricity_per_kwh"]) == ("0.0000", None)
        quote = Quote.objects.get()
        assert quote.power_kw_per_gpu == Decimal("1.200")

    @pytest.mark.parametrize("missing", ["capex_per_gpu", "depreciation_months"])
    def test_an_owned_quote_without_capex_or_months_is_a_field_error(self, api, acme, missing):
        response = post(api, owned_body(acme, **{missing: ...}))

        assert response.status_code == 400
        assert response.json()["errors"] == {missing: ["Required for an owned (bought) quote."]}
        assert not Quote.objects.exists()

    @pytest.mark.parametrize(
        "field, value",
        [("capex_per_gpu", "34000"), ("depreciation_months", 48), ("pue", "1.4")],
    )
    def test_owned_figures_on_another_term_are_a_field_error(self, api, acme, field, value):
        changes = {"capex_per_gpu": ..., "depreciation_months": ..., field: value}
        body = owned_body(acme, pricing_term="ON_DEMAND", hourly_price_per_gpu="2.50", **changes)

        response = post(api, body)

        assert response.status_code == 400
        assert list(response.json()["errors"]) == [field]
        assert "Only an owned (bought) quote" in response.json()["errors"][field][0]
        assert not Quote.objects.exists()

    def test_an_owned_quote_with_an_hourly_price_is_refused(self, api, acme):
        response = post(api, owned_body(acme, hourly_price_per_gpu="1.65"))

        assert response.status_code == 400
        assert list(response.json()["errors"]) == ["hourly_price_per_gpu"]
        assert not Quote.objects.exists()

    def test_a_rented_quote_still_needs_its_hourly_price(self, api, acme):
        body = owned_body(
            acme, pricing_term="ON_DEMAND", capex_per_gpu=..., depreciation_months=...
        )

        response = post(api, body)

        assert response.status_code == 400
        assert list(response.json()["errors"]) == ["hourly_price_per_gpu"]

    @pytest.mark.parametrize(
        "field, value",
        [
            ("pue", "0.8"),
            ("pue", "9"),
            ("capex_per_gpu", "-1"),
            ("depreciation_months", 0),
            ("power_kw_per_gpu", "0"),
            ("ops_hours_per_month", "800"),
            ("electricity_per_kwh", "-0.1"),
        ],
    )
    def test_out_of_range_owned_figures_are_field_errors(self, api, acme, field, value):
        response = post(api, owned_body(acme, **{field: value}))

        assert response.status_code == 400
        assert list(response.json()["errors"]) == [field]
        assert not Quote.objects.exists()

    def test_switching_a_rented_quote_to_owned_needs_its_capex(self, api, acme):
        created = post(
            api,
            owned_body(
                acme, pricing_term="ON_DEMAND", hourly_price_per_gpu="2.50", capex_per_gpu=...,
                depreciation_months=...,
            ),
        ).json()  # fmt: skip

        response = api.patch(
            f"/api/v1/quotes/{created['id']}/",
            json.dumps({"pricing_term": "OWNED", "hourly_price_per_gpu": "0"}),
            content_type="application/json",
        )

        assert response.status_code == 400
        assert set(response.json()["errors"]) == {"capex_per_gpu", "depreciation_months"}
        assert Quote.objects.get().pricing_term == "ON_DEMAND"


def page_data(provider, **changes):
    data = {
        "provider": str(provider.pk),
        "gpu": str(Gpu.objects.get(slug="h100-sxm5-80gb").pk),
        "system": "",
        "gpus_per_node": "8",
        "region": "our-dc",
        "pricing_term": "OWNED",
        "hourly_price_per_gpu": "",
        "currency": "USD",
        "storage_price_per_tb_month": "0",
        "egress_price_per_gb": "0",
        "network_monthly": "0",
        "monthly_extras": "0",
        "minimum_commitment_months": "0",
        "quote_date": days_ago(5).isoformat(),
        "valid_until": "",
        "source": "vendor quote",
        "confidential_to": "",
        "capex_per_gpu": "34000",
        "depreciation_months": "48",
    }
    data.update(changes)
    return data


class TestOwnedQuotePage:
    @pytest.fixture
    def browser(self, client, catalog, make_user):
        client.force_login(make_user(Role.PROCUREMENT))
        return client

    def test_the_form_has_an_owned_hardware_section(self, browser):
        page = browser.get("/quotes/new/")

        assert b'id="owned-hardware"' in page.content
        assert b'name="capex_per_gpu"' in page.content

    def test_an_owned_quote_is_saved_from_the_page(self, browser, acme):
        response = browser.post("/quotes/new/", page_data(acme))

        assert response.status_code == 302
        quote = Quote.objects.get()
        assert (quote.capex_per_gpu, quote.depreciation_months, quote.hourly_price_per_gpu) == (
            Decimal("34000.00"),
            48,
            Decimal(0),
        )

    def test_the_quote_list_shows_an_owned_quote_s_capex_not_an_hourly_price(self, browser, acme):
        browser.post("/quotes/new/", page_data(acme))

        page = browser.get("/quotes/")

        html = page.content.decode()
        assert "capex USD\u00a034,000<br><small>over 48\u00a0months" in html
        # Its USD equivalent as the price comparison shows it: 34,000 / (48 x 730 h) = 0.9703.
        assert "USD\u00a00.9703<br><small>capex over 48\u00a0months</small>" in html

    def test_an_owned_quote_without_capex_shows_the_error_and_saves_nothing(self, browser, acme):
        response = browser.post("/quotes/new/", page_data(acme, capex_per_gpu=""))

        assert response.status_code == 200
        assert response.context["form"].errors["capex_per_gpu"] == [
            "Required for an owned (bought) quote."
        ]
        assert not Quote.objects.exists()

    def test_capex_on_a_rented_quote_shows_the_error_and_saves_nothing(self, browser, acme):
        data = page_data(acme, pricing_term="RESERVED_1Y", hourly_price_per_gpu="1.90")

        response = browser.post("/quotes/new/", data)

        assert response.status_code == 200
        assert set(response.context["form"].errors) == {"capex_per_gpu", "depreciation_months"}
        assert not Quote.objects.exists()


HEADER = (
    "provider,gpu,region,pricing_term,hourly_price_per_gpu,quote_date,source,"
    "capex_per_gpu,depreciation_months,pue"
)


def upload(api, *rows):
    content = ("\n".join([HEADER, *rows]) + "\n").encode()
    return api.post(
        "/api/v1/quotes/import",
        {"file": SimpleUploadedFile("quotes.csv", content)},
        format="multipart",
    )


class TestOwnedQuoteImport:
    def test_owned_rows_import_with_their_capex(self, api, acme):
        day = days_ago(5).isoformat()

        response = upload(
            api,
            f"Acme Cloud,h100-sxm5-80gb,dc,OWNED,,{day},vendor,34000,48,1.25",
            f"Acme Cloud,h100-sxm5-80gb,us,ON_DEMAND,2.50,{day},list,,,",
        )

        assert response.status_code == 201, response.json()
        owned = Quote.objects.get(pricing_term="OWNED")
        assert (owned.capex_per_gpu, owned.depreciation_months, owned.pue) == (
            Decimal("34000"),
            48,
            Decimal("1.25"),
        )
        assert Quote.objects.get(pricing_term="ON_DEMAND").capex_per_gpu is None

    def test_a_bad_owned_row_rejects_the_file_by_field(self, api, acme):
        day = days_ago(5).isoformat()

        response = upload(
            api,
            f"Acme Cloud,h100-sxm5-80gb,dc,OWNED,,{day},vendor,,48,",
            f"Acme Cloud,h100-sxm5-80gb,us,ON_DEMAND,2.50,{day},list,,,1.3",
            f"Acme Cloud,h100-sxm5-80gb,dc,OWNED,,{day},vendor,lots,48,",
        )

        assert response.status_code == 400
        assert [(e["row"], e["field"]) for e in response.json()["errors"]] == [
            (2, "capex_per_gpu"),
            (3, "pue"),
            (4, "capex_per_gpu"),
        ]
        assert not Quote.objects.exists()
