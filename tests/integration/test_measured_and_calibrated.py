"""Measurements feed the decision: a throughput run replaces its candidate's estimate, and the
engine's factors for that GPU are calibrated for the team's other briefs of the same model."""

from decimal import Decimal

import pytest

from apps.benchmarks.models import BenchmarkRun
from apps.benchmarks.selectors import brief_estimates
from apps.catalog.models import Gpu
from apps.engine.deployment import shown
from apps.finance.models import CandidateRow
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import QuoteFactory

pytestmark = pytest.mark.django_db
H100 = "h100-sxm5-80gb"


def recompute(*briefs):
    candidate_tables_request_recompute(brief_ids=[b.pk for b in briefs])
    for brief in briefs:
        candidate_table_recompute(brief_id=brief.pk)


def h100_estimate(brief):
    return next(e for e in brief_estimates(brief) if e["gpu"] == H100)


def slower_run(brief, estimate, *, factor, failed=0):
    """A vLLM-style throughput run measured at `factor` x the engine's prediction."""
    perf = estimate["performance"]
    predicted = perf["output_tokens_per_s"]
    return BenchmarkRun.objects.create(
        brief=brief,
        team=brief.team,
        gpu=Gpu.objects.get(slug=H100),
        gpu_count=estimate["gpu_count"],
        phase=BenchmarkRun.Phase.THROUGHPUT_LATENCY,
        tool=BenchmarkRun.Tool.VLLM,
        tool_version="0.11.0",
        conditions={"max_concurrency": brief.concurrency},
        results={
            "output_tokens_per_s": predicted * factor,
            "ttft_ms": {"p50": perf["ttft_ms"] / factor, "p95": perf["ttft_ms"] / factor},
            "tpot_ms": {"p95": perf["itl_ms"] / factor},
            "e2e_latency_ms": {"p95": perf["e2e_latency_s"] * 1000 / factor},
            "completed": 1000 - failed,
            "failed": failed,
        },
        estimate_at_import={
            "output_tokens_per_s": predicted,
            "ttft_ms": perf["ttft_ms"],
            "tpot_ms": perf["itl_ms"],
            "engine_version": "test",
        },
        raw_sha256=f"{factor}-{failed}",
        model=brief.model_preset,
        created_by=brief.created_by,
    )


@pytest.fixture
def two_briefs(catalog, team):
    first = BriefFactory(team=team)
    second = BriefFactory(team=team, concurrency=16, input_tokens_p50=500, input_tokens_p95=2000)
    QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
    recompute(first, second)
    return first, second


class TestMeasuredReplacesEstimated:
    def test_the_candidate_with_a_run_is_measured_and_uses_its_figures(self, two_briefs):
        first, _ = two_briefs
        run = slower_run(first, h100_estimate(first), factor=0.7, failed=50)
        recompute(first)
        row = CandidateRow.objects.get(table__brief=first, gpu__slug=H100)
        assert row.basis == "MEASURED"
        assert any(f"benchmark run #{run.pk}" in note for note in row.notes)
        expected_ms = Decimal(str(run.results["e2e_latency_ms"]["p95"]))
        # A row keeps its figures to the four significant digits it shows (apps.engine.deployment
        # .shown): the run's latency as shown.
        assert row.p95_latency_ms == shown(expected_ms)

    def test_failed_requests_from_the_run_lower_the_accepted_outputs(self, two_briefs):
        first, _ = two_briefs
        before = CandidateRow.objects.get(table__brief=first, gpu__slug=H100)
        slower_run(first, h100_estimate(first), factor=1.0, failed=200)  # 20% failed
        recompute(first)
        after = CandidateRow.objects.get(table__brief=first, gpu__slug=H100)
        assert after.accepted_outputs_per_month < before.accepted_outputs_per_month
        assert after.effective_unit_cost > before.effective_unit_cost


class TestCalibration:
    def test_a_run_30_percent_slower_moves_a_second_brief_on_the_same_gpu(self, two_briefs):
        first, second = two_briefs
        before = h100_estimate(second)["performance"]["output_tokens_per_s"]
        run = slower_run(first, h100_estimate(first), factor=0.7)
        after_estimate = h100_estimate(second)
        after = after_estimate["performance"]["output_tokens_per_s"]
        assert after == pytest.approx(before * 0.7, rel=0.1)  # decode-bound: ~30% slower
        assert after_estimate["calibrated_from_runs"] == 1
        assert after_estimate["basis"] == "CALIBRATED"
        assert any(
            f"CALIBRATED from 1 benchmark run (#{run.pk})" in n for n in after_estimate["notes"]
        )
        recompute(second)
        row = CandidateRow.objects.get(table__brief=second, gpu__slug=H100)
        assert row.basis == "CALIBRATED"
        assert f"CALIBRATED from benchmark run #{run.pk}" in row.notes

    def test_other_gpus_are_not_calibrated(self, two_briefs):
        first, second = two_briefs
        l40s_before = next(e for e in brief_estimates(second) if e["gpu"] == "l40s-48gb")
        slower_run(first, h100_estimate(first), factor=0.7)
        l40s_after = next(e for e in brief_estimates(second) if e["gpu"] == "l40s-48gb")
        assert l40s_after["performance"] == l40s_before["performance"]
