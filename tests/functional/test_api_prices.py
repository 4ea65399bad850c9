"""API prices from genai-prices: the command and the "Update API prices" page (a diff, then
applied), re-imports in place with history, prices at a date, one recompute per brief, and
a decision record that keeps the prices it froze.

A small price list is set through the package's own public hook
(genai_prices.data_snapshot.set_custom_snapshot), so that a test can publish a price change;
one test reads the list the pinned package ships."""

from datetime import date
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db.models import F
from django.test import Client
from genai_prices import data_snapshot
from genai_prices import types as gp

from apps.core.roles import Role
from apps.decisions.selectors import inputs_changed, record_verify
from apps.finance.models import CandidateRow
from apps.quotes import api_prices, services
from apps.quotes.models import ApiRoute, ApiRoutePrice, Provider
from tests.factories.briefs import BriefFactory
from tests.factories.decisions import make_record
from tests.factories.quotes import ProviderFactory

pytestmark = pytest.mark.django_db

D = Decimal
TODAY = date(2026, 12, 1)
JUNE, SEPT, NOV = date(2026, 6, 1), date(2026, 9, 1), date(2026, 11, 15)
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
NOT_PROCUREMENT = (Role.PLATFORM, Role.FINANCE, Role.API_CLIENT)
URL = "/quotes/api-prices/"


def _model(model_id, periods, variants=None):
    return gp.ModelInfo(
        id=model_id, match=gp.ClauseEquals(equals=model_id.lower()), prices=periods,
        price_variants=variants,
    )  # fmt: skip


def _period(start, inp, out, cached=None):
    constraint = gp.StartDateConstraint(start_date=start) if start else None
    prices = gp.ModelPrice(input_mtok=D(inp), output_mtok=D(out), cache_read_mtok=cached)
    return gp.ConditionalPrice(constraint=constraint, prices=prices)


def price_list(*, november_cut=False):
    """Acme AI serves Llama 3.1 8B (a price cut in June, batch prices from September, and,
    once published, another cut in November) and a model of no catalog preset; Other Cloud
    serves gpt-oss-120b."""
    llama = [_period(None, "0.10", "0.30", D("0.05")), _period(JUNE, "0.08", "0.24", D("0.04"))]
    if november_cut:
        llama.append(_period(NOV, "0.06", "0.18", D("0.03")))
    batch = gp.PriceVariant(
        when={"processing": "batch"},
        prices=gp.ModelPrice(input_mtok=D("0.04"), output_mtok=D("0.12")),
        constraint=gp.StartDateConstraint(start_date=SEPT),
    )
    acme = gp.Provider(
        id="acme", name="Acme AI", api_pattern=r"https://api\.acme\.example",
        pricing_urls=["https://acme.example/pricing"],
        models=[_model(LLAMA, llama, [batch]), _model("acme-chat-pro", [_period(None, "3", "15")])],
    )  # fmt: skip
    oss = gp.ModelPrice(input_mtok=D("0.15"), output_mtok=D("0.6"))
    other = gp.Provider(
        id="other", name="Other Cloud", api_pattern=r"https://other\.example",
        models=[_model("openai/gpt-oss-120b", oss)],
    )  # fmt: skip
    return [acme, other]


@pytest.fixture
def publish():
    def set_list(providers):
        data_snapshot.set_custom_snapshot(
            data_snapshot.DataSnapshot(providers=providers, from_auto_update=False)
        )

    set_list(price_list())
    yield set_list
    data_snapshot.set_custom_snapshot(None)


@pytest.fixture(autouse=True)
def today(monkeypatch):
    monkeypatch.setattr("django.utils.timezone.localdate", lambda *a, **k: TODAY)


def run(*args):
    out = StringIO()
    call_command("import_api_prices", *args, stdout=out)
    return out.getvalue()


def llama_route():
    return ApiRoute.objects.get(provider__name__iexact="acme ai", model=LLAMA, retired=False)


class TestTheCommand:
    def test_dry_run_shows_the_changes_and_writes_nothing(self, publish):
        out = run("--dry-run")
        assert "Would import from genai-prices 0.2.3, prices in effect on 2026-12-01" in out
        assert "new routes: 2; changed: 0; unchanged: 0" in out
        assert (
            f"+ Acme AI · {LLAMA} (serves llama-3.1-8b): input 0.08, output 0.24, cached input "
            "0.04 USD per million tokens, batch discount 50%"
        ) in out
        assert not ApiRoute.objects.exists()
        assert not Provider.objects.exists()
        assert not ApiRoutePrice.objects.exists()

    def test_creates_providers_routes_and_their_history(self, publish):
        run()
        route = llama_route()
        assert route.model_preset == "llama-3.1-8b"
        assert (route.input_price_per_mtok, route.output_price_per_mtok) == (D("0.08"), D("0.24"))
        assert route.cached_input_price_per_mtok == D("0.04")
        assert route.batch_discount == D("0.5")
        assert route.currency == "USD"
        assert route.quote_date == SEPT  # the latest start among the prices used
        assert route.source.startswith("genai-prices 0.2.3 (acme/")
        assert "price from 2026-09-01" in route.source
        assert Provider.objects.get(name="Acme AI").website == "https://acme.example/pricing"
        history = route.prices.order_by("created_at", "pk")
        assert [(p.effective_from, p.input_price_per_mtok, p.batch_discount) for p in history] == [
            (None, D("0.10"), D(0)),
            (JUNE, D("0.08"), D(0)),
            (SEPT, D("0.08"), D("0.5")),
        ]
        assert {p.source for p in history} == {"genai-prices 0.2.3"}
        # By default only the models that serve a catalog preset.
        assert set(ApiRoute.objects.values_list("model", flat=True)) == {
            LLAMA,
            "openai/gpt-oss-120b",
        }

    def test_all_models_and_one_provider(self, publish):
        run("--all-models", "--provider", "acme")
        assert set(ApiRoute.objects.values_list("model", flat=True)) == {LLAMA, "acme-chat-pro"}
        assert llama_route().provider.name == "Acme AI"

    def test_an_existing_provider_is_matched_ignoring_case(self, publish):
        mine = ProviderFactory(name="ACME ai")
        run()
        assert llama_route().provider == mine
        assert Provider.objects.filter(name__iexact="acme ai").count() == 1

    def test_a_reimport_changes_nothing_and_duplicates_nothing(self, publish):
        run()
        before = list(ApiRoute.objects.order_by("pk").values("pk", "version", "updated_at"))
        periods = ApiRoutePrice.objects.count()
        out = run()
        assert "new routes: 0; changed: 0; unchanged: 2" in out
        assert "Nothing to change." in out
        assert list(ApiRoute.objects.order_by("pk").values("pk", "version", "updated_at")) == before
        assert ApiRoutePrice.objects.count() == periods

    def test_a_published_price_change_updates_the_route_in_place_and_keeps_the_history(
        self, publish
    ):
        run()
        route = llama_route()
        publish(price_list(november_cut=True))
        out = run("--dry-run")
        assert "changed: 1; unchanged: 1" in out
        assert "input per million tokens 0.08 -> 0.06" in out
        assert "cached input per million tokens 0.04 -> 0.03" in out
        run()
        again = llama_route()
        assert again.pk == route.pk
        assert again.version == route.version + 1
        assert again.input_price_per_mtok == D("0.06")
        assert again.quote_date == NOV
        assert ApiRoute.objects.filter(model=LLAMA).count() == 1
        assert list(
            again.prices.order_by(F("effective_from").asc(nulls_first=True)).values_list(
                "effective_from", flat=True
            )
        ) == [None, JUNE, SEPT, NOV]

    def test_prices_of_an_earlier_date(self, publish):
        out = run("--date", "2026-07-01")
        assert "prices in effect on 2026-07-01" in out
        route = llama_route()
        assert route.input_price_per_mtok == D("0.08")
        assert route.batch_discount == 0  # batch prices start in September
        assert route.quote_date == JUNE
        assert sorted(route.prices.values_list("effective_from", flat=True), key=str) == [
            JUNE,
            None,
        ]

    def test_a_retired_route_is_not_brought_back(self, publish):
        run()
        services.api_route_retire(route=llama_route())
        out = run()
        assert "retired here, not re-created" in out
        assert not ApiRoute.objects.filter(model=LLAMA, retired=False).exists()

    def test_an_import_that_meets_another_one_saves_nothing_and_says_so(self, publish, monkeypatch):
        run("--provider", "acme")
        periods = ApiRoutePrice.objects.count()
        # As if the routes were read before another import committed the same ones.
        monkeypatch.setattr(api_prices, "_live_routes", lambda listed, lock: {})
        with pytest.raises(CommandError, match="Another update of API prices ran at the same"):
            run()
        assert ApiRoute.objects.count() == 1
        assert ApiRoutePrice.objects.count() == periods
        assert not Provider.objects.filter(name="Other Cloud").exists()

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            (("--provider", "nosuch"), "--provider: genai-prices 0.2.3 lists no provider 'nosuch'"),
            (("--date", "2026-02-30"), "--date: '2026-02-30' is not a date YYYY-MM-DD"),
            (("--date", "2026-12-02"), "--date: Must not be after today"),
        ],
    )
    def test_bad_input_is_a_clear_error_and_saves_nothing(self, publish, args, message):
        with pytest.raises(CommandError, match=message):
            run(*args)
        assert not ApiRoute.objects.exists()


class TestPricesAtADate:
    def test_the_route_is_priced_at_the_period_in_effect(self, publish):
        run()
        publish(price_list(november_cut=True))
        run()
        route = llama_route()
        on = {day: api_prices.route_price_on(route, day) for day in (date(2026, 1, 1), JUNE,
              date(2026, 10, 1), NOV, TODAY)}  # fmt: skip
        assert on[date(2026, 1, 1)].input_price_per_mtok == D("0.10")
        assert on[JUNE].input_price_per_mtok == D("0.08")
        assert on[date(2026, 10, 1)].batch_discount == D("0.5")
        assert on[NOV].input_price_per_mtok == D("0.06")
        assert on[TODAY].effective_from == NOV

    def test_a_route_entered_by_hand_has_its_own_price_from_its_quote_date(self, db):
        route = services.api_route_create(
            provider=ProviderFactory(), model="m", input_price_per_mtok=D("1"),
            output_price_per_mtok=D("2"), quote_date=JUNE,
        )  # fmt: skip
        assert api_prices.route_price_on(route, date(2026, 5, 31)) is None
        assert api_prices.route_price_on(route, JUNE).input_price_per_mtok == D(1)


@pytest.fixture
def brief(catalog, team):
    return BriefFactory(team=team)  # serves llama-3.1-8b


class TestRecompute:
    def test_one_recompute_request_for_the_briefs_of_the_changed_presets(
        self, publish, brief, monkeypatch, django_capture_on_commit_callbacks
    ):
        BriefFactory(team=brief.team, model_preset="qwen3-8b")  # no route serves it
        calls = []
        real = services.candidate_tables_request_recompute

        def spy(**kwargs):
            calls.append(kwargs)
            return real(**kwargs)

        monkeypatch.setattr(services, "candidate_tables_request_recompute", spy)
        with django_capture_on_commit_callbacks(execute=True):
            run()
        assert calls == [{"brief_ids": [brief.pk], "quotes_only": True}]
        row = CandidateRow.objects.get(table__brief=brief, api_route=llama_route())
        first_cost = row.monthly_cost
        publish(price_list(november_cut=True))
        with django_capture_on_commit_callbacks(execute=True):
            run()
        assert len(calls) == 2
        recosted = CandidateRow.objects.get(table__brief=brief, api_route=llama_route())
        assert recosted.monthly_cost < first_cost  # the November cut, costed

    def test_a_reimport_that_changes_nothing_asks_for_no_recompute(
        self, publish, brief, monkeypatch
    ):
        run()
        calls = []
        monkeypatch.setattr(
            services, "candidate_tables_request_recompute", lambda **kw: calls.append(kw)
        )
        run()
        assert calls == []


class TestDecisionRecords:
    def test_a_later_import_never_changes_a_frozen_record(
        self, publish, brief, make_user, django_capture_on_commit_callbacks
    ):
        with django_capture_on_commit_callbacks(execute=True):
            run()
        route = llama_route()
        record = make_record(
            brief=brief, user=make_user(Role.PROCUREMENT), route=route, capacity_model="API"
        )
        frozen = next(r for r in record.snapshot["api_routes"] if r["id"] == route.pk)
        assert (frozen["input_price_per_mtok"], frozen["output_price_per_mtok"]) == (
            "0.0800",
            "0.2400",
        )
        # The frozen price is the one in effect on the freeze date.
        assert (
            D(frozen["input_price_per_mtok"])
            == api_prices.route_price_on(route, TODAY).input_price_per_mtok
        )
        snapshot, content_hash = record.snapshot, record.content_hash
        publish(price_list(november_cut=True))
        with django_capture_on_commit_callbacks(execute=True):
            run()
        record.refresh_from_db()
        assert record.snapshot == snapshot
        assert record.content_hash == content_hash
        assert record_verify(record)["intact"]
        # ...and the record says that the route it rests on has changed since.
        changed = inputs_changed(record)
        assert any(
            c.startswith("the API route ") and route.model in c and "changed since freezing" in c
            for c in changed
        ), changed


class TestThePage:
    @pytest.fixture
    def buyer(self, client, make_user):
        client.force_login(make_user(Role.PROCUREMENT))
        return client

    def test_the_form_then_the_diff_then_apply(self, publish, buyer):
        form = buyer.get(URL)
        assert form.status_code == 200
        assert "genai-prices 0.2.3" in form.content.decode()
        assert form.context["plan"] is None
        diff = buyer.get(URL, {"provider": "acme", "date": "2026-12-01"})
        assert diff.status_code == 200
        body = diff.content.decode()
        assert "1 new route, 0 changed, 0 unchanged" in body
        assert LLAMA in body and 'name="csrfmiddlewaretoken"' in body
        assert not ApiRoute.objects.exists()  # looking writes nothing
        applied = buyer.post(
            URL,
            {"provider": "acme", "date": "2026-12-01", "fingerprint": diff.context["fingerprint"]},
        )
        assert applied.status_code == 302
        assert llama_route().input_price_per_mtok == D("0.08")
        assert ApiRoute.objects.count() == 1

    def test_a_change_shows_old_and_new_prices(self, publish, buyer):
        run()
        publish(price_list(november_cut=True))
        body = buyer.get(URL, {"date": "2026-12-01"}).content.decode()
        assert "0 new routes, 1 changed, 1 unchanged" in body
        assert "input per million tokens: 0.08 → 0.06" in body

    def test_nothing_to_change_offers_no_apply_button(self, publish, buyer):
        run()
        body = buyer.get(URL, {"date": "2026-12-01"}).content.decode()
        assert 'id="nothing-to-change"' in body
        assert 'id="api-prices-apply"' not in body

    def test_prices_that_changed_since_the_diff_are_shown_again_and_nothing_is_saved(
        self, publish, buyer
    ):
        shown = buyer.get(URL, {"date": "2026-12-01"}).context["fingerprint"]
        publish(price_list(november_cut=True))
        response = buyer.post(URL, {"date": "2026-12-01", "fingerprint": shown})
        assert response.status_code == 200
        assert 'id="changed-meanwhile"' in response.content.decode()
        assert not ApiRoute.objects.exists()

    @pytest.mark.parametrize(
        ("params", "field", "message"),
        [
            ({"provider": "nosuch", "date": "2026-12-01"}, "provider", "lists no provider nosuch"),
            ({"date": "2026-02-30"}, "date", "Enter a date as YYYY-MM-DD."),
            ({"date": "2027-01-01"}, "date", "Must not be after today"),
        ],
    )
    def test_bad_input_is_a_field_error(self, publish, buyer, params, field, message):
        for response in (buyer.get(URL, params), buyer.post(URL, {**params, "fingerprint": "x"})):
            assert response.status_code == 200
            assert message in " ".join(response.context["form"].errors[field])
            assert response.context["plan"] is None
        assert not ApiRoute.objects.exists()

    def test_apply_needs_the_csrf_token(self, publish, make_user):
        client = Client(enforce_csrf_checks=True)
        client.force_login(make_user(Role.PROCUREMENT))
        response = client.post(URL, {"date": "2026-12-01", "fingerprint": "x"})
        assert response.status_code == 403
        assert not ApiRoute.objects.exists()

    @pytest.mark.parametrize("role", NOT_PROCUREMENT)
    def test_other_roles_get_403(self, publish, client, make_user, role):
        client.force_login(make_user(role))
        assert client.get(URL).status_code == 403
        assert client.post(URL, {"date": "2026-12-01"}).status_code == 403
        assert not ApiRoute.objects.exists()

    def test_anonymous_is_sent_to_sign_in(self, publish, client):
        response = client.get(URL)
        assert response.status_code == 302
        assert response["Location"].startswith(f"/accounts/login/?next={URL}")

    def test_the_quotes_page_links_it_for_procurement(self, publish, buyer):
        assert URL in buyer.get("/quotes/").content.decode()


def test_the_pinned_package_list_imports_offline(db):
    """The list genai-prices 0.2.3 ships: one provider's routes, with the package's version."""
    data_snapshot.set_custom_snapshot(None)
    plan = api_prices.apply_import(day=date(2026, 12, 1), provider="groq")
    assert plan.new
    route = ApiRoute.objects.get(provider__name="Groq", model="openai/gpt-oss-120b")
    assert route.model_preset == "gpt-oss-120b"
    assert route.source.startswith("genai-prices 0.2.3")
    assert route.input_price_per_mtok > 0 and route.output_price_per_mtok > 0
