"""One configuration per candidate (issue 23): for every row of every table, over the demo briefs
and a hypothesis-generated set of briefs of all ten workload types,

(a) the figures it shows are the engine's answer at the row's configuration, each replica at
    its share of the load (worked out here independently of apps.finance.configuration);
(b) it meets the brief exactly when every target is met by the figures it shows (and a missed
    target is named in why_not);
(c) its paid GPU-hours are its paid GPUs x the hours its term bills;
(d) the rent / reserve / buy answer, the sensitivity and the decision PDF all name rank 1;
(e) one unit runs through the whole response (rows, capacity model, sensitivity).
"""

from __future__ import annotations

import math
from dataclasses import replace
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.briefs.contract import request_for_brief
from apps.catalog.models import Gpu
from apps.catalog.selectors import engine_estimates
from apps.core.roles import Role
from apps.decisions.report import build_document
from apps.decisions.selectors import decision_record_report
from apps.demo.data import DEMO_BRIEFS
from apps.engine.costing import CostKind, WorkloadType
from apps.engine.costing_types import COMMITTED_TERMS, cost_kind
from apps.engine.deployment import shown
from apps.finance.assumptions import resolved_assumptions
from apps.finance.configuration import DEFAULT_DEADLINE_DAYS
from apps.finance.selectors import ranking_for_brief
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from apps.quotes.models import ApiRoute, Quote
from tests.factories.briefs import BriefFactory
from tests.factories.decisions import make_record
from tests.factories.quotes import ApiRouteFactory, QuoteFactory

pytestmark = pytest.mark.django_db

# Brief fields cleared for every generated brief, then set per workload type.
BLANK = {
    "input_tokens_p50": None, "input_tokens_p95": None, "output_tokens_p50": None,
    "output_tokens_p95": None, "concurrency": None, "requests_per_second": None,
    "latency_percentile": "", "ttft_target_ms": None, "itl_target_ms": None,
    "e2e_target_ms": None, "kv_cache_precision": "", "tooling": [],
}  # fmt: skip


def gpu(slug: str) -> Gpu:
    return Gpu.objects.get(slug=slug)


@pytest.fixture
def market(catalog, team):
    """Quotes on every kind of term and node size, and API routes for two models."""
    QuoteFactory(gpu=gpu("h100-sxm5-80gb"), hourly_price_per_gpu=Decimal("2.50"))
    QuoteFactory(
        gpu=gpu("h100-sxm5-80gb"),
        pricing_term="RESERVED_1Y",
        hourly_price_per_gpu=Decimal("1.90"),
        minimum_commitment_months=12,
    )
    QuoteFactory(gpu=gpu("l40s-48gb"), hourly_price_per_gpu=Decimal("0.90"))
    QuoteFactory(gpu=gpu("l4-24gb"), gpus_per_node=1, hourly_price_per_gpu=Decimal("0.45"))
    QuoteFactory(
        gpu=gpu("rtx-4090-24gb"),
        pricing_term="SPOT",
        gpus_per_node=1,
        hourly_price_per_gpu=Decimal("0.30"),
    )
    QuoteFactory(gpu=gpu("h200-sxm-141gb"), hourly_price_per_gpu=Decimal("3.80"))
    QuoteFactory(
        gpu=gpu("b200-sxm-180gb"),
        pricing_term="RESERVED_3Y",
        hourly_price_per_gpu=Decimal("3.90"),
        minimum_commitment_months=36,
    )
    for preset in ("llama-3.1-8b", "llama-3.1-70b"):
        ApiRouteFactory(model_preset=preset, input_price_per_mtok=Decimal("0.20"))
    return team


def recompute(brief):
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    candidate_table_recompute(brief_id=brief.pk)
    brief.refresh_from_db()
    return ranking_for_brief(brief)


# --- the briefs ---------------------------------------------------------------------------------

llm_models = st.sampled_from(["llama-3.1-8b", "llama-3.1-70b", "qwen3-30b-a3b", "gpt-oss-20b"])


@st.composite
def realtime(draw):
    given_rate = draw(st.booleans())
    return {
        "workload_type": "REALTIME_INFERENCE",
        "model_preset": draw(llm_models),
        "kv_cache_precision": "FP8",
        "input_tokens_p50": (p50 := draw(st.sampled_from([256, 1000, 3000]))),
        "input_tokens_p95": p50 * draw(st.sampled_from([1, 2, 4])),
        "output_tokens_p50": (o50 := draw(st.sampled_from([64, 200, 600]))),
        "output_tokens_p95": o50 * 2,
        "concurrency": None if given_rate else draw(st.integers(1, 4096)),
        "requests_per_second": Decimal(draw(st.sampled_from(["0.5", "4", "40"])))
        if given_rate
        else None,
        "latency_percentile": "P95",
        "ttft_target_ms": draw(st.sampled_from([300, 1000, 3000])),
        "itl_target_ms": draw(st.sampled_from([20, 50, 120])),
        "success_unit": "TOKEN",
    }


@st.composite
def offline(draw):
    kind = draw(st.sampled_from(["BATCH_INFERENCE", "EVALUATION", "EMBEDDINGS"]))
    fields = {
        "workload_type": kind,
        "model_preset": "bge-large-en-v1.5" if kind == "EMBEDDINGS" else draw(llm_models),
        "input_tokens_p50": 500,
        "input_tokens_p95": 1000,
        "records_per_job": draw(st.sampled_from([10_000, 1_000_000])),
        "latency_percentile": "OFFLINE",
        "duty_cycle": "SCHEDULED_BATCH",
        "hours_per_month": Decimal(draw(st.sampled_from(["50", "200"]))),
        "success_unit": "RECORD",
    }
    if kind == "EMBEDDINGS":
        fields["weight_precision"] = "BF16"
    else:
        fields.update(kv_cache_precision="FP8", output_tokens_p50=200, output_tokens_p95=400)
        if kind == "EVALUATION":
            fields["success_unit"] = "EVALUATION"
    return fields


@st.composite
def media(draw):
    video = draw(st.booleans())
    side = draw(st.sampled_from([512, 1024]))
    fields = {
        "workload_type": "VIDEO_GENERATION" if video else "IMAGE_GENERATION",
        "model_preset": "sdxl",
        "weight_precision": "FP16",
        "image_width": side,
        "image_height": side,
        "requests_per_second": Decimal(draw(st.sampled_from(["0.05", "0.5", "2"]))),
        "success_unit": "CLIP" if video else "IMAGE",
        "latency_percentile": "P95",
        "e2e_target_ms": draw(st.sampled_from([2000, 8000, 60000])),
    }
    if video:
        fields["clip_seconds"] = Decimal(4)
    return fields


@st.composite
def training(draw):
    kind = draw(st.sampled_from(["TRAINING", "FULL_FINETUNE", "LORA_FINETUNE", "QLORA_FINETUNE"]))
    fields = {
        "workload_type": kind,
        "model_preset": draw(st.sampled_from(["llama-3.1-8b", "qwen3-4b"])),
        "weight_precision": "BF16",
        "training_tokens": draw(st.sampled_from([10**8, 10**10, 10**12])),
        "sequence_length": 2048,
        "global_batch_tokens": 2**20,
        "optimizer": "ADAMW" if kind != "QLORA_FINETUNE" else "PAGED_ADAMW_8BIT",
        "sharding": "ZERO3",
        "activation_checkpointing": True,
        "checkpoint_interval_minutes": 60,
        "lora_rank": 16 if "LORA" in kind else None,
        "success_unit": "TRAINING_RUN",
        "duty_cycle": "EXPERIMENTAL",
        "hours_per_month": Decimal(730),
        "deadline_days": draw(st.one_of(st.none(), st.sampled_from([1, 7, 30]))),
    }
    if kind == "QLORA_FINETUNE":
        fields["weight_precision"] = ""
    return fields


briefs = st.one_of(realtime(), offline(), media(), training())


# --- the invariants ----------------------------------------------------------------------------


def engine_at(request, slug, count, **changes):
    return engine_estimates(replace(request, gpus=(slug,), gpu_count=count, **changes))[0]


def expected_in_flight(brief, request, finance, slug, count, replicas):
    """Each replica's share of the load, as the issue states the rule: the concurrency over the
    replicas, or the rate (retries included) x the time in the system at the target (Little's
    law)."""
    if brief.concurrency:
        return math.ceil(brief.concurrency / replicas)
    rung = engine_at(request, slug, count)
    plan = rung.capacity
    rate = float(brief.requests_per_second) / (1 - float(finance.retry_rate))
    if plan.requests_per_s_at_target and plan.max_concurrency_at_target:
        in_system = plan.max_concurrency_at_target / plan.requests_per_s_at_target
    else:  # no load meets the target: the time in the system at the rung's own load
        in_system = rung.performance.e2e_latency_s or 0.0
    return max(1, math.ceil(rate * in_system / replicas - 1e-9))


def s(value):
    return None if value is None else str(value)


def check_figures(brief, request, finance, row):
    """(a) the row's figures are the engine's at its configuration and load share."""
    config, figures = row["configuration"], row["figures"]
    slug, count, replicas = config["gpu"], config["gpus_per_replica"], config["replicas"]
    kind = cost_kind(WorkloadType(brief.workload_type))
    if kind is CostKind.REALTIME:
        share = expected_in_flight(brief, request, finance, slug, count, replicas)
        assert figures["in_flight_per_replica"] == share, row
        at = engine_at(request, slug, count, concurrency=share, requests_per_second=None)
        assert figures["ttft_p95_ms"] == s(shown(at.performance.ttft_ms)), row
        assert figures["itl_p95_ms"] == s(shown(at.performance.itl_ms)), row
        throughput = at.performance.output_tokens_per_s * replicas
    elif kind is CostKind.TRAINING:
        at = engine_at(request, slug, count * replicas)
        assert figures["time_to_train_days"] == s(shown(at.training.time_to_train_hours / 24))
        throughput = at.training.tokens_per_s_total
    else:
        at = engine_at(request, slug, count)
        perf = at.performance
        per = perf.images_per_hour or perf.clips_per_hour or perf.records_per_s
        per = per if per is not None else perf.output_tokens_per_s
        throughput = per * replicas
    e2e = at.performance.e2e_latency_s
    assert figures["latency_p95_ms"] == s(shown(e2e * 1000 if e2e is not None else None)), row
    assert figures["throughput"] == s(shown(throughput)), row
    assert figures["fit"] == at.fit.value, row
    assert figures["memory_headroom_gb"] == s(shown(at.memory.headroom_gb)), row
    assert row["layout"] == (at.layout or None), row


def missed_targets(brief, row):
    figures = row["figures"]
    misses = []
    for name, key, target in (
        ("TTFT", "ttft_p95_ms", brief.ttft_target_ms),
        ("ITL", "itl_p95_ms", brief.itl_target_ms),
        ("end-to-end", "latency_p95_ms", brief.e2e_target_ms),
    ):
        if target and figures[key] is not None and Decimal(figures[key]) > target:
            misses.append(name)
    if brief.is_training and figures["time_to_train_days"] is not None:
        deadline = brief.deadline_days or DEFAULT_DEADLINE_DAYS[WorkloadType(brief.workload_type)]
        if Decimal(figures["time_to_train_days"]) > deadline:
            misses.append("deadline")
    if figures["fit"] == "NO":
        misses.append("memory")
    return misses


def check_verdict(brief, row):
    """(b) meets the brief exactly when every target is met by the figures shown."""
    misses = missed_targets(brief, row)
    reasons = " ".join(row["why_not"])
    if misses:
        assert not row["meets_constraints"] and row["rank"] is None, (misses, row)
        for name in misses:
            if name == "deadline":
                assert "deadline" in reasons, row
            elif name == "memory":
                assert "fit" in reasons, row
            else:
                assert f"{name} target" in reasons or "latency target" in reasons, row
    if row["meets_constraints"]:
        assert not misses and not row["why_not"], row


def check_paid_hours(brief, row):
    """(c) paid GPU-hours = paid GPUs x the hours the term bills."""
    config = row["configuration"]
    paid_gpus, hours = config["paid_gpus"], Decimal(config["hours_billed_per_month"])
    paid = Decimal(row["paid_gpu_hours_per_month"])
    assert abs(paid - paid_gpus * hours) <= Decimal("0.0001") * paid_gpus + Decimal("0.0001")
    served = config["gpus_per_replica"] * config["replicas"]
    assert paid_gpus >= served, row
    targets = brief.ttft_target_ms or brief.itl_target_ms or brief.e2e_target_ms
    if row["pricing_term"] in COMMITTED_TERMS:
        assert hours == 730, row
    elif brief.workload_type == "REALTIME_INFERENCE" or (not brief.is_training and targets):
        # Capacity kept up through the active hours: every replica billed for all of them.
        assert hours == brief.hours_per_month and paid_gpus == served, row


def check_one_winner_and_unit(brief, ranking, make_user):
    """(d) every section names rank 1; (e) one unit throughout."""
    assert isinstance(ranking["unit_scale"], int)
    ranked = [r for r in ranking["rows"] if r["rank"] is not None]
    model, sensitivity = ranking["capacity_model"], ranking["sensitivity"]
    if not ranked:
        assert not sensitivity.get("winner")
        return
    first = ranked[0]
    key = (
        f"quote:{first['quote_id']}"
        if first["quote_id"]
        else f"api_route:{first['api_route_id']}"
        if first["api_route_id"]
        else first["candidate_kind"].lower()
    )
    if model:
        assert model["winner"] == key
        if model.get("options"):
            assert model["unit_scale"] == ranking["unit_scale"]
            by_quote = {r["quote_id"]: r for r in ranking["rows"] if r["quote_id"]}
            by_route = {r["api_route_id"]: r for r in ranking["rows"] if r["api_route_id"]}
            for option in model["options"]:
                found = by_quote.get(option["quote_id"]) or by_route.get(option["api_route_id"])
                if found is not None and option["meets_constraints"]:
                    assert Decimal(option["effective_unit_cost"]) == Decimal(
                        found["effective_unit_cost"]
                    ), (option, found)
            if first["candidate_kind"] == "GPU" and model.get("recommended"):
                picked = next(o for o in model["options"] if o["option"] == model["recommended"])
                assert picked["quote_id"] == first["quote_id"], (picked, first)
            if first["candidate_kind"] == "API_ROUTE" and model.get("recommended"):
                assert model["recommended"] == "API"
    if sensitivity:
        assert sensitivity["winner"] == key, (sensitivity["winner"], key)
        assert sensitivity["unit_scale"] == ranking["unit_scale"]
        by_key = {c["key"]: c for c in sensitivity["leading"]}
        assert Decimal(by_key[key]["effective_unit_cost"]) == Decimal(first["effective_unit_cost"])
    # The decision PDF of a record choosing rank 1 speaks of it as rank 1, and of no other.
    user = make_user(Role.PROCUREMENT)
    if first["quote_id"]:
        record = make_record(brief=brief, user=user, quote=Quote.objects.get(pk=first["quote_id"]))
    elif first["api_route_id"]:
        record = make_record(
            brief=brief, user=user, route=ApiRoute.objects.get(pk=first["api_route_id"])
        )
    else:
        record = make_record(brief=brief, user=user, chosen_plan=first["candidate_kind"])
    document = build_document(decision_record_report(record))
    decision = dict(next(s for s in document.sections if s.heading == "Decision").blocks[0].items)
    assert "The table's winner" not in decision
    assert ", rank 1 of " in decision["Unit cost"]


def check_table(brief, make_user):
    ranking = recompute(brief)
    assert ranking["no_ranking_reason"] is None, ranking["no_ranking_reason"]
    request = request_for_brief(brief)
    finance = resolved_assumptions(brief).finance
    for row in ranking["rows"]:
        if row["candidate_kind"] == "GPU":
            check_figures(brief, request, finance, row)
            check_verdict(brief, row)
            check_paid_hours(brief, row)
        elif row["candidate_kind"] in ("MIX", "DISAGG"):
            check_verdict(brief, row)
    check_one_winner_and_unit(brief, ranking, make_user)


class TestEveryRowIsOneConfiguration:
    @pytest.mark.parametrize("name", [name for name, _ in DEMO_BRIEFS if "(draft)" not in name])
    def test_the_demo_briefs(self, market, make_user, name):
        fields = dict(DEMO_BRIEFS)[name]
        brief = BriefFactory(team=market, name=name, **{**BLANK, **fields})
        check_table(brief, make_user)

    @settings(
        max_examples=12,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(fields=briefs)
    def test_generated_briefs_of_every_workload_type(self, market, make_user, fields):
        brief = BriefFactory(team=market, **{**BLANK, **fields})
        check_table(brief, make_user)


class TestSpotNeedsWorkThatToleratesInterruptions:
    def test_a_real_time_brief_gets_no_spot_row_plan_part_or_recommendation(
        self, market, make_user
    ):
        brief = BriefFactory(team=market, requests_per_second=Decimal(40), concurrency=None)
        ranking = recompute(brief)
        spot = [r for r in ranking["rows"] if r["pricing_term"] == "SPOT"]
        assert spot and all(not r["meets_constraints"] for r in spot)
        assert all(any("spot capacity" in w for w in r["why_not"]) for r in spot)
        spot_ids = {r["quote_id"] for r in spot}
        for row in ranking["rows"]:
            assert not set(row["plan_quote_ids"]) & spot_ids, row  # no plan runs on spot
        assert ranking["capacity_model"].get("recommended") != "RENT_SPOT"

    def test_a_batch_brief_may_run_on_spot(self, market):
        brief = BriefFactory(
            team=market,
            **{
                **BLANK,
                "workload_type": "BATCH_INFERENCE",
                "model_preset": "llama-3.1-8b",
                "kv_cache_precision": "FP8",
                "input_tokens_p50": 500,
                "input_tokens_p95": 1000,
                "output_tokens_p50": 100,
                "output_tokens_p95": 200,
                "records_per_job": 100_000,
                "latency_percentile": "OFFLINE",
                "duty_cycle": "SCHEDULED_BATCH",
                "hours_per_month": Decimal(100),
                "success_unit": "RECORD",
            },
        )
        assert brief.interruptions_tolerated
        spot = [r for r in recompute(brief)["rows"] if r["pricing_term"] == "SPOT"]
        assert spot and spot[0]["meets_constraints"], spot

    def test_the_brief_says_so_itself(self, market):
        brief = BriefFactory(team=market, tolerates_interruptions=True)
        spot = [r for r in recompute(brief)["rows"] if r["pricing_term"] == "SPOT"]
        assert all(not any("spot capacity" in w for w in r["why_not"]) for r in spot)
