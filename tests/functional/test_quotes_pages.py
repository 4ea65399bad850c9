"""Pages under /quotes/: the list (stale, retired, confidential), the quote and API-route forms,
retire, the CSV import, and who may write."""

import re
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.catalog.models import Gpu, GpuSystem
from apps.core.roles import Role
from apps.quotes.models import ApiRoute, Quote
from tests.factories.quotes import ApiRouteFactory, ProviderFactory
from tests.factories.quotes_extra import FreshQuoteFactory, days_ago, gpu_catalog_create

pytestmark = pytest.mark.django_db

NOT_PROCUREMENT = (Role.PLATFORM, Role.FINANCE, Role.API_CLIENT)
CSV_HEADER = (
    "provider,gpu,system,region,pricing_term,hourly_price_per_gpu,currency,source,quote_date"
)
MAX_PAGE_UPLOAD = 2 * 1024 * 1024


@pytest.fixture
def catalog(db):
    """Overrides the conftest fixture: these pages need the catalog's rows, not its costing."""
    gpu_catalog_create()


@pytest.fixture
def acme(db):
    return ProviderFactory(name="Acme Cloud")


@pytest.fixture
def procurement_client(client, catalog, make_user):
    client.force_login(make_user(Role.PROCUREMENT))
    return client


@pytest.fixture
def client_as(client, catalog, make_user):
    def login(*roles, teams=None):
        client.force_login(make_user(*roles, teams=teams))
        return client

    return login


def form_data(provider, **changes):
    data = {
        "provider": str(provider.pk),
        "gpu": str(Gpu.objects.get(slug="h100-sxm5-80gb").pk),
        "system": "",
        "gpus_per_node": "8",
        "region": "us-east-1",
        "pricing_term": "ON_DEMAND",
        "hourly_price_per_gpu": "2.49",
        "currency": "USD",
        "storage_price_per_tb_month": "20",
        "egress_price_per_gb": "0.05",
        "network_monthly": "0",
        "monthly_extras": "150",
        "minimum_commitment_months": "0",
        "quote_date": days_ago(10).isoformat(),
        "valid_until": days_ago(-80).isoformat(),
        "source": "sales call",
        "confidential_to": "",
    }
    data.update(changes)
    return data


def csv_upload(*rows: str, header: str = CSV_HEADER) -> SimpleUploadedFile:
    return SimpleUploadedFile("quotes.csv", ("\n".join([header, *rows]) + "\n").encode())


def good_row(provider="Acme Cloud", gpu="h100-sxm5-80gb") -> str:
    return f"{provider},{gpu},,us-east,ON_DEMAND,2.49,USD,price sheet,{days_ago(3)}"


def quote_row_html(response, quote) -> str:
    match = re.search(rf'<tr id="quote-{quote.pk}">(.*?)</tr>', response.content.decode(), re.S)
    assert match, f"quote #{quote.pk} is not on the page"
    return match.group(1)


class TestLoginRequired:
    @pytest.mark.parametrize(
        "url", ["/quotes/", "/quotes/new/", "/quotes/import/", "/quotes/api-routes/new/"]
    )
    def test_quote_pages_redirect_anonymous_users_to_login(self, client, url):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")


class TestQuoteListPage:
    @pytest.mark.parametrize("role", [*NOT_PROCUREMENT, Role.PROCUREMENT])
    def test_every_signed_in_role_sees_the_quotes_and_routes(self, client_as, role):
        quote = FreshQuoteFactory()
        route = ApiRouteFactory()
        response = client_as(role).get("/quotes/")
        assert response.status_code == 200
        assert [row["quote"] for row in response.context["quotes"]] == [quote]
        assert response.context["routes"] == [route]

    @pytest.mark.parametrize(
        ("quote_age", "valid_for", "status"),
        [(10, 60, "current"), (91, None, "stale"), (10, -1, "stale"), (90, 0, "current")],
        ids=["fresh", "too-old", "expired", "on-the-edge"],
    )
    def test_each_quote_says_whether_it_is_stale(self, client_as, quote_age, valid_for, status):
        valid_until = None if valid_for is None else days_ago(-valid_for)
        quote = FreshQuoteFactory(quote_date=days_ago(quote_age), valid_until=valid_until)
        response = client_as(Role.FINANCE).get("/quotes/")
        [row] = response.context["quotes"]
        assert (row["stale"], row["age"]) == (status == "stale", quote_age)
        html = quote_row_html(response, quote)
        assert ('<span class="warn stale">stale</span>' in html) is (status == "stale")
        assert f"({quote_age} d)" in html

    def test_retired_quotes_are_hidden_unless_asked_for(self, client_as):
        live = FreshQuoteFactory()
        retired = FreshQuoteFactory(retired=True)
        client = client_as(Role.FINANCE)
        default = client.get("/quotes/")
        everything = client.get("/quotes/", {"retired": "1"})
        assert [r["quote"] for r in default.context["quotes"]] == [live]
        assert {r["quote"] for r in everything.context["quotes"]} == {live, retired}
        assert "retired" in quote_row_html(everything, retired)

    def test_a_quote_confidential_to_another_team_is_not_shown(self, client_as, other_team):
        FreshQuoteFactory(confidential_to=other_team, source="secret NDA price")
        response = client_as(Role.PROCUREMENT).get("/quotes/", {"retired": "1"})
        assert response.context["quotes"] == []
        assert b"secret NDA price" not in response.content
        assert b"confidential to" not in response.content

    def test_members_of_the_team_see_the_confidential_quote_labelled(self, client_as, other_team):
        quote = FreshQuoteFactory(confidential_to=other_team)
        response = client_as(Role.FINANCE, teams=[other_team]).get("/quotes/")
        assert "confidential to Other Team" in quote_row_html(response, quote)

    def test_only_procurement_gets_the_write_buttons(self, client_as):
        FreshQuoteFactory()
        reader = client_as(Role.PLATFORM).get("/quotes/")
        assert reader.context["can_edit"] is False
        assert b"New quote" not in reader.content and b"Retire" not in reader.content
        writer = client_as(Role.PROCUREMENT).get("/quotes/")
        assert writer.context["can_edit"] is True
        assert b"New quote" in writer.content and b"Import CSV" in writer.content


class TestQuoteFormPages:
    def test_a_save_is_confirmed_naming_the_quote(self, procurement_client, acme):
        response = procurement_client.post("/quotes/new/", form_data(acme), follow=True)
        quote = Quote.objects.get()
        shown = [str(m) for m in response.context["messages"]]
        assert shown == [
            f"Quote #{quote.pk} saved ({acme.name} · NVIDIA H100 SXM5 · On demand · us-east-1); "
            "the candidate tables that use it are being recomputed."
        ]
        assert 'role="status"' in response.content.decode()

    def test_errors_are_listed_at_the_top_linked_to_their_fields(self, procurement_client, acme):
        response = procurement_client.post(
            "/quotes/new/", form_data(acme, hourly_price_per_gpu="", region="")
        )
        html = response.content.decode()
        top = html[html.index('id="form-errors"') : html.index('id="quote-form"')]
        assert '<a href="#id_region">Region</a>' in top
        assert '<a href="#id_hourly_price_per_gpu">Price per GPU-hour</a>' in top

    def test_every_money_field_names_what_it_is_per(self, procurement_client):
        form = procurement_client.get("/quotes/new/").context["form"]
        labels = {name: str(form[name].label) for name in form.fields}
        assert labels["hourly_price_per_gpu"] == "Price per GPU-hour"
        assert labels["pue"] == "Power usage effectiveness (PUE, ratio)"
        assert labels["electricity_per_kwh"] == "Electricity, per kWh"
        assert labels["gpus_per_node"] == "GPUs per node"
        assert "In the quote's currency." in str(form["egress_price_per_gb"].help_text)

    def test_create_saves_and_redirects_to_the_list(self, procurement_client, acme):
        response = procurement_client.post("/quotes/new/", form_data(acme))
        assert response.status_code == 302
        quote = Quote.objects.get()
        assert response["Location"] == f"/quotes/#quote-{quote.pk}"  # the saved row, marked
        assert (quote.provider, quote.gpu.slug, quote.system) == (acme, "h100-sxm5-80gb", None)
        assert quote.hourly_price_per_gpu == Decimal("2.49")
        assert (quote.retired, quote.version, quote.confidential_to) == (False, 1, None)

    def test_a_quote_may_be_made_confidential_to_my_team(self, procurement_client, acme, team):
        response = procurement_client.post(
            "/quotes/new/", form_data(acme, confidential_to=str(team.pk))
        )
        assert response.status_code == 302
        assert Quote.objects.get().confidential_to == team

    @pytest.mark.parametrize(
        ("changes", "field", "message"),
        [
            ({"hourly_price_per_gpu": "-1"}, "hourly_price_per_gpu", "greater than or equal to 0"),
            ({"egress_price_per_gb": "-0.1"}, "egress_price_per_gb", "greater than or equal to 0"),
            ({"currency": "XYZ"}, "currency", "Select a valid choice"),
            ({"valid_until": days_ago(20).isoformat()}, "valid_until", "before the quote date"),
            ({"gpu": "999999"}, "gpu", "Select a valid choice"),
            ({"gpu": ""}, "gpu", "not both"),
            ({"quote_date": "2026-02-30"}, "quote_date", "Enter a valid date"),
        ],
    )
    def test_bad_input_gets_a_field_level_error_and_saves_nothing(
        self, procurement_client, acme, changes, field, message
    ):
        response = procurement_client.post("/quotes/new/", form_data(acme, **changes))
        assert response.status_code == 200
        errors = response.context["form"].errors
        assert field in errors, errors
        assert any(message in e for e in errors[field]), errors[field]
        assert Quote.objects.count() == 0

    def test_a_gpu_and_a_system_together_is_a_field_error(self, procurement_client, acme):
        system = GpuSystem.objects.get(slug="hgx-h100-8")
        response = procurement_client.post("/quotes/new/", form_data(acme, system=str(system.pk)))
        assert response.context["form"].errors["gpu"] == [
            "Give a catalog GPU or a system, not both."
        ]
        assert Quote.objects.count() == 0

    def test_a_quote_cannot_be_made_confidential_to_a_team_i_am_not_in(
        self, procurement_client, acme, other_team
    ):
        response = procurement_client.post(
            "/quotes/new/", form_data(acme, confidential_to=str(other_team.pk))
        )
        assert response.status_code == 200
        assert "confidential_to" in response.context["form"].errors
        assert Quote.objects.count() == 0

    def test_edit_changes_the_price_and_bumps_the_version(self, procurement_client, acme):
        quote = FreshQuoteFactory(provider=acme)
        data = form_data(acme, hourly_price_per_gpu="1.99")
        response = procurement_client.post(f"/quotes/{quote.pk}/edit/", data)
        assert response.status_code == 302
        quote.refresh_from_db()
        assert (quote.hourly_price_per_gpu, quote.version) == (Decimal("1.99"), 2)

    def test_a_retired_quote_cannot_be_edited(self, procurement_client, acme):
        quote = FreshQuoteFactory(provider=acme, retired=True, hourly_price_per_gpu=Decimal("2.5"))
        data = form_data(acme, hourly_price_per_gpu="1.99")
        response = procurement_client.post(f"/quotes/{quote.pk}/edit/", data)
        assert response.status_code == 200
        assert response.context["form"].non_field_errors() == [
            "A retired quote cannot change; enter a new quote."
        ]
        quote.refresh_from_db()
        assert (quote.hourly_price_per_gpu, quote.version) == (Decimal("2.5"), 1)

    def test_retire_keeps_the_quote_and_marks_it_retired(self, procurement_client):
        quote = FreshQuoteFactory()
        response = procurement_client.post(f"/quotes/{quote.pk}/retire/")
        assert response.status_code == 302
        assert response["Location"] == "/quotes/"
        quote.refresh_from_db()
        assert (quote.retired, quote.version) == (True, 2)
        assert Quote.objects.count() == 1

    def test_retire_only_answers_to_post(self, procurement_client):
        quote = FreshQuoteFactory()
        assert procurement_client.get(f"/quotes/{quote.pk}/retire/").status_code == 405
        quote.refresh_from_db()
        assert quote.retired is False

    def test_another_teams_confidential_quote_is_404(self, procurement_client, other_team):
        theirs = FreshQuoteFactory(confidential_to=other_team)
        assert procurement_client.get(f"/quotes/{theirs.pk}/edit/").status_code == 404
        assert procurement_client.post(f"/quotes/{theirs.pk}/retire/").status_code == 404
        theirs.refresh_from_db()
        assert theirs.retired is False


class TestApiRoutePages:
    def test_create_saves_the_route(self, procurement_client, acme):
        data = {
            "provider": str(acme.pk),
            "model": "llama-3.1-8b-instruct",
            "model_preset": "llama-3.1-8b",
            "input_price_per_mtok": "0.10",
            "output_price_per_mtok": "0.30",
            "currency": "USD",
            "batch_discount": "0.5",
            "rate_limit_rpm": "600",
            "quote_date": "",
            "source": "",
        }
        response = procurement_client.post("/quotes/api-routes/new/", data)
        assert response.status_code == 302
        route = ApiRoute.objects.get()
        assert (route.model, route.output_price_per_mtok) == (
            "llama-3.1-8b-instruct",
            Decimal("0.30"),
        )

    def test_retire_keeps_the_route_and_hides_it_from_the_list(self, procurement_client):
        route = ApiRouteFactory()
        assert procurement_client.post(f"/quotes/api-routes/{route.pk}/retire/").status_code == 302
        route.refresh_from_db()
        assert route.retired is True
        assert procurement_client.get("/quotes/").context["routes"] == []


class TestWritePagesAreProcurementOnly:
    @pytest.mark.parametrize("role", NOT_PROCUREMENT)
    def test_every_write_view_is_403_for_other_roles(self, client_as, acme, role):
        client = client_as(role)
        quote = FreshQuoteFactory(provider=acme, hourly_price_per_gpu=Decimal("2.50"))
        route = ApiRouteFactory(provider=acme)
        attempts = {
            "GET new": client.get("/quotes/new/"),
            "POST new": client.post("/quotes/new/", form_data(acme)),
            "GET edit": client.get(f"/quotes/{quote.pk}/edit/"),
            "POST edit": client.post(
                f"/quotes/{quote.pk}/edit/", form_data(acme, hourly_price_per_gpu="1")
            ),
            "POST retire": client.post(f"/quotes/{quote.pk}/retire/"),
            "GET import": client.get("/quotes/import/"),
            "POST import": client.post("/quotes/import/", {"file": csv_upload(good_row())}),
            "GET route new": client.get("/quotes/api-routes/new/"),
            "POST route new": client.post("/quotes/api-routes/new/", {"provider": acme.pk}),
            "GET route edit": client.get(f"/quotes/api-routes/{route.pk}/edit/"),
            "POST route edit": client.post(f"/quotes/api-routes/{route.pk}/edit/", {}),
            "POST route retire": client.post(f"/quotes/api-routes/{route.pk}/retire/"),
        }
        assert {k: r.status_code for k, r in attempts.items()} == dict.fromkeys(attempts, 403)
        assert list(Quote.objects.values_list("hourly_price_per_gpu", "retired")) == [
            (Decimal("2.50"), False)
        ]
        assert list(ApiRoute.objects.values_list("retired", flat=True)) == [False]


class TestImportPage:
    def test_a_good_file_creates_every_row_and_redirects(self, procurement_client, acme):
        ProviderFactory(name="Beta GPU")
        upload = csv_upload(good_row(), good_row("Beta GPU", "l40s-48gb"))
        response = procurement_client.post("/quotes/import/", {"file": upload}, follow=True)
        assert response.redirect_chain == [("/quotes/", 302)]
        assert b"Imported 2 quotes." in response.content
        assert sorted(Quote.objects.values_list("provider__name", "gpu__slug")) == [
            ("Acme Cloud", "h100-sxm5-80gb"),
            ("Beta GPU", "l40s-48gb"),
        ]

    def test_a_bad_row_lists_every_problem_by_row_and_saves_nothing(self, procurement_client, acme):
        FreshQuoteFactory(provider=acme)
        upload = csv_upload(
            good_row(),
            good_row(gpu="h900-imaginary"),
            "Nobody,l4-24gb,,us,ON_DEMAND,abc,USD,sheet,2026-13-01",
        )
        response = procurement_client.post("/quotes/import/", {"file": upload})
        assert response.status_code == 200
        errors = [(e.row, e.field, e.message) for e in response.context["row_errors"]]
        assert errors == [
            (3, "gpu", "no GPU 'h900-imaginary' in the catalog"),
            (4, "provider", "unknown provider 'Nobody'"),
            (4, "hourly_price_per_gpu", "not a number: 'abc'"),
            (4, "quote_date", "not a date (YYYY-MM-DD): '2026-13-01'"),
        ]
        html = response.content.decode()
        assert "Nothing was saved." in html
        assert "Row 3, gpu: no GPU &#x27;h900-imaginary&#x27; in the catalog" in html
        assert "Row 4, provider: unknown provider &#x27;Nobody&#x27;" in html
        assert Quote.objects.count() == 1

    def test_a_row_with_several_problems_names_every_one(self, procurement_client, acme):
        """Issue 27 saw a row of three problems reported as two: a column that did not parse
        hid the model's checks of the columns that did."""
        header = CSV_HEADER + ",gpus_per_node,capex_per_gpu"
        row = "Acme Cloud,h100-sxm5-80gb,,us,ON_DEMAND,-2,XYZ,sheet,2026-11-01,900,30000"
        response = procurement_client.post(
            "/quotes/import/", {"file": csv_upload(row, header=header)}
        )
        fields = sorted({e.field for e in response.context["row_errors"]})
        assert fields == [
            "capex_per_gpu", "currency", "gpus_per_node", "hourly_price_per_gpu",
        ]  # fmt: skip
        assert Quote.objects.count() == 0

    @pytest.mark.parametrize(
        ("price", "currency", "quote_date", "field"),
        [
            ("2.49", "XYZ", "2026-11-01", "currency"),
            ("1e3x", "USD", "2026-11-01", "hourly_price_per_gpu"),
            ("2.49", "USD", "30/11/2026", "quote_date"),
        ],
    )
    def test_each_kind_of_bad_row_is_named(
        self, procurement_client, acme, price, currency, quote_date, field
    ):
        row = f"Acme Cloud,h100-sxm5-80gb,,us,ON_DEMAND,{price},{currency},sheet,{quote_date}"
        response = procurement_client.post("/quotes/import/", {"file": csv_upload(row)})
        assert [(e.row, e.field) for e in response.context["row_errors"]] == [(2, field)]
        assert Quote.objects.count() == 0

    def test_non_utf8_bytes_are_a_form_error(self, procurement_client):
        ProviderFactory(name="Café Cloud")
        text = f"{CSV_HEADER}\n{good_row('Café Cloud')}\n"
        upload = SimpleUploadedFile("quotes.csv", text.encode("latin-1"))
        response = procurement_client.post("/quotes/import/", {"file": upload})
        assert response.status_code == 200
        assert response.context["form"].errors == {"file": ["Not UTF-8 text."]}
        assert Quote.objects.count() == 0

    def test_an_empty_file_is_a_form_error(self, procurement_client):
        upload = SimpleUploadedFile("quotes.csv", b"")
        response = procurement_client.post("/quotes/import/", {"file": upload})
        assert response.status_code == 200
        assert response.context["form"].errors == {"file": ["The submitted file is empty."]}
        assert Quote.objects.count() == 0

    def test_a_header_without_rows_says_so(self, procurement_client):
        upload = SimpleUploadedFile("quotes.csv", f"{CSV_HEADER}\n".encode())
        response = procurement_client.post("/quotes/import/", {"file": upload})
        assert [(e.row, e.message) for e in response.context["row_errors"]] == [
            (1, "the file holds no quote rows")
        ]
        assert Quote.objects.count() == 0

    def test_a_file_over_2_mb_is_refused_and_saves_nothing(self, procurement_client, acme):
        pads = 20
        header = CSV_HEADER + "".join(f",pad{i}" for i in range(pads))
        first = good_row()
        # header + first row fill exactly the bytes the page reads; a second row follows.
        room = MAX_PAGE_UPLOAD + 1 - len(header) - 1 - len(first) - pads - 1
        padding = [("x" * (room // pads + (i < room % pads))) for i in range(pads)]
        first_line = first + "," + ",".join(padding)
        assert len(header) + 1 + len(first_line) + 1 == MAX_PAGE_UPLOAD + 1
        upload = csv_upload(first_line, good_row(gpu="l40s-48gb"), header=header)
        response = procurement_client.post("/quotes/import/", {"file": upload})
        assert Quote.objects.count() == 0, "a cut-off file was half imported"
        assert response.status_code == 200
        assert "file" in response.context["form"].errors

    def test_a_cell_over_the_csv_field_limit_is_a_row_error_not_a_500(
        self, procurement_client, acme
    ):
        procurement_client.raise_request_exception = False
        row = f'{good_row()},"{"x" * 140_000}"'
        upload = csv_upload(row, header=CSV_HEADER + ",notes")
        response = procurement_client.post("/quotes/import/", {"file": upload})
        assert Quote.objects.count() == 0
        assert response.status_code == 200
