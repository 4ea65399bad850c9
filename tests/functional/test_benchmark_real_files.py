"""Real results files (tests/data/benchmarks/real/, SOURCES.md): llm-d Benchmark Reports as
llm-d writes them (YAML, and its JSON export's Infinity), inference-perf's stage files and its
summary of a sweep, llmperf's 4 x A10G summary and per-request log; and a file's own facts
(GPU, GPUs per replica, replicas, precision) winning over the form, or refused."""

import json
from pathlib import Path

import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.benchmarks import services
from apps.benchmarks.models import BenchmarkRun
from apps.catalog.models import Gpu
from apps.core.roles import Role
from tests.factories.briefs import BriefFactory

pytestmark = pytest.mark.django_db

REAL = Path(__file__).resolve().parents[1] / "data" / "benchmarks" / "real"
URL = "/api/v1/benchmark-runs/import"
BR_02 = "llm_d_br_v0_2_example.yaml"
STAGE = "inference_perf_kubecon_batch_size_stage_{}_lifecycle_metrics.json"


@pytest.fixture
def brief(catalog, team):
    return BriefFactory(team=team)


@pytest.fixture
def api(token_client):
    return token_client(Role.PLATFORM)


def post(api, brief, raw, *, name="report.yaml", **fields):
    data = {"brief": brief.pk, "proxy": "true", "file": SimpleUploadedFile(name, raw)}
    data.update({k: v for k, v in fields.items() if v is not None})
    return api.post(URL, data)


def real(name: str) -> bytes:
    return (REAL / name).read_bytes()


class TestBenchmarkReportYaml:
    def test_v0_2_records_the_files_gpu_count_and_replicas(self, api, brief):
        response = post(api, brief, real(BR_02))
        assert response.status_code == 201, response.json()
        body = response.json()
        # NVIDIA-H100-80GB-HBM3 x 8 per replica, 2 replicas (scenario.stack[0].standardized).
        assert (body["gpu"], body["gpu_count"]) == ("h100-sxm5-80gb", 8)
        assert body["conditions"]["replicas"] == 2
        assert body["conditions"]["concurrency"] == "inf"  # YAML .inf
        assert body["proxy"] is True and body["model_named"] == "Qwen/Qwen3-0.6B"
        assert body["results"]["ttft_ms"]["p50"] == pytest.approx(36.229, rel=1e-4)

    def test_a_form_gpu_that_contradicts_the_file_is_a_400_naming_gpu(self, api, brief):
        response = post(api, brief, real(BR_02), gpu="mi300x-192gb")
        assert response.status_code == 400
        message = response.json()["errors"]["gpu"][0]
        assert "NVIDIA-H100-80GB-HBM3 (h100-sxm5-80gb), not mi300x-192gb" in message
        assert BenchmarkRun.objects.count() == 0

    def test_a_form_count_that_contradicts_the_file_is_a_400_naming_gpu_count(self, api, brief):
        response = post(api, brief, real(BR_02), gpu="h100-sxm5-80gb", gpu_count=1)
        assert response.status_code == 400
        assert response.json()["errors"]["gpu_count"][0].startswith(
            "the file says 8 GPUs per replica"
        )

    def test_the_same_report_as_llm_d_exports_json_with_infinity(self, api, brief):
        # base.py export_json: json.dump(self.dump()): an infinite concurrency is Infinity.
        exported = json.dumps(yaml.safe_load(real(BR_02)), default=str).encode()
        assert b"Infinity" in exported
        response = post(api, brief, exported, name="report.json")
        assert response.status_code == 201, response.json()
        assert response.json()["conditions"]["concurrency"] == "inf"

    def test_v0_2_1_is_read(self, api, brief):
        response = post(api, brief, real("llm_d_br_v0_2_1_example.yaml"))
        assert response.status_code == 201, response.json()
        assert response.json()["conditions"]["report_schema_version"] == "0.2.1"

    def test_v0_1_an_h100_of_no_stated_form_needs_the_form_to_say_which(self, api, brief):
        raw = real("llm_d_br_v0_1_example.yaml")
        refused = post(api, brief, raw)
        assert refused.status_code == 400
        assert refused.json()["errors"]["gpu"][0].startswith("the file says it ran on H100")
        response = post(api, brief, raw, gpu="h100-sxm5-80gb")
        assert response.status_code == 201, response.json()
        body = response.json()
        # model.quantization fp16: the run is recorded at the file's precision.
        assert (body["gpu_count"], body["weight_precision"]) == (1, "FP16")

    def test_v0_1_a_form_precision_that_contradicts_the_file_is_a_400(self, api, brief):
        response = post(
            api, brief, real("llm_d_br_v0_1_example.yaml"), gpu="h100-sxm5-80gb", precision="BF16"
        )
        assert response.status_code == 400
        assert response.json()["errors"]["precision"][0] == "the file says fp16 (FP16), not BF16"

    def test_yaml_aliases_are_refused(self, api, brief):
        raw = b"version: '0.1'\nbase: &a {x: 1}\nmetrics: *a\nscenario: *a\n"
        response = post(api, brief, raw, gpu="h100-sxm5-80gb", gpu_count=1)
        assert response.status_code == 400
        assert "anchors and aliases" in response.json()["errors"]["file"][0]


class TestInferencePerfSweep:
    def test_each_stage_file_is_a_run_at_its_own_rate(self, api, brief):
        where = {"gpu": "h100-sxm5-80gb", "gpu_count": 1, "model": "Qwen/Qwen3-0.6B"}
        first = post(api, brief, real(STAGE.format(0)), name="stage_0.json", **where)
        last = post(api, brief, real(STAGE.format(6)), name="stage_6.json", **where)
        assert first.status_code == last.status_code == 201
        assert first.json()["conditions"]["request_rate"] == 1.0
        assert first.json()["results"]["ttft_ms"]["p50"] == pytest.approx(32.918, rel=1e-4)
        assert last.json()["results"]["ttft_ms"]["p50"] == pytest.approx(2097.43, rel=1e-4)

    def test_the_summary_of_all_stages_is_refused_saying_to_import_the_stage_files(
        self, api, brief
    ):
        response = post(
            api, brief, real("inference_perf_kubecon_batch_size_summary_lifecycle_metrics.json"),
            name="summary.json", gpu="h100-sxm5-80gb", gpu_count=1, model="Qwen/Qwen3-0.6B",
        )  # fmt: skip
        assert response.status_code == 400
        assert (
            "import each stage's stage_N_lifecycle_metrics.json"
            in (response.json()["errors"]["file"][0])
        )


class TestLlmperfOn4xA10G:
    def test_the_summary_imports_on_the_a10g(self, api, brief):
        response = post(
            api, brief, real("llmperf_yi34b_4xa10g_c4_summary.json"), name="summary.json",
            gpu="a10g-24gb", gpu_count=4,
        )  # fmt: skip
        assert response.status_code == 201, response.json()
        body = response.json()
        assert (body["gpu"], body["gpu_count"], body["conditions"]["concurrency"]) == (
            "a10g-24gb", 4, 4,
        )  # fmt: skip

    def test_the_per_request_log_becomes_figures_and_request_size_buckets(self, api, brief):
        response = post(
            api, brief, real("llmperf_yi34b_4xa10g_c4_individual_responses.json"),
            name="individual_responses.json", gpu="a10g-24gb", gpu_count=4,
            model="01-ai/Yi-1.5-34B-Chat",
        )  # fmt: skip
        assert response.status_code == 201, response.json()
        results = response.json()["results"]
        # The summary the same run wrote has results_ttft_s_mean 1.71371 s over its 100 requests.
        assert results["ttft_ms"]["mean"] == pytest.approx(1713.71, rel=1e-5)
        assert (results["completed"], results["failed"]) == (100, 0)
        assert results["request_log_requests"] == 100
        assert results["request_size_buckets"]


class TestEstimateAtTheFilesLoad:
    def test_a_rate_driven_stage_is_estimated_at_its_rate_times_its_latency(self, api, brief):
        body = post(
            api, brief, real("inference_perf_kubecon_batch_size_stage_6_lifecycle_metrics.json"),
            name="stage_6.json", gpu="h100-sxm5-80gb", gpu_count=1, model="Qwen/Qwen3-0.6B",
        ).json()  # fmt: skip
        inputs = body["estimate_at_import"]["inputs"]
        rate = body["conditions"]["request_rate"]
        e2e_s = body["results"]["e2e_latency_ms"]["mean"] / 1000
        assert inputs["concurrency"] == round(rate * e2e_s)
        assert inputs["concurrency_from"] == "run (request rate x mean latency)"

    def test_replicas_share_the_load_and_the_estimate_is_over_all_of_them(self, api, brief):
        body = post(api, brief, real(BR_02)).json()
        inputs = body["estimate_at_import"]["inputs"]
        assert inputs["replicas"] == 2


class TestDuplicateRunsAcrossFiles:
    def test_the_same_run_in_another_file_is_flagged(self, api, brief):
        raw = real("llmperf_yi34b_4xa10g_c4_summary.json")
        where = {"gpu": "a10g-24gb", "gpu_count": 4}
        first = post(api, brief, raw, name="summary.json", **where).json()
        copy = post(api, brief, raw + b"\n", name="copy.json", **where).json()
        assert "duplicate_of_run" not in first["conditions"]
        assert copy["conditions"]["duplicate_of_run"] == first["id"]


TOOL_RUNS = REAL.parent / "tool_runs"
AIPERF_C4 = TOOL_RUNS / "aiperf_0_13_c4_profile_export_aiperf.json"
GENAI_CSV = "genai_perf_cloudai_ai_dynamo_profile_genai_perf.csv"
SGLANG_4XH200 = "sglang_llama_3_3_70b_4xh200_online_output.jsonl"
H100 = {"gpu": "h100-sxm5-80gb", "gpu_count": 1}


class TestSglangOn4xH200:
    def test_each_line_is_a_run_at_its_rate(self, api, brief):
        response = post(
            api, brief, real(SGLANG_4XH200), name="online.jsonl", gpu="h200-sxm-141gb",
            gpu_count=4, model="meta-llama/Llama-3.3-70B-Instruct",
        )  # fmt: skip
        assert response.status_code == 201, response.json()
        runs = response.json()
        assert [run["conditions"]["request_rate"] for run in runs] == [1, 2, 4, 8, 16, 4, 8]
        assert runs[0]["results"]["ttft_ms"]["p50"] == pytest.approx(85.745, rel=1e-4)
        assert {run["gpu_count"] for run in runs} == {4}


VLLM_L40S = "vllm_benchmark_serving_llama32_3b_4xl40s_results.json"


class TestVllmWithMetadataOnL40s:
    def test_each_run_is_named_by_its_rate_and_metadata(self, api, brief):
        response = post(
            api, brief, real(VLLM_L40S), name="results.json", gpu="l40s-48gb", gpu_count=1
        )
        assert response.status_code == 201, response.json()
        runs = response.json()
        labels = [run["label"] for run in runs]
        assert len(runs) == 9 and len(set(labels)) == 9
        assert not [label for label in labels if "#" in label]
        assert labels[0].startswith("rate=10.0 (deployment=no-features, gpu=4xNVIDIA_L40S")
        assert runs[2]["conditions"]["request_rate"] == "inf"
        assert runs[0]["results"]["ttft_ms"]["mean"] == pytest.approx(54.5956, rel=1e-5)

    def test_a_form_rate_names_the_files_other_rates(self, api, brief):
        response = post(
            api, brief, real(VLLM_L40S), name="results.json", gpu="l40s-48gb", gpu_count=1,
            request_rate=10,
        )  # fmt: skip
        assert response.status_code == 400
        assert response.json()["errors"]["request_rate"] == [
            "the file says its runs were request rate 30, unbounded (inf) (requests per second), "
            "not 10"
        ]


class TestGenaiPerfCsvFromCloudai:
    def test_imports_with_the_model_named_in_the_form(self, api, brief):
        response = post(
            api, brief, real(GENAI_CSV), name="profile_genai_perf.csv",
            model="nvidia/Llama-3.1-405B-Instruct-FP8", **H100,
        )  # fmt: skip
        assert response.status_code == 201, response.json()
        body = response.json()
        assert body["tool"] == "GENAI_PERF"
        assert body["results"]["ttft_ms"]["mean"] == pytest.approx(1146.31)

    def test_a_csv_names_no_model_so_the_form_must(self, api, brief):
        response = post(api, brief, real(GENAI_CSV), name="profile_genai_perf.csv", **H100)
        assert response.status_code == 400
        assert "the file names no model" in response.json()["errors"]["model"][0]


class TestTheFilesLoadWins:
    def test_aiperfs_profiling_concurrency_is_recorded_and_estimated_at(self, api, brief):
        response = post(api, brief, AIPERF_C4.read_bytes(), name="aiperf.json", **H100)
        assert response.status_code == 201, response.json()
        body = response.json()
        assert body["conditions"]["concurrency"] == 4
        assert body["estimate_at_import"]["inputs"]["concurrency"] == 4

    def test_a_form_concurrency_that_contradicts_the_file_is_a_400_naming_it(self, api, brief):
        response = post(
            api, brief, AIPERF_C4.read_bytes(), name="aiperf.json", concurrency=32, **H100
        )
        assert response.status_code == 400
        assert response.json()["errors"]["concurrency"] == [
            "the file says it ran at concurrency 4 (requests in flight), not 32"
        ]
        assert BenchmarkRun.objects.count() == 0

    def test_the_same_concurrency_as_the_file_is_accepted(self, api, brief):
        response = post(
            api, brief, AIPERF_C4.read_bytes(), name="aiperf.json", concurrency=4, **H100
        )
        assert response.status_code == 201, response.json()

    def test_a_form_rate_against_a_sweep_names_every_other_rate(self, api, brief):
        response = post(
            api, brief, real(SGLANG_4XH200), name="online.jsonl", gpu="h200-sxm-141gb",
            gpu_count=4, model="meta-llama/Llama-3.3-70B-Instruct", request_rate=4,
        )  # fmt: skip
        assert response.status_code == 400
        assert response.json()["errors"]["request_rate"] == [
            "the file says its runs were request rate 1, 2, 8, 16 (requests per second), not 4"
        ]

    def test_a_form_load_is_recorded_where_the_file_says_none(self, api, brief):
        response = post(
            api, brief, real(GENAI_CSV), name="profile_genai_perf.csv", model="m/x",
            concurrency=8, **H100,
        )  # fmt: skip
        assert response.status_code == 201, response.json()
        body = response.json()
        assert body["conditions"]["concurrency"] == 8
        assert body["estimate_at_import"]["inputs"]["concurrency_from"] == "run"

    def test_a_rate_of_zero_or_infinity_is_refused_by_the_api(self, api, brief):
        for rate in ("0", "inf"):
            response = post(
                api, brief, real(GENAI_CSV), name="g.csv", model="m/x", request_rate=rate, **H100
            )
            assert response.status_code == 400
            assert "request_rate" in response.json()["errors"]

    def test_the_upload_page_has_the_load_fields_and_refuses_a_contradiction(
        self, client, make_user, brief
    ):
        client.force_login(make_user(Role.PLATFORM, teams=[brief.team]))
        url = f"/benchmarks/briefs/{brief.pk}/upload/"
        page = client.get(url).content.decode()
        assert "Concurrency (requests in flight)" in page
        assert "Request rate (requests per second)" in page
        response = client.post(
            url,
            {"file": SimpleUploadedFile("a.json", AIPERF_C4.read_bytes()), "proxy": "on",
             "concurrency": 16, **H100},
        )  # fmt: skip
        assert response.status_code == 400
        assert response.context["form"].errors["concurrency"] == [
            "the file says it ran at concurrency 4 (requests in flight), not 16"
        ]


class TestDuplicatesAcrossExports:
    def test_guidellms_csv_of_a_sweep_already_imported_as_json_is_flagged(self, api, brief):
        json_runs = post(
            api, brief, (TOOL_RUNS / "guidellm_0_8_1_concurrent_2_4_benchmarks.json").read_bytes(),
            name="benchmarks.json", **H100,
        ).json()  # fmt: skip
        csv_runs = post(
            api, brief, (TOOL_RUNS / "guidellm_0_8_1_concurrent_2_4_benchmarks.csv").read_bytes(),
            name="benchmarks.csv", **H100,
        ).json()  # fmt: skip
        assert [run["conditions"]["duplicate_of_run"] for run in csv_runs] == [
            run["id"] for run in json_runs
        ]

    def test_the_check_is_an_indexed_lookup_that_loads_no_stored_figures(self, brief, make_user):
        where = {
            "brief": brief, "gpu": Gpu.objects.get(slug="a10g-24gb"), "gpu_count": 4,
            "created_by": make_user(Role.PLATFORM, teams=[brief.team]), "proxy": True,
        }  # fmt: skip
        raw = real("llmperf_yi34b_4xa10g_c4_summary.json")
        for copies in range(6):  # the team already has runs, the same figures among them
            services.benchmark_runs_import(raw=raw + b"\n" * copies, filename="a.json", **where)
        with CaptureQueriesContext(connection) as captured:
            outcome = services.benchmark_runs_import(raw=raw + b" ", filename="b.json", **where)
        assert (
            outcome.runs[0].conditions["duplicate_of_run"] == BenchmarkRun.objects.earliest("pk").pk
        )
        run_selects = [
            q["sql"]
            for q in captured
            if q["sql"].startswith("SELECT") and "benchmarkrun" in q["sql"]
        ]
        lookups = [sql for sql in run_selects if '"results_sha256" =' in sql]
        assert len(lookups) == 1
        # No query reads the team's stored figures to compare them (the old check loaded every
        # run of the team); only the same file's own runs are read (the re-import check).
        assert not [
            sql
            for sql in run_selects
            if '"benchmarks_benchmarkrun"."results"' in sql and '"raw_sha256" =' not in sql
        ]
        index = {i.name: i.fields for i in BenchmarkRun._meta.indexes}
        assert index["run_team_results_sha256"] == ["team", "results_sha256"]


SWEEP_RUN0 = "vllm_bench_sweep_serve_v0_25_1_opt125m_seqs4_c2_run0.json"
SWEEP_SUMMARY = "vllm_bench_sweep_serve_v0_25_1_opt125m_seqs4_c2_summary.json"


class TestVllmBenchSweepServeV0251:
    """`vllm bench serve` results as `vllm bench sweep serve` (vLLM 0.25.1) left them: the
    serve file, plus `run_number` and the sweep's serve parameter `max_num_seqs`. The file
    names no GPU (its repository's own test declares an RTX 3090, which the catalog has not),
    so the form names one."""

    def test_a_run_file_imports_its_percentiles_load_and_sweep_point(self, api, brief):
        response = post(api, brief, real(SWEEP_RUN0), name="run=0.json", **H100)
        assert response.status_code == 201, response.json()
        body = response.json()
        assert (body["tool"], body["model_named"]) == ("VLLM", "facebook/opt-125m")
        conditions, results = body["conditions"], body["results"]
        assert (conditions["request_rate"], conditions["max_concurrency"]) == ("inf", 2)
        assert conditions["endpoint_type"] == "openai"
        assert conditions["sweep_run_number"] == 0
        assert conditions["sweep_parameters"] == "max_num_seqs=4"
        assert body["label"] == "openai rate=inf concurrency=2 run=0 (max_num_seqs=4)"
        assert results["ttft_ms"] == pytest.approx(
            {"mean": 217.27289337468392, "p50": 44.92285849846667, "p99": 762.4942294094944}
        )
        assert results["itl_ms"]["p99"] == pytest.approx(22.26501848665066)
        assert results["tpot_ms"]["p50"] == pytest.approx(8.323490332986694)
        # The sweep asks for e2el (--percentile-metrics ttft,tpot,itl,e2el).
        assert results["e2e_latency_ms"]["p99"] == pytest.approx(876.8009717071254)
        assert results["request_throughput_rps"] == pytest.approx(5.859229976904171)
        assert results["output_tokens_per_s"] == pytest.approx(93.74767963046673)
        assert results["total_tokens_per_s"] == pytest.approx(281.2430388914002)
        assert (results["completed"], results["failed"]) == (8, 0)
        assert results["goodput_rps"] is None  # request_goodput null: no --goodput SLOs
        # 256 / 8 and 128 / 8 tokens a request.
        assert (results["input_tokens_mean"], results["output_tokens_mean"]) == (32.0, 16.0)

    def test_the_summary_is_two_replicates_named_by_their_run_number(self, api, brief):
        response = post(api, brief, real(SWEEP_SUMMARY), name="summary.json", **H100)
        assert response.status_code == 201, response.json()
        runs = response.json()
        assert [run["label"] for run in runs] == [
            "openai rate=inf concurrency=2 run=0 (max_num_seqs=4)",
            "openai rate=inf concurrency=2 run=1 (max_num_seqs=4)",
        ]
        assert [run["results"]["ttft_ms"]["p50"] for run in runs] == pytest.approx(
            [44.92285849846667, 38.187976999324746]
        )

    def test_the_run_file_and_its_line_of_the_summary_are_the_same_run(self, api, brief):
        first = post(api, brief, real(SWEEP_RUN0), name="run=0.json", **H100).json()
        runs = post(api, brief, real(SWEEP_SUMMARY), name="summary.json", **H100).json()
        assert runs[0]["conditions"]["duplicate_of_run"] == first["id"]
        assert "duplicate_of_run" not in runs[1]["conditions"]

    def test_without_a_gpu_in_the_form_the_import_asks_for_one(self, api, brief):
        response = post(api, brief, real(SWEEP_RUN0), name="run=0.json")
        assert response.status_code == 400
        assert response.json()["errors"]["gpu"] == [
            "the file does not say which GPU it ran on: choose it"
        ]


INFERENCEX_C16 = "inferencex_benchmark_serving_gpt_oss_120b_c16_16gpus.json"


class TestInferencexBenchmarkServingMultiNode:
    """InferenceX's copy of vLLM's benchmark_serving.py (utils/bench_serving/), one
    disaggregated gpt-oss-120b point at concurrency 16. The GPU (the repository's AMD
    multi-node scripts ran it) and the 16 GPUs (8 prefill + 8 decode) are in the file's name
    and scripts only, not in the file, so the form names them."""

    def test_its_p90_and_p99_are_read_and_its_p99_9_left_out(self, api, brief):
        response = post(
            api, brief, real(INFERENCEX_C16), name="concurrency_16.json", gpu="mi355x-288gb",
            gpu_count=16,
        )  # fmt: skip
        assert response.status_code == 201, response.json()
        body = response.json()
        assert (body["gpu"], body["gpu_count"]) == ("mi355x-288gb", 16)
        conditions, results = body["conditions"], body["results"]
        assert (conditions["request_rate"], conditions["max_concurrency"]) == ("inf", 16)
        assert conditions["num_prompts"] == 160
        assert results["ttft_ms"] == pytest.approx(
            {
                "mean": 185.00612755160546,
                "p50": 104.43462803959846,
                "p90": 668.5733429389074,
                "p99": 687.9313375009224,
            }
        )
        assert results["itl_ms"]["p90"] == pytest.approx(9.187642950564623)
        assert results["tpot_ms"]["p99"] == pytest.approx(9.092274875981406)
        assert results["e2e_latency_ms"]["p50"] == pytest.approx(9359.918448608369)
        assert results["output_tokens_per_s"] == pytest.approx(1725.5812148243967)
        assert results["request_throughput_rps"] == pytest.approx(1.68513790510195)
        assert results["completed"] == 160
        assert results["failed"] is None  # benchmark_serving.py writes no failed count
        assert results["goodput_rps"] is None  # "request_goodput:" null, with its colon
        assert results["input_tokens_mean"] == results["output_tokens_mean"] == 1024.0
        assert results["duration_s"] == pytest.approx(94.94771882798523)


TRTLLM_EAGLE = "trtllm_bench_gpt_oss_120b_tp8_eagle_report.json"


class TestTrtllmBenchWithoutStreaming:
    """`trtllm-bench throughput --report_json` (TensorRT-LLM 1.1.0rc2, PyTorch backend, TP 8,
    EP 4, Eagle) on 8 x B200 (its repository's README; the report has no machine block): run
    without --streaming, so it has no streaming_metrics and no TTFT."""

    def test_it_is_refused_saying_to_run_with_streaming(self, api, brief):
        response = post(
            api, brief, real(TRTLLM_EAGLE), name="trtllm_bench_report.json",
            gpu="b200-sxm-180gb", gpu_count=8,
        )  # fmt: skip
        assert response.status_code == 400
        message = response.json()["errors"]["file"][0]
        assert message.startswith("missing required figure: ttft")
        assert "run trtllm-bench throughput with --streaming" in message
        assert BenchmarkRun.objects.count() == 0


AIPERF_0_11_C16 = "aiperf_0_11_qwen3_4b_c16_profile_export_aiperf.json"


class TestAiperf011OnOneGpu:
    """AIPerf 0.11.0's profile_export_aiperf.json (schema 1.3) of Qwen3-4B FP8 on vLLM 0.29.0 at
    concurrency 16 (one level of a 16..768 sweep). It ran on one RTX PRO 4500 Blackwell (the
    study's README); the file names no GPU and the catalog has no RTX PRO 4500, so the form
    names another."""

    def test_its_profiling_phase_gives_the_load_and_its_figures_are_read(self, api, brief):
        response = post(
            api, brief, real(AIPERF_0_11_C16), name="profile_export_aiperf.json", **H100
        )
        assert response.status_code == 201, response.json()
        body = response.json()
        assert (body["tool"], body["tool_version"]) == ("AIPERF", "0.11.0")
        assert body["model_named"] == "qwen3-4b"
        # input_config.phases: {"name": "profiling", "type": "concurrency", "concurrency": 16}
        # (0.11 writes no "kind"); the estimate is made at the file's load, not the brief's.
        assert body["conditions"]["concurrency"] == 16
        assert body["label"] == "concurrency=16"
        inputs = body["estimate_at_import"]["inputs"]
        assert (inputs["concurrency"], inputs["concurrency_from"]) == (16, "run")
        results = body["results"]
        assert results["ttft_ms"]["p50"] == pytest.approx(26.7700945)
        assert results["ttft_ms"]["p95"] == pytest.approx(40.51439944999998)
        # inter_token_latency (first token excluded) is the TPOT; inter_chunk_latency the ITL.
        assert results["tpot_ms"]["mean"] == pytest.approx(8.77927431816552)
        assert results["itl_ms"]["p99"] == pytest.approx(16.03902264088357)
        assert results["e2e_latency_ms"]["p90"] == pytest.approx(4260.8727653)
        assert results["request_throughput_rps"] == pytest.approx(6.814794988917071)
        assert results["output_tokens_per_s"] == pytest.approx(1792.2310692134672)
        assert (results["completed"], results["failed"]) == (2044, 0)
        assert results["goodput_rps"] == pytest.approx(6.814794988917071)
        assert results["duration_s"] == pytest.approx(299.935655192)

    def test_the_csv_of_the_same_run_gives_the_same_figures_to_two_places(self, api, brief):
        # The CSV ends with the GPU telemetry table's header and no rows (telemetry collected
        # nothing); it names no model, so the form does.
        response = post(
            api, brief, real(AIPERF_0_11_C16.replace(".json", ".csv")),
            name="profile_export_aiperf.csv", model="Qwen/Qwen3-4B-Instruct-2507-FP8", **H100,
        )  # fmt: skip
        assert response.status_code == 201, response.json()
        csv_results = response.json()["results"]
        json_results = post(
            api, brief, real(AIPERF_0_11_C16), name="profile_export_aiperf.json", **H100
        ).json()["results"]
        for canon in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_latency_ms"):
            assert set(csv_results[canon]) == set(json_results[canon]), canon
            for stat, value in json_results[canon].items():
                assert csv_results[canon][stat] == pytest.approx(value, abs=0.005), (canon, stat)
        for key in ("request_throughput_rps", "output_tokens_per_s", "goodput_rps", "duration_s"):
            assert csv_results[key] == pytest.approx(json_results[key], abs=0.005), key
        assert csv_results["completed"] == json_results["completed"] == 2044
