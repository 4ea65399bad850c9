"""Procurement pages under /quotes/: provider create and edit, one GPU's price comparison
(normalised with the FX table, with age, staleness and region), and the import's CSV template
with its columns and the catalog's slugs."""

import csv
import io
import re
from datetime import date
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.catalog.models import Gpu, GpuSystem
from apps.core.roles import Role
from apps.finance.models import FxRate
from apps.quotes.csv_rows import CSV_COLUMNS
from apps.quotes.csv_template import COLUMN_MEANINGS
from apps.quotes.models import Provider, Quote
from tests.factories.core import TeamFactory
from tests.factories.quotes import ProviderFactory
from tests.factories.quotes_extra import FreshQuoteFactory, days_ago, gpu_catalog_create

pytestmark = pytest.mark.django_db

NOT_PROCUREMENT = (Role.PLATFORM, Role.FINANCE, Role.API_CLIENT)
H100 = "h100-sxm5-80gb"


@pytest.fixture
def catalog(db):
    """Overrides the conftest fixture: these pages need the catalog's rows only."""
    gpu_catalog_create()


@pytest.fixture
def client_as(client, catalog, make_user):
    def login(*roles, teams=None, **kwargs):
        user = make_user(*roles, teams=teams, **kwargs)
        client.force_login(user)
        client.user = user
        return client

    return login


class TestProviderPages:
    def test_procurement_creates_a_provider(self, client_as):
        client = client_as(Role.PROCUREMENT)
        form = client.get("/quotes/providers/new/")
        assert form.status_code == 200
        assert 'name="csrfmiddlewaretoken"' in form.content.decode()
        response = client.post(
            "/quotes/providers/new/", {"name": "Nebula GPU", "website": "https://nebula.example"}
        )
        assert response.status_code == 302
        provider = Provider.objects.get(name="Nebula GPU")
        assert provider.website == "https://nebula.example"
        assert "Nebula GPU" in client.get("/quotes/providers/").content.decode()

    def test_procurement_edits_a_provider(self, client_as):
        provider = ProviderFactory(name="Old Name")
        client = client_as(Role.PROCUREMENT)
        url = f"/quotes/providers/{provider.pk}/edit/"
        assert 'value="Old Name"' in client.get(url).content.decode()
        response = client.post(url, {"name": "New Name", "website": ""})
        assert response.status_code == 302
        provider.refresh_from_db()
        assert provider.name == "New Name"

    def test_a_name_taken_in_another_case_is_a_field_error_and_nothing_is_saved(self, client_as):
        ProviderFactory(name="Acme Cloud")
        client = client_as(Role.PROCUREMENT)
        response = client.post("/quotes/providers/new/", {"name": "ACME cloud", "website": ""})
        assert response.status_code == 200
        assert "already exists" in response.content.decode()
        assert Provider.objects.count() == 1

    def test_a_bad_website_keeps_the_typed_name(self, client_as):
        client = client_as(Role.PROCUREMENT)
        response = client.post("/quotes/providers/new/", {"name": "Typed", "website": "not a url"})
        assert response.status_code == 200
        assert "website" in response.context["form"].errors
        assert 'value="Typed"' in response.content.decode()
        assert not Provider.objects.exists()

    def test_a_blank_name_is_a_field_error(self, client_as):
        client = client_as(Role.PROCUREMENT)
        response = client.post("/quotes/providers/new/", {"name": "", "website": ""})
        assert response.status_code == 200
        assert "name" in response.context["form"].errors

    def test_an_admin_creates_a_provider(self, client_as):
        client = client_as(is_superuser=True, is_staff=True)
        response = client.post("/quotes/providers/new/", {"name": "By Admin", "website": ""})
        assert response.status_code == 302
        assert Provider.objects.filter(name="By Admin").exists()

    @pytest.mark.parametrize("role", NOT_PROCUREMENT)
    def test_other_roles_are_refused_with_a_reason(self, client_as, role):
        provider = ProviderFactory()
        client = client_as(role)
        assert client.get("/quotes/providers/").status_code == 200
        for url in ("/quotes/providers/new/", f"/quotes/providers/{provider.pk}/edit/"):
            refused = client.post(url, {"name": "X", "website": ""})
            assert refused.status_code == 403
            assert "Only procurement adds and edits providers." in refused.content.decode()
        assert not Provider.objects.filter(name="X").exists()

    def test_the_quote_list_links_the_provider_pages(self, client_as):
        html = client_as(Role.PROCUREMENT).get("/quotes/").content.decode()
        assert 'href="/quotes/providers/"' in html
        assert 'href="/quotes/providers/new/"' in html


def _quote(**fields):
    return FreshQuoteFactory(**fields)


class TestPriceComparison:
    @pytest.fixture
    def quotes(self, catalog):
        h100 = Gpu.objects.get(slug=H100)
        system = GpuSystem.objects.filter(gpu=h100).first()
        FxRate.objects.create(currency="EUR", rate=Decimal("1.10"), as_of=days_ago(5), source="ECB")
        return {
            "usd": _quote(
                provider=ProviderFactory(name="Dear"), hourly_price_per_gpu=Decimal("3.00"),
                region="us-east-1",
            ),
            "eur": _quote(  # 2.00 EUR = 2.20 USD: cheaper than 3.00 USD, dearer than 1.50
                provider=ProviderFactory(name="Euro"), hourly_price_per_gpu=Decimal("2.00"),
                currency="EUR", region="eu-west", pricing_term="RESERVED_1Y",
                minimum_commitment_months=12,
            ),
            "cheap": _quote(
                provider=ProviderFactory(name="Cheap"), hourly_price_per_gpu=Decimal("1.50"),
                quote_date=days_ago(400), valid_until=None,
            ),
            "jpy": _quote(
                provider=ProviderFactory(name="Yen"), hourly_price_per_gpu=Decimal("300"),
                currency="JPY",
            ),
            "system": _quote(
                provider=ProviderFactory(name="Racks"), gpu=None, system=system,
                hourly_price_per_gpu=Decimal("2.50"),
            ),
            "other_gpu": _quote(
                provider=ProviderFactory(name="Elsewhere"),
                gpu=Gpu.objects.exclude(pk=h100.pk).first(), hourly_price_per_gpu=Decimal("0.1"),
            ),
            "retired": _quote(provider=ProviderFactory(name="Gone"), retired=True),
        }  # fmt: skip

    def test_sorted_by_normalised_price_with_the_unconverted_after(self, client_as, quotes):
        response = client_as(Role.FINANCE).get(f"/quotes/compare/{H100}/")
        assert response.status_code == 200
        order = [r["quote"].pk for r in response.context["rows"]]
        q = quotes
        assert order == [q["cheap"].pk, q["eur"].pk, q["system"].pk, q["usd"].pk, q["jpy"].pk]
        eur = response.context["rows"][1]
        assert eur["normalised"] == Decimal("2.20")
        html = response.content.decode()
        assert "not costed: no FX rate for JPY" in html
        assert f'id="compare-quote-{q["jpy"].pk}" class="not-costed"' in html
        assert "Elsewhere" not in html and "Gone" not in html

    def test_shows_term_in_words_region_age_and_staleness(self, client_as, quotes):
        response = client_as(Role.PLATFORM).get(f"/quotes/compare/{H100}/")
        html = response.content.decode()
        assert "Reserved 1 year · 12-month commitment" in html
        assert "eu-west" in html
        assert "USD\u00a02.20" in html  # apps.core.formatting.rate
        rows = {r["quote"].pk: r for r in response.context["rows"]}
        assert rows[quotes["cheap"].pk]["stale"] is True
        assert rows[quotes["cheap"].pk]["age_days"] == 400
        assert rows[quotes["usd"].pk]["stale"] is False
        assert "400 days ago" in html

    def test_a_confidential_quote_is_shown_only_to_its_team(self, client_as, catalog, make_user):
        own, other = TeamFactory(slug="own"), TeamFactory(slug="other")
        secret = _quote(provider=ProviderFactory(name="Under NDA"), confidential_to=own)
        insider = client_as(Role.FINANCE, teams=[own]).get(f"/quotes/compare/{H100}/")
        assert secret.pk in [r["quote"].pk for r in insider.context["rows"]]
        outsider = client_as(Role.FINANCE, teams=[other]).get(f"/quotes/compare/{H100}/")
        assert secret.pk not in [r["quote"].pk for r in outsider.context["rows"]]
        assert "Under NDA" not in outsider.content.decode()

    def test_an_owned_quote_sorts_among_the_others_by_its_capex_shown(self, client_as):
        dear = FreshQuoteFactory(hourly_price_per_gpu=Decimal("9"))
        owned = _quote(
            pricing_term="OWNED", hourly_price_per_gpu=Decimal(0),
            capex_per_gpu=Decimal("34000"), depreciation_months=48,
        )  # fmt: skip
        response = client_as(Role.FINANCE).get(f"/quotes/compare/{H100}/")
        rows = response.context["rows"]
        assert [r["quote"].pk for r in rows] == [owned.pk, dear.pk]  # 0.97 before 9.00
        # 34,000 / (48 x 730 h) = 0.97031963..., shown at 4 significant figures, not raw.
        assert rows[0]["shown"] == "USD\u00a00.9703"
        html = response.content.decode()
        assert "0.970319" not in html
        assert "capex USD\u00a034,000 over 48\u00a0months" in html
        assert "before power, hosting and hands-on hours" in html

    def test_an_owned_quote_without_capex_is_last_and_not_costed(self, client_as):
        FreshQuoteFactory(hourly_price_per_gpu=Decimal("9"))
        owned = _quote(pricing_term="OWNED", hourly_price_per_gpu=Decimal(0))
        rows = client_as(Role.FINANCE).get(f"/quotes/compare/{H100}/").context["rows"]
        assert rows[-1]["quote"].pk == owned.pk
        assert rows[-1]["not_costed"]

    def test_an_unknown_gpu_is_404_and_sign_in_is_required(self, client_as, client):
        assert client.get(f"/quotes/compare/{H100}/").status_code == 302
        assert client_as(Role.FINANCE).get("/quotes/compare/no-such-gpu/").status_code == 404

    def test_linked_from_the_catalog_and_the_quote_list(self, client_as):
        FreshQuoteFactory()
        client = client_as(Role.PROCUREMENT)
        link = f'href="/quotes/compare/{H100}/"'
        for page in (f"/catalog/{H100}/", "/catalog/", "/quotes/"):
            assert link in client.get(page).content.decode(), page


class TestCsvTemplate:
    def test_every_column_is_explained(self):
        assert set(COLUMN_MEANINGS) == set(CSV_COLUMNS)
        assert all(COLUMN_MEANINGS[name] for name in CSV_COLUMNS)

    def test_the_template_is_an_attachment_with_every_column_and_one_example(self, client_as):
        response = client_as(Role.PLATFORM).get("/quotes/import/template.csv")
        assert response.status_code == 200
        assert response["Content-Type"].startswith("text/csv")
        assert response["Content-Disposition"].startswith("attachment;")
        rows = list(csv.reader(io.StringIO(response.content.decode())))
        assert rows[0] == list(CSV_COLUMNS)
        assert len(rows) == 2
        example = dict(zip(rows[0], rows[1], strict=True))
        assert Gpu.objects.filter(slug=example["gpu"]).exists()
        assert example["pricing_term"] in Quote.PricingTerm.values

    def test_sign_in_is_required(self, client):
        response = client.get("/quotes/import/template.csv")
        assert response.status_code == 302
        assert "/accounts/login/" in response["Location"]

    def test_the_example_row_imports_once_its_provider_exists(self, client_as):
        client = client_as(Role.PROCUREMENT)
        text = client.get("/quotes/import/template.csv").content
        ProviderFactory(name="Example Cloud")
        upload = SimpleUploadedFile("quotes.csv", text)
        response = client.post("/quotes/import/", {"file": upload})
        assert response.status_code == 302, response.content.decode()[:2000]
        quote = Quote.objects.get()
        assert (quote.hourly_price_per_gpu, quote.quote_date) == (
            Decimal("2.49"),
            date(2026, 1, 15),
        )

    def test_the_import_page_lists_the_columns_and_the_catalog_slugs(self, client_as):
        html = client_as(Role.PROCUREMENT).get("/quotes/import/").content.decode()
        assert 'href="/quotes/import/template.csv"' in html
        for slug in Gpu.objects.values_list("slug", flat=True):
            assert f"<code>{slug}</code>" in html
        for slug in GpuSystem.objects.values_list("slug", flat=True):
            assert f"<code>{slug}</code>" in html
        # The codes a CSV takes read as code, the words around them as words.
        assert COLUMN_MEANINGS["pricing_term"] in re.sub(r"</?code>", "", html)
        assert "<code>RESERVED_1Y</code>" in html and "<code>OWNED</code>" in html
