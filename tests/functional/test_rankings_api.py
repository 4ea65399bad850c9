"""GET /api/v1/briefs/<id>/rankings: the contract shape, cost lines that add up, filters that
filter, prices that move the ranking, stale quotes flagged, and a CSV that is safe to open in a
spreadsheet and gives back the JSON's decimals exactly."""

import csv
import io
import json
from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from apps.catalog.models import Gpu, GpuSystem
from apps.core.roles import Role
from apps.finance.exports import COLUMNS, DECIMAL_COLUMNS
from apps.finance.models import CandidateRow, CandidateTable
from apps.finance.services import candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, ProviderFactory
from tests.factories.quotes_extra import FreshQuoteFactory, days_ago

pytestmark = pytest.mark.django_db

TOP_LEVEL = {"brief", "computed_at", "stale", "currency", "unit", "rows"}
TOP_LEVEL_EXTRAS = {
    "pending", "no_ranking_reason", "capacity_model", "total_rows", "not_costed", "sensitivity",
    "success_unit", "unit_scale", "serving_plans_not_listed",
}  # fmt: skip
ROW = {
    "rank", "candidate_kind", "provider", "gpu", "gpu_count", "replicas", "pricing_term",
    "quote_id", "api_route_id", "cost_lines", "monthly_cost", "accepted_outputs_per_month",
    "effective_unit_cost", "meets_constraints", "why_not", "basis", "p95_latency_ms",
    "memory_headroom_gb", "layout", "quote_age_days", "notes",
}  # fmt: skip
ROW_EXTRAS = {
    "system", "region", "api_model", "quote_stale", "paid_gpu_hours_per_month",
    "energy_kwh_per_month",
    "energy_j_per_output", "co2e_kg_per_month", "mix", "pools", "plan",
    # issue 23: one configuration per row, and the figures the engine gives at it
    "configuration", "figures", "paid_gpus", "vendor_monthly_cost", "plan_quote_ids",
}  # fmt: skip
FORMULA_NAMES = ['=HYPERLINK("http://x")', "+1", "-2+3", "@SUM(A1)", "\tTab Cloud", "\rCR Cloud"]


def gpu(slug):
    return Gpu.objects.get(slug=slug)


def recompute(brief, capture):
    with capture(execute=True):
        candidate_tables_request_recompute(brief_ids=[brief.pk])


def rankings(api, brief, **params):
    response = api.get(f"/api/v1/briefs/{brief.pk}/rankings", params)
    assert response.status_code == 200, response.content
    return response.json()


def csv_rows(response) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(response.content.decode(), newline="")))


@pytest.fixture
def finance_api(catalog, token_client):
    return token_client(Role.FINANCE)


@pytest.fixture
def market(catalog, team, django_capture_on_commit_callbacks):
    """A real-time brief (TTFT 200 ms) priced against four GPU quotes and one API route:
    three GPU candidates and the route meet the brief, the L4 does not."""
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
        "l4": FreshQuoteFactory(
            provider=ProviderFactory(name="Delta"),
            gpu=gpu("l4-24gb"),
            hourly_price_per_gpu=Decimal("0.40"),
        ),
    }
    route = ApiRouteFactory(provider=ProviderFactory(name="Epsilon"), model_preset="llama-3.1-8b")
    recompute(brief, django_capture_on_commit_callbacks)
    return {"brief": brief, "quotes": quotes, "route": route}


class TestRankingShape:
    def test_the_ranking_answers_with_the_contract_fields(self, finance_api, market):
        body = rankings(finance_api, market["brief"])
        table = CandidateTable.objects.get(brief=market["brief"])
        assert set(body) == TOP_LEVEL | TOP_LEVEL_EXTRAS
        assert body["brief"] == market["brief"].pk
        assert body["computed_at"] == table.computed_at.isoformat().replace("+00:00", "Z")
        assert (body["stale"], body["pending"]) == (False, False)
        assert (body["currency"], body["unit"]) == ("USD", "per 1M accepted tokens")
        assert (body["success_unit"], body["unit_scale"]) == ("TOKEN", 1_000_000)
        assert body["no_ranking_reason"] is None
        assert len(body["rows"]) == 5
        assert [set(row) for row in body["rows"]] == [ROW | ROW_EXTRAS] * 5

    def test_each_row_names_its_candidate(self, finance_api, market):
        rows = rankings(finance_api, market["brief"])["rows"]
        quotes, route = market["quotes"], market["route"]
        by_candidate = {(r["quote_id"], r["api_route_id"]): r for r in rows}
        identity = [
            "candidate_kind", "provider", "gpu", "system", "api_model", "pricing_term",
            "quote_age_days", "quote_stale", "basis",
        ]  # fmt: skip
        assert {
            key: [row[name] for name in identity] for key, row in by_candidate.items()
        } == {
            (quotes["h100"].pk, None): [
                "GPU", "Alpha", "h100-sxm5-80gb", None, None, "ON_DEMAND", 10, False, "ESTIMATED"
            ],
            (quotes["h100-reserved"].pk, None): [
                "GPU", "Beta", "h100-sxm5-80gb", None, None, "RESERVED_1Y", 10, False, "ESTIMATED"
            ],
            (quotes["l40s-spot"].pk, None): [
                "GPU", "Gamma", "l40s-48gb", None, None, "SPOT", 10, False, "ESTIMATED"
            ],
            (quotes["l4"].pk, None): [
                "GPU", "Delta", "l4-24gb", None, None, "ON_DEMAND", 10, False, "ESTIMATED"
            ],
            (None, route.pk): [
                "API_ROUTE", "Epsilon", None, None, route.model, None, None, None, "ESTIMATED"
            ],
        }  # fmt: skip
        api_row = by_candidate[(None, route.pk)]
        assert (api_row["gpu_count"], api_row["replicas"]) == (None, None)
        for row in rows:
            if row["candidate_kind"] == "GPU":
                assert row["gpu_count"] >= 1 and row["replicas"] >= 1

    def test_decimals_travel_as_strings(self, finance_api, market):
        for row in rankings(finance_api, market["brief"])["rows"]:
            for name in ("monthly_cost", "accepted_outputs_per_month"):
                assert isinstance(row[name], str), (name, row[name])
            # a row that misses the brief has no unit cost at all (null), never a misleading one
            expected = str if row["meets_constraints"] else type(None)
            assert isinstance(row["effective_unit_cost"], expected), row
            assert all(isinstance(v, str) for v in row["cost_lines"].values())

    def test_a_brief_without_a_computed_table_has_no_rows_and_says_so(self, finance_api, team):
        brief = BriefFactory(team=team)
        body = rankings(finance_api, brief)
        assert (body["rows"], body["stale"], body["computed_at"]) == ([], True, None)
        assert body["no_ranking_reason"] == "not computed yet"


class TestRankingFigures:
    def test_for_every_row_the_cost_lines_add_up_to_the_unit_cost(self, finance_api, market):
        rows = rankings(finance_api, market["brief"])["rows"]
        for row in rows:
            total = sum(Decimal(v) for v in row["cost_lines"].values())
            assert total == Decimal(row["monthly_cost"]), row
            accepted = Decimal(row["accepted_outputs_per_month"])
            assert accepted > 0
            if not row["meets_constraints"]:
                assert row["effective_unit_cost"] is None, row
                continue
            # in the table's unit: per 1M accepted tokens
            unit_cost = Decimal(row["effective_unit_cost"])
            per_million = total / accepted * 1_000_000
            assert abs(per_million - unit_cost) <= unit_cost * Decimal("1e-9"), row

    def test_rows_that_meet_the_brief_are_ranked_by_unit_cost_and_the_rest_say_why(
        self, finance_api, market
    ):
        rows = rankings(finance_api, market["brief"])["rows"]
        meeting = [r for r in rows if r["meets_constraints"]]
        failing = [r for r in rows if not r["meets_constraints"]]
        assert rows == meeting + failing
        assert [r["rank"] for r in meeting] == [1, 2, 3]
        costs = [Decimal(r["effective_unit_cost"]) for r in meeting]
        assert costs == sorted(costs)
        quotes = market["quotes"]
        assert {(r["quote_id"], r["rank"]) for r in failing} == {
            (quotes["l4"].pk, None),
            (quotes["l40s-spot"].pk, None),  # real-time work does not tolerate interruptions
        }
        assert all(r["why_not"] for r in failing), failing
        (spot,) = [r for r in failing if r["quote_id"] == quotes["l40s-spot"].pk]
        assert any("spot capacity can be reclaimed" in w for w in spot["why_not"])


class TestRankingFilters:
    def test_pricing_term_keeps_only_that_term(self, finance_api, market):
        rows = rankings(finance_api, market["brief"], pricing_term="SPOT")["rows"]
        assert [r["quote_id"] for r in rows] == [market["quotes"]["l40s-spot"].pk]

    def test_meets_constraints_false_keeps_only_the_failing_rows(self, finance_api, market):
        rows = rankings(finance_api, market["brief"], meets_constraints="false")["rows"]
        quotes = market["quotes"]
        assert {r["quote_id"] for r in rows} == {quotes["l4"].pk, quotes["l40s-spot"].pk}

    def test_meets_constraints_true_keeps_only_the_ranked_rows(self, finance_api, market):
        rows = rankings(finance_api, market["brief"], meets_constraints="true")["rows"]
        assert [r["rank"] for r in rows] == [1, 2, 3]
        assert all(r["meets_constraints"] for r in rows)

    def test_basis_keeps_only_measured_or_only_estimated_rows(self, finance_api, market):
        # Measured rows come from benchmark runs; mark one row measured to test the filter.
        measured = market["quotes"]["h100"]
        CandidateRow.objects.filter(quote=measured).update(basis="MEASURED")
        only_measured = rankings(finance_api, market["brief"], basis="MEASURED")["rows"]
        only_estimated = rankings(finance_api, market["brief"], basis="ESTIMATED")["rows"]
        assert [(r["quote_id"], r["basis"]) for r in only_measured] == [(measured.pk, "MEASURED")]
        assert len(only_estimated) == 4
        assert measured.pk not in [r["quote_id"] for r in only_estimated]

    def test_filters_combine(self, finance_api, market):
        rows = rankings(
            finance_api, market["brief"], pricing_term="ON_DEMAND", meets_constraints="true"
        )["rows"]
        assert [r["quote_id"] for r in rows] == [market["quotes"]["h100"].pk]

    @pytest.mark.parametrize(
        ("name", "value"),
        [("meets_constraints", "1"), ("meets_constraints", "True"), ("basis", "estimated")],
    )
    def test_a_filter_spelled_otherwise_than_documented_is_refused(
        self, finance_api, market, name, value
    ):
        """Not read loosely: a typo that switched the filter off would show rows not asked for."""
        response = finance_api.get(f"/api/v1/briefs/{market['brief'].pk}/rankings", {name: value})
        assert response.status_code == 400
        assert list(response.json()["errors"]) == [name]


class TestPriceChanges:
    def test_a_price_changed_through_the_api_changes_the_ranking(
        self, catalog, token_client, finance_api, market, django_capture_on_commit_callbacks
    ):
        before = {r["quote_id"]: r for r in rankings(finance_api, market["brief"])["rows"]}
        first = min(
            (r for r in before.values() if r["quote_id"] and r["rank"]), key=lambda r: r["rank"]
        )
        quote = next(q for q in market["quotes"].values() if q.pk == first["quote_id"])
        procurement = token_client(Role.PROCUREMENT)
        with django_capture_on_commit_callbacks(execute=True):
            response = procurement.patch(
                f"/api/v1/quotes/{quote.pk}/",
                json.dumps({"hourly_price_per_gpu": "40.00"}),
                content_type="application/json",
            )
        assert response.status_code == 200, response.json()
        body = rankings(finance_api, market["brief"])
        after = {r["quote_id"]: r for r in body["rows"]}
        assert body["stale"] is False
        assert Decimal(after[quote.pk]["monthly_cost"]) > Decimal(before[quote.pk]["monthly_cost"])
        assert Decimal(after[quote.pk]["cost_lines"]["gpu_compute"]) > Decimal(
            before[quote.pk]["cost_lines"]["gpu_compute"]
        )
        assert before[quote.pk]["rank"] < 3
        assert after[quote.pk]["rank"] == 3  # the last of the three that meet the brief

    def test_an_api_route_price_changed_through_the_api_changes_the_ranking(
        self, catalog, token_client, finance_api, market, django_capture_on_commit_callbacks
    ):
        route = market["route"]

        def route_row():
            rows = rankings(finance_api, market["brief"])["rows"]
            return next(r for r in rows if r["api_route_id"] == route.pk)

        before = route_row()
        with django_capture_on_commit_callbacks(execute=True):
            token_client(Role.PROCUREMENT).patch(
                f"/api/v1/api-routes/{route.pk}/",
                json.dumps({"output_price_per_mtok": "300"}),
                content_type="application/json",
            )
        after = route_row()
        assert Decimal(after["effective_unit_cost"]) > Decimal(before["effective_unit_cost"])
        assert after["rank"] == 3  # the last of the three that meet the brief

    def test_a_retired_quote_leaves_the_ranking(
        self, catalog, token_client, finance_api, market, django_capture_on_commit_callbacks
    ):
        l4 = market["quotes"]["l4"]
        with django_capture_on_commit_callbacks(execute=True):
            token_client(Role.PROCUREMENT).post(f"/api/v1/quotes/{l4.pk}/retire")
        rows = rankings(finance_api, market["brief"])["rows"]
        assert l4.pk not in [r["quote_id"] for r in rows]
        assert len(rows) == 4

    def test_until_the_recompute_runs_the_ranking_says_it_is_stale(
        self, catalog, token_client, finance_api, market
    ):
        spot = market["quotes"]["l40s-spot"]
        token_client(Role.PROCUREMENT).patch(
            f"/api/v1/quotes/{spot.pk}/",
            json.dumps({"hourly_price_per_gpu": "40.00"}),
            content_type="application/json",
        )  # no commit callbacks run: the recompute is still queued
        body = rankings(finance_api, market["brief"])
        assert (body["stale"], body["pending"]) == (True, True)


class TestStaleQuotesInTheRanking:
    @pytest.mark.parametrize(
        ("quote_age", "valid_for", "stale"),
        [(100, None, True), (10, -1, True), (90, 0, False)],
        ids=["older-than-90-days", "past-valid-until", "fresh-on-the-edge"],
    )
    def test_a_stale_quote_is_flagged_with_a_note(
        self, finance_api, market, django_capture_on_commit_callbacks, quote_age, valid_for, stale
    ):
        valid_until = None if valid_for is None else days_ago(-valid_for)
        old = FreshQuoteFactory(
            gpu=gpu("h100-sxm5-80gb"), quote_date=days_ago(quote_age), valid_until=valid_until
        )
        recompute(market["brief"], django_capture_on_commit_callbacks)
        rows = rankings(finance_api, market["brief"])["rows"]
        [row] = [r for r in rows if r["quote_id"] == old.pk]
        assert (row["quote_stale"], row["quote_age_days"]) == (stale, quote_age)
        stale_note = f"quote #{old.pk} is stale ({quote_age} days old)"
        assert (row["notes"][0] == stale_note) is stale
        fresh = [r for r in rows if r["quote_id"] and r["quote_id"] != old.pk]
        assert [r["quote_stale"] for r in fresh] == [False] * 4


class TestSystemQuotesInTheRanking:
    def test_a_system_quote_is_ranked_under_its_gpu_and_names_the_system(
        self, finance_api, market, django_capture_on_commit_callbacks
    ):
        quote = FreshQuoteFactory(gpu=None, system=GpuSystem.objects.get(slug="hgx-h100-8"))
        recompute(market["brief"], django_capture_on_commit_callbacks)
        rows = rankings(finance_api, market["brief"])["rows"]
        [row] = [r for r in rows if r["quote_id"] == quote.pk]
        assert (row["candidate_kind"], row["gpu"], row["system"]) == (
            "GPU",
            "h100-sxm5-80gb",
            "hgx-h100-8",
        )


class TestRankingAccess:
    @pytest.mark.parametrize(
        "role", [Role.PLATFORM, Role.FINANCE, Role.PROCUREMENT, Role.API_CLIENT]
    )
    def test_every_role_in_the_team_may_read_it(self, token_client, market, role):
        assert len(rankings(token_client(role), market["brief"])["rows"]) == 5

    @pytest.mark.parametrize("params", [{}, {"format": "csv"}])
    def test_another_teams_brief_is_404(self, finance_api, other_team, params):
        theirs = BriefFactory(team=other_team)
        response = finance_api.get(f"/api/v1/briefs/{theirs.pk}/rankings", params)
        assert response.status_code == 404

    def test_an_unknown_brief_is_404(self, finance_api):
        assert finance_api.get("/api/v1/briefs/999999/rankings").status_code == 404

    def test_an_unauthenticated_request_is_a_401(self, market):
        response = APIClient().get(f"/api/v1/briefs/{market['brief'].pk}/rankings")
        assert response.status_code == 401

    def test_another_teams_confidential_quote_is_not_ranked(
        self, finance_api, market, other_team, django_capture_on_commit_callbacks
    ):
        secret = FreshQuoteFactory(gpu=gpu("h100-sxm5-80gb"), confidential_to=other_team)
        recompute(market["brief"], django_capture_on_commit_callbacks)
        rows = rankings(finance_api, market["brief"])["rows"]
        assert secret.pk not in [r["quote_id"] for r in rows]


class TestRankingCsv:
    def test_the_csv_has_the_json_rows_in_the_same_order(self, finance_api, market):
        brief = market["brief"]
        response = finance_api.get(f"/api/v1/briefs/{brief.pk}/rankings", {"format": "csv"})
        assert response.status_code == 200
        assert response["Content-Type"] == "text/csv; charset=utf-8"
        assert response["Content-Disposition"] == (
            f'attachment; filename="brief-{brief.pk}-rankings.csv"'
        )
        rows = csv_rows(response)
        json_rows = rankings(finance_api, brief)["rows"]
        header = list(rows[0])
        assert header[: len(COLUMNS)] == list(COLUMNS)
        line_names = {n for r in json_rows for n in r["cost_lines"]}
        assert set(header[len(COLUMNS) :]) == {f"cost_line:{n}" for n in line_names}
        assert [(r["quote_id"], r["api_route_id"], r["rank"]) for r in rows] == [
            (_cell(j["quote_id"]), _cell(j["api_route_id"]), _cell(j["rank"])) for j in json_rows
        ]

    def test_decimals_round_trip_exactly(self, finance_api, market):
        brief = market["brief"]
        json_rows = rankings(finance_api, brief)["rows"]
        rows = csv_rows(finance_api.get(f"/api/v1/briefs/{brief.pk}/rankings", {"format": "csv"}))
        checked = 0
        for cells, row in zip(rows, json_rows, strict=True):
            for column in DECIMAL_COLUMNS:
                if row[column] is None:
                    assert cells[column] == ""
                else:
                    assert Decimal(cells[column]) == Decimal(row[column]), column
                    checked += 1
            for name, value in row["cost_lines"].items():
                assert Decimal(cells[f"cost_line:{name}"]) == Decimal(value), name
                checked += 1
        assert checked > 50

    def test_the_csv_keeps_the_filters(self, finance_api, market):
        brief = market["brief"]
        response = finance_api.get(
            f"/api/v1/briefs/{brief.pk}/rankings", {"format": "csv", "pricing_term": "SPOT"}
        )
        rows = csv_rows(response)
        assert [r["quote_id"] for r in rows] == [str(market["quotes"]["l40s-spot"].pk)]

    def test_provider_names_that_look_like_formulas_become_text(
        self, finance_api, team, catalog, django_capture_on_commit_callbacks
    ):
        brief = BriefFactory(team=team)
        quotes = {
            FreshQuoteFactory(provider=ProviderFactory(name=name), gpu=gpu("h100-sxm5-80gb")).pk: (
                name
            )
            for name in FORMULA_NAMES
        }
        recompute(brief, django_capture_on_commit_callbacks)
        json_rows = rankings(finance_api, brief)["rows"]
        assert {r["quote_id"]: r["provider"] for r in json_rows} == quotes
        rows = csv_rows(finance_api.get(f"/api/v1/briefs/{brief.pk}/rankings", {"format": "csv"}))
        assert {int(r["quote_id"]): r["provider"] for r in rows} == {
            pk: "'" + name for pk, name in quotes.items()
        }
        for row in rows:
            assert all(not cell.startswith(("=", "+", "@", "\t", "\r")) for cell in row.values())

    def test_the_csv_says_which_quotes_are_stale(
        self, finance_api, market, django_capture_on_commit_callbacks
    ):
        old = FreshQuoteFactory(gpu=gpu("h100-sxm5-80gb"), quote_date=days_ago(120))
        recompute(market["brief"], django_capture_on_commit_callbacks)
        brief = market["brief"]
        rows = csv_rows(finance_api.get(f"/api/v1/briefs/{brief.pk}/rankings", {"format": "csv"}))
        by_quote = {r["quote_id"]: r for r in rows}
        assert by_quote[str(old.pk)]["quote_stale"] == "true"
        assert by_quote[str(old.pk)]["notes"].startswith(f"quote #{old.pk} is stale (120 days old)")
        assert by_quote[str(market["quotes"]["h100"].pk)]["quote_stale"] == "false"
        assert by_quote[""]["quote_stale"] == ""  # the API route row


def _cell(value) -> str:
    return "" if value is None else str(value)


class TestRankingFreshness:
    def test_a_change_is_shown_as_pending_at_once_even_with_the_ranking_cached(
        self, catalog, token_client, team
    ):
        from apps.finance.services import (
            candidate_table_recompute,
            candidate_tables_request_recompute,
        )
        from tests.factories.briefs import BriefFactory
        from tests.factories.quotes import QuoteFactory

        brief = BriefFactory(team=team)
        QuoteFactory()
        candidate_tables_request_recompute(brief_ids=[brief.pk])
        candidate_table_recompute(brief_id=brief.pk)
        client = token_client()
        client.user.teams.add(team)
        url = f"/api/v1/briefs/{brief.pk}/rankings"
        assert client.get(url).json()["stale"] is False  # now cached
        candidate_tables_request_recompute(brief_ids=[brief.pk])  # an input changed
        assert client.get(url).json()["stale"] is True
        candidate_table_recompute(brief_id=brief.pk)
        assert client.get(url).json()["stale"] is False


class TestRankingLimit:
    def test_the_best_rows_come_first_and_total_rows_counts_them_all(
        self, catalog, token_client, team
    ):
        from apps.finance.services import (
            candidate_table_recompute,
            candidate_tables_request_recompute,
        )
        from tests.factories.briefs import BriefFactory
        from tests.factories.quotes import QuoteFactory

        brief = BriefFactory(team=team)
        for cents in range(5):
            QuoteFactory(hourly_price_per_gpu=Decimal(2) + Decimal(cents) / 100)
        candidate_tables_request_recompute(brief_ids=[brief.pk])
        candidate_table_recompute(brief_id=brief.pk)
        client = token_client()
        client.user.teams.add(team)
        url = f"/api/v1/briefs/{brief.pk}/rankings"
        every = client.get(url).json()
        top = client.get(url, {"limit": 2}).json()
        assert top["total_rows"] == every["total_rows"] == 5
        assert top["rows"] == every["rows"][:2]
        assert client.get(url, {"limit": 0}).status_code == 400
        csv_lines = client.get(url, {"format": "csv", "limit": 2}).content.decode().splitlines()
        assert len(csv_lines) == 1 + 5  # the CSV always holds every row
