"""A change to quotes or API routes alone re-costs only their rows, for many tables at once,
with a number of queries that does not grow with the tables; anything else still recomputes
in full. Each result is compared with a fresh full recompute (tests/faults/driver.py)."""

import hashlib
from decimal import Decimal

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.briefs.services import brief_update
from apps.catalog.models import Gpu
from apps.core.roles import Role
from apps.finance import services as finance_services
from apps.finance.models import CandidateRow, CandidateTable, FxRate
from apps.finance.services import (
    FULL_RECOMPUTE_BATCH,
    REPRICE_BATCH,
    candidate_table_recompute,
    candidate_tables_recompute,
    candidate_tables_request_recompute,
)
from apps.finance.version_sets import table_versions
from apps.quotes.services import api_route_update, quote_create, quote_retire, quote_update
from tests.factories.briefs import BriefFactory
from tests.factories.core import UserFactory
from tests.factories.quotes import ApiRouteFactory, ProviderFactory, QuoteFactory
from tests.faults.driver import fresh_image, image_differences, table_image

pytestmark = pytest.mark.django_db


def _gpu(slug):
    return Gpu.objects.get(slug=slug)


@pytest.fixture
def market(catalog, other_team):
    """Briefs of two teams, GPU quotes (one confidential, one in EUR with no rate), a route."""
    briefs = [BriefFactory(), BriefFactory(concurrency=8), BriefFactory(team=other_team)]
    quotes = {
        "h100": QuoteFactory(gpu=_gpu("h100-sxm5-80gb"), hourly_price_per_gpu=Decimal("2.50")),
        "l40s": QuoteFactory(gpu=_gpu("l40s-48gb"), hourly_price_per_gpu=Decimal("0.90")),
        "a100": QuoteFactory(gpu=_gpu("a100-sxm4-80gb"), hourly_price_per_gpu=Decimal("1.70")),
        "secret": QuoteFactory(gpu=_gpu("l40s-48gb"), confidential_to=other_team),
        "eur": QuoteFactory(gpu=_gpu("l40s-48gb"), currency="EUR"),
    }
    route = ApiRouteFactory(model_preset="llama-3.1-8b")
    candidate_tables_request_recompute()
    recompute_all(briefs)
    return {"briefs": briefs, "quotes": quotes, "route": route}


def recompute_all(briefs):
    candidate_tables_recompute(brief_ids=[b.pk for b in briefs])


def assert_same_as_fresh(briefs):
    for brief in briefs:
        table = CandidateTable.objects.get(brief=brief)
        assert table.computed_version == table.requested_version
        diffs = image_differences(table_image(brief.pk), fresh_image(brief.pk))
        assert not diffs, diffs[:3]


def queries_of(call, *args, **kwargs):
    with CaptureQueriesContext(connection) as captured:
        call(*args, **kwargs)
    return captured.captured_queries


class TestRepricing:
    def test_a_price_change_recosts_only_that_quotes_rows_in_every_table(self, market):
        briefs, h100 = market["briefs"], market["quotes"]["h100"]
        kept = dict(CandidateRow.objects.exclude(quote=h100).values_list("pk", "monthly_cost"))
        before = dict(CandidateRow.objects.filter(quote=h100).values_list("table_id", "pk"))
        quote_update(quote=h100, hourly_price_per_gpu=Decimal("3.75"))
        recompute_all(briefs)
        assert dict(CandidateRow.objects.exclude(quote=h100).values_list("pk", "monthly_cost")) == (
            kept
        )  # the other rows are the very same rows, untouched
        after = dict(CandidateRow.objects.filter(quote=h100).values_list("table_id", "pk"))
        assert set(after) == set(before) and not set(after.values()) & set(before.values())
        assert_same_as_fresh(briefs)

    def test_it_never_calls_the_engine(self, market, monkeypatch):
        from apps.finance import configuration, estimates, plans

        def engine(*args, **kwargs):
            raise AssertionError("the engine was asked again")

        for module in (configuration, estimates, plans):
            monkeypatch.setattr(module, "engine_estimates", engine)
        # A cut: the serving plans' bound only tightens, so no GPU comes newly within reach (a
        # rise may bring one, whose bucket capacities the plans then ask for: test_serving_plans).
        l40s = market["quotes"]["l40s"]
        quote_update(quote=l40s, hourly_price_per_gpu=l40s.hourly_price_per_gpu * Decimal("0.9"))
        recompute_all(market["briefs"])
        assert not CandidateTable.objects.filter(computed_version__lt=F("requested_version"))

    def test_the_queries_do_not_grow_with_the_tables(self, market, monkeypatch):
        # The re-costing alone: a table whose leading rows moved also re-reads them for its
        # sensitivity (apps.finance.sensitivity, a few queries a table, by design), and in this
        # small market every quote leads, so that part is left out here.
        from apps.finance import writes

        monkeypatch.setattr(writes, "sensitivity_update", lambda table, built: [])
        # A dearer quote of a GPU no table compares in its capacity model: nothing else moves.
        compared = {t.capacity_model.get("gpu") for t in CandidateTable.objects.all()}
        quote = next(
            q for key, q in market["quotes"].items() if key in ("h100", "l40s", "a100")
            and q.gpu.slug not in compared
        )  # fmt: skip
        quote_update(quote=quote, hourly_price_per_gpu=quote.hourly_price_per_gpu * 2)
        one = queries_of(candidate_tables_recompute, brief_ids=[market["briefs"][0].pk])
        quote.refresh_from_db()
        quote_update(quote=quote, hourly_price_per_gpu=quote.hourly_price_per_gpu * 2)
        three = queries_of(recompute_all, market["briefs"])
        assert len(three) == len(one)
        assert_same_as_fresh(market["briefs"])

    def test_new_retired_and_rescoped_quotes_and_a_route_change(self, market, other_team):
        quotes, briefs = market["quotes"], market["briefs"]
        new = quote_create(
            provider=ProviderFactory(), gpu=_gpu("h200-sxm-141gb"), region="eu-west",
            pricing_term="ON_DEMAND", hourly_price_per_gpu=Decimal("0.05"), currency="USD",
            quote_date=quotes["h100"].quote_date, source="test",
        )  # fmt: skip
        quote_retire(quote=quotes["a100"])
        owner = UserFactory(roles=[Role.PROCUREMENT], teams=[other_team])
        quote_update(quote=quotes["secret"], confidential_to=None, user=owner)
        api_route_update(route=market["route"], output_price_per_mtok=Decimal("0.45"))
        recompute_all(briefs)
        assert CandidateRow.objects.filter(quote=new).count() == len(briefs)
        assert not CandidateRow.objects.filter(quote=quotes["a100"]).exists()
        assert CandidateRow.objects.filter(quote=quotes["secret"]).count() == len(briefs)
        table = CandidateTable.objects.get(brief=briefs[0])
        versions, _ = table_versions(table)
        assert versions[str(new.pk)] == 1
        assert str(quotes["a100"].pk) not in versions
        assert table.capacity_model["gpu"] == "h200-sxm-141gb"  # the cheap quote moved it
        assert_same_as_fresh(briefs)

    def test_a_quote_still_not_costed_stays_listed_and_one_now_costed_leaves_the_list(self, market):
        briefs, eur = market["briefs"], market["quotes"]["eur"]
        quote_update(quote=eur, hourly_price_per_gpu=Decimal("1.50"))
        recompute_all(briefs)
        table = CandidateTable.objects.get(brief=briefs[0])
        assert [e["quote_id"] for e in table.inputs["not_costed"]] == [eur.pk]
        quote_update(quote=eur, currency="USD")
        recompute_all(briefs)
        table.refresh_from_db()
        assert table.inputs["not_costed"] == []
        assert CandidateRow.objects.filter(quote=eur).count() == len(briefs)
        assert_same_as_fresh(briefs)

    def test_a_quote_whose_gpu_the_stored_answer_lacks_is_listed_not_dropped(self, market):
        """A quote the engine has no estimate for (here: a table stored before its GPU was
        answered) is listed under not_costed with why, never silently left out."""
        brief, a100 = market["briefs"][0], market["quotes"]["a100"]
        table = CandidateTable.objects.get(brief=brief)
        stored = table.estimates
        stored["gpus"] = [g for g in stored["gpus"] if g["gpu"] != "a100-sxm4-80gb"]
        # A stored answer never changes under its key (the worker caches answers by key), so
        # this other answer gets a key of its own.
        table.estimates_key = hashlib.sha256(f"{table.estimates_key}-a100".encode()).hexdigest()
        stored["key"] = table.estimates_key
        table.estimates = stored
        table.save(update_fields=["estimates", "estimates_key"])
        quote_update(quote=a100, hourly_price_per_gpu=Decimal("1.60"))
        recompute_all(market["briefs"])
        table.refresh_from_db()
        listed = {e.get("quote_id"): e["reason"] for e in table.inputs["not_costed"]}
        assert "no estimate for this quote's GPU" in listed[a100.pk]
        assert not CandidateRow.objects.filter(table=table, quote=a100).exists()


class TestWhatStillRecomputesInFull:
    def test_a_brief_edit_after_a_price_change_recomputes_that_table_in_full(self, market):
        brief = market["briefs"][0]
        quote_update(quote=market["quotes"]["h100"], hourly_price_per_gpu=Decimal("2.10"))
        brief_update(brief=brief, concurrency=48)
        table = CandidateTable.objects.get(brief=brief)
        assert table.full_version == table.requested_version > table.computed_version
        recompute_all(market["briefs"])
        assert_same_as_fresh(market["briefs"])

    def test_an_fx_rate_recomputes_in_full_and_costs_the_eur_quote(self, market):
        from datetime import date

        from apps.finance.services import fx_rate_create

        fx_rate_create(currency="EUR", rate=Decimal("1.10"), as_of=date(2026, 12, 1), source="t")
        recompute_all(market["briefs"])
        assert CandidateRow.objects.filter(quote=market["quotes"]["eur"]).count() == 3
        assert FxRate.objects.filter(currency="EUR").exists()
        assert_same_as_fresh(market["briefs"])

    def test_a_catalog_change_is_taken_in_by_the_next_price_change(self, market):
        Gpu.objects.filter(slug="l40s-48gb").update(
            memory_bandwidth_tbps=Decimal("0.5"), updated_at=timezone.now()
        )
        quote_update(quote=market["quotes"]["h100"], hourly_price_per_gpu=Decimal("2.20"))
        recompute_all(market["briefs"])
        assert_same_as_fresh(market["briefs"])

    def test_a_table_that_stored_too_little_is_recomputed_in_full(self, market):
        brief = market["briefs"][0]
        CandidateTable.objects.filter(brief=brief).update(inputs={})  # before this change
        quote_update(quote=market["quotes"]["h100"], hourly_price_per_gpu=Decimal("2.30"))
        table = candidate_table_recompute(brief_id=brief.pk)
        assert table.inputs["assumptions"]["finance"]
        assert_same_as_fresh([brief])


class TestTasksSent:
    def test_repricing_goes_many_tables_a_task_and_full_recomputes_few(self, market):
        ids = [b.pk for b in market["briefs"]]
        CandidateTable.objects.filter(brief_id=ids[0]).update(
            full_version=F("computed_version") + 1
        )
        batches = finance_services._batches(ids)
        assert batches == [ids[1:], ids[:1]]
        assert REPRICE_BATCH > FULL_RECOMPUTE_BATCH >= 1
