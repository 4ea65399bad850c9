"""Serving plans as candidates (issue 16): a GPU mix by request size (MIX), disaggregated
prefill / decode pools (DISAGG), and every GPU row's energy, through the real recompute, the
rankings API and the finance page."""

import json
import re
from decimal import Decimal

import pytest

from apps.briefs.models import WorkloadBrief, brief_size_buckets
from apps.catalog.models import Gpu
from apps.core.roles import Role
from apps.engine.energy import JOULES_PER_KWH
from apps.finance import plans
from apps.finance.candidates import table_context
from apps.finance.models import CandidateRow, CandidateTable, FinanceAssumptions
from apps.finance.offers import quote_facts_seen
from apps.finance.plans import (
    _frontier,
    _offers,
    _rate_rps,
    bucket_capacities,
    disagg_row,
    plan_catalog,
)
from apps.finance.selectors import ranking_for_brief
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from apps.quotes.selectors import quotes_for_team
from apps.quotes.services import quote_update
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, ProviderFactory, QuoteFactory
from tests.faults.driver import fresh_image, image_differences, table_image

pytestmark = pytest.mark.django_db

# Nine in ten requests are short chat turns, one in ten a 32K-token document: an L40S serves
# the short ones at a lower cost per request than an H100, but cannot prefill the long ones
# within the 1.5 s TTFT target; the H100 can.
SHORT_AND_LONG = [
    {"input_tokens": 512, "output_tokens": 128, "share": 0.9},
    {"input_tokens": 32000, "output_tokens": 256, "share": 0.1},
]


def gpu(slug):
    return Gpu.objects.get(slug=slug)


def recompute(brief):
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    return candidate_table_recompute(brief_id=brief.pk)


def rate_brief(team, rps, **fields):
    values = {
        "concurrency": None,
        "requests_per_second": Decimal(rps),
        "request_size_buckets": SHORT_AND_LONG,
        "ttft_target_ms": 1500,
        "input_tokens_p95": 32000,
        "output_tokens_p95": 512,
        **fields,
    }
    return BriefFactory(team=team, **values)


@pytest.fixture
def mixed(catalog, team):
    brief = rate_brief(team, 2000)
    quotes = {
        "h100": QuoteFactory(gpu=gpu("h100-sxm5-80gb"), hourly_price_per_gpu=Decimal("2.50")),
        "l40s": QuoteFactory(gpu=gpu("l40s-48gb"), hourly_price_per_gpu=Decimal("0.45")),
        # The same H100 dearer: never a better choice than the first.
        "h100_dear": QuoteFactory(gpu=gpu("h100-sxm5-80gb"), hourly_price_per_gpu=Decimal("2.90")),
    }
    return brief, quotes


def mix_row(table):
    return CandidateRow.objects.get(table=table, candidate_kind="MIX")


class TestAMixThatBeatsEverySingleQuote:
    def test_short_requests_go_to_the_l40s_and_long_ones_to_the_h100(self, mixed):
        brief, quotes = mixed
        row = mix_row(recompute(brief))

        parts = {p["quote_id"]: p for p in row.plan["parts"]}
        assert set(parts) == {quotes["h100"].pk, quotes["l40s"].pk}
        l40s, h100 = parts[quotes["l40s"].pk], parts[quotes["h100"].pk]
        # Every short request on the L40S; the long documents on the H100, but for what the
        # L40S replicas (8 GPUs each, within the TTFT target on them too) have to spare once
        # rounded up to whole replicas: at most a hundredth.
        assert l40s["bucket_shares"][0] == 1
        assert l40s["bucket_shares"][1] < 0.01 < 0.99 < h100["bucket_shares"][1]
        assert abs(l40s["request_share"] + h100["request_share"] - 1) < 1e-6
        assert row.meets_constraints and row.effective_unit_cost is not None

    def test_it_costs_less_than_the_best_single_quote_under_the_same_request_sizes(self, mixed):
        brief, _ = mixed
        row = mix_row(recompute(brief))

        single = Decimal(row.plan["best_single"]["monthly_cost"])
        assert row.monthly_cost < single
        assert Decimal(row.plan["saving_monthly"]) == (single - row.monthly_cost).quantize(
            Decimal("0.01")
        )
        assert any("saves" in n and "against the best single quote" in n for n in row.notes)
        # Its cost lines add up, and it serves the brief's whole demand: the accepted outputs
        # of a GPU row of the same brief.
        assert sum(Decimal(v) for v in row.cost_lines.values()) == row.monthly_cost
        gpu_row = CandidateRow.objects.filter(table=row.table, candidate_kind="GPU").first()
        assert row.accepted_outputs_per_month == gpu_row.accepted_outputs_per_month

    def test_every_part_carries_its_load_at_the_latency_target(self, mixed):
        """Per part: the requests a second it is sent, bucket by bucket, over what one replica
        completes at the target in that bucket (the engine's figure), fit in its replicas."""
        brief, _ = mixed
        table = recompute(brief)
        row = mix_row(table)
        ctx = table_context(brief, table)
        buckets, _ = brief_size_buckets(brief)
        pairs = {(p["gpu"], p["gpu_count"]) for p in row.plan["parts"]}
        rates, _ = bucket_capacities(ctx, buckets, pairs, tuple(plan_catalog().specs.values()))
        rate = _rate_rps(ctx)
        for part in row.plan["parts"]:
            capacity = rates[(part["gpu"], part["gpu_count"])]
            load = sum(
                x * b.share * rate / capacity[i]
                for i, (x, b) in enumerate(zip(part["bucket_shares"], buckets, strict=True))
                if x > 0
            )
            # the plan stores each share to 6 decimal places: the load read back from it may
            # pass the replicas by that rounding, a millionth
            assert load <= part["replicas"] * (1 + 1e-6)
            assert load > part["replicas"] - 1  # and no replica more than the load needs

    def test_the_rankings_give_the_mix_with_its_gpus_counts_and_buckets(self, mixed, token_client):
        brief, _ = mixed
        recompute(brief)
        body = token_client(Role.FINANCE).get(f"/api/v1/briefs/{brief.pk}/rankings").json()

        (row,) = [r for r in body["rows"] if r["candidate_kind"] == "MIX"]
        assert row["rank"] == 1  # cheaper than every single quote's own row here
        by_gpu = {p["gpu"]: p for p in row["mix"]}
        assert set(by_gpu) == {"h100-sxm5-80gb", "l40s-48gb"}
        l40s_buckets = {b["input_tokens"]: b for b in by_gpu["l40s-48gb"]["buckets"]}
        assert l40s_buckets[512]["output_tokens"] == 128
        assert l40s_buckets[512]["share_served"] > 0.99  # the short requests
        # at most a sliver of long documents (the whole replicas' spare capacity)
        assert set(l40s_buckets) <= {512, 32000}
        assert 32000 not in l40s_buckets or l40s_buckets[32000]["share_served"] < 0.01
        assert {b["input_tokens"] for b in by_gpu["h100-sxm5-80gb"]["buckets"]} >= {32000}
        assert row["pools"] is None and row["quote_id"] is None
        assert row["energy_kwh_per_month"] is not None

    def test_the_finance_page_shows_the_mix_in_words(self, mixed, client, make_user):
        brief, _ = mixed
        recompute(brief)
        client.force_login(make_user(Role.FINANCE))
        html = client.get(f"/briefs/{brief.pk}/finance/").content.decode()

        assert "GPU mix by request size" in html
        assert "NVIDIA L40S" in html and "H100" in html
        assert "Against the best single quote" in html
        assert "ON_DEMAND" not in html.split('id="candidate-table"')[1].split("</table>")[0]


def test_the_capacity_model_speaks_of_the_mix_when_it_wins(mixed):
    """Rank 1 is the mix of several quotes: the rent / reserve / buy comparison (made for one
    GPU configuration) names it as the winner and says why there is no comparison, instead of
    recommending a GPU that is not the winner."""
    brief, _ = mixed
    table = recompute(brief)
    ranked = ranking_for_brief(brief)["rows"]
    assert ranked[0]["candidate_kind"] == "MIX" and ranked[0]["rank"] == 1
    assert table.capacity_model["winner"] == "mix"
    assert "serving plan" in table.capacity_model["note"]
    assert "recommended" not in table.capacity_model


def test_the_capacity_model_names_the_configuration_its_rows_are_costed_at(mixed):
    """Without the plans, rank 1 is a GPU row: at 2,000 requests a second with retries its
    replicas are raised over the engine's, and the rent / reserve / buy / API answer names the
    same configuration as that row."""
    brief, _ = mixed
    from apps.finance.models import CandidateTable

    table = recompute(brief)
    CandidateRow.objects.filter(table=table, candidate_kind__in=["MIX", "DISAGG"]).delete()
    best = (
        CandidateRow.objects.filter(table=table, meets_constraints=True)
        .order_by("effective_unit_cost")
        .first()
    )
    assert best.candidate_kind == "GPU"
    from apps.finance.candidates import table_context
    from apps.finance.capacity import capacity_model_for

    ctx = table_context(brief, CandidateTable.objects.get(pk=table.pk))
    model = capacity_model_for(ctx, table)
    assert model["winner"] == f"quote:{best.quote_id}"
    assert model["configuration"] == {
        "gpu_count": best.gpu_count,
        "replicas": best.replicas,
        "paid_gpus": best.paid_gpus,
    }
    assert best.replicas > 1


class TestWhenOneQuoteIsCheapest:
    def test_no_mix_row_and_the_reason_names_the_single_quote(self, catalog, team, token_client):
        brief = rate_brief(team, 200)
        h100 = QuoteFactory(gpu=gpu("h100-sxm5-80gb"), hourly_price_per_gpu=Decimal("2.50"))
        QuoteFactory(gpu=gpu("l40s-48gb"), hourly_price_per_gpu=Decimal("1.20"))
        table = recompute(brief)

        assert not CandidateRow.objects.filter(table=table, candidate_kind="MIX").exists()
        body = token_client(Role.FINANCE).get(f"/api/v1/briefs/{brief.pk}/rankings").json()
        (mix,) = [p for p in body["serving_plans_not_listed"] if p["candidate_kind"] == "MIX"]
        assert f"quote #{h100.pk}" in mix["reason"] and "one quote alone" in mix["reason"]

    def test_the_finance_page_names_that_quote_in_words_and_money_currency_first(
        self, catalog, team, client, make_user
    ):
        brief = rate_brief(team, 200)
        QuoteFactory(
            provider=ProviderFactory(name="Neocloud B"), gpu=gpu("h100-sxm5-80gb"),
            hourly_price_per_gpu=Decimal("2.50"), region="us-east",
        )  # fmt: skip
        QuoteFactory(gpu=gpu("l40s-48gb"), hourly_price_per_gpu=Decimal("1.20"))
        recompute(brief)
        client.force_login(make_user(Role.FINANCE))
        page = client.get(f"/briefs/{brief.pk}/finance/").content.decode()
        plans = page.split('id="serving-plans"')[1].split("</details>")[0]
        assert "quote #" not in plans
        assert "Neocloud B · NVIDIA H100 SXM5 · On demand · us-east" in plans
        assert not re.search(r"\d USD", plans)  # money reads USD 1,234.56, as the table

    def test_an_offline_brief_gets_no_plans(self, catalog, team):
        brief = BriefFactory(
            team=team,
            workload_type="BATCH_INFERENCE",
            concurrency=None,
            records_per_job=100_000,
            latency_percentile="OFFLINE",
            ttft_target_ms=None,
            itl_target_ms=None,
        )
        QuoteFactory(gpu=gpu("h100-sxm5-80gb"))
        table = recompute(brief)

        assert table.no_ranking_reason == ""
        assert not CandidateRow.objects.filter(table=table, candidate_kind__in=["MIX", "DISAGG"])
        assert table.inputs["plans"]["not_eligible"] == "real-time serving briefs only"


class TestPlansAcrossPriceChanges:
    def test_a_quote_the_plan_could_not_choose_keeps_the_plan_row(self, mixed):
        brief, quotes = mixed
        before = mix_row(recompute(brief))

        quote_update(quote=quotes["h100_dear"], hourly_price_per_gpu=Decimal("3.10"))
        candidate_table_recompute(brief_id=brief.pk)

        after = mix_row(CandidateTable.objects.get(brief=brief))
        assert after.pk == before.pk  # kept, not rebuilt
        assert after.monthly_cost == before.monthly_cost

    def test_a_price_change_of_a_quote_in_the_mix_rebuilds_it(self, mixed):
        brief, quotes = mixed
        before = mix_row(recompute(brief))

        quote_update(quote=quotes["l40s"], hourly_price_per_gpu=Decimal("0.40"))
        candidate_table_recompute(brief_id=brief.pk)

        after = mix_row(CandidateTable.objects.get(brief=brief))
        assert after.pk != before.pk
        assert after.monthly_cost < before.monthly_cost

    def test_a_dearer_quote_becoming_the_cheapest_enters_the_plan(self, mixed):
        brief, quotes = mixed
        recompute(brief)

        quote_update(quote=quotes["h100_dear"], hourly_price_per_gpu=Decimal("2.00"))
        candidate_table_recompute(brief_id=brief.pk)

        row = mix_row(CandidateTable.objects.get(brief=brief))
        assert quotes["h100_dear"].pk in {p["quote_id"] for p in row.plan["parts"]}


class TestOnlyThePairsAMixCouldUseAreEstimated:
    """The bucket capacities of a GPU whose every quote costs more for one replica than the
    best single-quote plan are not estimated (apps.finance.plans._mix_capacities): the table is
    the one estimating every GPU gives, and a price change that brings such a GPU within reach
    estimates it then."""

    @pytest.fixture
    def with_a_dear_gpu(self, mixed):
        brief, quotes = mixed
        b200 = gpu("b200-sxm-180gb")
        quotes["b200"] = QuoteFactory(gpu=b200, hourly_price_per_gpu=Decimal("900"))
        return brief, quotes

    def test_the_table_is_the_one_estimating_every_gpu_gives(self, with_a_dear_gpu, monkeypatch):
        brief, _ = with_a_dear_gpu
        table = recompute(brief)
        kept = set(table.inputs["plans"]["capacities"]["rates"])
        assert not any(k.startswith("b200-sxm-180gb|") for k in kept)
        assert any(k.startswith("l40s-48gb|") for k in kept)
        skipping = table_image(brief.pk)

        monkeypatch.setattr(plans, "CAPACITY_BATCH", 10_000)  # every pair in the first batch
        every = fresh_image(brief.pk)
        assert image_differences(skipping, every) == []

    def test_a_price_cut_brings_the_gpu_in_and_matches_a_fresh_compute(self, with_a_dear_gpu):
        brief, quotes = with_a_dear_gpu
        recompute(brief)

        quote_update(quote=quotes["b200"], hourly_price_per_gpu=Decimal("0.05"))
        candidate_table_recompute(brief_id=brief.pk)

        table = CandidateTable.objects.get(brief=brief)
        assert any(
            k.startswith("b200-sxm-180gb|") for k in table.inputs["plans"]["capacities"]["rates"]
        )
        assert image_differences(table_image(brief.pk), fresh_image(brief.pk)) == []


class TestDisaggregatedPools:
    def test_the_pools_meet_both_targets_and_carry_the_rate(self, mixed):
        brief, _ = mixed
        table = recompute(brief)
        ctx = table_context(brief, table)
        seen = list(quotes_for_team(brief.team_id).values_list("pk", "version", "updated_at"))
        catalog = plan_catalog()
        offers = _frontier(_offers(ctx, quote_facts_seen(seen), catalog))

        row, reason = disagg_row(ctx, offers, catalog)

        assert reason is None and row is not None
        plan = row.plan_json()
        assert plan["ttft_ms"] <= brief.ttft_target_ms
        assert plan["itl_ms"] <= brief.itl_target_ms
        rate = _rate_rps(ctx)
        for pool in plan["pools"]:
            assert pool["instances"] * pool["requests_per_s_per_instance"] >= rate - 1e-6
            one_fewer = (pool["instances"] - 1) * pool["requests_per_s_per_instance"]
            assert one_fewer < rate
        assert {p["role"] for p in plan["pools"]} == {"prefill", "decode"}
        assert row.configuration.paid_gpus == sum(
            p["instances"] * p["gpus_per_instance"] for p in plan["pools"]
        )
        assert sum(row.cost_lines.values()) == row.monthly_cost


class TestEnergyInTheRankings:
    def test_gpu_rows_carry_energy_and_co2e_and_api_rows_none(self, catalog, team, token_client):
        FinanceAssumptions.objects.create(is_default=True, carbon_kg_per_kwh=Decimal("0.400"))
        brief = BriefFactory(team=team, model_preset="llama-3.1-8b")
        QuoteFactory(gpu=gpu("h100-sxm5-80gb"))
        ApiRouteFactory(model_preset="llama-3.1-8b")
        recompute(brief)

        rows = token_client(Role.FINANCE).get(f"/api/v1/briefs/{brief.pk}/rankings").json()["rows"]
        gpu_rows = [r for r in rows if r["candidate_kind"] == "GPU"]
        (api,) = [r for r in rows if r["candidate_kind"] == "API_ROUTE"]
        assert api["energy_kwh_per_month"] is None and api["energy_j_per_output"] is None
        for r in gpu_rows:
            kwh = Decimal(r["energy_kwh_per_month"])
            assert kwh > 0
            assert Decimal(r["co2e_kg_per_month"]) == pytest.approx(
                kwh * Decimal("0.4"), abs=Decimal("0.001")
            )
            per_output = kwh * JOULES_PER_KWH / Decimal(r["accepted_outputs_per_month"])
            assert Decimal(r["energy_j_per_output"]) == pytest.approx(
                per_output, rel=Decimal("0.0001")
            )

    def test_the_table_shows_energy_a_month_and_joules_per_token(
        self, catalog, team, client, make_user
    ):
        brief = BriefFactory(team=team)
        QuoteFactory(gpu=gpu("h100-sxm5-80gb"))
        recompute(brief)
        client.force_login(make_user(Role.FINANCE))
        html = client.get(f"/briefs/{brief.pk}/finance/").content.decode()

        table = html.split('id="candidate-table"')[1].split("</table>")[0]
        assert 'Energy<span class="sub">a month; per token' in table
        # kWh or MWh, whichever keeps the figure readable (apps.core.formatting.energy)
        assert re.search(r"\d\u00a0[kM]Wh<", table) and "\u00a0J per token" in table


class TestRequestSizeBucketsOnTheBrief:
    def post(self, api, body):
        return api.post("/api/v1/briefs/", json.dumps(body), content_type="application/json")

    def body(self, **changes):
        from .test_brief_api import BRIEF_BODY

        return {**BRIEF_BODY, **changes}

    def test_buckets_are_stored_and_read_back(self, catalog, token_client):
        api = token_client(Role.PLATFORM)
        response = self.post(api, self.body(request_size_buckets=SHORT_AND_LONG))

        assert response.status_code == 201, response.json()
        assert response.json()["request_size_buckets"] == SHORT_AND_LONG
        brief = WorkloadBrief.objects.get(pk=response.json()["id"])
        assert brief_size_buckets(brief)[1] == "the brief's request-size buckets"

    @pytest.mark.parametrize(
        ("buckets", "words"),
        [
            ([{"input_tokens": 512, "output_tokens": 128, "share": 0.5}], "sum to 1"),
            ([{"input_tokens": 512, "output_tokens": 128}], "share"),
            ([{"input_tokens": 0, "output_tokens": 128, "share": 1}], "input_tokens"),
        ],
    )
    def test_bad_buckets_get_a_field_error_and_save_nothing(
        self, catalog, token_client, buckets, words
    ):
        api = token_client(Role.PLATFORM)
        response = self.post(api, self.body(request_size_buckets=buckets))

        assert response.status_code == 400
        assert words in json.dumps(response.json()["errors"]["request_size_buckets"])
        assert not WorkloadBrief.objects.exists()

    def test_only_real_time_briefs_take_buckets(self, catalog, token_client):
        api = token_client(Role.PLATFORM)
        body = self.body(
            workload_type="BATCH_INFERENCE",
            request_size_buckets=[{"input_tokens": 512, "output_tokens": 128, "share": 1}],
        )
        body.pop("latency_target", None)
        response = self.post(api, body)

        assert response.status_code == 400
        assert "real-time" in json.dumps(response.json()["errors"]["request_size_buckets"])


class TestRequestSizesFromABenchmarkLog:
    def test_the_latest_run_with_a_request_log_sets_the_mix_s_buckets(
        self, catalog, team, make_user
    ):
        from apps.benchmarks.model_identity import brief_model_identity
        from apps.benchmarks.models import BenchmarkRun

        brief = rate_brief(team, 200, request_size_buckets=[])
        QuoteFactory(gpu=gpu("h100-sxm5-80gb"), hourly_price_per_gpu=Decimal("2.50"))
        run = BenchmarkRun.objects.create(
            brief=brief,
            team=team,
            gpu=gpu("h100-sxm5-80gb"),
            gpu_count=1,
            phase=BenchmarkRun.Phase.THROUGHPUT_LATENCY,
            tool=BenchmarkRun.Tool.VLLM,
            model=brief_model_identity(brief),
            created_by=make_user(Role.PLATFORM),
            results={
                "ttft_ms": {"p95": 300.0},
                "tpot_ms": {"p95": 30.0},
                "output_tokens_per_s": 5000.0,
                "completed": 1000,
                "request_size_buckets": SHORT_AND_LONG,
                "request_log_requests": 1000,
            },
        )
        table = recompute(brief)

        plans = table.inputs["plans"]
        assert plans["bucket_source"] == (
            f"the request log of benchmark run #{run.pk} (1000 requests)"
        )
        assert [(b["input_tokens"], b["share"]) for b in plans["buckets"]] == [
            (512, 0.9),
            (32000, 0.1),
        ]


class TestAPlanInADecisionRecord:
    def test_the_record_s_pdf_lists_the_mix_in_words_with_its_gpus_in_all(self, mixed, make_user):
        from io import BytesIO

        from pypdf import PdfReader

        from apps.decisions.exports import decision_record_pdf
        from apps.decisions.selectors import decision_record_report
        from tests.factories.decisions import make_record

        brief, quotes = mixed
        mix = mix_row(recompute(brief))
        record = make_record(brief=brief, user=make_user(Role.PROCUREMENT), quote=quotes["h100"])

        report = decision_record_report(record)
        text = " ".join(
            page.extract_text() for page in PdfReader(BytesIO(decision_record_pdf(report))).pages
        )
        assert "GPU mix by request size:" in text
        assert f" {mix.paid_gpus} " in text  # its GPUs in all, not GPUs x replicas
        assert f"{mix.paid_gpus * mix.replicas:,}" not in text
        assert re.search(r"\d [kMG]?Wh a month", text)  # the chosen row's energy, readable unit
