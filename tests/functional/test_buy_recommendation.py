"""Rent, reserve, buy or API as finance reads it: BUY appears for an owned quote with capex, the
recommendation is the cheapest option that meets the brief, and the options, the curve and the
break-evens agree with the candidate table, in its unit and in words."""

import re
from datetime import date
from decimal import Decimal

import pytest

from apps.core.roles import Role
from apps.finance.models import CandidateRow, FxRate
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from apps.quotes.models import ApiRoute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, QuoteFactory

pytestmark = pytest.mark.django_db

CODE_NAMES = re.compile(r"RENT_ON_DEMAND|RENT_SPOT|RESERVE_1Y|RESERVE_3Y|\bBUY\b|ON_DEMAND|OWNED")


def owned_quote(**changes):
    return QuoteFactory(
        pricing_term="OWNED",
        hourly_price_per_gpu=Decimal(0),
        capex_per_gpu=changes.pop("capex_per_gpu", Decimal("30000")),
        depreciation_months=60,
        **changes,
    )


def table_for(brief):
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    return candidate_table_recompute(brief_id=brief.pk)


@pytest.fixture
def offers(catalog, team):
    """An always-on H100 deployment in a private network, offered on demand, reserved for a
    year, bought, and through a model API."""
    brief = BriefFactory(team=team, operating_boundary="PRIVATE_NETWORK")
    quotes = {
        "ON_DEMAND": QuoteFactory(hourly_price_per_gpu=Decimal("2.50")),
        "RESERVED_1Y": QuoteFactory(
            pricing_term="RESERVED_1Y",
            hourly_price_per_gpu=Decimal("1.90"),
            minimum_commitment_months=12,
        ),
        "OWNED": owned_quote(),
    }
    ApiRouteFactory(model_preset="llama-3.1-8b")
    return brief, quotes


class TestBuyInTheCapacityModel:
    def test_buy_appears_and_costs_what_the_owned_row_costs(self, offers):
        brief, quotes = offers

        model = table_for(brief).capacity_model

        assert model["gpu"] == "h100-sxm5-80gb"
        by_option = {o["option"]: o for o in model["options"]}
        assert set(by_option) == {"RENT_ON_DEMAND", "RESERVE_1Y", "BUY", "API"}
        assert by_option["BUY"]["quote_id"] == quotes["OWNED"].pk
        for option in by_option.values():
            if option["quote_id"]:
                row = CandidateRow.objects.get(quote_id=option["quote_id"])
            else:
                row = CandidateRow.objects.get(api_route_id=option["api_route_id"])
            # In the table's unit, as the rows the rankings give (unit_scale outputs).
            scale = model["unit_scale"]
            assert isinstance(scale, int)
            assert Decimal(option["effective_unit_cost"]) == row.effective_unit_cost * scale
            assert Decimal(option["monthly_cost"]) == row.monthly_cost

    def test_the_recommendation_is_the_cheapest_option_that_meets_the_brief(self, offers):
        brief, _ = offers

        model = table_for(brief).capacity_model

        meeting = [o for o in model["options"] if o["effective_unit_cost"] is not None]
        cheapest = min(meeting, key=lambda o: Decimal(o["effective_unit_cost"]))
        assert model["recommended"] == cheapest["option"]
        assert model["recommended_label"] == cheapest["label"]
        assert model["rationale"][0].startswith(
            "At the brief's utilization of committed GPU-hours ("
        )
        assert f"{cheapest['label']} costs" in model["rationale"][0]

    def test_a_cheap_enough_purchase_is_recommended(self, offers):
        brief, quotes = offers
        quotes["OWNED"].capex_per_gpu = Decimal("5000")
        quotes["OWNED"].save()
        ApiRoute.objects.update(input_price_per_mtok=Decimal(5), output_price_per_mtok=Decimal(15))

        model = table_for(brief).capacity_model

        assert model["recommended"] == "BUY"
        assert "Buy (owned) costs" in model["rationale"][0]

    def test_the_curve_at_the_brief_s_utilization_is_each_option_s_figure(self, offers):
        brief, _ = offers

        model = table_for(brief).capacity_model

        (point,) = [p for p in model["curve"] if p["at_brief"]]
        assert point["utilization"] == model["utilization"]
        for option in model["options"]:
            assert point[option["option"].lower()] == option["effective_unit_cost"]

    def test_break_evens_cover_every_pair_in_the_table_s_unit_and_in_words(self, offers):
        brief, _ = offers

        model = table_for(brief).capacity_model

        assert len(model["break_evens"]) == 6  # 4 options meeting the brief
        for pair in model["break_evens"]:
            assert "USD per 1M accepted tokens" in pair["explanation"]
        text = " ".join(model["rationale"] + [b["explanation"] for b in model["break_evens"]])
        assert not CODE_NAMES.search(text)

    def test_buying_misses_a_public_cloud_brief(self, catalog, team):
        brief = BriefFactory(team=team, operating_boundary="PUBLIC_CLOUD")
        QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
        owned_quote(capex_per_gpu=Decimal("5000"))

        model = table_for(brief).capacity_model

        buy = next(o for o in model["options"] if o["option"] == "BUY")
        assert (buy["meets_constraints"], buy["effective_unit_cost"]) == (False, None)
        assert model["recommended"] == "RENT_ON_DEMAND"
        assert any("Buy (owned) does not meet the brief" in line for line in model["rationale"])

    def test_an_owned_quote_without_capex_offers_no_purchase(self, catalog, team):
        brief = BriefFactory(team=team, operating_boundary="ON_PREM")
        QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
        QuoteFactory(pricing_term="OWNED", hourly_price_per_gpu=Decimal("1.65"))  # before capex

        model = table_for(brief).capacity_model

        assert [o["option"] for o in model["options"]] == ["RENT_ON_DEMAND"]

    def test_an_owned_row_notes_every_input_of_its_gpu_month(self, offers):
        brief, quotes = offers

        table_for(brief)

        row = CandidateRow.objects.get(quote=quotes["OWNED"])
        (note,) = [n for n in row.notes if n.startswith("owned GPU:")]
        assert "capex USD\u00a030,000 / 60 months = USD\u00a0500.00" in note
        # Hosting is rented by the provisioned H100 700 W + the host's 0.575 kW; electricity is
        # the energy model's average draw, below it (idle hours draw 0.15 of TDP).
        assert "hosting 1.275 kW x" in note
        average = re.search(r"power (\d\.\d{3}) kW on average", note)
        assert average and Decimal("0.575") < Decimal(average.group(1)) < Decimal("1.275")
        assert "x PUE 1.56" in note
        assert "finance defaults for power a GPU, PUE" in note
        # every amount carries its currency: no bare figure before "/kWh" or "per GPU-month"
        assert not re.search(r"\d/(kWh|kW-month|h)\b", note)
        assert re.search(r"USD\u00a0[\d,.]+ per GPU-month \(USD\u00a0[\d.]+ / GPU-hour\)", note)


class TestFinancePageCapacitySection:
    def test_the_section_shows_labels_and_the_table_s_unit(self, offers, client, make_user):
        brief, _ = offers
        table_for(brief)
        client.force_login(make_user(Role.FINANCE))

        page = client.get(f"/briefs/{brief.pk}/finance/")

        html = page.content.decode()
        section = html[
            html.index('id="capacity-model"') : html.index(
                "</div>", html.index('id="capacity-model"')
            )
        ]
        assert "Buy (owned)" in section and "Reserve 1 year" in section
        assert "USD per 1M accepted tokens" in section
        assert 'id="recommended"' in section
        assert not CODE_NAMES.search(section)
        # drawn in the collapsed rent / reserve / buy section, beside the comparison
        figure = dict((name, f) for name, _, f in page.context["capacity_figures"])[
            "utilization-chart"
        ]
        # a curve per option (the break-even and this-brief markers are traces of their own)
        assert {t["name"] for t in figure["data"] if t["mode"] == "lines"} == {
            "Rent on demand",
            "Reserve 1 year",
            "Buy (owned)",
            "Model API",
        }
        assert figure["layout"]["yaxis"]["title"]["text"] == "USD per 1M accepted tokens"


class TestOwnedQuoteInAnotherCurrency:
    def test_its_capex_and_running_costs_are_converted_at_the_fx_rate(self, catalog, team):
        brief = BriefFactory(team=team, operating_boundary="ON_PREM")
        FxRate.objects.create(currency="EUR", rate=Decimal("1.10"), as_of=date(2026, 11, 1))
        quote = owned_quote(currency="EUR", electricity_per_kwh=Decimal("0.20"))

        table_for(brief)

        row = CandidateRow.objects.get(quote=quote)
        (note,) = [n for n in row.notes if n.startswith("owned GPU:")]
        assert "capex USD\u00a033,000 / 60 months" in note  # EUR 30,000 x 1.10
        assert "x USD\u00a00.22 / kWh" in note  # EUR 0.20 x 1.10

    def test_without_a_rate_it_is_listed_as_not_costed(self, catalog, team):
        brief = BriefFactory(team=team, operating_boundary="ON_PREM")
        QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
        quote = owned_quote(currency="JPY", capex_per_gpu=Decimal("4500000"))

        table = table_for(brief)

        (entry,) = table.inputs["not_costed"]
        assert entry["quote_id"] == quote.pk and "JPY" in entry["reason"]
        assert "BUY" not in {o["option"] for o in table.capacity_model["options"]}
