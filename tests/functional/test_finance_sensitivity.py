"""What would change the winner: computed with the recompute, in the rankings JSON, on the
finance page and in a decision record's snapshot."""

from datetime import date
from decimal import Decimal

import pytest

from apps.catalog.models import Gpu
from apps.core import formatting
from apps.core.roles import Role
from apps.decisions.snapshot import build_snapshot
from apps.finance.api import SensitivitySerializer
from apps.finance.models import CandidateTable
from apps.finance.services import candidate_tables_request_recompute, fx_rate_create
from apps.finance.version_sets import table_versions
from apps.quotes.services import api_route_update, quote_update
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, ProviderFactory
from tests.factories.quotes_extra import FreshQuoteFactory

pytestmark = pytest.mark.django_db


def gpu(slug):
    return Gpu.objects.get(slug=slug)


@pytest.fixture
def market(catalog, team, django_capture_on_commit_callbacks):
    brief = BriefFactory(team=team, ttft_target_ms=200)
    quotes = {
        "h100": FreshQuoteFactory(
            provider=ProviderFactory(name="Alpha"),
            gpu=gpu("h100-sxm5-80gb"),
            hourly_price_per_gpu=Decimal("2.50"),
        ),
        "h100-reserved": FreshQuoteFactory(
            provider=ProviderFactory(name="Beta"),
            gpu=gpu("h100-sxm5-80gb"),
            pricing_term="RESERVED_1Y",
            hourly_price_per_gpu=Decimal("1.90"),
            minimum_commitment_months=12,
        ),
        "l40s-spot": FreshQuoteFactory(
            provider=ProviderFactory(name="Gamma"),
            gpu=gpu("l40s-48gb"),
            pricing_term="SPOT",
            hourly_price_per_gpu=Decimal("0.90"),
        ),
        # misses the latency target: never a leading candidate
        "l4": FreshQuoteFactory(
            provider=ProviderFactory(name="Delta"),
            gpu=gpu("l4-24gb"),
            hourly_price_per_gpu=Decimal("0.40"),
        ),
    }
    # The winner, priced so that a rise within the range searched (prices up to 4x) makes the
    # reserved H100 the winner.
    route = ApiRouteFactory(
        provider=ProviderFactory(name="Epsilon"),
        model_preset="llama-3.1-8b",
        input_price_per_mtok=Decimal("0.20"),
        output_price_per_mtok=Decimal("0.60"),
    )
    with django_capture_on_commit_callbacks(execute=True):
        candidate_tables_request_recompute(brief_ids=[brief.pk])
    return {"brief": brief, "quotes": quotes, "route": route}


def rankings(api, brief):
    response = api.get(f"/api/v1/briefs/{brief.pk}/rankings")
    assert response.status_code == 200, response.content
    return response.json()


def key(row):
    return f"quote:{row['quote_id']}" if row["quote_id"] else f"api_route:{row['api_route_id']}"


@pytest.fixture
def finance_api(token_client):
    return token_client(Role.FINANCE)


class TestSensitivityInTheRankings:
    def test_the_leading_rows_are_the_ranked_rows_in_rank_order_with_their_figures(
        self, finance_api, market
    ):
        body = rankings(finance_api, market["brief"])
        ranked = [r for r in body["rows"] if r["rank"] is not None]
        sensitivity = body["sensitivity"]
        assert sensitivity["winner"] == key(ranked[0])
        assert [c["key"] for c in sensitivity["leading"]] == [key(r) for r in ranked]
        assert [c["effective_unit_cost"] for c in sensitivity["leading"]] == [
            r["effective_unit_cost"] for r in ranked
        ]
        assert (sensitivity["currency"], sensitivity["unit_label"]) == ("USD", body["unit"])
        assert sensitivity["left_out"] == []
        assert "signature" not in sensitivity

    def test_the_json_has_the_documented_shape(self, finance_api, market):
        body = rankings(finance_api, market["brief"])
        documented = SensitivitySerializer(data=body["sensitivity"])
        assert documented.is_valid(), documented.errors
        assert set(body["sensitivity"]) == set(SensitivitySerializer().fields)

    def test_totals_are_the_monthly_cost_times_the_months(self, finance_api, market):
        for c in rankings(finance_api, market["brief"])["sensitivity"]["leading"]:
            monthly = Decimal(c["monthly_cost"])
            assert [(t["months"], Decimal(t["running"])) for t in c["totals"]] == [
                (12, monthly * 12),
                (36, monthly * 36),
            ]
            for t in c["totals"]:
                assert Decimal(t["total"]) == Decimal(t["running"]) + Decimal(t["committed_beyond"])

    def test_a_price_past_the_crossing_value_makes_the_named_candidate_the_winner(
        self, finance_api, market, django_capture_on_commit_callbacks
    ):
        brief, route = market["brief"], market["route"]
        sensitivity = rankings(finance_api, brief)["sensitivity"]
        assert sensitivity["winner"] == f"api_route:{route.pk}"
        (finding,) = [
            f
            for f in sensitivity["findings"]
            if f["assumption"] == "PRICE" and f["subject"] == sensitivity["winner"]
        ]
        assert finding["down"] is None and finding["up"] is not None
        multiplier = Decimal(finding["up"]["value"])

        def priced(factor):
            with django_capture_on_commit_callbacks(execute=True):
                api_route_update(
                    route=route,
                    input_price_per_mtok=(route.input_price_per_mtok * factor).quantize(
                        Decimal("0.0001")
                    ),
                    output_price_per_mtok=(route.output_price_per_mtok * factor).quantize(
                        Decimal("0.0001")
                    ),
                )
            return key(rankings(finance_api, brief)["rows"][0])

        original = (route.input_price_per_mtok, route.output_price_per_mtok)
        assert priced(multiplier * Decimal("0.99")) == f"api_route:{route.pk}"
        route.refresh_from_db()
        route.input_price_per_mtok, route.output_price_per_mtok = original
        assert priced(multiplier * Decimal("1.01")) == finding["up"]["new_winner"]

    def test_a_price_change_outside_the_leading_rows_keeps_it_and_one_inside_redoes_it(
        self, finance_api, market, django_capture_on_commit_callbacks
    ):
        brief, quotes = market["brief"], market["quotes"]
        before = CandidateTable.objects.get(brief=brief).sensitivity
        with django_capture_on_commit_callbacks(execute=True):
            quote_update(quote=quotes["l4"], hourly_price_per_gpu=Decimal("0.45"))
        table = CandidateTable.objects.get(brief=brief)
        assert table_versions(table)[0][str(quotes["l4"].pk)] == 2  # the recompute did run
        assert table.sensitivity == before
        with django_capture_on_commit_callbacks(execute=True):
            quote_update(quote=quotes["h100"], hourly_price_per_gpu=Decimal("2.40"))
        after = CandidateTable.objects.get(brief=brief).sensitivity
        assert after != before
        (h100,) = [c for c in after["leading"] if c["key"] == f"quote:{quotes['h100'].pk}"]
        row = CandidateTable.objects.get(brief=brief).rows.get(quote=quotes["h100"])
        assert Decimal(h100["monthly_cost"]) == row.monthly_cost

    def test_a_quote_outside_the_leading_rows_cut_below_them_joins_them(
        self, finance_api, market, django_capture_on_commit_callbacks
    ):
        brief = market["brief"]
        extra = [
            FreshQuoteFactory(
                provider=ProviderFactory(name=f"Zeta {n}"),
                gpu=gpu("h100-sxm5-80gb"),
                hourly_price_per_gpu=Decimal(price),
            )
            for n, price in enumerate(("3.10", "3.20", "3.30"))
        ]
        with django_capture_on_commit_callbacks(execute=True):
            candidate_tables_request_recompute(brief_ids=[brief.pk])
        before = rankings(finance_api, brief)["sensitivity"]
        assert len(before["leading"]) == 5
        last = extra[-1]
        assert f"quote:{last.pk}" not in [c["key"] for c in before["leading"]]
        with django_capture_on_commit_callbacks(execute=True):
            quote_update(quote=last, hourly_price_per_gpu=Decimal("0.50"))
        body = rankings(finance_api, brief)
        leading = [c["key"] for c in body["sensitivity"]["leading"]]
        assert leading == [key(r) for r in body["rows"][:5]]
        assert f"quote:{last.pk}" in leading
        assert body["sensitivity"]["winner"] == key(body["rows"][0])

    def test_a_brief_without_a_ranking_has_none(self, finance_api, team, catalog):
        brief = BriefFactory(team=team)
        assert rankings(finance_api, brief)["sensitivity"] == {}


class TestFxRateSensitivity:
    def test_a_rate_past_the_crossing_value_hands_the_win_to_the_named_quote(
        self, finance_api, catalog, team, django_capture_on_commit_callbacks
    ):
        with django_capture_on_commit_callbacks(execute=True):
            fx_rate_create(
                currency="EUR", rate=Decimal("1.08"), as_of=date(2026, 12, 1), source="ECB"
            )
        brief = BriefFactory(team=team, ttft_target_ms=200)
        euro = FreshQuoteFactory(
            provider=ProviderFactory(name="Euro Cloud"),
            gpu=gpu("h100-sxm5-80gb"),
            hourly_price_per_gpu=Decimal("2.00"),
            currency="EUR",
        )
        dollar = FreshQuoteFactory(
            provider=ProviderFactory(name="Dollar Cloud"),
            gpu=gpu("h100-sxm5-80gb"),
            hourly_price_per_gpu=Decimal("2.40"),
        )
        with django_capture_on_commit_callbacks(execute=True):
            candidate_tables_request_recompute(brief_ids=[brief.pk])
        sensitivity = rankings(finance_api, brief)["sensitivity"]
        assert sensitivity["winner"] == f"quote:{euro.pk}"
        (finding,) = [f for f in sensitivity["findings"] if f["assumption"] == "FX_RATE"]
        assert finding["subject"] == "EUR"
        assert finding["up"]["new_winner"] == f"quote:{dollar.pk}"
        assert "1 EUR = " in finding["explanation"] and "USD" in finding["explanation"]
        assert "FX_RATE" in [b["assumption"] for b in sensitivity["tornado"]]
        crossing = Decimal("1.08") * Decimal(finding["up"]["value"])
        with django_capture_on_commit_callbacks(execute=True):
            fx_rate_create(
                currency="EUR",
                rate=(crossing * Decimal("0.99")).quantize(Decimal("0.0001")),
                as_of=date(2026, 12, 2),
                source="test",
            )
        assert key(rankings(finance_api, brief)["rows"][0]) == f"quote:{euro.pk}"
        with django_capture_on_commit_callbacks(execute=True):
            fx_rate_create(
                currency="EUR",
                rate=(crossing * Decimal("1.01")).quantize(Decimal("0.0001")),
                as_of=date(2026, 12, 3),
                source="test",
            )
        assert key(rankings(finance_api, brief)["rows"][0]) == f"quote:{dollar.pk}"


class TestSensitivityOnTheFinancePage:
    def test_the_section_says_in_words_what_would_change_the_winner(
        self, client, finance_user, market
    ):
        client.force_login(finance_user)
        response = client.get(f"/briefs/{market['brief'].pk}/finance/")
        assert response.status_code == 200
        html = response.content.decode()
        section = html[html.index('id="sensitivity"') :]
        assert "What would change the winner" in section
        assert "USD per 1M accepted tokens" in section
        assert "becomes the cheapest" in section
        assert 'id="tornado-chart"' in section and "tornado-chart-data" in section
        table = section[section.index('id="sensitivity-totals"') :]
        assert "12 months" in table and "36 months" in table
        assert "(winner)" in table
        monthly = CandidateTable.objects.get(brief=market["brief"]).sensitivity["leading"][0]
        # Money as every page writes it (apps.core.formatting.money).
        assert formatting.money(monthly["monthly_cost"], "USD") in table


class TestSensitivityInTheSnapshot:
    def test_a_decision_record_freezes_what_the_rankings_show(self, finance_api, market):
        body = rankings(finance_api, market["brief"])
        snapshot = build_snapshot(
            brief=market["brief"],
            chosen_quote=market["quotes"]["h100"],
            chosen_api_route=None,
            acceptance_criteria={},
        )
        frozen = snapshot["candidate_table"]["sensitivity"]
        assert frozen["winner"] == body["sensitivity"]["winner"]
        assert frozen["findings"] == body["sensitivity"]["findings"]
        assert frozen["leading"] == body["sensitivity"]["leading"]
