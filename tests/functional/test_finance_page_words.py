"""The finance page names what the JSON names by id, and shows money as money: the not-costed
list says provider · GPU · term · region (the rankings JSON keeps the quote id); the rent /
reserve / buy table shows the GPU by name, prices to the cent, monthly costs with thousands
separators and unit costs to four significant digits, right-aligned."""

import re
from decimal import Decimal

import pytest

from apps.core.roles import Role
from apps.finance.capacity import capacity_model_page
from apps.finance.lines import assumption_label, assumption_value
from apps.finance.services import candidate_tables_request_recompute
from apps.quotes.models import ApiRoute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, ProviderFactory, QuoteFactory

pytestmark = pytest.mark.django_db

RAW_FLOAT = re.compile(r"\d+\.\d{5,}")


@pytest.fixture
def offers(catalog, team, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        brief = BriefFactory(team=team)
        neo = ProviderFactory(name="Neocloud B")
        QuoteFactory(provider=neo, hourly_price_per_gpu=Decimal("2.4937"))
        QuoteFactory(
            provider=neo, pricing_term="RESERVED_1Y", hourly_price_per_gpu=Decimal("1.89"),
            minimum_commitment_months=12,
        )  # fmt: skip
        QuoteFactory(
            provider=ProviderFactory(name="Own racks"), pricing_term="OWNED",
            hourly_price_per_gpu=Decimal(0), capex_per_gpu=Decimal("30000"),
            depreciation_months=60, region="Frankfurt DC",
        )  # fmt: skip
        euro = QuoteFactory(
            provider=ProviderFactory(name="Euro GPU"), currency="EUR", region="eu-central",
            hourly_price_per_gpu=Decimal("2.10"),
        )  # fmt: skip
        ApiRouteFactory(provider=ProviderFactory(name="Token API"), model_preset="llama-3.1-8b")
        candidate_tables_request_recompute(brief_ids=[brief.pk])
    return brief, euro


def section(html: str, element_id: str) -> str:
    start = html.index(f'id="{element_id}"')
    return html[start : html.index("</div>", start)]


class TestNotCostedInWords:
    def test_the_page_names_the_quote_and_the_json_keeps_its_id(
        self, offers, client, token_client, make_user
    ):
        brief, euro = offers
        client.force_login(make_user(Role.FINANCE))
        html = client.get(f"/briefs/{brief.pk}/finance/").content.decode()

        listed = section(html, "not-costed")
        assert "Euro GPU · NVIDIA H100 SXM5 · On demand · eu-central" in listed
        assert "no FX rate for EUR" in listed
        assert f"#{euro.pk}" not in listed
        body = token_client(Role.FINANCE).get(f"/api/v1/briefs/{brief.pk}/rankings").json()
        assert [e["quote_id"] for e in body["not_costed"]] == [euro.pk]


class TestPriceSourceInWords:
    def test_each_rows_details_name_the_quote_or_route_and_the_csv_keeps_the_ids(
        self, offers, client, token_client, make_user
    ):
        brief, _ = offers
        client.force_login(make_user(Role.FINANCE))
        html = client.get(f"/briefs/{brief.pk}/finance/").content.decode()

        sources = re.findall(r"<dt>Price from</dt><dd>([^<]*)</dd>", html)
        assert sources, "no row names its price source"
        assert not [s for s in sources if "#" in s], sources
        days = r", \d+ days old"
        for offer in ("Neocloud B · NVIDIA H100 SXM5 · On demand · us-east",
                      "Neocloud B · NVIDIA H100 SXM5 · Reserved 1 year · us-east",
                      "Own racks · NVIDIA H100 SXM5 · Owned (bought) · Frankfurt DC"):  # fmt: skip
            assert [s for s in sources if re.fullmatch(re.escape(offer) + days, s)], (
                offer,
                sources,
            )
        route = ApiRoute.objects.get(provider__name="Token API")
        assert f"Token API · {route.model} · model API" in sources
        api = token_client(Role.FINANCE)
        csv = api.get(f"/api/v1/briefs/{brief.pk}/rankings?format=csv").content.decode()
        header = csv.splitlines()[0].split(",")
        assert "quote_id" in header and "api_route_id" in header


class TestCapacityTableFormatted:
    def test_money_and_counts_as_a_person_reads_them(self, offers, client, make_user):
        brief, _ = offers
        client.force_login(make_user(Role.FINANCE))
        html = client.get(f"/briefs/{brief.pk}/finance/").content.decode()

        table = html[
            html.index('id="capacity-model"') : html.index(
                "</table>", html.index('id="capacity-options"')
            )
        ]
        text = re.sub(r"<[^>]+>", " ", table)
        assert "NVIDIA H100 SXM5" in text and "h100-sxm5-80gb" not in text
        assert not RAW_FLOAT.findall(text), RAW_FLOAT.findall(text)
        assert "quote #" not in text and "API route #" not in text
        assert "Neocloud B · NVIDIA H100 SXM5 · On demand · us-east" in text
        assert "Token API · " in text and "model API" in text
        cells = re.findall(r'<td class="num">([^<]*)</td>', table)
        assert "2.49" in cells  # 2.4937 an hour, to the cent
        assert any(re.fullmatch(r"\d{1,3}(,\d{3})+\.\d{2}", c) for c in cells), cells  # monthly

    def test_unit_costs_keep_four_significant_digits(self):
        page = capacity_model_page(
            {
                "unit_scale": 1000000,
                "options": [
                    {"effective_unit_cost": "3.284127", "hourly_rate_per_gpu": "1.9",
                     "monthly_cost": "6117.6712"},
                    {"effective_unit_cost": None, "hourly_rate_per_gpu": None,
                     "monthly_cost": "123456.789", "why_not": ["priced above ON_DEMAND"]},
                ],
            }
        )  # fmt: skip
        first, second = page["capacity_options"]
        assert first["display_unit_cost"] == "3.284"
        assert first["display_hourly_rate"] == "1.90"
        assert first["display_monthly_cost"] == "6,117.67"
        assert second["display_unit_cost"] is None and second["display_hourly_rate"] is None
        assert second["display_monthly_cost"] == "123,457"
        assert second["display_why_not"] == ["priced above On demand"]


class TestAssumptionsInWords:
    @pytest.mark.parametrize(
        ("name", "value", "shown"),
        [
            ("observability_share", Decimal("0.05"), "5 %"),
            ("acceptance_rate", Decimal("0.9500"), "95 %"),
            ("power_price_per_kwh", Decimal("0.08000"), "0.08"),
            ("labour_rate_per_hour", Decimal("115.00"), "115"),
            ("pue", Decimal("1.56"), "1.56"),
            ("platform_labour_pool_hours", None, "—"),
        ],
    )
    def test_values_read_as_given(self, name, value, shown):
        assert assumption_value(name, value) == shown

    @pytest.mark.parametrize(
        ("name", "value", "shown"),
        [
            ("labour_rate_per_hour", Decimal("115.00"), "USD\u00a0115.00"),
            ("power_price_per_kwh", Decimal("0.08000"), "USD\u00a00.08"),
            ("moderation_cost_per_image", Decimal("0.001"), "USD\u00a00.001"),
            ("pue", Decimal("1.56"), "1.56"),  # a ratio, not money
        ],
    )
    def test_money_carries_the_reporting_currency(self, name, value, shown):
        assert assumption_value(name, value, "USD") == shown

    def test_labels_spell_their_units(self):
        assert assumption_label("pue") == "Power usage effectiveness (PUE)"
        assert assumption_label("power_price_per_kwh") == "Electricity price per kWh"
        assert assumption_label("retry_rate") == "Retry rate"


class TestOffersAlikeButForRegion:
    def test_the_charts_tell_them_apart_by_region_not_by_offer_number(
        self, catalog, team, client, make_user, django_capture_on_commit_callbacks
    ):
        with django_capture_on_commit_callbacks(execute=True):
            brief = BriefFactory(team=team)
            neo = ProviderFactory(name="Neocloud B")
            QuoteFactory(provider=neo, region="us-east", hourly_price_per_gpu=Decimal("2.49"))
            QuoteFactory(provider=neo, region="eu-west", hourly_price_per_gpu=Decimal("2.69"))
            candidate_tables_request_recompute(brief_ids=[brief.pk])
        client.force_login(make_user(Role.FINANCE))

        html = client.get(f"/briefs/{brief.pk}/finance/").content.decode()

        assert "· us-east" in html and "· eu-west" in html
        assert "offer 1" not in html and "offer 2" not in html
        rows = client.get(f"/api/v1/briefs/{brief.pk}/rankings").json()["rows"]
        assert {r["region"] for r in rows if r["quote_id"]} == {"us-east", "eu-west"}
