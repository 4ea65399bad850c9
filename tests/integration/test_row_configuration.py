"""Every candidate row at a configuration that meets the brief (issue 14, item 1): a GPU quote is
costed at the smallest configuration (GPUs per replica, replicas) within what it offers that
fits and meets the latency target; a quote that cannot is listed unranked, without a unit cost,
with why, after every ranked row whatever the sort, and never costed at zero GPU-hours."""

import csv
import io
from decimal import Decimal

import pytest

from apps.catalog.models import Gpu
from apps.core.roles import Role
from apps.finance.exports import ranking_csv
from apps.finance.selectors import ranking_for_brief
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from apps.finance.views import SORTS
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, QuoteFactory

pytestmark = pytest.mark.django_db

H100, L40S = "h100-sxm5-80gb", "l40s-48gb"


def _gpu(slug):
    return Gpu.objects.get(slug=slug)


def recompute(brief):
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    return candidate_table_recompute(brief_id=brief.pk)


@pytest.fixture
def demanding(catalog, team):
    """Llama-3.1-70B at TTFT 300 ms / ITL 40 ms with 64 in flight: an H100 node meets it, an L40S
    node misses the target at every size, one H100 alone cannot hold the model. The L40S and
    the lone H100 are the cheapest per GPU-hour: costed at zero GPU-hours they would top the
    table."""
    brief = BriefFactory(
        team=team,
        model_preset="llama-3.1-70b",
        ttft_target_ms=300,
        itl_target_ms=40,
        concurrency=64,
    )
    node = QuoteFactory(gpu=_gpu(H100), hourly_price_per_gpu=Decimal("2.50"))
    l40s = QuoteFactory(gpu=_gpu(L40S), hourly_price_per_gpu=Decimal("0.10"))
    lone = QuoteFactory(gpu=_gpu(H100), gpus_per_node=1, hourly_price_per_gpu=Decimal("0.20"))
    ApiRouteFactory(model_preset="llama-3.1-70b")
    recompute(brief)
    return {"brief": brief, "node": node, "l40s": l40s, "lone": lone}


def _by_quote(brief):
    return {r["quote_id"]: r for r in ranking_for_brief(brief)["rows"] if r["quote_id"]}


class TestRowsThatMissTheBrief:
    def test_are_unranked_without_unit_cost_and_never_costed_at_zero_gpu_hours(self, demanding):
        rows = ranking_for_brief(demanding["brief"])["rows"]
        failing = [r for r in rows if not r["meets_constraints"]]
        assert {r["quote_id"] for r in failing} >= {demanding["l40s"].pk, demanding["lone"].pk}
        for row in failing:
            assert row["rank"] is None
            assert row["effective_unit_cost"] is None
            assert row["why_not"]
            if row["candidate_kind"] == "GPU":
                assert Decimal(row["cost_lines"]["gpu_compute"]) > 0
                assert not any("billed for the 0.00 GPU-h" in n for n in row["notes"])

    def test_a_quote_missing_the_target_at_every_size_says_so_in_words(self, demanding):
        row = _by_quote(demanding["brief"])[demanding["l40s"].pk]
        assert row["gpu_count"] == 8
        assert any(
            "misses the latency target (TTFT <= 300 ms, ITL <= 40 ms) at every size up to "
            "8 GPUs: best TTFT" in why
            for why in row["why_not"]
        ), row["why_not"]

    def test_a_quote_whose_node_is_too_small_for_the_model_is_not_ranked(self, demanding):
        row = _by_quote(demanding["brief"])[demanding["lone"].pk]
        assert row["rank"] is None and row["effective_unit_cost"] is None
        assert row["gpu_count"] == 1
        # One H100 holds the FP8 weights and a few sequences, but no replica of one GPU meets
        # the target: the row says which target binds, at the share of the load it carries.
        assert any(w.startswith("misses the latency target") for w in row["why_not"])
        assert any("misses the ITL target" in w for w in row["why_not"])

    def test_come_after_every_ranked_row_in_the_api_and_the_csv(self, demanding, token_client):
        api = token_client(Role.FINANCE)
        brief = demanding["brief"]
        response = api.get(f"/api/v1/briefs/{brief.pk}/rankings")
        assert response.status_code == 200
        ranks = [r["rank"] for r in response.json()["rows"]]
        assert ranks[0] is not None and None in ranks
        first_unranked = ranks.index(None)
        assert all(rank is None for rank in ranks[first_unranked:])
        csv_text = ranking_csv(ranking_for_brief(brief))
        csv_ranks = [r["rank"] for r in csv.DictReader(io.StringIO(csv_text))]
        assert csv_ranks == ["" if r is None else str(r) for r in ranks]

    @pytest.mark.parametrize("sort", sorted(SORTS))
    def test_come_after_every_ranked_row_on_the_page_whatever_the_sort(
        self, demanding, client, make_user, sort
    ):
        client.force_login(make_user(Role.FINANCE))
        response = client.get(f"/briefs/{demanding['brief'].pk}/finance/", {"sort": sort})
        ranked = [r["rank"] is not None for r in response.context["rows"]]
        assert True in ranked and False in ranked
        assert ranked == sorted(ranked, reverse=True), sort


class TestConfiguration:
    def test_a_quote_meeting_the_target_at_two_replicas_is_costed_for_both(self, catalog):
        """Llama-3.1-8B with 128 in flight at ITL 30 ms: one H100 replica carries fewer, so a
        one-GPU quote needs two replicas, and pays both replicas' GPU-hours."""
        brief = BriefFactory(ttft_target_ms=2000, itl_target_ms=30, concurrency=128)
        quote = QuoteFactory(gpu=_gpu(H100), gpus_per_node=1)
        recompute(brief)
        row = _by_quote(brief)[quote.pk]
        assert row["rank"] == 1
        assert (row["gpu_count"], row["replicas"]) == (1, 2)
        brief.refresh_from_db()
        hours = 2 * 1 * brief.hours_per_month
        assert any(
            f"2 GPUs kept up through the {brief.hours_per_month} active h, {hours} GPU-h billed"
            in note
            for note in row["notes"]
        )
        assert Decimal(row["cost_lines"]["gpu_compute"]) > 0

    def test_the_brief_page_and_the_finance_page_show_the_same_configuration(
        self, demanding, client, make_user
    ):
        client.force_login(make_user(Role.FINANCE, Role.PLATFORM))
        brief = demanding["brief"]
        fit = client.get(f"/briefs/{brief.pk}/").context["estimates"]
        h100 = next(e for e in fit if e["gpu"] == H100)
        page_rows = client.get(f"/briefs/{brief.pk}/finance/").context["rows"]
        row = next(r for r in page_rows if r["quote_id"] == demanding["node"].pk)
        assert row["rank"] is not None
        replicas = (h100.get("capacity") or {}).get("replicas") or 1
        assert (row["gpu_count"], row["replicas"], row["basis"]) == (
            h100["gpu_count"],
            replicas,
            h100["basis"],
        )

    def test_a_measured_candidate_has_the_same_basis_on_both_pages(
        self, catalog, team, client, make_user
    ):
        from tests.integration.test_measured_and_calibrated import h100_estimate, slower_run

        brief = BriefFactory(team=team)
        quote = QuoteFactory(gpu=_gpu(H100))
        slower_run(brief, h100_estimate(brief), factor=1)
        recompute(brief)
        client.force_login(make_user(Role.FINANCE, Role.PLATFORM))
        fit = client.get(f"/briefs/{brief.pk}/").context["estimates"]
        h100 = next(e for e in fit if e["gpu"] == H100)
        page_rows = client.get(f"/briefs/{brief.pk}/finance/").context["rows"]
        row = next(r for r in page_rows if r["quote_id"] == quote.pk)
        assert row["basis"] == h100["basis"] == "MEASURED"
        assert (row["gpu_count"], row["replicas"]) == (
            h100["gpu_count"],
            (h100.get("capacity") or {}).get("replicas") or 1,
        )
