"""The finance page's candidate table as a person reads it: ten columns in words and formatted
money, the rest one click away, 12- and 36-month costs for every row, rows that cannot meet
the brief below the ranked ones with why; the CSV keeps every digit."""

import csv
import io
import re
from decimal import Decimal
from html.parser import HTMLParser

import pytest

from apps.core.roles import Role
from apps.engine.costing_constants import HOURS_PER_MONTH
from apps.finance.models import CandidateRow
from apps.finance.services import candidate_tables_request_recompute
from apps.finance.units import scale_for
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, QuoteFactory

pytestmark = pytest.mark.django_db

# Codes that must never reach a person (the issue names the first three).
CODE_NAMES = (
    "gpu_compute",
    "RESERVED_1Y",
    "RESERVED_3Y",
    "REALTIME_INFERENCE",
    "ON_DEMAND",
    "ESTIMATED",
    "retry_waste",
    "platform_labour",
    "h100-sxm5-80gb",
)
# A figure as code holds it: a number without thousands separators and with more than six
# significant digits (1202293857.4939, 0.000006797506241).
RAW_NUMBER = re.compile(r"(?<![\d,.])\d+(?:\.\d+)?(?![\d,])")


def raw_floats(text: str) -> list[str]:
    found = []
    for number in RAW_NUMBER.findall(text):
        if len(number.replace(".", "").lstrip("0")) > 6:
            found.append(number)
    return found


class TableText(HTMLParser):
    """The candidate table's text: ``shown`` outside the rows' closed disclosures, ``details``
    inside them."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0  # inside #candidate-table
        self.in_details = 0
        self.shown: list[str] = []
        self.details: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "table" and ("id", "candidate-table") in attrs:
            self.depth = 1
        elif self.depth and tag == "table":
            self.depth += 1
        if self.depth and tag == "details":
            self.in_details += 1
        if self.depth and tag == "summary":
            self.in_details -= 1  # the summary is what a closed disclosure shows

    def handle_endtag(self, tag):
        if self.depth and tag == "summary":
            self.in_details += 1
        if self.depth and tag == "details":
            self.in_details -= 1
        if self.depth and tag == "table":
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            (self.details if self.in_details else self.shown).append(data)


def table_text(content: bytes) -> tuple[str, str]:
    parser = TableText()
    parser.feed(content.decode())
    return " ".join(parser.shown), " ".join(parser.details)


@pytest.fixture
def brief(catalog, team, django_capture_on_commit_callbacks):
    """A real-time chat brief with on-demand, 1- and 3-year reserved quotes, an API route, and
    a bought GPU that a public-cloud brief cannot use."""
    with django_capture_on_commit_callbacks(execute=True):
        brief = BriefFactory(team=team)
        QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
        QuoteFactory(pricing_term="RESERVED_1Y", hourly_price_per_gpu=Decimal("1.90"))
        QuoteFactory(
            pricing_term="RESERVED_3Y",
            hourly_price_per_gpu=Decimal("1.40"),
            minimum_commitment_months=36,
        )
        ApiRouteFactory(model_preset="llama-3.1-8b")
        candidate_tables_request_recompute(brief_ids=[brief.pk])
    return brief


@pytest.fixture
def page(brief, client, make_user):
    client.force_login(make_user(Role.FINANCE))
    response = client.get(f"/briefs/{brief.pk}/finance/")
    assert response.status_code == 200
    return response


class TestWhatTheTableShows:
    def test_eleven_columns_in_words(self, page):
        headers = re.findall(r'<th scope="col"[^>]*>(.*?)</th>', page.content.decode())
        words = [re.sub(r"<[^>]+>", " ", h).split() for h in headers]
        assert [w[0] for w in words] == [
            "Rank",
            "Candidate",
            "Configuration",
            "Unit",
            "Monthly",
            "12",
            "36",
            "Energy",
            "Meets",
            "Basis",
            "Decision",
        ]

    def test_no_code_names_and_no_raw_floats_in_the_table(self, page):
        shown, details = table_text(page.content)
        assert "Open decision record" in shown and "Cost lines, notes and quote age" in shown
        for code in CODE_NAMES:
            assert code not in shown, code
            assert code not in details, code
        assert raw_floats(shown) == []
        assert raw_floats(details) == []

    def test_a_row_reads_as_finance_reads_it(self, page):
        rows = {r["pricing_term"]: r for r in page.context["rows"]}
        on_demand = rows["ON_DEMAND"]
        assert on_demand["display_candidate"].endswith(" · NVIDIA H100 SXM5")
        assert on_demand["display_term"] == "On demand"
        assert rows["RESERVED_3Y"]["display_term"] == "Reserved 3 years"
        configuration = on_demand["display_configuration"]
        assert re.fullmatch(r"[\d,]+ GPUs? \([\d,]+ replicas? \u00d7 \d+\)", configuration)
        assert on_demand["display_basis"] == "Estimated"
        monthly = Decimal(on_demand["monthly_cost"])
        shown = f"{monthly:,.2f}" if monthly < 10_000 else f"{monthly:,.0f}"  # cents below 10,000
        assert on_demand["display_monthly_cost"] == f"USD\u00a0{shown}"
        # The unit cost in the table's unit (per 1M accepted tokens), four significant digits.
        unit_cost = on_demand["display_unit_cost"].removeprefix("USD\u00a0")
        assert len(unit_cost.replace(".", "").replace(",", "").lstrip("0")) == 4
        stored = CandidateRow.objects.get(quote__pricing_term="ON_DEMAND").effective_unit_cost
        shown = stored * scale_for("TOKEN")
        assert abs(Decimal(unit_cost.replace(",", "")) - shown) <= shown * Decimal("0.0005")

    def test_the_cost_lines_are_one_click_away_per_row(self, page):
        content = page.content.decode()
        groups = content.count('class="candidate-group')
        assert groups == len(page.context["rows"])
        assert content.count('<details class="row-details">') == groups
        row = page.context["rows"][0]
        labels = [label for label, _ in row["display_lines"]]
        assert "Platform labour" in labels and "Observability" in labels
        assert all(amount.startswith("USD\u00a0") for _, amount in row["display_lines"])

    def test_rows_that_cannot_meet_the_brief_come_after_the_ranked_ones_with_why(
        self, catalog, team, client, make_user, django_capture_on_commit_callbacks
    ):
        with django_capture_on_commit_callbacks(execute=True):
            brief = BriefFactory(team=team)
            QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
            QuoteFactory(
                pricing_term="OWNED",
                hourly_price_per_gpu=Decimal("0"),
                capex_per_gpu=Decimal("30000"),
                depreciation_months=48,
            )
            candidate_tables_request_recompute(brief_ids=[brief.pk])
        client.force_login(make_user(Role.FINANCE))
        response = client.get(f"/briefs/{brief.pk}/finance/")
        unmet = response.context["unmet_rows"]
        assert unmet and all(r["rank"] is None for r in unmet)
        assert all(r["rank"] is not None for r in response.context["ranked_rows"])
        owned = next(r for r in unmet if r["pricing_term"] == "OWNED")
        assert owned["display_reasons"] == [
            "brief runs in the public cloud; this candidate is bought hardware"
        ]
        content = response.content.decode()
        # The unmet rows' heading sits below every ranked row.
        heading = content.index('id="unmet-heading"')
        # (up to the rent / reserve / buy section after the table, which has its own "Yes")
        table_end = content.index('id="capacity-model"')
        assert content.rfind("Yes</td>", 0, table_end) < heading
        assert "Brief runs in the public cloud" in content[heading:]


class TestTwelveAndThirtySixMonths:
    def test_a_pay_as_you_go_row_is_its_monthly_cost_times_the_months(self, page):
        row = next(r for r in page.context["rows"] if r["pricing_term"] == "ON_DEMAND")
        monthly = Decimal(row["monthly_cost"])
        assert row["display_total_12"] == f"USD\u00a0{monthly * 12:,.0f}"
        assert row["display_total_36"] == f"USD\u00a0{monthly * 36:,.0f}"
        assert row["display_commitment"] == []

    def test_a_three_year_reservation_still_owes_its_commitment_after_a_year(self, page):
        row = next(r for r in page.context["rows"] if r["pricing_term"] == "RESERVED_3Y")
        monthly = Decimal(row["monthly_cost"])
        paid = Decimal(row["paid_gpu_hours_per_month"])
        committed = Decimal("1.40") * paid * 24  # 24 months still bound after the first 12
        assert row["display_total_12"] == f"USD\u00a0{monthly * 12 + committed:,.0f}"
        assert row["display_total_36"] == f"USD\u00a0{monthly * 36:,.0f}"  # nothing beyond
        (beyond,) = row["display_commitment"]
        assert beyond.startswith("12 months: ") and "36-month commitment" in beyond
        assert paid == HOURS_PER_MONTH * (paid // HOURS_PER_MONTH)  # whole GPUs a month

    def test_the_table_agrees_with_the_sensitivity_totals_of_the_leading_rows(self, page):
        from apps.finance.lines import _d

        ranking = page.context["ranking"]
        leading = (ranking.get("sensitivity") or {}).get("leading") or []
        assert leading, "the sensitivity section totals its leading rows"
        rows = {(r["quote_id"], r["api_route_id"]): r for r in page.context["rows"]}
        for lead in leading:
            row = rows[(lead["quote_id"], lead["api_route_id"])]
            for total in lead["totals"]:
                shown = row[f"display_total_{total['months']}"].removeprefix("USD\u00a0")
                assert shown == f"{_d(total['total']):,.0f}"


class TestTheCsvKeepsEveryDigit:
    def test_the_csv_unit_costs_have_the_stored_precision(self, brief, token_client):
        body = token_client(Role.FINANCE).get(f"/api/v1/briefs/{brief.pk}/rankings?format=csv")
        assert body.status_code == 200
        rows = list(csv.DictReader(io.StringIO(body.content.decode())))
        digits = [
            len(r["effective_unit_cost"].replace(".", "").lstrip("0"))
            for r in rows
            if r["effective_unit_cost"]
        ]
        assert max(digits) > 6  # not the page's four significant digits
