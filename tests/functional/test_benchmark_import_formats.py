"""POST /api/v1/benchmark-runs/import with the llm-d Benchmark Report, MLPerf Endpoints,
trtllm-bench and SGLang bench_serving files: exact canonical figures through the API, bad
files refused with a 400 that saves nothing, re-imports recognised, and the model rule (a
file of another model only as a proxy; a file that names none only with ``model``)."""

import json
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.benchmarks.models import BenchmarkRun
from apps.core.roles import Role
from tests.factories.briefs import BriefFactory

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parents[1] / "data" / "benchmarks"
H100 = "h100-sxm5-80gb"
IMPORT_URL = "/api/v1/benchmark-runs/import"
#: The brief's model (BriefFactory: the llama-3.1-8b preset), for files that name none.
BRIEF_MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def fixture(name: str) -> bytes:
    return (DATA / name).read_bytes()


def stored_files() -> set[str]:
    found: set[str] = set()

    def walk(path: str) -> None:
        dirs, files = default_storage.listdir(path)
        found.update(f"{path}/{f}" if path else f for f in files)
        for d in dirs:
            walk(f"{path}/{d}" if path else d)

    walk("")
    return found


@pytest.fixture
def brief(catalog, team):
    return BriefFactory(team=team)


@pytest.fixture
def api(token_client):
    return token_client(Role.PLATFORM)


def post(client, brief, raw, *, name="result.json", **fields):
    data = {
        "brief": brief.pk,
        "gpu": H100,
        "gpu_count": 1,
        "file": SimpleUploadedFile(name, raw, content_type="application/json"),
    }
    data.update(fields)
    return client.post(IMPORT_URL, {k: v for k, v in data.items() if v is not None})


class TestLlmdBenchmarkReport:
    def test_v0_1_of_the_brief_model(self, api, brief):
        response = post(api, brief, fixture("inference_perf_br_v0_1.json"))
        assert response.status_code == 201, response.json()
        body = response.json()
        assert body["tool"] == "INFERENCE_PERF" and body["proxy"] is False
        assert body["model"] == "llama-3.1-8b"
        r = body["results"]
        assert r["ttft_ms"] == {
            "mean": 85.5,
            "p50": 72.25,
            "p90": 130.0,
            "p95": 151.5,
            "p99": 203.25,
        }
        assert r["tpot_ms"]["mean"] == 14.5  # not NTPOT (14.777, first token included)
        assert (r["completed"], r["failed"]) == (498, 2)
        assert r["output_tokens_per_s"] == 1274.88

    def test_v0_2_of_another_model_needs_proxy(self, api, brief):
        raw = fixture("inference_perf_br_v0_2.json")
        before = stored_files()
        refused = post(api, brief, raw)
        assert refused.status_code == 400
        assert refused.json()["detail"].startswith(
            "model: the file was run with Qwen/Qwen3-0.6B, not the brief's model llama-3.1-8b"
        )
        assert BenchmarkRun.objects.count() == 0 and stored_files() == before
        body = post(api, brief, raw, proxy="true").json()
        assert body["proxy"] is True and body["model_named"] == "Qwen/Qwen3-0.6B"
        assert body["tool_version"] == "0.3.0"
        assert body["results"]["ttft_ms"]["p90"] == pytest.approx(42.6)  # seconds in the file
        assert body["results"]["duration_s"] == pytest.approx(59.8)

    def test_inference_perf_summary_of_all_stages_is_refused_for_its_stage_files(self, api, brief):
        raw = fixture("inference_perf_lifecycle_summary_2026_08.json")
        response = post(api, brief, raw, model=BRIEF_MODEL)
        assert response.status_code == 400
        assert "stage_N_lifecycle_metrics.json" in response.json()["errors"]["file"][0]


class TestMlperfEndpoints:
    def test_a_file_that_names_no_model_needs_model(self, api, brief):
        raw = fixture("mlperf_endpoints_result_summary_2026_08.json")
        before = stored_files()
        refused = post(api, brief, raw)
        assert refused.status_code == 400
        assert refused.json()["detail"].startswith("model: the file names no model")
        assert BenchmarkRun.objects.count() == 0 and stored_files() == before
        response = post(api, brief, raw, model=BRIEF_MODEL)
        assert response.status_code == 201, response.json()
        body = response.json()
        assert body["tool"] == "MLPERF_ENDPOINTS" and body["tool_version"] == "0.2.0"
        assert body["model_named"] == BRIEF_MODEL and body["proxy"] is False
        r = body["results"]
        assert r["ttft_ms"] == {
            "mean": 250.0,
            "p50": 231.5,
            "p90": 402.0,
            "p95": 455.0,
            "p99": 610.25,
        }
        assert r["output_tokens_per_s"] == pytest.approx(2560.0)
        assert r["total_tokens_per_s"] is None
        assert body["conditions"]["load_pattern"] == "poisson"

    def test_may_2026_layout(self, api, brief):
        body = post(
            api, brief, fixture("mlperf_endpoints_result_summary_2026_05.json"), model=BRIEF_MODEL
        ).json()
        assert body["results"]["request_throughput_rps"] == 4.99
        assert "as Report.qps()" in body["source_names"]["request_throughput_rps"]


class TestTrtllmBench:
    def test_v0_18_report(self, api, brief):
        body = post(api, brief, fixture("trtllm_bench_v0_18.json")).json()
        assert body["tool"] == "TRTLLM_BENCH" and body["tool_version"] == "0.18.0"
        assert body["results"]["tpot_ms"]["p99"] == 18.9
        assert body["results"]["total_tokens_per_s"] is None
        # avg_num_concurrent_requests is measured: the estimate uses the brief's concurrency.
        assert body["estimate_at_import"]["inputs"]["concurrency_from"] == "brief"

    def test_tp4_report_keeps_the_system_rate(self, api, brief):
        raw = fixture("trtllm_bench_v1_1.json")  # Llama 3.1 70B: a proxy of the brief's 8B
        body = post(api, brief, raw, gpu_count=4, proxy="true").json()
        assert body["gpu_count"] == 4 and body["proxy"] is True
        assert body["results"]["output_tokens_per_s"] == 4800.0  # not 1200 per GPU
        assert body["results"]["total_tokens_per_s"] == 15040.0

    def test_a_report_without_streaming_is_refused(self, api, brief):
        data = json.loads(fixture("trtllm_bench_v0_18.json"))
        del data["streaming_metrics"]
        before = stored_files()
        response = post(api, brief, json.dumps(data).encode())
        assert response.status_code == 400
        assert response.json()["detail"].startswith("file: missing required figure: ttft")
        assert "--streaming" in response.json()["detail"]
        assert BenchmarkRun.objects.count() == 0 and stored_files() == before


class TestSglangBenchServing:
    def test_2025_line_with_infinity_rate(self, api, brief):
        raw = fixture("sglang_bench_serving_2025.jsonl")
        response = post(api, brief, raw, name="sglang.jsonl", model=BRIEF_MODEL)
        assert response.status_code == 201, response.json()
        body = response.json()
        assert body["tool"] == "SGLANG_BENCH"
        assert body["conditions"]["request_rate"] == "inf"
        assert body["conditions"]["measured_concurrency"] == 63.975
        assert body["estimate_at_import"]["inputs"]["concurrency"] == 64  # max_concurrency
        assert body["results"]["itl_ms"] == {"mean": 9.4, "p50": 8.75, "p95": 14.5, "p99": 38.25}

    def test_2024_lines_give_a_list_and_a_reimport_is_a_duplicate(self, api, brief):
        raw = fixture("sglang_bench_serving_2024.jsonl")
        first = post(api, brief, raw, model=BRIEF_MODEL)
        assert first.status_code == 201
        runs = first.json()
        assert [run["label"] for run in runs] == ["sglang rate=4", "sglang rate=8"]
        assert runs[0]["results"]["request_throughput_rps"] == 4.0
        files = stored_files()
        again = post(api, brief, raw, name="renamed.jsonl", model=BRIEF_MODEL)
        assert again.status_code == 200
        assert [run["id"] for run in again.json()] == [run["id"] for run in runs]
        assert all(run["duplicate"] for run in again.json())
        assert BenchmarkRun.objects.count() == 2 and stored_files() == files

    def test_a_bad_line_saves_nothing(self, api, brief):
        lines = fixture("sglang_bench_serving_2024.jsonl").splitlines()
        bad = json.loads(lines[1])
        bad["output_throughput"] = -1
        raw = lines[0] + b"\n" + json.dumps(bad).encode() + b"\n"
        before = stored_files()
        response = post(api, brief, raw, model=BRIEF_MODEL)
        assert response.status_code == 400
        assert response.json()["detail"] == (
            "file: negative value for line 2: output_throughput: -1.0"
        )
        assert BenchmarkRun.objects.count() == 0 and stored_files() == before


@pytest.mark.parametrize(
    ("name", "fields"),
    [
        ("inference_perf_br_v0_1.json", {}),
        ("inference_perf_lifecycle_stage_2025_08.json", {"model": BRIEF_MODEL}),
        ("mlperf_endpoints_result_summary_2026_05.json", {"model": BRIEF_MODEL}),
        ("trtllm_bench_v0_18.json", {}),
        ("sglang_bench_serving_2025.jsonl", {"model": BRIEF_MODEL}),
    ],
)
def test_reimport_of_each_format_is_recognised(api, brief, name, fields):
    first = post(api, brief, fixture(name), **fields)
    assert first.status_code == 201, first.json()
    second = post(api, brief, fixture(name), **fields)
    assert second.status_code == 200 and second.json()["duplicate"] is True
    assert second.json()["id"] == first.json()["id"]
    assert BenchmarkRun.objects.count() == 1


@pytest.mark.parametrize(
    "name",
    [
        "inference_perf_br_v0_2.json",
        "mlperf_endpoints_result_summary_2026_08.json",
        "trtllm_bench_v1_1.json",
        "sglang_bench_serving_2025.jsonl",
    ],
)
def test_naming_the_wrong_tool_saves_nothing(api, brief, name):
    before = stored_files()
    response = post(api, brief, fixture(name), tool="guidellm", model=BRIEF_MODEL, proxy="true")
    assert response.status_code == 400
    assert response.json()["detail"].endswith("file, not GuideLLM")
    assert BenchmarkRun.objects.count() == 0 and stored_files() == before
