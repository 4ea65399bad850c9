"""Benchmark-run services and selectors against the database: supersede, recompute, the
estimate stored at import, and the figures the finance code calibrates with."""

import math
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage

from apps.benchmarks import selectors, services
from apps.benchmarks.models import BenchmarkRun
from apps.benchmarks.selectors import calibration_for_brief, throughput_runs_for_brief
from apps.catalog.models import Gpu
from apps.core.roles import Role
from apps.finance.models import CandidateTable
from tests.factories.benchmarks import needs_proxy
from tests.factories.briefs import BriefFactory

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parents[1] / "data" / "benchmarks"


def fixture(name: str) -> bytes:
    return (DATA / name).read_bytes()


@pytest.fixture
def brief(catalog, team):
    return BriefFactory(team=team)


@pytest.fixture
def user(make_user):
    return make_user(Role.PLATFORM)


@pytest.fixture
def h100(catalog):
    return Gpu.objects.get(slug="h100-sxm5-80gb")


def do_import(brief, gpu, user, name, *, gpu_count=1, **kwargs):
    kwargs.setdefault("proxy", needs_proxy(brief, fixture(name)))
    return services.benchmark_runs_import(
        brief=brief,
        gpu=gpu,
        gpu_count=gpu_count,
        raw=fixture(name),
        filename=name,
        created_by=user,
        **kwargs,
    )


class TestSupersede:
    def test_a_newer_throughput_run_supersedes_the_older_of_the_same_candidate(
        self, brief, h100, user
    ):
        (old,) = do_import(brief, h100, user, "vllm_benchmark_serving_v0_6_4.json").runs
        (other_count,) = do_import(
            brief, h100, user, "vllm_benchmark_serving_v0_6_4.json", gpu_count=2
        ).runs
        (new,) = do_import(brief, h100, user, "llmperf_summary_flat.json").runs
        old.refresh_from_db()
        other_count.refresh_from_db()
        assert old.superseded_by == new
        assert other_count.superseded_by is None
        assert new.superseded_by is None

    def test_a_proxy_run_never_supersedes_a_run_of_the_brief_s_model(self, brief, h100, user):
        (own,) = do_import(brief, h100, user, "vllm_benchmark_serving_v0_6_4.json").runs
        (proxy,) = do_import(brief, h100, user, "vllm_bench_serve_v0_11.json").runs  # Qwen3 8B
        own.refresh_from_db()
        assert proxy.proxy is True
        assert own.superseded_by is None and proxy.superseded_by is None
        assert throughput_runs_for_brief(brief) == {("h100-sxm5-80gb", 1): own}

    def test_runs_of_one_sweep_do_not_supersede_each_other(self, brief, h100, user):
        (old,) = do_import(brief, h100, user, "vllm_benchmark_serving_v0_6_4.json").runs
        sweep = do_import(brief, h100, user, "guidellm_v0_2.json").runs
        assert len(sweep) == 2
        for run in sweep:
            run.refresh_from_db()
            assert run.superseded_by is None
        old.refresh_from_db()
        assert old.superseded_by == sweep[-1]

    def test_manual_runs_are_never_superseded_by_imports(self, brief, h100, user):
        manual = services.benchmark_run_create_manual(
            brief=brief,
            gpu=h100,
            gpu_count=1,
            phase="MEMORY_FIT",
            results={"peak_memory_gb": 70, "oom_rate": 0, "headroom_gb": 10},
            created_by=user,
        )
        do_import(brief, h100, user, "vllm_bench_serve_v0_11.json")
        manual.refresh_from_db()
        assert manual.superseded_by is None

    def test_throughput_runs_for_brief_are_the_latest_current_per_candidate(
        self, brief, h100, user
    ):
        do_import(brief, h100, user, "vllm_benchmark_serving_v0_6_4.json")
        (latest,) = do_import(brief, h100, user, "llmperf_summary_flat.json").runs
        (two,) = do_import(brief, h100, user, "aiperf_v0_1_records.json", gpu_count=2).runs
        do_import(brief, h100, user, "aiperf_v0_3.json", gpu_count=3)  # gpt-oss-20b: a proxy
        services.benchmark_run_create_manual(
            brief=brief, gpu=h100, gpu_count=4, phase="MEMORY_FIT",
            results={"peak_memory_gb": 70, "oom_rate": 0, "headroom_gb": 10}, created_by=user,
        )  # fmt: skip
        other = BriefFactory(team=brief.team)
        do_import(other, h100, user, "aiperf_v0_1_records.json")
        assert throughput_runs_for_brief(brief) == {
            ("h100-sxm5-80gb", 1): latest,
            ("h100-sxm5-80gb", 2): two,
        }


class TestImportIsAllOrNothing:
    def test_the_raw_file_is_kept_with_the_run(self, brief, h100, user):
        (run,) = do_import(brief, h100, user, "vllm_bench_serve_v0_11.json").runs
        assert run.raw_file.name.startswith("benchmark-runs/")
        with default_storage.open(run.raw_file.name, "rb") as handle:
            assert handle.read() == fixture("vllm_bench_serve_v0_11.json")

    def test_a_concurrent_import_of_the_same_file_is_answered_as_a_duplicate(
        self, brief, h100, user, monkeypatch
    ):
        (first,) = do_import(brief, h100, user, "vllm_bench_serve_v0_11.json").runs
        real = selectors.benchmark_runs_same_file
        calls = []

        def blind_first_time(**kwargs):
            calls.append(kwargs)
            return [] if len(calls) == 1 else real(**kwargs)

        monkeypatch.setattr(services, "benchmark_runs_same_file", blind_first_time)
        names_before = default_storage.listdir(first.raw_file.name.rsplit("/", 1)[0])[1]
        outcome = do_import(brief, h100, user, "vllm_bench_serve_v0_11.json")
        assert outcome.duplicate is True and outcome.runs == [first]
        assert BenchmarkRun.objects.count() == 1
        names_after = default_storage.listdir(first.raw_file.name.rsplit("/", 1)[0])[1]
        assert names_after == names_before

    def test_a_bad_file_raises_a_validation_error_on_file(self, brief, h100, user):
        with pytest.raises(ValidationError) as caught:
            services.benchmark_runs_import(
                brief=brief, gpu=h100, gpu_count=1, raw=b"{", filename="x.json",
                created_by=user,
            )  # fmt: skip
        assert list(caught.value.message_dict) == ["file"]


class TestRecompute:
    def test_the_team_s_briefs_are_asked_to_recompute_inside_the_transaction(
        self, brief, h100, user, monkeypatch
    ):
        calls = []
        monkeypatch.setattr(
            services,
            "candidate_tables_request_recompute",
            lambda **kwargs: calls.append(kwargs) or [],
        )
        do_import(brief, h100, user, "guidellm_v0_2.json")
        services.benchmark_run_create_manual(
            brief=brief, gpu=h100, gpu_count=1, phase="FAILURE_OPS",
            results={"checks": {"kill_worker": {"passed": True, "time_s": 3}}}, created_by=user,
        )  # fmt: skip
        other_team_brief = BriefFactory()
        assert calls == [{"brief_ids": [brief.pk]}, {"brief_ids": [brief.pk]}]
        assert other_team_brief.pk not in calls[0]["brief_ids"]

    def test_other_briefs_tables_are_recomputed_after_commit(
        self, brief, h100, user, django_capture_on_commit_callbacks
    ):
        other = BriefFactory(team=brief.team)
        with django_capture_on_commit_callbacks(execute=True):
            do_import(brief, h100, user, "vllm_bench_serve_v0_11.json")
        table = CandidateTable.objects.get(brief=other)
        assert table.requested_version >= 1
        assert table.computed_version == table.requested_version


class TestEstimateForRun:
    def test_run_conditions_override_the_brief(self, brief):
        estimate = selectors.estimate_for_run(
            brief=brief,
            gpu_slug="h100-sxm5-80gb",
            gpu_count=1,
            results={"input_tokens_mean": 511.6, "output_tokens_mean": 128.2},
            conditions={"max_concurrency": 16},
        )
        assert estimate["inputs"] == {
            "input_tokens": 512, "input_tokens_from": "run",
            "output_tokens": 128, "output_tokens_from": "run",
            "concurrency": 16, "concurrency_from": "run", "replicas": 1,
        }  # fmt: skip
        assert estimate["output_tokens_per_s"] > 0 and estimate["tpot_ms"] > 0

    def test_more_concurrency_gives_more_throughput_and_slower_tokens(self, brief):
        def at(concurrency):
            return selectors.estimate_for_run(
                brief=brief, gpu_slug="h100-sxm5-80gb", gpu_count=1,
                results={}, conditions={"concurrency": concurrency},
            )  # fmt: skip

        low, high = at(1), at(32)
        assert high["output_tokens_per_s"] > low["output_tokens_per_s"]
        assert high["tpot_ms"] >= low["tpot_ms"]


def _run(
    brief,
    user,
    gpu,
    *,
    measured_tps,
    estimated_tps,
    measured_ttft=None,
    estimated_ttft=None,
    phase="THROUGHPUT_LATENCY",
    superseded_by=None,
    estimate=None,
):
    results = {"output_tokens_per_s": measured_tps}
    if measured_ttft is not None:
        results["ttft_ms"] = measured_ttft
    return BenchmarkRun.objects.create(
        brief=brief,
        team=brief.team,
        gpu=gpu,
        gpu_count=1,
        phase=phase,
        tool="VLLM",
        results=results,
        estimate_at_import=estimate
        if estimate is not None
        else {"output_tokens_per_s": estimated_tps, "ttft_ms": estimated_ttft},
        created_by=user,
        superseded_by=superseded_by,
        model=brief.model_preset,
    )


class TestCalibrationForBrief:
    def test_geometric_means_clamped_per_gpu(self, brief, user, h100):
        a100 = Gpu.objects.get(slug="a100-sxm4-80gb")
        l4 = Gpu.objects.get(slug="l4-24gb")
        newer = _run(brief, user, h100, measured_tps=2000, estimated_tps=1000,
                     measured_ttft={"p50": 100.0, "mean": 140.0}, estimated_ttft=200.0)  # fmt: skip
        _run(brief, user, h100, measured_tps=500, estimated_tps=1000,
             measured_ttft={"mean": 50.0}, estimated_ttft=400.0)  # fmt: skip
        # ignored: superseded, an engine error, another phase, nothing measured
        _run(brief, user, h100, measured_tps=9000, estimated_tps=1, superseded_by=newer)
        _run(brief, user, h100, measured_tps=9000, estimated_tps=None, estimate={"error": "x"})
        _run(brief, user, h100, measured_tps=9000, estimated_tps=1, phase="MEMORY_FIT")
        _run(brief, user, h100, measured_tps=None, estimated_tps=1000)
        # another GPU: far off -> clamped; no TTFT pair -> neutral 1.0
        _run(brief, user, a100, measured_tps=10_000, estimated_tps=100)
        _run(brief, user, l4, measured_tps=300, estimated_tps=1000,
             measured_ttft={"p50": 1000.0}, estimated_ttft=200.0)  # fmt: skip

        calibration = calibration_for_brief(brief)

        assert set(calibration) == {"h100-sxm5-80gb", "a100-sxm4-80gb", "l4-24gb"}
        h = calibration["h100-sxm5-80gb"]
        assert h["runs"] == 2
        assert h["decode_bw_efficiency"] == pytest.approx(math.sqrt(2.0 * 0.5))  # 1.0
        # est/measured TTFT: 200/100 (p50 wins over mean) and 400/50 -> sqrt(16) = 4 (clamp edge)
        assert h["prefill_mfu"] == pytest.approx(4.0)
        assert calibration["a100-sxm4-80gb"] == {
            "decode_bw_efficiency": 4.0, "prefill_mfu": 1.0, "runs": 1,
            "run_ids": [calibration["a100-sxm4-80gb"]["run_ids"][0]],
        }  # fmt: skip
        l4_cal = calibration["l4-24gb"]
        assert l4_cal["decode_bw_efficiency"] == pytest.approx(0.3)
        assert l4_cal["prefill_mfu"] == 0.25  # 200 / 1000 = 0.2, clamped up

    def test_no_runs_no_calibration(self, brief):
        assert calibration_for_brief(brief) == {}

    def test_imported_runs_feed_calibration(self, brief, h100, user):
        (run,) = do_import(brief, h100, user, "vllm_benchmark_serving_v0_6_4.json").runs
        expected = 2000.0 / run.estimate_at_import["output_tokens_per_s"]
        calibration = calibration_for_brief(brief)["h100-sxm5-80gb"]
        assert calibration["runs"] == 1 and calibration["run_ids"] == [run.pk]
        assert calibration["decode_bw_efficiency"] == pytest.approx(min(4.0, max(0.25, expected)))


class TestRunsPerFile:
    def jsonl(self, lines: int) -> bytes:
        one = fixture("vllm_bench_serve_append.jsonl").splitlines()[0]
        return b"\n".join([one] * lines) + b"\n"

    def test_a_file_with_more_runs_than_the_limit_is_refused_in_words(
        self, brief, h100, user, monkeypatch
    ):
        monkeypatch.setattr(services, "MAX_RUNS_PER_FILE", 3)
        with pytest.raises(ValidationError) as caught:
            services.benchmark_runs_import(
                brief=brief, gpu=h100, gpu_count=1, raw=self.jsonl(4), filename="many.jsonl",
                created_by=user,
            )  # fmt: skip
        assert caught.value.message_dict == {
            "file": [
                "the file holds 4 runs; one import takes at most 3 "
                "(split the file, or keep the runs that matter)"
            ]
        }
        assert BenchmarkRun.objects.count() == 0

    def test_a_file_at_the_limit_is_imported(self, brief, h100, user, monkeypatch):
        monkeypatch.setattr(services, "MAX_RUNS_PER_FILE", 3)
        outcome = services.benchmark_runs_import(
            brief=brief, gpu=h100, gpu_count=1, raw=self.jsonl(3), filename="three.jsonl",
            created_by=user, proxy=True,  # Qwen3 8B lines on a Llama 3.1 8B brief
        )  # fmt: skip
        assert len(outcome.runs) == 3
