"""DeepSeek's hour-of-day prices as genai-prices 0.2.3 publishes them (the package's own list):
kept as windows on the route, the route's prices their hour-weighted figures, a brief costed
at the hours it runs, and the route page showing the windows."""

from datetime import date
from decimal import Decimal

import pytest
from genai_prices import data_snapshot

from apps.core.roles import Role
from apps.finance.models import CandidateRow
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from apps.quotes import api_prices, services
from apps.quotes.models import ApiRoute
from tests.factories.briefs import BriefFactory

pytestmark = pytest.mark.django_db

D = Decimal


@pytest.fixture
def reasoner(db):
    data_snapshot.set_custom_snapshot(None)  # the list the package ships
    api_prices.apply_import(day=date(2026, 12, 1), provider="deepseek")
    return ApiRoute.objects.get(provider__name="Deepseek", model="deepseek-reasoner")


def _route_row(brief, route):
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    candidate_table_recompute(brief_id=brief.pk)
    return CandidateRow.objects.get(table__brief=brief, api_route=route)


class TestTheRoute:
    def test_holds_the_hour_weighted_prices_and_each_window(self, reasoner):
        assert reasoner.model_preset == "deepseek-r1"
        assert (reasoner.input_price_per_mtok, reasoner.output_price_per_mtok) == (
            D("0.4117"), D("1.6433"),
        )  # fmt: skip
        assert sorted((w["start"], w["end"], w["hours"]) for w in reasoner.price_windows) == [
            ("00:30", "16:30", "16"), ("16:30", "00:30", "8"),
        ]  # fmt: skip

    def test_a_reimport_changes_nothing(self, reasoner):
        plan = api_prices.apply_import(day=date(2026, 12, 1), provider="deepseek")
        assert not plan.changed and not plan.new

    def test_the_api_answers_the_windows(self, reasoner, token_client):
        body = token_client(Role.PROCUREMENT).get(f"/api/v1/api-routes/{reasoner.pk}/").json()
        assert body["input_price_per_mtok"] == "0.4117"
        assert {w["start"] for w in body["price_windows"]} == {"00:30", "16:30"}

    def test_a_price_typed_by_hand_replaces_the_windows(self, reasoner):
        route = services.api_route_update(route=reasoner, input_price_per_mtok=D("0.5"))
        assert route.price_windows == []


class TestCosting:
    def test_an_always_on_brief_pays_the_hour_weighted_price(self, catalog, reasoner):
        brief = BriefFactory(model_preset="deepseek-r1", weight_precision="FP8")
        row = _route_row(brief, reasoner)
        assert any("hour-of-day prices, weighted by the hours" in n for n in row.notes)

    def test_a_scheduled_batch_runs_in_the_off_peak_window(self, catalog, reasoner):
        always = BriefFactory(model_preset="deepseek-r1")
        nightly = BriefFactory(
            model_preset="deepseek-r1", duty_cycle="SCHEDULED_BATCH",
            hours_per_month=Decimal("182.5"),  # 6 h a day
        )  # fmt: skip
        night = _route_row(nightly, reasoner)
        assert any("6 h a day placed in the cheapest windows" in n for n in night.notes)
        assert any("16:30 to 00:30 UTC at 0.135 / 0.55" in n for n in night.notes)
        day = _route_row(always, reasoner)

        # The same tokens cost less per output off-peak: 0.55 against 1.6433 per M output (the
        # token lines; platform labour is a fixed monthly line over fewer hours' outputs).
        def tokens_per_output(row):
            lines = row.cost_lines
            spent = Decimal(lines["api_input_tokens"]) + Decimal(lines["api_output_tokens"])
            return spent / row.accepted_outputs_per_month

        assert tokens_per_output(night) < tokens_per_output(day) * Decimal("0.5")


class TestRoutePage:
    def test_shows_the_windows(self, reasoner, client, make_user):
        client.force_login(make_user(Role.PROCUREMENT))
        page = client.get(f"/quotes/api-routes/{reasoner.pk}/edit/").content.decode()
        assert 'id="price-windows"' in page
        assert "<td>16:30</td><td>00:30</td>" in page and "0.135 USD" in page
