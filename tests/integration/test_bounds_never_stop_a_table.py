"""Issue 24 point 1: no value stops a table. The largest prices, FX rates and labour figures the
bounds accept (apps.core.bounds) leave every table computed; a candidate whose figures still
cannot be costed or stored (values stored before the bounds, as the issue's reproduction)
is listed under ``not_costed`` with its reason in words, and the rest of the table is computed
and saved, on SQLite and PostgreSQL, by the full recompute and by the re-costing of changed
quotes alike."""

import decimal
from datetime import date
from decimal import Decimal

import pytest
from django.test import Client

from apps.catalog.models import Gpu
from apps.core import bounds
from apps.core.roles import Role
from apps.finance.models import CandidateRow, CandidateTable, FinanceAssumptions, FxRate
from apps.finance.services import (
    candidate_tables_request_recompute,
    finance_assumptions_update,
    fx_rate_create,
)
from apps.quotes.services import quote_create
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, ProviderFactory, QuoteFactory

pytestmark = pytest.mark.django_db

# The values, each within its column but stored before the bounds existed.
HUGE_PRICE = Decimal("9999999999.9999")
HUGE_RATE = Decimal("9999999999")
HUGE_LABOUR_RATE = Decimal("99999999.99")
HUGE_HOURS = Decimal("999999.99")
NOT_STORED = ("past the largest figure", "could not be worked out")


@pytest.fixture
def market(catalog, team, other_team, django_capture_on_commit_callbacks):
    """A brief in each of two teams, a plain H100 quote and an API route, computed."""
    briefs = [BriefFactory(team=team), BriefFactory(team=other_team)]
    plain = QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
    ApiRouteFactory(model_preset="llama-3.1-8b")
    with django_capture_on_commit_callbacks(execute=True):
        candidate_tables_request_recompute()
    return {"briefs": briefs, "plain": plain}


def recompute(capture, **kwargs):
    with capture(execute=True):
        candidate_tables_request_recompute(**kwargs)


def assert_every_table_computed():
    tables = list(CandidateTable.objects.all())
    assert tables
    for table in tables:
        assert table.computed_version == table.requested_version, table.brief_id
        assert table.queued_at is None
        assert not table.no_ranking_reason, table.no_ranking_reason


def not_costed_reason(brief, quote_id):
    inputs = CandidateTable.objects.get(brief=brief).inputs
    found = [e for e in inputs["not_costed"] if e.get("quote_id") == quote_id]
    return found[0]["reason"] if found else None


def assert_pages_answer(make_user, brief):
    """The brief's rankings and finance page answer, for a finance user of its team."""
    api = Client()
    api.force_login(make_user(Role.FINANCE, teams=[brief.team]))
    response = api.get(f"/api/v1/briefs/{brief.pk}/rankings")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["pending"] is False and body["stale"] is False
    assert api.get(f"/briefs/{brief.pk}/finance/").status_code == 200
    return body


class TestValuesStoredBeforeTheBounds:
    def test_a_quote_whose_cost_passes_every_column_is_not_costed_and_the_rest_is(
        self, market, make_user, django_capture_on_commit_callbacks
    ):
        FxRate.objects.create(currency="EUR", rate=HUGE_RATE, as_of=date(2026, 11, 1), source="x")
        recompute(django_capture_on_commit_callbacks)  # a new rate: a full recompute
        huge = QuoteFactory(currency="EUR", hourly_price_per_gpu=HUGE_PRICE)
        recompute(django_capture_on_commit_callbacks, quotes_only=True)  # re-costing it alone
        assert_every_table_computed()
        for brief in market["briefs"]:
            reason = not_costed_reason(brief, huge.pk)
            assert reason and any(words in reason for words in NOT_STORED), reason
            rows = CandidateRow.objects.filter(table__brief=brief)
            assert not rows.filter(quote=huge).exists()
            assert rows.filter(quote=market["plain"], meets_constraints=True).exists()
            body = assert_pages_answer(make_user, brief)
            assert huge.pk in {e["quote_id"] for e in body["not_costed"]}
            assert any(r["quote_id"] == market["plain"].pk and r["rank"] for r in body["rows"])
            author = Client()
            author.force_login(make_user(Role.PLATFORM, teams=[brief.team]))
            record = {"brief": brief.pk, "capacity_model": "RENT_ON_DEMAND"}
            response = author.post(
                "/api/v1/decision-records/",
                {**record, "chosen_quote": market["plain"].pk},
                content_type="application/json",
            )
            assert response.status_code == 201, response.content

    def test_a_full_recompute_with_the_huge_rate_and_labour_computes_every_table(
        self, market, make_user, django_capture_on_commit_callbacks
    ):
        huge = QuoteFactory(currency="EUR", hourly_price_per_gpu=HUGE_PRICE)
        FxRate.objects.create(currency="EUR", rate=HUGE_RATE, as_of=date(2026, 11, 1), source="x")
        FinanceAssumptions.objects.create(
            is_default=True,
            labour_rate_per_hour=HUGE_LABOUR_RATE,
            platform_hours_self_managed=HUGE_HOURS,
        )
        recompute(django_capture_on_commit_callbacks)
        assert_every_table_computed()
        for brief in market["briefs"]:
            assert not_costed_reason(brief, huge.pk)
            rows = CandidateRow.objects.filter(table__brief=brief)
            assert rows.filter(quote=market["plain"]).exists()
            assert_pages_answer(make_user, brief)


class TestTheLargestAcceptedValues:
    def test_leave_every_table_computed_with_every_quote_costed_or_said_why(
        self, market, make_user, django_capture_on_commit_callbacks
    ):
        """The largest cross rate the bounds allow (a GBP quote at the highest rate reported in
        JPY at the lowest), the highest GPU-hour price and monthly fees, and the highest labour
        figures, all entered through the services that check them."""
        buyer = make_user(Role.PROCUREMENT)
        with django_capture_on_commit_callbacks(execute=True):
            fx_rate_create(currency="GBP", rate=bounds.FX_RATE_MAX, as_of=date.today(), source="x")
            fx_rate_create(currency="JPY", rate=bounds.FX_RATE_MIN, as_of=date.today(), source="x")
            finance_assumptions_update(
                brief=None,
                reporting_currency="JPY",
                labour_rate_per_hour=bounds.LABOUR_RATE_PER_HOUR_MAX,
                platform_hours_self_managed=bounds.PLATFORM_HOURS_PER_DEPLOYMENT_MAX,
            )
            largest = quote_create(
                created_by=buyer,
                provider=ProviderFactory(),
                gpu=Gpu.objects.get(slug="h100-sxm5-80gb"),
                region="us-east",
                pricing_term="ON_DEMAND",
                currency="GBP",
                hourly_price_per_gpu=bounds.GPU_HOUR_PRICE_MAX,
                storage_price_per_tb_month=bounds.STORAGE_PER_TB_MONTH_MAX,
                egress_price_per_gb=bounds.EGRESS_PER_GB_MAX,
                network_monthly=bounds.MONTHLY_FEE_MAX,
                monthly_extras=bounds.MONTHLY_FEE_MAX,
                quote_date=date.today(),
                source="the largest accepted",
            )
        assert_every_table_computed()
        for brief in market["briefs"]:
            table = CandidateTable.objects.get(brief=brief)
            assert table.currency == "JPY"
            costed = CandidateRow.objects.filter(table=table, quote=largest).exists()
            assert costed or not_costed_reason(brief, largest.pk)
            assert CandidateRow.objects.filter(table=table, quote=market["plain"]).exists()
            assert_pages_answer(make_user, brief)


class TestABriefTooLargeToCompute:
    def test_gets_a_table_that_says_why_never_one_left_pending(
        self, market, monkeypatch, django_capture_on_commit_callbacks
    ):
        """Arithmetic that fails on the brief's own figures (not one candidate's): the
        engine or the demand raising decimal.Overflow, as a fault injected here."""
        from apps.finance import candidates

        def too_large(brief, table):
            raise decimal.Overflow("[<class 'decimal.Overflow'>]")

        monkeypatch.setattr(candidates, "table_context", too_large)
        brief = market["briefs"][0]
        recompute(django_capture_on_commit_callbacks, brief_ids=[brief.pk])
        table = CandidateTable.objects.get(brief=brief)
        assert table.computed_version == table.requested_version and table.queued_at is None
        assert "too large to compute (Overflow)" in table.no_ranking_reason
        assert not CandidateRow.objects.filter(table=table).exists()
