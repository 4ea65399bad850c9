"""/api/v1/providers/, /api/v1/quotes/ and /api/v1/api-routes/: exact field names, field-level
400s that save nothing, retire-never-delete, staleness, whole-file CSV import, roles and
confidential quotes."""

import json
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from apps.core.middleware import MULTIPART_OVERHEAD_BYTES
from apps.core.roles import Role
from apps.quotes.models import ApiRoute, Provider, Quote
from tests.factories.quotes import ApiRouteFactory, ProviderFactory
from tests.factories.quotes_extra import FreshQuoteFactory, days_ago, gpu_catalog_create

pytestmark = pytest.mark.django_db

QUOTE_KEYS = {
    "id", "provider", "provider_name", "gpu", "system", "gpus_per_node", "region",
    "pricing_term", "hourly_price_per_gpu", "currency", "storage_price_per_tb_month",
    "egress_price_per_gb", "network_monthly", "monthly_extras", "minimum_commitment_months",
    "quote_date", "valid_until", "source", "retired", "version", "stale", "age_days",
    "created_at", "updated_at", "capex_per_gpu", "depreciation_months", "power_kw_per_gpu",
    "pue", "electricity_per_kwh", "hosting_per_kw_month", "ops_hours_per_month",
    "import_key", "fetched_date",
}  # fmt: skip
ROUTE_KEYS = {
    "id", "provider", "provider_name", "model", "model_preset", "input_price_per_mtok",
    "output_price_per_mtok", "cached_input_price_per_mtok", "currency", "batch_discount",
    "rate_limit_rpm", "price_windows", "quote_date", "source", "retired", "version",
    "created_at", "updated_at",
}  # fmt: skip
NOT_PROCUREMENT = (Role.PLATFORM, Role.FINANCE, Role.API_CLIENT)
CSV_HEADER = (
    "provider,gpu,system,region,pricing_term,hourly_price_per_gpu,currency,source,quote_date"
)


@pytest.fixture
def catalog(db):
    """Overrides the conftest fixture: these tests need the catalog's slugs, not its costing."""
    gpu_catalog_create()


@pytest.fixture
def procurement_api(catalog, token_client):
    return token_client(Role.PROCUREMENT)


@pytest.fixture
def acme(db):
    return ProviderFactory(name="Acme Cloud", website="https://acme.example")


def quote_body(provider, /, **changes):
    body = {
        "provider": provider.pk,
        "gpu": "h100-sxm5-80gb",
        "gpus_per_node": 8,
        "region": "us-east-1",
        "pricing_term": "ON_DEMAND",
        "hourly_price_per_gpu": "2.49",
        "currency": "USD",
        "storage_price_per_tb_month": "20",
        "egress_price_per_gb": "0.05",
        "monthly_extras": "150",
        "minimum_commitment_months": 0,
        "quote_date": days_ago(10).isoformat(),
        "valid_until": days_ago(-80).isoformat(),
        "source": "sales@acme, call of 20 Nov",
    }
    body.update(changes)
    return {k: v for k, v in body.items() if v is not ...}


def route_body(provider, /, **changes):
    return {
        "provider": provider.pk,
        "model": "llama-3.1-8b-instruct",
        "model_preset": "llama-3.1-8b",
        "input_price_per_mtok": "0.10",
        "output_price_per_mtok": "0.30",
        "batch_discount": "0.5",
        "rate_limit_rpm": 600,
        **changes,
    }


def send(api, method, url, body=None):
    if method == "get":
        return api.get(url)
    return getattr(api, method)(url, json.dumps(body or {}), content_type="application/json")


def upload(api, content: bytes, name="quotes.csv"):
    return api.post(
        "/api/v1/quotes/import", {"file": SimpleUploadedFile(name, content)}, format="multipart"
    )


def csv_file(*rows: str, header: str = CSV_HEADER) -> bytes:
    return ("\n".join([header, *rows]) + "\n").encode()


def without_server_fields(body):
    return {k: v for k, v in body.items() if k not in ("id", "created_at", "updated_at")}


class TestProviderApi:
    def test_create_answers_with_the_stored_provider(self, procurement_api):
        response = send(
            procurement_api,
            "post",
            "/api/v1/providers/",
            {"name": "Lambda", "website": "https://lambda.example"},
        )
        assert response.status_code == 201, response.json()
        body = response.json()
        assert set(body) == {"id", "name", "website", "created_at", "updated_at"}
        assert (body["name"], body["website"]) == ("Lambda", "https://lambda.example")
        assert Provider.objects.get(pk=body["id"]).name == "Lambda"

    def test_list_is_ordered_by_name(self, procurement_api):
        ProviderFactory(name="Zeta")
        ProviderFactory(name="Alpha")
        body = procurement_api.get("/api/v1/providers/").json()
        assert [p["name"] for p in body["results"]] == ["Alpha", "Zeta"]

    def test_patch_changes_the_website(self, procurement_api, acme):
        response = send(
            procurement_api, "patch", f"/api/v1/providers/{acme.pk}/", {"website": "https://a.io"}
        )
        assert response.status_code == 200
        acme.refresh_from_db()
        assert acme.website == "https://a.io"

    @pytest.mark.parametrize(
        ("body", "field"),
        [
            ({"name": "Acme Cloud"}, "name"),
            ({"name": ""}, "name"),
            ({"name": "New", "website": "not a url"}, "website"),
            ({"name": "New", "website": "\t"}, "website"),  # trimmed, it was the blank value
            ({"name": "New", "website": " https://new.example"}, "website"),
            ({"name": "New", "errors": {}}, "errors"),  # a field the endpoint does not take
            ({"name": "New", "id": 7}, "id"),  # one the server sets
        ],
    )
    def test_bad_input_is_a_field_level_400_and_saves_nothing(
        self, procurement_api, acme, body, field
    ):
        response = send(procurement_api, "post", "/api/v1/providers/", body)
        assert response.status_code == 400
        assert response.json()["detail"].startswith(f"{field}: "), response.json()
        assert list(Provider.objects.values_list("name", flat=True)) == ["Acme Cloud"]

    def test_a_body_of_many_unknown_fields_gets_a_short_answer(self, procurement_api):
        from apps.core.api import MAX_UNKNOWN_FIELDS_NAMED

        body = {"name": "New", **{f"junk{i}": i for i in range(500)}}
        response = send(procurement_api, "post", "/api/v1/providers/", body)
        assert response.status_code == 400
        assert len(response.json()["errors"]) == MAX_UNKNOWN_FIELDS_NAMED
        assert not Provider.objects.filter(name="New").exists()


class TestQuoteCreate:
    def test_every_field_is_stored_and_answered_under_its_contract_name(
        self, procurement_api, acme
    ):
        response = send(procurement_api, "post", "/api/v1/quotes/", quote_body(acme))
        assert response.status_code == 201, response.json()
        body = response.json()
        assert set(body) == QUOTE_KEYS
        assert without_server_fields(body) == {
            "provider": acme.pk,
            "provider_name": "Acme Cloud",
            "gpu": "h100-sxm5-80gb",
            "system": None,
            "gpus_per_node": 8,
            "region": "us-east-1",
            "pricing_term": "ON_DEMAND",
            "hourly_price_per_gpu": "2.4900",
            "currency": "USD",
            "storage_price_per_tb_month": "20.0000",
            "egress_price_per_gb": "0.0500",
            "network_monthly": "0.0000",
            "monthly_extras": "150.0000",
            "minimum_commitment_months": 0,
            "capex_per_gpu": None,
            "depreciation_months": None,
            "power_kw_per_gpu": None,
            "pue": None,
            "electricity_per_kwh": None,
            "hosting_per_kw_month": None,
            "ops_hours_per_month": None,
            "quote_date": days_ago(10).isoformat(),
            "valid_until": days_ago(-80).isoformat(),
            "source": "sales@acme, call of 20 Nov",
            "retired": False,
            "version": 1,
            "stale": False,
            "age_days": 10,
            "import_key": "",
            "fetched_date": None,
        }
        quote = Quote.objects.get(pk=body["id"])
        assert quote.gpu.slug == "h100-sxm5-80gb"
        assert quote.hourly_price_per_gpu == Decimal("2.49")

    def test_a_quote_may_name_a_system_instead_of_a_gpu(self, procurement_api, acme):
        body = quote_body(acme, gpu=..., system="gb200-nvl72", gpus_per_node=72)
        response = send(procurement_api, "post", "/api/v1/quotes/", body)
        assert response.status_code == 201, response.json()
        assert (response.json()["gpu"], response.json()["system"]) == (None, "gb200-nvl72")
        assert Quote.objects.get().system.slug == "gb200-nvl72"

    @pytest.mark.parametrize(
        ("change", "field"),
        [
            ({"hourly_price_per_gpu": "-0.01"}, "hourly_price_per_gpu"),
            ({"storage_price_per_tb_month": "-1"}, "storage_price_per_tb_month"),
            ({"egress_price_per_gb": "-0.05"}, "egress_price_per_gb"),
            ({"monthly_extras": "-10"}, "monthly_extras"),
            ({"network_monthly": "-10"}, "network_monthly"),
            ({"hourly_price_per_gpu": "two"}, "hourly_price_per_gpu"),
            ({"currency": "XYZ"}, "currency"),
            ({"pricing_term": "FOREVER"}, "pricing_term"),
            ({"valid_until": days_ago(11).isoformat()}, "valid_until"),
            ({"quote_date": "2026-02-30"}, "quote_date"),
            ({"gpu": "h900-imaginary"}, "gpu"),
            ({"system": "hgx-h100-8"}, "gpu"),
            ({"gpu": None}, "gpu"),
            ({"gpu": ...}, "gpu"),
            ({"provider": 999999}, "provider"),
            ({"region": ...}, "region"),
        ],
    )
    def test_bad_input_is_a_field_level_400_and_saves_nothing(
        self, procurement_api, acme, change, field
    ):
        response = send(procurement_api, "post", "/api/v1/quotes/", quote_body(acme, **change))
        assert response.status_code == 400
        assert response.json()["detail"].startswith(f"{field}: "), response.json()
        assert Quote.objects.count() == 0

    @pytest.mark.parametrize(
        "price",
        [" 5", "5 ", "+5", "5e2", "1_0", "00000000000005", "\u0665", "1.23456", "12345678901"],
    )
    def test_a_decimal_string_spelled_otherwise_than_documented_is_refused(
        self, procurement_api, acme, price
    ):
        """The schema documents decimal strings as ``-?digits(.digits)`` with the field's
        precision; DRF alone would read most of these as numbers and store them."""
        body = quote_body(acme, hourly_price_per_gpu=price)
        response = send(procurement_api, "post", "/api/v1/quotes/", body)
        assert response.status_code == 400
        assert list(response.json()["errors"]) == ["hourly_price_per_gpu"]
        assert Quote.objects.count() == 0

    @pytest.mark.parametrize(
        ("price", "stored"),
        [("2.5", "2.5000"), (".5", "0.5000"), ("7", "7.0000"), (2.5, "2.5000"), (7, "7.0000")],
    )
    def test_a_decimal_is_taken_as_a_number_or_a_documented_string(
        self, procurement_api, acme, price, stored
    ):
        body = quote_body(acme, hourly_price_per_gpu=price)
        response = send(procurement_api, "post", "/api/v1/quotes/", body)
        assert response.status_code == 201, response.json()
        assert str(Quote.objects.get().hourly_price_per_gpu) == stored

    @pytest.mark.parametrize("date", ["2026-1-5", "20261101", "2026-W44-1", "2026-11-01T00:00"])
    def test_a_date_not_spelled_yyyy_mm_dd_is_refused(self, procurement_api, acme, date):
        response = send(
            procurement_api, "post", "/api/v1/quotes/", quote_body(acme, quote_date=date)
        )
        assert response.status_code == 400
        assert list(response.json()["errors"]) == ["quote_date"]
        assert Quote.objects.count() == 0

    def test_zero_gpus_per_node_is_a_400_naming_the_field(self, procurement_api, acme):
        response = send(
            procurement_api, "post", "/api/v1/quotes/", quote_body(acme, gpus_per_node=0)
        )
        assert response.status_code == 400
        assert Quote.objects.count() == 0
        assert response.json()["detail"].startswith("gpus_per_node: "), response.json()


class TestQuoteListAndDetail:
    def test_list_is_paginated_and_ordered_by_provider_name(self, procurement_api):
        later = FreshQuoteFactory(provider=ProviderFactory(name="Zeta"))
        first = FreshQuoteFactory(provider=ProviderFactory(name="Alpha"))
        body = procurement_api.get("/api/v1/quotes/").json()
        assert (body["count"], body["next"], body["previous"]) == (2, None, None)
        assert [q["id"] for q in body["results"]] == [first.pk, later.pk]
        assert set(body["results"][0]) == QUOTE_KEYS

    def test_detail_answers_the_same_shape_as_the_list(self, procurement_api):
        quote = FreshQuoteFactory()
        detail = procurement_api.get(f"/api/v1/quotes/{quote.pk}/").json()
        listed = procurement_api.get("/api/v1/quotes/").json()["results"][0]
        assert detail == listed

    def test_an_unknown_quote_is_404(self, procurement_api):
        assert procurement_api.get("/api/v1/quotes/999999/").status_code == 404


class TestProviderFilter:
    """``GET /api/v1/quotes/?provider=`` (and api-routes): by id, or by name in any case."""

    def test_by_id_or_by_name_in_any_case(self, procurement_api):
        lambda_cloud = ProviderFactory(name="Lambda")
        mine = FreshQuoteFactory(provider=lambda_cloud)
        FreshQuoteFactory(provider=ProviderFactory(name="Nebius"))
        for value in (str(lambda_cloud.pk), "lambda", "LAMBDA"):
            body = procurement_api.get("/api/v1/quotes/", {"provider": value}).json()
            assert [q["id"] for q in body["results"]] == [mine.pk], value

    def test_empty_means_any_and_no_such_provider_lists_nothing(self, procurement_api):
        FreshQuoteFactory(provider=ProviderFactory(name="Lambda"))
        assert procurement_api.get("/api/v1/quotes/", {"provider": ""}).json()["count"] == 1
        for value in ("Nobody", "999999", "9" * 30):
            body = procurement_api.get("/api/v1/quotes/", {"provider": value}).json()
            assert body["count"] == 0, value

    def test_api_routes_filter_the_same_way(self, procurement_api):
        route = ApiRouteFactory(provider=ProviderFactory(name="DeepSeek"))
        ApiRouteFactory(provider=ProviderFactory(name="Other"))
        body = procurement_api.get("/api/v1/api-routes/", {"provider": "deepseek"}).json()
        assert [r["id"] for r in body["results"]] == [route.pk]


class TestQuoteUpdate:
    def test_patch_changes_the_price_and_bumps_the_version(self, procurement_api):
        quote = FreshQuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
        response = send(
            procurement_api,
            "patch",
            f"/api/v1/quotes/{quote.pk}/",
            {"hourly_price_per_gpu": "2.10"},
        )
        assert response.status_code == 200, response.json()
        assert response.json()["hourly_price_per_gpu"] == "2.1000"
        assert response.json()["version"] == 2
        quote.refresh_from_db()
        assert quote.hourly_price_per_gpu == Decimal("2.10")

    def test_patch_can_move_a_quote_from_a_gpu_to_a_system(self, procurement_api):
        quote = FreshQuoteFactory()
        response = send(
            procurement_api,
            "patch",
            f"/api/v1/quotes/{quote.pk}/",
            {"gpu": None, "system": "hgx-h100-8"},
        )
        assert response.status_code == 200, response.json()
        assert (response.json()["gpu"], response.json()["system"]) == (None, "hgx-h100-8")

    @pytest.mark.parametrize(
        ("change", "field"),
        [
            ({"hourly_price_per_gpu": "-1"}, "hourly_price_per_gpu"),
            ({"currency": "ZZZ"}, "currency"),
            ({"valid_until": days_ago(30).isoformat()}, "valid_until"),
            ({"system": "hgx-h100-8"}, "gpu"),
            ({"gpu": None}, "gpu"),
        ],
    )
    def test_a_bad_patch_is_a_field_level_400_and_changes_nothing(
        self, procurement_api, change, field
    ):
        quote = FreshQuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
        response = send(procurement_api, "patch", f"/api/v1/quotes/{quote.pk}/", change)
        assert response.status_code == 400
        assert response.json()["detail"].startswith(f"{field}: "), response.json()
        quote.refresh_from_db()
        assert (quote.hourly_price_per_gpu, quote.currency, quote.version) == (
            Decimal("2.50"),
            "USD",
            1,
        )
        assert quote.valid_until == days_ago(-60)
        assert quote.gpu.slug == "h100-sxm5-80gb" and quote.system is None

    def test_a_retired_quote_cannot_be_updated(self, procurement_api):
        quote = FreshQuoteFactory(hourly_price_per_gpu=Decimal("2.50"), retired=True)
        response = send(
            procurement_api, "patch", f"/api/v1/quotes/{quote.pk}/", {"hourly_price_per_gpu": "1"}
        )
        assert response.status_code == 400
        assert response.json()["detail"] == (
            "retired: A retired quote cannot change; enter a new quote."
        )
        quote.refresh_from_db()
        assert (quote.hourly_price_per_gpu, quote.version) == (Decimal("2.50"), 1)

    def test_server_owned_fields_are_refused_and_nothing_is_stored(self, procurement_api):
        quote = FreshQuoteFactory()
        response = send(
            procurement_api,
            "patch",
            f"/api/v1/quotes/{quote.pk}/",
            {"retired": True, "version": 99, "stale": True, "region": "eu-west",
             "import_key": "skypilot:h100-sxm5-80gb:us-east:SPOT", "fetched_date": "2026-11-28"},
        )  # fmt: skip
        assert response.status_code == 400
        assert set(response.json()["errors"]) == {
            "retired", "version", "stale", "import_key", "fetched_date",
        }  # fmt: skip
        quote.refresh_from_db()
        assert (quote.retired, quote.version, quote.region) == (False, 1, "us-east")
        assert (quote.import_key, quote.fetched_date) == ("", None)

    def test_a_misspelt_field_is_named_not_silently_dropped(self, procurement_api):
        quote = FreshQuoteFactory()
        response = send(
            procurement_api, "patch", f"/api/v1/quotes/{quote.pk}/", {"hourly_price": "1.10"}
        )
        assert response.status_code == 400
        assert response.json()["errors"] == {
            "hourly_price": ["Unknown field: this endpoint does not take it."]
        }
        quote.refresh_from_db()
        assert quote.version == 1


class TestQuoteRetire:
    def test_retire_keeps_the_row_and_marks_it_retired(self, procurement_api):
        quote = FreshQuoteFactory()
        response = procurement_api.post(f"/api/v1/quotes/{quote.pk}/retire")
        assert response.status_code == 200
        assert (response.json()["id"], response.json()["retired"]) == (quote.pk, True)
        assert response.json()["version"] == 2
        quote.refresh_from_db()
        assert quote.retired is True
        assert Quote.objects.count() == 1

    def test_a_retired_quote_is_hidden_from_the_default_list_and_shown_with_retired_true(
        self, procurement_api
    ):
        live = FreshQuoteFactory()
        retired = FreshQuoteFactory()
        procurement_api.post(f"/api/v1/quotes/{retired.pk}/retire")
        default = procurement_api.get("/api/v1/quotes/").json()["results"]
        everything = procurement_api.get("/api/v1/quotes/", {"retired": "true"}).json()["results"]
        assert [q["id"] for q in default] == [live.pk]
        assert {q["id"]: q["retired"] for q in everything} == {live.pk: False, retired.pk: True}

    def test_a_retired_quote_is_still_readable_by_id(self, procurement_api):
        quote = FreshQuoteFactory(retired=True)
        response = procurement_api.get(f"/api/v1/quotes/{quote.pk}/")
        assert response.status_code == 200
        assert response.json()["retired"] is True

    def test_retiring_twice_is_harmless(self, procurement_api):
        quote = FreshQuoteFactory()
        procurement_api.post(f"/api/v1/quotes/{quote.pk}/retire")
        response = procurement_api.post(f"/api/v1/quotes/{quote.pk}/retire")
        assert response.status_code == 200
        assert (response.json()["retired"], response.json()["version"]) == (True, 2)

    @pytest.mark.parametrize(
        "url", ["/api/v1/quotes/{quote}/", "/api/v1/api-routes/{route}/", "/api/v1/providers/{p}/"]
    )
    def test_nothing_can_be_deleted(self, procurement_api, acme, url):
        quote = FreshQuoteFactory(provider=acme)
        route = ApiRouteFactory(provider=acme)
        response = procurement_api.delete(url.format(quote=quote.pk, route=route.pk, p=acme.pk))
        assert response.status_code == 405
        assert (Quote.objects.count(), ApiRoute.objects.count(), Provider.objects.count()) == (
            1,
            1,
            1,
        )


class TestQuoteStaleness:
    @pytest.mark.parametrize(
        ("quote_age", "valid_for", "stale"),
        [
            (10, 60, False),
            (90, None, False),
            (91, None, True),
            (200, 30, True),
            (10, 0, False),
            (10, -1, True),
        ],
        ids=[
            "fresh",
            "90-days-old",
            "91-days-old",
            "old-but-still-valid",
            "valid-until-today",
            "expired-yesterday",
        ],
    )
    def test_a_quote_past_valid_until_or_older_than_the_max_age_is_stale(
        self, procurement_api, quote_age, valid_for, stale
    ):
        valid_until = None if valid_for is None else days_ago(-valid_for)
        quote = FreshQuoteFactory(quote_date=days_ago(quote_age), valid_until=valid_until)
        body = procurement_api.get(f"/api/v1/quotes/{quote.pk}/").json()
        assert (body["stale"], body["age_days"]) == (stale, quote_age)

    def test_the_max_age_comes_from_settings(self, procurement_api, settings):
        settings.QUOTE_MAX_AGE_DAYS = 5
        quote = FreshQuoteFactory(quote_date=days_ago(6))
        assert procurement_api.get(f"/api/v1/quotes/{quote.pk}/").json()["stale"] is True


class TestQuoteImport:
    def test_a_good_file_creates_every_row(self, procurement_api, acme):
        ProviderFactory(name="Beta GPU")
        content = csv_file(
            f"acme cloud,h100-sxm5-80gb,,us-east,ON_DEMAND,2.49,USD,price sheet,{days_ago(3)}",
            f"Beta GPU,,hgx-h200-8,eu-west,RESERVED_1Y,1.95,EUR,price sheet,{days_ago(4)}",
            f"Acme Cloud,l40s-48gb,,us-west,SPOT,0.61,,price sheet,{days_ago(5)}",
        )
        response = upload(procurement_api, content)
        assert response.status_code == 201, response.json()
        body = response.json()
        assert [set(q) for q in body] == [QUOTE_KEYS] * 3
        assert [(q["provider_name"], q["gpu"], q["system"]) for q in body] == [
            ("Acme Cloud", "h100-sxm5-80gb", None),
            ("Beta GPU", None, "hgx-h200-8"),
            ("Acme Cloud", "l40s-48gb", None),
        ]
        assert [q["hourly_price_per_gpu"] for q in body] == ["2.4900", "1.9500", "0.6100"]
        assert [q["currency"] for q in body] == ["USD", "EUR", "USD"]
        assert Quote.objects.count() == 3
        assert sorted(Quote.objects.values_list("id", flat=True)) == sorted(q["id"] for q in body)

    def test_a_utf8_file_with_a_byte_order_mark_is_accepted(self, procurement_api, acme):
        content = "\ufeff".encode() + csv_file(
            f"Acme Cloud,h100-sxm5-80gb,,us-east,ON_DEMAND,2.49,USD,price sheet,{days_ago(3)}"
        )
        assert upload(procurement_api, content).status_code == 201
        assert Quote.objects.count() == 1

    @pytest.mark.parametrize(
        ("bad_row", "field", "message"),
        [
            (
                "Nobody Inc,h100-sxm5-80gb,,us,ON_DEMAND,2.49,USD,price sheet,2026-11-01",
                "provider",
                "unknown provider 'Nobody Inc'",
            ),
            (
                "Acme Cloud,h900-imaginary,,us,ON_DEMAND,2.49,USD,price sheet,2026-11-01",
                "gpu",
                "no GPU 'h900-imaginary' in the catalog",
            ),
            (
                "Acme Cloud,h100-sxm5-80gb,,us,ON_DEMAND,2.49,USD,price sheet,01/11/2026",
                "quote_date",
                "not a date (YYYY-MM-DD): '01/11/2026'",
            ),
            (
                "Acme Cloud,h100-sxm5-80gb,,us,ON_DEMAND,two,USD,price sheet,2026-11-01",
                "hourly_price_per_gpu",
                "not a number: 'two'",
            ),
            (
                "Acme Cloud,h100-sxm5-80gb,,us,ON_DEMAND,NaN,USD,price sheet,2026-11-01",
                "hourly_price_per_gpu",
                "not a number: 'NaN'",
            ),
            (
                "Acme Cloud,h100-sxm5-80gb,,us,ON_DEMAND,2.49,XYZ,price sheet,2026-11-01",
                "currency",
                "unknown currency 'XYZ'",
            ),
            (
                "Acme Cloud,h100-sxm5-80gb,,us,WHENEVER,2.49,USD,price sheet,2026-11-01",
                "pricing_term",
                "unknown pricing term 'WHENEVER'",
            ),
            (
                "Acme Cloud,h100-sxm5-80gb,hgx-h100-8,us,ON_DEMAND,2.49,USD,price sheet,2026-11-01",
                "gpu",
                "give a catalog GPU or a system, not both",
            ),
            (
                "Acme Cloud,,,us,ON_DEMAND,2.49,USD,price sheet,2026-11-01",
                "gpu",
                "give a catalog GPU or a system, not both",
            ),
            (
                "Acme Cloud,h100-sxm5-80gb,,us,ON_DEMAND,-2.49,USD,price sheet,2026-11-01",
                "hourly_price_per_gpu",
                "Ensure this value is greater than or equal to 0.",
            ),
            (
                "Acme Cloud,h100-sxm5-80gb,,us,ON_DEMAND,2.49,USD,price sheet,",
                "quote_date",
                "This field cannot be null.",
            ),
        ],
        ids=[
            "unknown-provider",
            "unknown-gpu",
            "bad-date",
            "bad-number",
            "nan",
            "unknown-currency",
            "unknown-term",
            "gpu-and-system",
            "neither",
            "negative-price",
            "no-date",
        ],
    )
    def test_one_bad_row_rejects_the_file_with_its_row_number_and_saves_nothing(
        self, procurement_api, acme, bad_row, field, message
    ):
        FreshQuoteFactory(provider=acme)
        good = f"Acme Cloud,h100-sxm5-80gb,,us-east,ON_DEMAND,2.49,USD,price sheet,{days_ago(3)}"
        response = upload(procurement_api, csv_file(good, good, bad_row, good))
        assert response.status_code == 400
        assert response.json()["errors"] == [{"row": 4, "field": field, "message": message}]
        assert response.json()["detail"] == (
            f"row 4: {field}: {message} (1 error(s); nothing was saved)"
        )
        assert Quote.objects.count() == 1

    def test_every_bad_row_is_listed(self, procurement_api, acme):
        content = csv_file(
            "Nobody,h100-sxm5-80gb,,us,ON_DEMAND,2.49,USD,price sheet,2026-11-01",
            f"Acme Cloud,h100-sxm5-80gb,,us-east,ON_DEMAND,2.49,USD,price sheet,{days_ago(3)}",
            "Acme Cloud,nope,,us,ON_DEMAND,x,USD,price sheet,2026-11-01",
        )
        response = upload(procurement_api, content)
        assert response.status_code == 400
        assert [(e["row"], e["field"]) for e in response.json()["errors"]] == [
            (2, "provider"),
            (4, "gpu"),
            (4, "hourly_price_per_gpu"),
        ]
        assert Quote.objects.count() == 0

    def test_valid_until_before_quote_date_is_a_row_error(self, procurement_api, acme):
        header = f"{CSV_HEADER},valid_until"
        content = csv_file(
            "Acme Cloud,h100-sxm5-80gb,,us,ON_DEMAND,2.49,USD,price sheet,2026-11-01,2026-10-01",
            header=header,
        )
        response = upload(procurement_api, content)
        assert response.status_code == 400
        [error] = response.json()["errors"]
        assert error["row"] == 2
        assert "valid_until" in error["field"] + error["message"]
        assert Quote.objects.count() == 0

    @pytest.mark.parametrize(
        "content", [b"", CSV_HEADER.encode() + b"\n"], ids=["empty", "header-only"]
    )
    def test_a_file_without_rows_is_refused(self, procurement_api, content):
        response = upload(procurement_api, content)
        assert response.status_code == 400
        assert response.json()["errors"] == [
            {"row": 1, "field": "", "message": "the file holds no quote rows"}
        ]
        assert Quote.objects.count() == 0

    def test_non_utf8_bytes_are_a_400_on_the_file(self, procurement_api):
        ProviderFactory(name="Café Cloud")
        content = csv_file(
            "Café Cloud,h100-sxm5-80gb,,us,ON_DEMAND,2.49,USD,price sheet,2026-11-01"
        )
        response = upload(procurement_api, content.decode().encode("latin-1"))
        assert response.status_code == 400
        assert response.json()["detail"] == "file: not UTF-8 text"
        assert Quote.objects.count() == 0

    def test_a_request_without_a_file_is_a_400_naming_file(self, procurement_api):
        response = procurement_api.post("/api/v1/quotes/import", {}, format="multipart")
        assert response.status_code == 400
        assert response.json()["detail"].startswith("file: ")

    def test_a_file_over_2_mb_is_refused(self, procurement_api, acme):
        row = f"Acme Cloud,h100-sxm5-80gb,,us-east,ON_DEMAND,2.49,USD,price sheet,{days_ago(3)},"
        padding = "x" * 100_000
        content = csv_file(*[row + padding] * 21, header=CSV_HEADER + ",notes")
        assert 2 * 1024 * 1024 < len(content) < 2 * 1024 * 1024 + MULTIPART_OVERHEAD_BYTES
        response = upload(procurement_api, content)
        assert response.status_code == 400
        assert response.json()["detail"] == "file: larger than 2 MB"
        assert Quote.objects.count() == 0

    def test_a_body_well_over_2_mb_is_a_413_before_it_is_read(self, procurement_api, acme):
        row = f"Acme Cloud,h100-sxm5-80gb,,us-east,ON_DEMAND,2.49,USD,price sheet,{days_ago(3)},"
        content = csv_file(*[row + "x" * 100_000] * 30, header=CSV_HEADER + ",notes")
        response = upload(procurement_api, content)
        assert response.status_code == 413
        assert "the limit for this address is" in response.json()["detail"]
        assert Quote.objects.count() == 0

    def test_a_cell_over_the_csv_field_limit_is_a_400_not_a_500(self, procurement_api, acme):
        procurement_api.raise_request_exception = False
        row = f'Acme Cloud,h100-sxm5-80gb,,us-east,ON_DEMAND,2.49,USD,price sheet,{days_ago(3)},"'
        content = csv_file(row + "x" * 140_000 + '"', header=CSV_HEADER + ",notes")
        response = upload(procurement_api, content)
        assert Quote.objects.count() == 0
        assert response.status_code == 400


class TestApiRoutes:
    def test_create_answers_with_every_field_under_its_contract_name(self, procurement_api, acme):
        response = send(procurement_api, "post", "/api/v1/api-routes/", route_body(acme))
        assert response.status_code == 201, response.json()
        body = response.json()
        assert set(body) == ROUTE_KEYS
        assert without_server_fields(body) == {
            "provider": acme.pk,
            "provider_name": "Acme Cloud",
            "model": "llama-3.1-8b-instruct",
            "model_preset": "llama-3.1-8b",
            "input_price_per_mtok": "0.1000",
            "output_price_per_mtok": "0.3000",
            "cached_input_price_per_mtok": None,
            "currency": "USD",
            "batch_discount": "0.5000",
            "rate_limit_rpm": 600,
            "price_windows": [],
            "quote_date": None,
            "source": "",
            "retired": False,
            "version": 1,
        }

    def test_patch_changes_the_price_and_bumps_the_version(self, procurement_api, acme):
        route = ApiRouteFactory(provider=acme)
        response = send(
            procurement_api,
            "patch",
            f"/api/v1/api-routes/{route.pk}/",
            {"output_price_per_mtok": "0.45"},
        )
        assert response.status_code == 200, response.json()
        assert (response.json()["output_price_per_mtok"], response.json()["version"]) == (
            "0.4500",
            2,
        )

    def test_the_cached_input_price_is_kept_and_a_negative_one_refused(self, procurement_api, acme):
        body = {**route_body(acme), "cached_input_price_per_mtok": "0.025"}
        response = send(procurement_api, "post", "/api/v1/api-routes/", body)
        assert response.status_code == 201, response.json()
        assert response.json()["cached_input_price_per_mtok"] == "0.0250"
        route_id = response.json()["id"]
        bad = send(
            procurement_api,
            "patch",
            f"/api/v1/api-routes/{route_id}/",
            {"cached_input_price_per_mtok": "-1"},
        )
        assert bad.status_code == 400
        assert "cached_input_price_per_mtok" in bad.json()["errors"]
        assert ApiRoute.objects.get(pk=route_id).cached_input_price_per_mtok == Decimal("0.025")

    def test_retire_keeps_the_row_hides_it_by_default_and_shows_it_with_retired_true(
        self, procurement_api, acme
    ):
        live, retired = ApiRouteFactory(provider=acme), ApiRouteFactory(provider=acme)
        response = procurement_api.post(f"/api/v1/api-routes/{retired.pk}/retire")
        assert response.status_code == 200
        assert response.json()["retired"] is True
        default = procurement_api.get("/api/v1/api-routes/").json()["results"]
        everything = procurement_api.get("/api/v1/api-routes/", {"retired": "true"}).json()
        assert [r["id"] for r in default] == [live.pk]
        assert {r["id"] for r in everything["results"]} == {live.pk, retired.pk}
        assert ApiRoute.objects.count() == 2

    def test_a_retired_route_cannot_be_updated(self, procurement_api, acme):
        route = ApiRouteFactory(provider=acme, retired=True)
        response = send(
            procurement_api,
            "patch",
            f"/api/v1/api-routes/{route.pk}/",
            {"output_price_per_mtok": "9"},
        )
        assert response.status_code == 400
        assert response.json()["detail"].startswith("retired: ")
        route.refresh_from_db()
        assert route.output_price_per_mtok == Decimal("0.30")

    @pytest.mark.parametrize(
        ("change", "field"),
        [
            ({"input_price_per_mtok": "-0.1"}, "input_price_per_mtok"),
            ({"output_price_per_mtok": "-0.1"}, "output_price_per_mtok"),
            ({"currency": "XYZ"}, "currency"),
            ({"rate_limit_rpm": -5}, "rate_limit_rpm"),
            ({"model": ""}, "model"),
        ],
    )
    def test_bad_input_is_a_field_level_400_and_saves_nothing(
        self, procurement_api, acme, change, field
    ):
        response = send(procurement_api, "post", "/api/v1/api-routes/", route_body(acme, **change))
        assert response.status_code == 400
        assert response.json()["detail"].startswith(f"{field}: "), response.json()
        assert ApiRoute.objects.count() == 0

    @pytest.mark.parametrize("discount", ["1.5", "-0.2"])
    def test_a_batch_discount_outside_0_1_is_a_400_naming_the_field(
        self, procurement_api, acme, discount
    ):
        body = route_body(acme, batch_discount=discount)
        response = send(procurement_api, "post", "/api/v1/api-routes/", body)
        assert response.status_code == 400
        assert ApiRoute.objects.count() == 0
        assert response.json()["detail"].startswith("batch_discount: "), response.json()

    def test_a_second_live_route_for_the_same_provider_and_model_is_refused(
        self, procurement_api, acme
    ):
        ApiRouteFactory(provider=acme, model="llama-3.1-8b-instruct")
        response = send(procurement_api, "post", "/api/v1/api-routes/", route_body(acme))
        assert response.status_code == 400
        assert ApiRoute.objects.count() == 1


class TestRoles:
    @pytest.mark.parametrize("role", NOT_PROCUREMENT)
    def test_only_procurement_may_write(self, catalog, token_client, acme, role):
        api = token_client(role)
        quote = FreshQuoteFactory(provider=acme, hourly_price_per_gpu=Decimal("2.50"))
        route = ApiRouteFactory(provider=acme)
        good_csv = csv_file(f"Acme Cloud,l4-24gb,,us,ON_DEMAND,0.4,USD,{days_ago(1)}")
        attempts = [
            send(api, "post", "/api/v1/providers/", {"name": "Sneaky"}),
            send(api, "patch", f"/api/v1/providers/{acme.pk}/", {"name": "Renamed"}),
            send(api, "post", "/api/v1/quotes/", quote_body(acme)),
            send(api, "patch", f"/api/v1/quotes/{quote.pk}/", {"hourly_price_per_gpu": "1"}),
            api.post(f"/api/v1/quotes/{quote.pk}/retire"),
            upload(api, good_csv),
            send(api, "post", "/api/v1/api-routes/", route_body(acme, model="other")),
            send(api, "patch", f"/api/v1/api-routes/{route.pk}/", {"output_price_per_mtok": "9"}),
            api.post(f"/api/v1/api-routes/{route.pk}/retire"),
        ]
        assert [r.status_code for r in attempts] == [403] * len(attempts)
        assert list(Provider.objects.values_list("name", flat=True)) == ["Acme Cloud"]
        assert list(Quote.objects.values_list("hourly_price_per_gpu", "retired")) == [
            (Decimal("2.50"), False)
        ]
        assert list(ApiRoute.objects.values_list("output_price_per_mtok", "retired")) == [
            (Decimal("0.30"), False)
        ]

    @pytest.mark.parametrize("role", [*NOT_PROCUREMENT, Role.PROCUREMENT])
    def test_every_signed_in_role_may_read(self, catalog, token_client, acme, role):
        api = token_client(role)
        quote = FreshQuoteFactory(provider=acme)
        route = ApiRouteFactory(provider=acme)
        for url in (
            "/api/v1/providers/",
            f"/api/v1/providers/{acme.pk}/",
            "/api/v1/quotes/",
            f"/api/v1/quotes/{quote.pk}/",
            "/api/v1/api-routes/",
            f"/api/v1/api-routes/{route.pk}/",
        ):
            assert api.get(url).status_code == 200, url

    @pytest.mark.parametrize(
        ("method", "url"),
        [
            ("get", "/api/v1/providers/"),
            ("get", "/api/v1/quotes/"),
            ("get", "/api/v1/quotes/{quote}/"),
            ("post", "/api/v1/quotes/"),
            ("patch", "/api/v1/quotes/{quote}/"),
            ("post", "/api/v1/quotes/{quote}/retire"),
            ("post", "/api/v1/quotes/import"),
            ("get", "/api/v1/api-routes/"),
        ],
    )
    def test_an_unauthenticated_request_is_a_401(self, catalog, method, url):
        quote = FreshQuoteFactory()
        response = send(APIClient(), method, url.format(quote=quote.pk))
        assert response.status_code == 401
        assert response.json()["detail"]
        quote.refresh_from_db()
        assert (quote.retired, quote.version) == (False, 1)


class TestConfidentialQuotes:
    @pytest.fixture
    def theirs(self, catalog, other_team):
        return FreshQuoteFactory(confidential_to=other_team)

    def test_a_quote_confidential_to_another_team_is_not_listed(self, procurement_api, theirs):
        public = FreshQuoteFactory()
        default = procurement_api.get("/api/v1/quotes/").json()["results"]
        everything = procurement_api.get("/api/v1/quotes/", {"retired": "true"}).json()["results"]
        assert [q["id"] for q in default] == [public.pk]
        assert [q["id"] for q in everything] == [public.pk]

    def test_its_detail_update_and_retire_are_404_to_outsiders(self, procurement_api, theirs):
        url = f"/api/v1/quotes/{theirs.pk}/"
        assert procurement_api.get(url).status_code == 404
        assert send(procurement_api, "patch", url, {"region": "x"}).status_code == 404
        assert procurement_api.post(f"{url}retire").status_code == 404
        theirs.refresh_from_db()
        assert (theirs.region, theirs.retired, theirs.version) == ("us-east", False, 1)

    def test_members_of_the_team_see_it(self, token_client, make_user, other_team, theirs):
        api = token_client(user=make_user(Role.FINANCE, teams=[other_team]))
        assert [q["id"] for q in api.get("/api/v1/quotes/").json()["results"]] == [theirs.pk]
        assert api.get(f"/api/v1/quotes/{theirs.pk}/").status_code == 200

    def test_a_user_in_two_teams_sees_it_once(
        self, catalog, token_client, make_user, team, other_team
    ):
        theirs = FreshQuoteFactory(confidential_to=other_team)
        api = token_client(user=make_user(Role.FINANCE, teams=[team, other_team]))
        assert [q["id"] for q in api.get("/api/v1/quotes/").json()["results"]] == [theirs.pk]
