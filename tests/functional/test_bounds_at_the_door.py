"""Issue 24 points 1, 3 and 7: every money, rate, count and date is held to its range of
apps.core.bounds with a field-level 400 (API, forms, quote CSV, GPU catalogs), never a 500 nor
a free quote; the catalog import answers the same whether or not another team holds a
confidential quote of the same key."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from apps.core import bounds
from apps.core.roles import Role
from apps.finance.models import FinanceAssumptions, FxRate
from apps.quotes.models import Quote
from tests.factories.core import TeamFactory
from tests.factories.quotes import ProviderFactory
from tests.factories.quotes_extra import days_ago, gpu_catalog_create
from tests.functional.test_brief_api import BRIEF_BODY
from tests.functional.test_quotes_pages import form_data

pytestmark = pytest.mark.django_db

TODAY = timezone.localdate()
TOO_LATE = (TODAY + timedelta(days=2)).isoformat()
OUT_OF_RANGE_DATES = ["9999-12-31", "0001-01-01", "1999-12-31", TOO_LATE]
GPUHUNT_HEADER = (
    "instance_name,location,price,cpu,memory,gpu_count,gpu_name,gpu_memory,spot,disk_size,"
    "gpu_vendor,flags,cpu_arch,provider_data"
)
SKYPILOT_HEADER = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,"
    "Region,AvailabilityZone"
)


@pytest.fixture
def catalog(db):
    """The catalog's slugs are enough here (no costing)."""
    gpu_catalog_create()


@pytest.fixture
def buyer(catalog, token_client):
    return token_client(Role.PROCUREMENT)


@pytest.fixture
def acme(db):
    return ProviderFactory(name="Acme Cloud")


def over(limit):
    return str(Decimal(limit) + Decimal("0.01"))


def quote_body(provider, **changes):
    return {
        "provider": provider.pk, "gpu": "h100-sxm5-80gb", "gpus_per_node": 8,
        "region": "us-east-1", "pricing_term": "ON_DEMAND", "hourly_price_per_gpu": "2.49",
        "currency": "USD", "quote_date": days_ago(3).isoformat(), "source": "price sheet",
        **changes,
    }  # fmt: skip


class TestQuotesApi:
    @pytest.mark.parametrize(
        ("field", "value"),
        [
            ("hourly_price_per_gpu", "9999999999.9999"),  # the issue's: within the column
            ("hourly_price_per_gpu", over(bounds.GPU_HOUR_PRICE_MAX)),
            ("hourly_price_per_gpu", "0"),  # a rented GPU-hour is never free
            ("hourly_price_per_gpu", "0.0001"),
            ("storage_price_per_tb_month", over(bounds.STORAGE_PER_TB_MONTH_MAX)),
            ("egress_price_per_gb", over(bounds.EGRESS_PER_GB_MAX)),
            ("network_monthly", over(bounds.MONTHLY_FEE_MAX)),
            ("monthly_extras", over(bounds.MONTHLY_FEE_MAX)),
            ("gpus_per_node", bounds.GPUS_PER_NODE_MAX + 1),
            *[("quote_date", day) for day in OUT_OF_RANGE_DATES],
        ],
    )
    def test_a_value_out_of_its_range_is_a_400_naming_the_field(self, buyer, acme, field, value):
        response = buyer.post("/api/v1/quotes/", quote_body(acme, **{field: value}), format="json")
        assert response.status_code == 400, response.content
        assert field in response.json()["errors"]
        assert not Quote.objects.exists()

    def test_the_largest_price_and_tomorrow_are_accepted(self, buyer, acme):
        body = quote_body(
            acme,
            hourly_price_per_gpu=str(bounds.GPU_HOUR_PRICE_MAX),
            quote_date=(TODAY + timedelta(days=1)).isoformat(),
        )
        assert buyer.post("/api/v1/quotes/", body, format="json").status_code == 201

    def test_an_owned_quote_capex_past_its_range_is_a_400(self, buyer, acme):
        body = quote_body(
            acme, pricing_term="OWNED", hourly_price_per_gpu="0",
            capex_per_gpu=over(bounds.CAPEX_PER_GPU_MAX), depreciation_months=48,
        )  # fmt: skip
        response = buyer.post("/api/v1/quotes/", body, format="json")
        assert response.status_code == 400
        assert "capex_per_gpu" in response.json()["errors"]

    def test_an_api_route_price_past_its_range_is_a_400(self, buyer, acme):
        body = {
            "provider": acme.pk, "model": "m", "input_price_per_mtok": "1",
            "output_price_per_mtok": over(bounds.MTOK_PRICE_MAX), "quote_date": "9999-12-31",
        }  # fmt: skip
        response = buyer.post("/api/v1/api-routes/", body, format="json")
        assert response.status_code == 400
        assert {"output_price_per_mtok", "quote_date"} <= set(response.json()["errors"])


class TestQuoteCsv:
    HEADER = (
        "provider,gpu,system,region,pricing_term,hourly_price_per_gpu,currency,source,quote_date"
    )

    @pytest.mark.parametrize(
        ("price", "day"),
        [("1E+30", "2026-11-01"), ("1e-30", "2026-11-01"), ("2.49", "9999-12-31")],
    )
    def test_a_row_out_of_range_is_refused_with_its_field(self, buyer, acme, price, day):
        row = f"Acme Cloud,h100-sxm5-80gb,,us,ON_DEMAND,{price},USD,sheet,{day}"
        content = f"{self.HEADER}\n{row}\n".encode()
        response = buyer.post(
            "/api/v1/quotes/import", {"file": SimpleUploadedFile("q.csv", content)},
            format="multipart",
        )  # fmt: skip
        assert response.status_code == 400, response.content
        fields = {e["field"] for e in response.json()["errors"]}
        assert fields & {"hourly_price_per_gpu", "quote_date"}
        assert not Quote.objects.exists()


class TestFxRates:
    @pytest.mark.parametrize(
        ("field", "value"),
        [
            ("rate", "9999999999"),  # the issue's
            ("rate", over(bounds.FX_RATE_MAX)),
            ("rate", "0.00001"),
            *[("as_of", day) for day in OUT_OF_RANGE_DATES],
        ],
    )
    def test_api_and_page_refuse_a_rate_or_date_out_of_range(
        self, catalog, token_client, make_user, field, value
    ):
        good = {"currency": "JPY", "rate": "0.0067", "as_of": "2026-12-01", "source": "ECB"}
        response = token_client(Role.FINANCE).post(
            "/api/v1/fx-rates/", {**good, field: value}, format="json"
        )
        assert response.status_code == 400, response.content
        assert field in response.json()["errors"]
        page = Client()
        page.force_login(make_user(Role.FINANCE))
        response = page.post("/finance/fx-rates/", {**good, field: value})
        assert response.status_code == 200  # the form again, with the field's error
        assert response.context["form"].errors[field]
        assert not FxRate.objects.exists()

    def test_the_extremes_of_the_range_are_accepted(self, catalog, token_client):
        api = token_client(Role.FINANCE)
        for rate in (bounds.FX_RATE_MIN, bounds.FX_RATE_MAX):
            body = {"currency": "JPY", "rate": str(rate), "as_of": TODAY.isoformat(), "source": "x"}
            assert api.post("/api/v1/fx-rates/", body, format="json").status_code == 201


class TestFinanceAssumptions:
    @pytest.mark.parametrize(
        ("field", "value"),
        [
            ("labour_rate_per_hour", "99999999.99"),  # the issue's
            ("platform_hours_self_managed", "999999.99"),  # the issue's
            ("hosting_per_kw_month", over(bounds.HOSTING_PER_KW_MONTH_MAX)),
            ("power_price_per_kwh", over(bounds.ELECTRICITY_PER_KWH_MAX)),
            ("operator_review_rate_per_hour", over(bounds.LABOUR_RATE_PER_HOUR_MAX)),
        ],
    )
    def test_the_form_refuses_a_figure_out_of_range(self, catalog, make_user, field, value):
        page = Client()
        page.force_login(make_user(Role.FINANCE))
        response = page.post("/finance/assumptions/", {field: value})
        assert response.status_code == 200
        assert response.context["form"].errors[field]
        assert not FinanceAssumptions.objects.filter(**{f"{field}__isnull": False}).exists()


def catalog_post(api, text, provider, fmt, **extra):
    upload = SimpleUploadedFile("catalog.csv", text.encode(), content_type="text/csv")
    body = {"file": upload, "provider": str(provider.pk), "format": fmt, **extra}
    return api.post("/api/v1/quotes/import-catalog", body, format="multipart")


def gpuhunt_row(price="2.49", count="1"):
    return (
        f"gpu_1x_h100_sxm5,us-east-1,{price},26,225.0,{count},H100,80.0,False,2.8,nvidia,,x86,{{}}"
    )


def skypilot_row(mib="81920", price="98.32"):
    info = (
        f"\"{{'Gpus': [{{'Name': 'H100', 'Manufacturer': 'NVIDIA', 'Count': 8, 'MemoryInfo': "
        f"{{'SizeInMiB': {mib}}}}}], 'TotalGpuMemoryInMiB': 655360}}\""
    )
    return f"p5.48xlarge,H100,8.0,192.0,2048.0,{info},{price},,us-east-1,use1-az1"


class TestCatalogNumbers:
    @pytest.mark.parametrize(
        "price", ["1E+30", "1E+999999999", "1e-30", "-0", "0", "9" * 5000, "NaN", "-1"]
    )
    def test_a_hostile_gpuhunt_price_is_a_400_naming_the_column(self, buyer, acme, price):
        response = catalog_post(buyer, f"{GPUHUNT_HEADER}\n{gpuhunt_row(price)}\n", acme, "gpuhunt")
        assert response.status_code == 400, response.content
        errors = response.json()["errors"]
        assert [(e["row"], e["field"]) for e in errors] == [(2, "price")], errors
        assert not Quote.objects.exists()

    def test_a_good_gpuhunt_row_imports(self, buyer, acme):
        response = catalog_post(buyer, f"{GPUHUNT_HEADER}\n{gpuhunt_row()}\n", acme, "gpuhunt")
        assert response.status_code == 201, response.content

    @pytest.mark.parametrize("mib", ["9" * 5000, "1" + "0" * 20])
    def test_a_hostile_skypilot_gpu_memory_is_a_400(self, buyer, acme, mib):
        response = catalog_post(
            buyer, f"{SKYPILOT_HEADER}\n{skypilot_row(mib)}\n", acme, "skypilot"
        )
        assert response.status_code == 400, response.content
        assert {e["field"] for e in response.json()["errors"]} == {"GpuInfo"}

    @pytest.mark.parametrize("price", ["1E+30", "1e-30", "-0"])
    def test_a_hostile_skypilot_price_is_a_400(self, buyer, acme, price):
        text = f"{SKYPILOT_HEADER}\n{skypilot_row(price=price)}\n"
        response = catalog_post(buyer, text, acme, "skypilot")
        assert response.status_code == 400, response.content
        assert {e["field"] for e in response.json()["errors"]} == {"Price"}

    @pytest.mark.parametrize("day", OUT_OF_RANGE_DATES)
    def test_a_fetched_date_out_of_range_is_a_400(self, buyer, acme, day):
        text = f"{GPUHUNT_HEADER}\n{gpuhunt_row()}\n"
        response = catalog_post(buyer, text, acme, "gpuhunt", fetched_date=day)
        assert response.status_code == 400, response.content
        assert "fetched_date" in response.json()["errors"]


class TestCatalogAndConfidentialQuotes:
    def test_the_answer_is_the_same_whether_or_not_another_team_holds_the_key(self, buyer, acme):
        """Team A imported a catalog and made its quote confidential; team B's import of the
        same row creates B's own quote and says nothing of A's."""
        text = f"{GPUHUNT_HEADER}\n{gpuhunt_row()}\n"
        assert catalog_post(buyer, text, acme, "gpuhunt").status_code == 201
        theirs = Quote.objects.get()
        Quote.objects.filter(pk=theirs.pk).update(confidential_to=TeamFactory(slug="team-a"))
        beside = catalog_post(buyer, text, acme, "gpuhunt")
        alone = catalog_post(buyer, text, ProviderFactory(name="Alone Cloud"), "gpuhunt")
        assert beside.status_code == alone.status_code == 201
        ignore = {"id", "provider"}

        def answer(response):
            body = response.json()
            body["quotes"] = [
                {k: v for k, v in q.items() if k not in ignore} for q in body["quotes"]
            ]
            return {k: v for k, v in body.items() if k not in ignore}

        assert answer(beside) == answer(alone)
        assert answer(beside)["created"] == 1
        theirs.refresh_from_db()
        assert theirs.version == 1 and theirs.confidential_to.slug == "team-a"
        assert Quote.objects.filter(provider=acme, retired=False).count() == 2


class TestBriefs:
    @pytest.mark.parametrize("rps", ["9999999.999", over(bounds.REQUESTS_PER_SECOND_MAX)])
    def test_a_request_rate_past_its_range_is_a_400(self, catalog, token_client, rps):
        body = {**BRIEF_BODY, "requests_per_second": rps}
        response = token_client(Role.PLATFORM).post("/api/v1/briefs/", body, format="json")
        assert response.status_code == 400, response.content
        assert "requests_per_second" in response.json()["errors"]


class TestQuotePage:
    @pytest.mark.parametrize(
        ("field", "value"),
        [("hourly_price_per_gpu", "9999999999.9999"), ("quote_date", "9999-12-31")],
    )
    def test_the_form_lists_the_field_out_of_range_and_saves_nothing(
        self, catalog, make_user, acme, field, value
    ):
        page = Client()
        page.force_login(make_user(Role.PROCUREMENT))
        response = page.post("/quotes/new/", form_data(acme, **{field: value}))
        assert response.status_code == 200
        assert response.context["form"].errors[field]
        assert f'<a href="#id_{field}">' in response.content.decode()
        assert not Quote.objects.exists()
