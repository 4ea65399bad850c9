"""The finance page: the candidate table, its charts, and assumptions that move it."""

from decimal import Decimal

import pytest

from apps.core.roles import Role
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
        assert chart_ids[:3] == ["unit-cost-chart", "latency-chart", "breakdown-chart"]
        assert b"ESTIMATED" in response.content

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
                {"acceptance_rate": "", "observability_share": "0.5"},
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
        sources = {name: source for name, _, source, _ in page.context["assumptions"]}
        assert sources["observability_share"] == "brief"

    def test_a_bad_assumption_is_a_field_error_and_saves_nothing(self, brief, client, make_user):
        client.force_login(make_user(Role.FINANCE))
        response = client.post(f"/briefs/{brief.pk}/finance/", {"retry_rate": "1.5"})
        assert response.status_code == 200
        assert "retry_rate" in response.context["form"].errors
        assert not FinanceAssumptions.objects.filter(brief=brief).exists()

    def test_only_finance_may_change_assumptions(self, brief, client, make_user):
        client.force_login(make_user(Role.PLATFORM))
        assert client.get(f"/briefs/{brief.pk}/finance/").status_code == 200
        response = client.post(f"/briefs/{brief.pk}/finance/", {"observability_share": "0.5"})
        assert response.status_code == 403
        assert not FinanceAssumptions.objects.filter(brief=brief).exists()
