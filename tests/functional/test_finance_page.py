"""The finance page: the candidate table, its charts, and assumptions that move it."""

import re
from decimal import Decimal
from unittest.mock import patch

import pytest
from django.template.base import Node

from apps.core.roles import Role
from apps.decisions.checklist import QUESTIONS
from apps.finance import views
from apps.finance.models import CandidateRow, FinanceAssumptions
from apps.finance.services import candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, QuoteFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def brief(catalog, team, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        brief = BriefFactory(team=team)
        QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
        QuoteFactory(pricing_term="RESERVED_1Y", hourly_price_per_gpu=Decimal("1.90"))
        ApiRouteFactory(model_preset="llama-3.1-8b")
        candidate_tables_request_recompute(brief_ids=[brief.pk])
    return brief


class TestFinancePage:
    def test_shows_every_candidate_with_its_cost_lines_and_charts(self, brief, client, make_user):
        client.force_login(make_user(Role.FINANCE))
        response = client.get(f"/briefs/{brief.pk}/finance/")
        assert response.status_code == 200
        assert len(response.context["rows"]) == 3
        assert "gpu_compute" in response.context["line_names"]
        chart_ids = [chart_id for chart_id, _, _ in response.context["figures"]]
        assert chart_ids == ["unit-cost-chart", "latency-chart"]  # open on the page
        # The cost lines' chart in a section of its own, collapsed until opened.
        (breakdown,) = response.context["breakdown_figures"]
        assert breakdown[0] == "breakdown-chart"
        page = response.content.decode()
        assert re.search(r'<details class="section" id="cost-by-line">', page)
        assert re.search(r'<details class="section" id="assumptions">', page)
        assert b'<td class="basis">Estimated</td>' in response.content  # the basis in words

    def test_sorting_by_monthly_cost_orders_the_rows(self, brief, client, make_user):
        client.force_login(make_user(Role.FINANCE))
        rows = client.get(f"/briefs/{brief.pk}/finance/", {"sort": "monthly_cost"}).context["rows"]
        costs = [Decimal(r["monthly_cost"]) for r in rows]
        assert costs == sorted(costs)

    def test_finance_changes_an_assumption_and_the_table_moves(
        self, brief, client, make_user, django_capture_on_commit_callbacks
    ):
        client.force_login(make_user(Role.FINANCE))
        before_rows = list(CandidateRow.objects.all())
        before = {r.pk for r in before_rows}
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                f"/briefs/{brief.pk}/finance/",
                {"acceptance_rate": "", "observability_share": "50"},  # typed as a percentage
            )
        assert response.status_code == 302
        assert FinanceAssumptions.objects.get(brief=brief).observability_share == Decimal("0.5")
        after = list(CandidateRow.objects.filter(table__brief=brief))
        assert after and all(r.pk not in before for r in after)  # rows were rebuilt
        # Observability is a share of the GPU bill: ten times more makes every GPU row dearer.
        old = {r.quote_id: r for r in before_rows}
        for row in after:
            if row.quote_id:
                assert row.effective_unit_cost > old[row.quote_id].effective_unit_cost
        page = client.get(f"/briefs/{brief.pk}/finance/")
        sources = {name: source for name, _, _, source, _ in page.context["assumptions"]}
        assert sources["observability_share"] == "brief"

    def test_a_bad_assumption_is_a_field_error_and_saves_nothing(self, brief, client, make_user):
        client.force_login(make_user(Role.FINANCE))
        response = client.post(f"/briefs/{brief.pk}/finance/", {"retry_rate": "150"})
        assert response.status_code == 200
        assert response.context["form"].errors["retry_rate"] == ["At most 99.99\u00a0%."]
        assert not FinanceAssumptions.objects.filter(brief=brief).exists()
        # The refusal is at the top of the page, linked to its field, not ~7,000 px down.
        html = response.content.decode()
        top = html.index('id="form-errors"')
        assert top < html.index('id="assumption-form"')
        assert '<a href="#id_retry_rate">Retry rate (%)</a>: At most 99.99\u00a0%.' in html

    def test_a_retry_rate_of_3_means_3_percent(self, brief, client, make_user):
        client.force_login(make_user(Role.FINANCE))
        response = client.post(f"/briefs/{brief.pk}/finance/", {"retry_rate": "3"})
        assert response.status_code == 302
        assert FinanceAssumptions.objects.get(brief=brief).retry_rate == Decimal("0.03")

    def test_only_finance_may_change_assumptions(self, brief, client, make_user):
        client.force_login(make_user(Role.PLATFORM))
        assert client.get(f"/briefs/{brief.pk}/finance/").status_code == 200
        response = client.post(f"/briefs/{brief.pk}/finance/", {"observability_share": "0.5"})
        assert response.status_code == 403
        assert not FinanceAssumptions.objects.filter(brief=brief).exists()


def rendered_nodes(client, path):
    """How many template nodes (tags, variables, text) a page renders: its work, counted."""
    calls = []
    original = Node.render_annotated

    def counting(node, context):
        calls.append(1)
        return original(node, context)

    with patch.object(Node, "render_annotated", counting):
        assert client.get(path).status_code == 200
    return len(calls)


class TestManyCandidates:
    def test_the_page_shows_the_first_rows_and_every_row_is_one_click_away(
        self, brief, client, make_user, monkeypatch
    ):
        monkeypatch.setattr(views, "FINANCE_PAGE_ROWS", 2)
        client.force_login(make_user(Role.FINANCE))
        response = client.get(f"/briefs/{brief.pk}/finance/", {"sort": "monthly_cost"})
        assert len(response.context["rows"]) == 2
        assert response.context["total_rows"] == 3
        assert b"Showing the first 2 of 3 candidates" in response.content
        assert b'href="?sort=monthly_cost&amp;rows=all"' in response.content
        everything = client.get(f"/briefs/{brief.pk}/finance/", {"rows": "all"})
        assert len(everything.context["rows"]) == 3
        assert b"Showing all 3 candidates" in everything.content

    def test_each_quote_row_shows_its_own_checklist_completeness(self, brief, client, make_user):
        client.force_login(make_user(Role.FINANCE))
        rows = client.get(f"/briefs/{brief.pk}/finance/").context["rows"]
        quote_rows = [r for r in rows if r["quote_id"]]
        assert [r["checklist"] for r in quote_rows] == [(0, len(QUESTIONS))] * len(quote_rows)

    def test_the_template_work_grows_with_the_rows_not_with_their_square(
        self, catalog, team, client, make_user, django_capture_on_commit_callbacks
    ):
        client.force_login(make_user(Role.FINANCE))
        brief = BriefFactory(team=team)
        path = f"/briefs/{brief.pk}/finance/"

        def table_with(n):
            with django_capture_on_commit_callbacks(execute=True):
                for _ in range(n):
                    QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
                candidate_tables_request_recompute(brief_ids=[brief.pk])
            return CandidateRow.objects.filter(table__brief=brief).count()

        counts = {}
        for add in (5, 5, 40):
            rows = table_with(add)
            counts[rows] = rendered_nodes(client, path)
        assert sorted(counts) == [5, 10, 50]
        per_row_first = (counts[10] - counts[5]) / 5
        per_row_after = (counts[50] - counts[10]) / 40
        # Linear: each row costs the same nodes however many rows there are (a lookup across
        # rows per row would make the 40 later rows cost far more each than the 5 first).
        assert per_row_after <= per_row_first * 1.1
