"""A brief's candidate table: every quote and API route costed, ranked, and kept current."""

from decimal import Decimal

import pytest
from django.utils import timezone

from apps.catalog.models import Gpu
from apps.finance.models import CandidateRow, CandidateTable, FxRate
from apps.finance.selectors import ranking_for_brief
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from apps.finance.version_sets import table_versions
from apps.quotes.models import Quote
from apps.quotes.services import quote_update
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, QuoteFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def priced(catalog):
    """A real-time brief with three GPU quotes and one API route for its model."""
    brief = BriefFactory()
    QuoteFactory(gpu_id=_gpu("h100-sxm5-80gb"), hourly_price_per_gpu=Decimal("2.50"))
    QuoteFactory(gpu_id=_gpu("l40s-48gb"), hourly_price_per_gpu=Decimal("0.90"))
    QuoteFactory(
        gpu_id=_gpu("h100-sxm5-80gb"),
        pricing_term="RESERVED_1Y",
        hourly_price_per_gpu=Decimal("1.90"),
        minimum_commitment_months=12,
    )
    ApiRouteFactory(model_preset="llama-3.1-8b")
    return brief


def _gpu(slug):
    from apps.catalog.models import Gpu

    return Gpu.objects.get(slug=slug).pk


def recompute(brief):
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    return candidate_table_recompute(brief_id=brief.pk)


class TestCandidateTable:
    def test_every_quote_and_matching_route_becomes_a_row(self, priced):
        table = recompute(priced)
        rows = list(table.rows.order_by("id"))
        kinds = sorted(r.candidate_kind for r in rows)
        assert kinds == ["API_ROUTE", "GPU", "GPU", "GPU"]
        assert not table.stale
        assert table.computed_at is not None

    def test_unit_cost_is_the_sum_of_the_lines_over_accepted_outputs(self, priced):
        table = recompute(priced)
        for row in table.rows.all():
            total = sum(Decimal(v) for v in row.cost_lines.values())
            assert total == row.monthly_cost
            if row.accepted_outputs_per_month:
                expected = row.monthly_cost / row.accepted_outputs_per_month
                assert row.effective_unit_cost == pytest.approx(expected, rel=Decimal("1e-9"))

    def test_rows_that_meet_the_constraints_are_ranked_by_unit_cost(self, priced):
        recompute(priced)
        rows = ranking_for_brief(priced)["rows"]
        ranked = [r for r in rows if r["rank"] is not None]
        assert ranked, "at least one candidate should meet the brief"
        assert [r["rank"] for r in ranked] == list(range(1, len(ranked) + 1))
        costs = [Decimal(r["effective_unit_cost"]) for r in ranked]
        assert costs == sorted(costs)
        for row in rows[len(ranked) :]:
            assert row["rank"] is None
            assert row["meets_constraints"] is False
            assert row["why_not"]

    def test_a_price_change_moves_the_table_and_reuses_the_engine_answer(self, priced):
        table = recompute(priced)
        key, before = table.estimates_key, table.estimates
        quote = Quote.objects.get(gpu__slug="l40s-48gb")
        old = CandidateRow.objects.get(table=table, quote=quote).monthly_cost
        quote_update(quote=quote, hourly_price_per_gpu=Decimal("1.80"))
        table = candidate_table_recompute(brief_id=priced.pk)
        new = CandidateRow.objects.get(table=table, quote=quote).monthly_cost
        assert new > old
        assert table.estimates_key == key and table.estimates == before

    def test_an_incomplete_brief_has_no_ranking_and_says_why(self, catalog):
        brief = BriefFactory(concurrency=None)
        QuoteFactory()
        table = recompute(brief)
        assert table.rows.count() == 0
        assert "concurrency" in table.no_ranking_reason

    def test_running_twice_changes_nothing(self, priced):
        table = recompute(priced)
        ids = set(table.rows.values_list("id", flat=True))
        again = candidate_table_recompute(brief_id=priced.pk)
        assert set(again.rows.values_list("id", flat=True)) == ids

    def test_an_older_recompute_never_overwrites_a_newer_one(self, priced):
        table = recompute(priced)
        newer = 10**6
        CandidateTable.objects.filter(pk=table.pk).update(
            computed_version=newer, requested_version=newer
        )
        result = candidate_table_recompute(brief_id=priced.pk)
        assert result.computed_version == newer

    def test_a_quote_in_a_currency_without_fx_rate_is_skipped_with_a_note(self, priced):
        QuoteFactory(currency="EUR")
        table = recompute(priced)
        assert table.rows.filter(quote__currency="EUR").count() == 0
        assert any("EUR" in e["reason"] for e in table.inputs["not_costed"])
        FxRate.objects.create(currency="EUR", rate="1.10", as_of="2026-12-01", source="test")
        table = recompute(priced)
        assert table.rows.filter(quote__currency="EUR").count() == 1

    def test_a_confidential_quote_of_another_team_is_not_a_candidate(self, priced, other_team):
        QuoteFactory(confidential_to=other_team)
        table = recompute(priced)
        assert table.rows.filter(quote__confidential_to=other_team).count() == 0

    def test_the_capacity_model_recommends_an_option(self, priced):
        table = recompute(priced)
        model = table.capacity_model
        assert model["gpu"]
        assert model["recommended"] in {o["option"] for o in model["options"]}
        assert len(model["curve"]) == 20


def reset_connections(app):
    """Forget pooled broker connections, as Celery does after a fork."""
    app._pool = None
    app.amqp._producer_pool = None


class TestBrokerDown:
    @pytest.mark.django_db(transaction=True)
    def test_a_change_commits_even_when_the_broker_is_down(self, catalog, settings):
        from gpuselect.celery import app

        brief = BriefFactory()
        quote = QuoteFactory()
        app.conf.task_always_eager = False
        original = app.conf.broker_write_url
        reset_connections(app)  # no pooled connection to a real broker may be reused
        # broker_write_url, not broker_url: Celery prefers a CELERY_BROKER_URL environment
        # variable (set in CI) over broker_url from the configuration.
        app.conf.broker_write_url = "redis://127.0.0.1:9/0"  # nothing listens there
        app.conf.broker_connection_retry = False
        app.conf.broker_connection_max_retries = 0
        try:
            quote_update(quote=quote, hourly_price_per_gpu=Decimal("7.00"))
        finally:
            app.conf.task_always_eager = True
            app.conf.broker_write_url = original
            reset_connections(app)
        quote.refresh_from_db()
        assert quote.hourly_price_per_gpu == Decimal("7.00")
        table = CandidateTable.objects.get(brief=brief)
        assert table.stale  # left for the sweeper...
        assert table.queued_at is None  # ...which sends it at its next run, not minutes later
        from apps.finance.services import candidate_tables_sweep

        assert brief.pk in candidate_tables_sweep()


class TestIncrementalRecompute:
    def test_a_price_change_recosts_only_that_quotes_rows(self, priced):
        table = recompute(priced)
        untouched = {
            r.quote_id: (r.pk, r.monthly_cost)
            for r in table.rows.filter(candidate_kind="GPU")
            if r.quote.gpu.slug != "l40s-48gb"
        }
        quote = Quote.objects.get(gpu__slug="l40s-48gb")
        quote_update(quote=quote, hourly_price_per_gpu=Decimal("1.95"))
        table = candidate_table_recompute(brief_id=priced.pk)
        for quote_id, (pk, cost) in untouched.items():
            row = table.rows.get(quote_id=quote_id)
            assert (row.pk, row.monthly_cost) == (pk, cost)  # the very same row, not rewritten
        assert table.rows.filter(quote=quote).count() == 1
        quote.refresh_from_db()
        assert table_versions(table)[0][str(quote.pk)] == quote.version

    def test_incremental_and_full_recomputes_give_the_same_table(self, priced):
        recompute(priced)
        quote = Quote.objects.get(gpu__slug="l40s-48gb")
        quote_update(quote=quote, hourly_price_per_gpu=Decimal("1.95"))
        QuoteFactory(hourly_price_per_gpu=Decimal("3.10"))
        retired = Quote.objects.filter(pricing_term="RESERVED_1Y").first()
        from apps.quotes.services import quote_retire

        quote_retire(quote=retired)
        incremental = ranking_for_brief_after(priced)
        CandidateTable.objects.filter(brief=priced).update(inputs={}, estimates_key="")
        candidate_tables_request_recompute(brief_ids=[priced.pk])
        full = ranking_for_brief_after(priced)
        assert strip(incremental) == strip(full)
        assert not any(r["quote_id"] == retired.pk for r in full)


def ranking_for_brief_after(brief):
    candidate_table_recompute(brief_id=brief.pk)
    return ranking_for_brief(brief)["rows"]


def strip(rows):
    keys = ("rank", "quote_id", "api_route_id", "cost_lines", "monthly_cost", "effective_unit_cost")
    return sorted((tuple(str(r[k]) for k in keys) for r in rows), key=lambda t: (t[1], t[2]))


class TestCapacityModelKeptCurrent:
    def test_a_cheaper_quote_for_another_gpu_moves_the_comparison_to_that_gpu(self, priced):
        table = recompute(priced)
        assert table.capacity_model["gpu"] in {"h100-sxm5-80gb", "l40s-48gb"}
        cheap = QuoteFactory(
            gpu=Gpu.objects.get(slug="h200-sxm-141gb"), hourly_price_per_gpu=Decimal("0.01")
        )
        table = recompute(priced)
        assert table_versions(table)[0][str(cheap.pk)] == 1
        assert table.capacity_model["gpu"] == "h200-sxm-141gb"

    def test_a_change_to_an_unrelated_gpu_quote_keeps_it(self, priced):
        table = recompute(priced)
        before = table.capacity_model
        dear = QuoteFactory(
            gpu=Gpu.objects.get(slug="a100-sxm4-80gb"), hourly_price_per_gpu=Decimal("99")
        )
        table = recompute(priced)
        assert table_versions(table)[0][str(dear.pk)] == 1  # the table did take the new quote in
        assert table.capacity_model == before


class TestRanksWhenRead:
    """Ranks are computed from a cached ranking order; only the rows sent are read whole."""

    @pytest.fixture
    def tied(self, catalog):
        brief = BriefFactory()
        QuoteFactory(hourly_price_per_gpu=Decimal("2.00"))  # the cheapest H100 quote
        QuoteFactory(hourly_price_per_gpu=Decimal("2.40"))  # these two tie
        QuoteFactory(hourly_price_per_gpu=Decimal("2.40"))
        QuoteFactory(hourly_price_per_gpu=Decimal("2.90"))
        QuoteFactory(hourly_price_per_gpu=Decimal("2.40"), pricing_term="RESERVED_1Y")
        recompute(brief)
        return brief

    def test_equal_unit_costs_share_a_rank_and_the_next_rank_skips(self, tied):
        rows = ranking_for_brief(tied, pricing_term="ON_DEMAND")["rows"]
        assert [r["rank"] for r in rows] == [1, 2, 2, 5]  # the reserved 2.40 ties too: rank 2

    def test_filters_and_limit_keep_each_rows_rank_in_the_whole_table(self, tied):
        whole = ranking_for_brief(tied)
        assert [r["rank"] for r in whole["rows"]] == [1, 2, 2, 2, 5]
        reserved = ranking_for_brief(tied, pricing_term="RESERVED_1Y", limit=1)
        assert reserved["total_rows"] == 1
        assert [r["rank"] for r in reserved["rows"]] == [2]
        top = ranking_for_brief(tied, limit=2)
        assert top["total_rows"] == 5
        assert top["rows"] == whole["rows"][:2]

    def test_a_cached_order_naming_rows_a_recompute_replaced_is_read_again(self, tied):
        from django.core.cache import cache

        from apps.finance.selectors import _cache_key, _ranking_order, candidate_table_for_brief

        expected = ranking_for_brief(tied)
        table = candidate_table_for_brief(tied)
        key = _cache_key("ranking-order", table, timezone.localdate(), team=str(tied.team_id))
        order, hidden = _ranking_order(table, tied.team_id)
        order[0] = {**order[0], "pk": 10**9}  # a row that is gone
        cache.set(key, (order, hidden))
        assert ranking_for_brief(tied) == expected


class TestNoBf16OnTuring:
    def test_a_bf16_brief_on_a_t4_quote_fails_saying_the_gpu_has_no_bf16(self, catalog):
        brief = BriefFactory(weight_precision="BF16")
        QuoteFactory(gpu_id=_gpu("t4-16gb"), hourly_price_per_gpu=Decimal("0.35"), gpus_per_node=4)
        recompute(brief)
        (row,) = [r for r in ranking_for_brief(brief)["rows"] if r["candidate_kind"] == "GPU"]
        assert row["rank"] is None
        assert any("NVIDIA T4 (Turing) has no BF16" in why for why in row["why_not"])
