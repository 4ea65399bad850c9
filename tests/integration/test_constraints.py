"""The database itself refuses rows that break an invariant (not only the forms)."""

from datetime import date
from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction

from apps.catalog.models import Gpu, GpuSystem
from apps.decisions.models import Approval, DecisionRecord
from apps.finance.models import FinanceAssumptions
from apps.quotes.models import ApiRoute, Quote
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, ProviderFactory, QuoteFactory

pytestmark = pytest.mark.django_db


def refused(make):
    with pytest.raises(IntegrityError), transaction.atomic():
        make()


class TestQuoteConstraints:
    def test_a_valid_quote_saves(self, catalog):
        quote = QuoteFactory()
        assert Quote.objects.filter(pk=quote.pk).exists()

    def test_a_quote_names_a_gpu_or_a_system_not_both(self, catalog):
        system = GpuSystem.objects.get(slug="hgx-h100-8")
        refused(lambda: QuoteFactory(system=system))

    def test_a_quote_names_a_gpu_or_a_system_not_neither(self, catalog):
        refused(lambda: QuoteFactory(gpu=None))

    def test_negative_prices_are_refused(self, catalog):
        refused(lambda: QuoteFactory(hourly_price_per_gpu=Decimal("-1")))
        refused(lambda: QuoteFactory(egress_price_per_gb=Decimal("-0.01")))

    def test_valid_until_before_quote_date_is_refused(self, catalog):
        refused(lambda: QuoteFactory(quote_date=date(2026, 5, 2), valid_until=date(2026, 5, 1)))

    def test_one_live_api_route_per_provider_and_model(self):
        provider = ProviderFactory()
        ApiRouteFactory(provider=provider, model="m")
        refused(lambda: ApiRouteFactory(provider=provider, model="m"))
        ApiRouteFactory(provider=provider, model="m", retired=True)  # retired ones may repeat
        assert ApiRoute.objects.filter(model="m").count() == 2

    def test_batch_discount_must_be_below_one(self):
        refused(lambda: ApiRouteFactory(batch_discount=Decimal("1")))


class TestBriefConstraints:
    def test_acceptance_rate_above_one_is_refused(self):
        refused(lambda: BriefFactory(acceptance_rate=Decimal("1.5")))

    def test_p95_below_p50_is_refused(self):
        refused(lambda: BriefFactory(input_tokens_p50=4000, input_tokens_p95=1000))
        refused(lambda: BriefFactory(output_tokens_p50=800, output_tokens_p95=200))

    def test_hours_per_month_beyond_a_month_is_refused(self):
        refused(lambda: BriefFactory(hours_per_month=Decimal("800")))

    def test_brief_names_are_unique_within_a_team(self):
        brief = BriefFactory(name="same")
        refused(lambda: BriefFactory(name="same", team=brief.team))
        BriefFactory(name="same")  # another team may use it


class TestCatalogConstraints:
    def test_a_gpu_without_memory_is_refused(self, catalog):
        row = Gpu.objects.values().get(slug="l4-24gb")
        row.update(id=None, slug="broken", memory_gb=Decimal("0"))
        refused(lambda: Gpu.objects.create(**row))


class TestFinanceAndDecisionConstraints:
    def test_only_one_organisation_default(self):
        FinanceAssumptions.objects.create(is_default=True)
        refused(lambda: FinanceAssumptions.objects.create(is_default=True))

    def test_a_per_brief_set_is_not_the_default(self):
        brief = BriefFactory()
        refused(lambda: FinanceAssumptions.objects.create(is_default=True, brief=brief))

    def test_a_record_past_draft_needs_a_content_hash(self):
        brief = BriefFactory()
        refused(
            lambda: DecisionRecord.objects.create(
                brief=brief,
                team=brief.team,
                title="t",
                capacity_model="RENT_ON_DEMAND",
                created_by=brief.created_by,
                status="IN_REVIEW",
            )
        )

    def test_a_rejection_needs_a_reason(self):
        brief = BriefFactory()
        record = DecisionRecord.objects.create(
            brief=brief,
            team=brief.team,
            title="t",
            capacity_model="RENT_ON_DEMAND",
            created_by=brief.created_by,
        )
        refused(
            lambda: Approval.objects.create(
                record=record, role="finance", user=brief.created_by, verdict="REJECT"
            )
        )
        Approval.objects.create(
            record=record, role="finance", user=brief.created_by, verdict="APPROVE"
        )
        refused(
            lambda: Approval.objects.create(
                record=record, role="finance", user=brief.created_by, verdict="APPROVE"
            )
        )
