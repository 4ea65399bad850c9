"""/api/v1/benchmark-runs/: import each tool's results file with exact canonical figures,
refuse bad files with a 400 that saves nothing (no row, no stored file), recognise re-imports,
runs entered by hand, roles and team scoping."""

import json
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from apps.benchmarks.models import BenchmarkRun
from apps.catalog.models import Gpu
from apps.core.roles import Role
from apps.engine import ENGINE_VERSION
from tests.factories.benchmarks import needs_proxy
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import QuoteFactory

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parents[1] / "data" / "benchmarks"
H100 = "h100-sxm5-80gb"
RUN_KEYS = {
    "id", "brief", "gpu", "gpu_count", "quote", "system", "phase", "model", "model_named",
    "proxy", "weight_precision", "tool", "tool_version",
    "label", "conditions", "results", "source_names", "estimate_at_import", "raw_sha256",
    "raw_file_url", "superseded_by", "created_by", "created_at",
}  # fmt: skip
IMPORT_URL = "/api/v1/benchmark-runs/import"


def fixture(name: str) -> bytes:
    return (DATA / name).read_bytes()


def stored_files() -> set[str]:
    """Every file in the (in-memory) default storage."""
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
def platform_api(token_client):
    return token_client(Role.PLATFORM)


def post_file(client, brief, raw, *, name="result.json", **fields):
    data = {
        "brief": brief.pk,
        "gpu": H100,
        "gpu_count": 1,
        "file": SimpleUploadedFile(name, raw, content_type="application/json"),
    }
    if needs_proxy(brief, raw):  # a file of another model than the brief's (Llama 3.1 8B)
        data["proxy"] = "true"
    data.update(fields)
    return client.post(IMPORT_URL, {k: v for k, v in data.items() if v is not None})


class TestImportEachTool:
    def test_vllm_benchmark_serving_gives_exact_percentiles_and_counts(self, platform_api, brief):
        response = post_file(platform_api, brief, fixture("vllm_benchmark_serving_v0_6_4.json"))
        assert response.status_code == 201, response.json()
        body = response.json()
        assert set(body) == RUN_KEYS | {"duplicate"}
        assert body["duplicate"] is False
        assert body["tool"] == "VLLM" and body["tool_version"] == ""
        assert body["phase"] == "THROUGHPUT_LATENCY"
        assert body["gpu"] == H100 and body["gpu_count"] == 1 and body["brief"] == brief.pk
        r = body["results"]
        assert r["ttft_ms"] == {
            "mean": 85.5,
            "p50": 72.25,
            "p90": 130.0,
            "p95": 151.5,
            "p99": 203.25,
        }
        assert r["tpot_ms"] == {"mean": 14.5, "p50": 14.25, "p90": 16.5, "p95": 17.25, "p99": 19.0}
        assert r["itl_ms"] == {"mean": 14.375, "p50": 13.5, "p90": 17.0, "p95": 21.5, "p99": 42.75}
        assert r["e2e_latency_ms"] == {
            "mean": 3783.0, "p50": 3706.0, "p90": 4337.5, "p95": 4533.0, "p99": 4935.5,
        }  # fmt: skip
        assert r["completed"] == 500 and r["failed"] is None
        assert r["goodput_rps"] == 7.5
        assert r["output_tokens_per_s"] == 2000.0 and r["total_tokens_per_s"] == 10000.0
        assert r["input_tokens_mean"] == 1024.0 and r["output_tokens_mean"] == 256.0
        assert body["conditions"]["max_concurrency"] == 64
        assert body["source_names"]["goodput_rps"].startswith("vLLM: request_goodput:")
        assert body["label"] == "vllm rate=8.0 concurrency=64"
        assert body["raw_file_url"] == f"/api/v1/benchmark-runs/{body['id']}/raw"

    def test_vllm_bench_serve_counts_failures(self, platform_api, brief):
        body = post_file(platform_api, brief, fixture("vllm_bench_serve_v0_11.json")).json()
        assert body["results"]["ttft_ms"] == {"mean": 212.5, "p50": 180.75, "p99": 611.25}
        assert body["results"]["completed"] == 990 and body["results"]["failed"] == 10
        assert "e2e_latency_ms" not in body["results"]

    def test_vllm_legacy_request_inthroughput(self, platform_api, brief):
        body = post_file(platform_api, brief, fixture("vllm_benchmark_serving_v0_4.json")).json()
        assert body["results"]["request_throughput_rps"] == 4.166666666666667
        assert body["results"]["tpot_ms"] == {"mean": 48.125, "p50": 44.5, "p99": 211.75}
        assert body["conditions"]["backend_version"] == "0.4.0.post1"

    def test_vllm_append_result_lines_give_a_list(self, platform_api, brief):
        response = post_file(
            platform_api, brief, fixture("vllm_bench_serve_append.jsonl"), tool="vllm"
        )
        assert response.status_code == 201
        body = response.json()
        assert isinstance(body, list) and len(body) == 2
        assert [b["results"]["request_throughput_rps"] for b in body] == [0.5, 6.25]
        assert [b["conditions"]["max_concurrency"] for b in body] == [1, 16]

    def test_guidellm_file_gives_a_list_of_runs(self, platform_api, brief):
        response = post_file(platform_api, brief, fixture("guidellm_v0_2.json"))
        assert response.status_code == 201
        sync, const = response.json()
        assert sync["tool"] == "GUIDELLM" and sync["label"] == "synchronous"
        assert const["label"] == "constant@4.0 req/s"
        assert sync["results"]["ttft_ms"] == {
            "mean": 40.0, "p50": 39.5, "p90": 44.0, "p95": 46.0, "p99": 51.0,
        }  # fmt: skip
        assert sync["results"]["tpot_ms"] == {
            "mean": 10.8, "p50": 10.75, "p90": 11.0, "p95": 11.25, "p99": 11.5,
        }  # fmt: skip
        assert sync["results"]["e2e_latency_ms"] == pytest.approx(
            {"mean": 2794.0, "p50": 2790.0, "p90": 2850.0, "p95": 2900.0, "p99": 2950.0}
        )
        assert (sync["results"]["completed"], sync["results"]["failed"]) == (10, 0)
        assert (const["results"]["completed"], const["results"]["failed"]) == (118, 2)
        assert sync["raw_sha256"] == const["raw_sha256"]
        assert BenchmarkRun.objects.count() == 2

    def test_guidellm_v0_5_version_and_sweep(self, platform_api, brief):
        c8, c32 = post_file(platform_api, brief, fixture("guidellm_v0_5.json")).json()
        assert c8["tool_version"] == "0.5.0"
        assert [c8["label"], c32["label"]] == ["concurrent@8", "concurrent@32"]
        assert c8["results"]["tpot_ms"] == {
            "mean": 12.3, "p50": 12.25, "p90": 12.9, "p95": 13.2, "p99": 14.1,
        }  # fmt: skip
        assert (c32["results"]["completed"], c32["results"]["failed"]) == (580, 3)
        assert c8["estimate_at_import"]["inputs"]["concurrency"] == 8
        assert c32["estimate_at_import"]["inputs"]["concurrency"] == 32

    def test_aiperf_records(self, platform_api, brief):
        body = post_file(platform_api, brief, fixture("aiperf_v0_1_records.json")).json()
        r = body["results"]
        assert body["tool"] == "AIPERF"
        assert r["ttft_ms"] == {
            "mean": 118.5,
            "p50": 110.25,
            "p90": 160.0,
            "p95": 181.5,
            "p99": 240.0,
        }
        assert r["tpot_ms"] == {
            "mean": 14.375,
            "p50": 14.25,
            "p90": 15.5,
            "p95": 16.0,
            "p99": 17.25,
        }
        assert (r["completed"], r["failed"]) == (400, 2)

    def test_aiperf_flat(self, platform_api, brief):
        body = post_file(platform_api, brief, fixture("aiperf_v0_3.json"), tool="aiperf").json()
        assert body["tool_version"] == "0.3.0"
        assert body["results"]["itl_ms"] == {
            "mean": 51.2, "p50": 50.9, "p90": 53.0, "p95": 54.5, "p99": 61.0,
        }  # fmt: skip
        assert (body["results"]["completed"], body["results"]["failed"]) == (200, 3)

    def test_genai_perf(self, platform_api, brief):
        body = post_file(platform_api, brief, fixture("genai_perf_v0_0_8.json")).json()
        assert body["tool"] == "GENAI_PERF"
        assert body["results"]["ttft_ms"] == {
            "mean": 38.25, "p50": 36.5, "p90": 44.0, "p95": 47.5, "p99": 60.0,
        }  # fmt: skip
        assert body["results"]["completed"] is None and body["results"]["failed"] is None
        other = post_file(
            platform_api, brief, fixture("genai_perf_v25_config.json"), tool="genai-perf"
        ).json()
        assert other["results"]["ttft_ms"]["p95"] == 131.5
        assert other["results"]["completed"] == 316 and other["results"]["goodput_rps"] == 9.5

    def test_llmperf_seconds_become_ms(self, platform_api, brief):
        body = post_file(platform_api, brief, fixture("llmperf_summary_flat.json")).json()
        r = body["results"]
        assert body["tool"] == "LLMPERF" and body["tool_version"] == "2023-08-31"
        assert r["ttft_ms"] == pytest.approx(
            {"mean": 500.0, "p50": 462.5, "p90": 710.0, "p95": 840.0, "p99": 1125.0}
        )
        assert r["tpot_ms"] == pytest.approx({"mean": 62.5})
        assert "derived" in body["source_names"]["tpot_ms.mean"]
        assert (r["completed"], r["failed"]) == (200, 0)
        nested = post_file(
            platform_api, brief, fixture("llmperf_summary_nested_errors.json"), tool="llmperf"
        ).json()
        assert (nested["results"]["completed"], nested["results"]["failed"]) == (494, 6)
        assert nested["results"]["ttft_ms"]["p99"] == pytest.approx(750.0)

    def test_detail_returns_the_same_object(self, platform_api, brief):
        created = post_file(platform_api, brief, fixture("vllm_bench_serve_v0_11.json")).json()
        fetched = platform_api.get(f"/api/v1/benchmark-runs/{created['id']}/").json()
        assert fetched == {k: v for k, v in created.items() if k != "duplicate"}

    def test_conditions_given_with_the_file_are_kept(self, platform_api, brief):
        body = post_file(
            platform_api,
            brief,
            fixture("vllm_bench_serve_v0_11.json"),
            framework="vllm",
            framework_version="0.11.0",
            precision="FP8",
            burst_profile="poisson",
        ).json()
        assert body["conditions"]["framework"] == "vllm"
        assert body["conditions"]["framework_version"] == "0.11.0"
        assert body["conditions"]["precision"] == "FP8"
        assert body["conditions"]["burst_profile"] == "poisson"


def _without_ttft() -> bytes:
    data = json.loads(fixture("vllm_benchmark_serving_v0_6_4.json"))
    for key in [k for k in data if "ttft" in k]:
        del data[key]
    return json.dumps(data).encode()


def _with(key: str, value: object) -> bytes:
    data = json.loads(fixture("vllm_benchmark_serving_v0_6_4.json"))
    data[key] = value
    return json.dumps(data).encode()


VLLM_RAW = fixture("vllm_benchmark_serving_v0_6_4.json")
BAD_FILES = [
    pytest.param(b"hello, world", {}, "file: not JSON", id="not-json"),
    pytest.param(VLLM_RAW[: len(VLLM_RAW) // 2], {}, "file: truncated JSON", id="truncated"),
    pytest.param(
        fixture("guidellm_v0_2.json"), {"tool": "vllm"}, "this is a GuideLLM file, not vLLM",
        id="wrong-tool-named",
    ),
    pytest.param(_without_ttft(), {}, "missing required figure: ttft", id="missing-figure"),
    pytest.param(_with("mean_ttft_ms", -5), {}, "negative value for mean_ttft_ms", id="negative"),
    pytest.param(
        VLLM_RAW.replace(b'"mean_tpot_ms": 14.5', b'"mean_tpot_ms": NaN'), {}, "NaN",
        id="nan",
    ),
    pytest.param(b"[1, 2, 3]", {}, "not a benchmark result", id="json-list"),
    pytest.param(b'{"hello": "world"}', {}, "unrecognised result file", id="unknown-layout"),
    pytest.param(b"", {}, "file:", id="empty"),
    pytest.param(VLLM_RAW, {"tool": "locust"}, "tool: unknown tool 'locust'", id="unknown-tool"),
    pytest.param(
        VLLM_RAW, {"gpu": "nope-9000"}, "gpu: no GPU 'nope-9000' in the catalog", id="gpu"
    ),
    pytest.param(VLLM_RAW, {"gpu_count": 0}, "gpu_count:", id="gpu-count"),
    # A form field documented as an integer is spelled as one (DRF alone reads these as 2).
    pytest.param(VLLM_RAW, {"gpu_count": "2.0"}, "gpu_count: must be a whole number", id="2.0"),
    pytest.param(VLLM_RAW, {"gpu_count": " 2"}, "gpu_count: must be a whole number", id="pad"),
    pytest.param(
        VLLM_RAW, {"gpu_count": "\u0662"}, "gpu_count: must be a whole number", id="arabic-2"
    ),
]  # fmt: skip


class TestBadImportsSaveNothing:
    @pytest.mark.parametrize(("raw", "fields", "message"), BAD_FILES)
    def test_bad_input_is_a_400_naming_it(self, platform_api, brief, raw, fields, message):
        before = stored_files()
        response = post_file(platform_api, brief, raw, **fields)
        assert response.status_code == 400
        assert message in response.json()["detail"]
        assert BenchmarkRun.objects.count() == 0
        assert stored_files() == before

    def test_brief_of_another_team(self, platform_api, catalog, other_team):
        before = stored_files()
        foreign = BriefFactory(team=other_team)
        response = post_file(platform_api, foreign, VLLM_RAW)
        assert response.status_code == 400
        assert response.json()["detail"] == f"brief: no brief #{foreign.pk} in your teams"
        assert BenchmarkRun.objects.count() == 0 and stored_files() == before

    def test_quote_of_another_gpu(self, platform_api, brief):
        before = stored_files()
        quote = QuoteFactory(gpu=Gpu.objects.get(slug="a100-sxm4-80gb"))
        response = post_file(platform_api, brief, VLLM_RAW, quote=quote.pk)
        assert response.status_code == 400
        assert response.json()["detail"] == (
            f"quote: quote #{quote.pk} is for a100-sxm4-80gb, not for the run's GPU {H100}"
        )
        assert BenchmarkRun.objects.count() == 0 and stored_files() == before

    def test_quote_of_the_run_gpu_is_kept(self, platform_api, brief):
        quote = QuoteFactory()
        body = post_file(platform_api, brief, VLLM_RAW, quote=quote.pk).json()
        assert body["quote"] == quote.pk

    def test_file_over_the_limit_is_refused(self, platform_api, brief, settings):
        settings.BENCHMARK_MAX_UPLOAD_BYTES = 1000
        before = stored_files()
        response = post_file(platform_api, brief, VLLM_RAW)  # 1078 bytes
        assert response.status_code == 400
        assert response.json()["detail"] == (
            f"file: file too large: {len(VLLM_RAW)} bytes, the limit is 1000 bytes"
        )
        assert BenchmarkRun.objects.count() == 0 and stored_files() == before

    def test_a_200_mb_upload_is_refused_before_its_body_is_read(self, platform_api, brief):
        # The body is small; Content-Length claims 200 MB. Reading past the real body would
        # fail the test client's payload, so a 400 proves the body was never read.
        response = platform_api.generic(
            "POST",
            IMPORT_URL,
            b"x" * 100,
            content_type="multipart/form-data; boundary=BoUnDaRy",
            CONTENT_LENGTH=str(200 * 1024 * 1024),
        )
        assert response.status_code == 400
        assert response.json()["detail"].startswith("file: upload too large: 209715200 bytes")
        assert BenchmarkRun.objects.count() == 0

    def test_a_file_over_the_memory_limits_but_under_the_upload_limit_is_imported(
        self, platform_api, brief
    ):
        # Larger than DATA_UPLOAD_MAX_MEMORY_SIZE (5 MB) and FILE_UPLOAD_MAX_MEMORY_SIZE:
        # streamed to a temporary file, never refused as "request too big".
        data = json.loads(VLLM_RAW)
        data["padding"] = "x" * (6 * 1024 * 1024)
        raw = json.dumps(data).encode()
        response = post_file(platform_api, brief, raw)
        assert response.status_code == 201, response.json()
        assert response.json()["results"]["completed"] == 500

    def test_a_failure_after_the_file_is_stored_deletes_it(self, platform_api, brief, monkeypatch):
        before = stored_files()

        def explode(**kwargs):
            raise RuntimeError("database went away")

        monkeypatch.setattr("apps.benchmarks.services.candidate_tables_request_recompute", explode)
        client = platform_api
        client.raise_request_exception = False
        response = post_file(client, brief, VLLM_RAW)
        assert response.status_code == 500
        assert BenchmarkRun.objects.count() == 0
        assert stored_files() == before


class TestReimport:
    def test_same_file_same_candidate_is_a_duplicate(self, platform_api, brief):
        first = post_file(platform_api, brief, VLLM_RAW)
        files = stored_files()
        second = post_file(platform_api, brief, VLLM_RAW, name="renamed.json")
        assert (first.status_code, second.status_code) == (201, 200)
        assert second.json()["duplicate"] is True
        assert second.json()["id"] == first.json()["id"]
        assert BenchmarkRun.objects.count() == 1
        assert stored_files() == files

    def test_guidellm_reimport_answers_the_list(self, platform_api, brief):
        first = post_file(platform_api, brief, fixture("guidellm_v0_5.json")).json()
        second = post_file(platform_api, brief, fixture("guidellm_v0_5.json"))
        assert second.status_code == 200
        assert [r["id"] for r in second.json()] == [r["id"] for r in first]
        assert all(r["duplicate"] for r in second.json())
        assert BenchmarkRun.objects.count() == 2

    def test_same_file_on_another_gpu_count_is_a_new_run(self, platform_api, brief):
        post_file(platform_api, brief, VLLM_RAW)
        assert post_file(platform_api, brief, VLLM_RAW, gpu_count=2).status_code == 201
        assert BenchmarkRun.objects.count() == 2


class TestEstimateAtImport:
    def test_engine_prediction_for_the_run_conditions_is_stored(self, platform_api, brief):
        body = post_file(platform_api, brief, VLLM_RAW).json()
        estimate = body["estimate_at_import"]
        assert estimate["engine_version"] == ENGINE_VERSION
        for key in ("output_tokens_per_s", "ttft_ms", "tpot_ms", "e2e_latency_ms"):
            assert estimate[key] > 0
        assert estimate["inputs"] == {
            "input_tokens": 1024, "input_tokens_from": "run",
            "output_tokens": 256, "output_tokens_from": "run",
            "concurrency": 64, "concurrency_from": "run", "replicas": 1,
        }  # fmt: skip

    def test_unknown_concurrency_falls_back_to_the_brief(self, platform_api, brief):
        body = post_file(platform_api, brief, fixture("vllm_benchmark_serving_v0_4.json")).json()
        inputs = body["estimate_at_import"]["inputs"]
        assert inputs["concurrency"] == brief.concurrency
        assert inputs["concurrency_from"] == "brief"

    def test_engine_error_is_stored_and_the_run_imported(self, platform_api, catalog, team):
        brief = BriefFactory(team=team, model_preset="")
        # The brief names no model, so the import says which one ran (here: the file's).
        model = "meta-llama/Llama-3.1-8B-Instruct"
        response = post_file(platform_api, brief, VLLM_RAW, model=model, proxy=None)
        assert response.status_code == 201, response.json()
        assert set(response.json()["estimate_at_import"]) == {"error", "engine_version"}
        assert response.json()["estimate_at_import"]["error"].startswith("model")


def manual_body(brief, **changes):
    body = {
        "brief": brief.pk,
        "gpu": H100,
        "gpu_count": 2,
        "phase": "MEMORY_FIT",
        "label": "llama 8B fp8 at 32k context",
        "conditions": {"model": "llama-3.1-8b", "precision": "FP8", "framework": "vllm",
                       "framework_version": "0.11.0", "input_tokens": 1000,
                       "output_tokens": 200, "concurrency": 32},
        "results": {"peak_memory_gb": 71.5, "oom_rate": 0.0, "headroom_gb": 8.5},
    }  # fmt: skip
    body.update(changes)
    return body


CHECKS = {
    "kill_worker": {"passed": True, "time_s": 12.5, "notes": "traffic moved in 12 s"},
    "drain_node": {"passed": True, "time_s": 95, "notes": ""},
    "cold_start_model_load": {"passed": False, "time_s": 410, "notes": "weights pulled over WAN"},
    "cost_attribution_retries": {"passed": True, "time_s": None, "notes": "tags survive"},
}


class TestManualRuns:
    def test_memory_fit_run(self, platform_api, brief):
        response = platform_api.post("/api/v1/benchmark-runs/", manual_body(brief), format="json")
        assert response.status_code == 201, response.json()
        body = response.json()
        assert body["tool"] == "MANUAL" and body["phase"] == "MEMORY_FIT"
        assert body["results"] == {"peak_memory_gb": 71.5, "oom_rate": 0.0, "headroom_gb": 8.5}
        assert body["conditions"]["framework"] == "vllm"
        assert body["raw_file_url"] is None and body["raw_sha256"] == ""

    def test_failure_ops_run(self, platform_api, brief):
        body = manual_body(brief, phase="FAILURE_OPS", results={"checks": CHECKS})
        response = platform_api.post("/api/v1/benchmark-runs/", body, format="json")
        assert response.status_code == 201, response.json()
        results = response.json()["results"]
        assert results["checks"]["cold_start_model_load"] == {
            "passed": False, "time_s": 410.0, "notes": "weights pulled over WAN",
        }  # fmt: skip
        assert (results["checks_passed"], results["checks_failed"]) == (3, 1)

    @pytest.mark.parametrize(
        ("changes", "message"),
        [
            ({"results": {"peak_memory_gb": 70, "oom_rate": 2, "headroom_gb": 1}},
             "results.oom_rate: must be at most 1"),
            ({"results": {"peak_memory_gb": -1, "oom_rate": 0, "headroom_gb": 1}},
             "results.peak_memory_gb: must be at least 0"),
            ({"results": {"oom_rate": 0, "headroom_gb": 1}},
             "results.peak_memory_gb: is required for a memory-fit run"),
            ({"phase": "THROUGHPUT_LATENCY"}, "phase:"),
            ({"phase": "FAILURE_OPS", "results": {"checks": {"reboot_the_moon": {"passed": True}}}},
             "results.checks: unknown field 'reboot_the_moon'"),
            ({"phase": "FAILURE_OPS", "results": {"checks": {"drain_node": {"passed": "yes"}}}},
             "results.checks.drain_node.passed: must be true or false"),
            ({"conditions": {"concurrency": 0}}, "conditions.concurrency: must be at least 1"),
            ({"gpu": "nope-9000"}, "gpu: no GPU 'nope-9000' in the catalog"),
        ],
    )  # fmt: skip
    def test_bad_manual_runs_are_refused(self, platform_api, brief, changes, message):
        response = platform_api.post(
            "/api/v1/benchmark-runs/", manual_body(brief, **changes), format="json"
        )
        assert response.status_code == 400
        assert message in response.json()["detail"]
        assert BenchmarkRun.objects.count() == 0

    def test_nan_in_json_is_refused(self, platform_api, brief):
        raw = json.dumps(manual_body(brief)).replace("71.5", "NaN")
        response = platform_api.post(
            "/api/v1/benchmark-runs/", raw, content_type="application/json"
        )
        assert response.status_code == 400
        assert BenchmarkRun.objects.count() == 0


class TestRolesAndTeams:
    @pytest.mark.parametrize("role", [Role.FINANCE, Role.PROCUREMENT, Role.API_CLIENT])
    def test_only_platform_writes(self, token_client, brief, role):
        client = token_client(role)
        assert post_file(client, brief, VLLM_RAW).status_code == 403
        response = client.post("/api/v1/benchmark-runs/", manual_body(brief), format="json")
        assert response.status_code == 403
        assert BenchmarkRun.objects.count() == 0

    def test_anonymous_is_refused(self, brief):
        assert APIClient().get("/api/v1/benchmark-runs/").status_code in (401, 403)

    def test_every_role_of_the_team_reads(self, platform_api, token_client, brief):
        run_id = post_file(platform_api, brief, VLLM_RAW).json()["id"]
        finance = token_client(Role.FINANCE)
        listed = finance.get("/api/v1/benchmark-runs/", {"brief": brief.pk}).json()
        assert [r["id"] for r in listed["results"]] == [run_id]
        assert finance.get(f"/api/v1/benchmark-runs/{run_id}/").status_code == 200

    def test_other_teams_get_404_and_never_see_the_run(
        self, platform_api, token_client, make_user, brief, other_team
    ):
        run_id = post_file(platform_api, brief, VLLM_RAW).json()["id"]
        outsider = token_client(user=make_user(Role.PLATFORM, teams=[other_team]))
        assert outsider.get(f"/api/v1/benchmark-runs/{run_id}/").status_code == 404
        assert outsider.get("/api/v1/benchmark-runs/").json()["results"] == []
        assert outsider.get("/api/v1/benchmark-runs/", {"brief": brief.pk}).json()["results"] == []

    def test_list_filters(self, platform_api, brief):
        post_file(platform_api, brief, VLLM_RAW)
        platform_api.post("/api/v1/benchmark-runs/", manual_body(brief), format="json")
        phases = platform_api.get("/api/v1/benchmark-runs/", {"phase": "MEMORY_FIT"}).json()
        assert [r["phase"] for r in phases["results"]] == ["MEMORY_FIT"]
        assert platform_api.get("/api/v1/benchmark-runs/", {"brief": "x"}).status_code == 400


def _json_values():
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(min_value=-(10**20), max_value=10**20)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=20)
    )
    return st.recursive(
        scalars,
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(st.text(max_size=12), children, max_size=4)
        ),
        max_leaves=12,
    )


def _mutated(base: dict):
    """``base`` with a few of its values replaced by arbitrary JSON, or dropped."""
    keys = sorted(base)
    return st.tuples(
        st.dictionaries(st.sampled_from(keys), _json_values(), max_size=3),
        st.sets(st.sampled_from(keys), max_size=2),
    ).map(lambda c: {k: v for k, v in {**base, **c[0]}.items() if k not in c[1]})


def _mutated_vllm():
    return _mutated(json.loads(VLLM_RAW))


def _mutated_guidellm():
    base = json.loads(fixture("guidellm_v0_2.json"))
    bench = base["benchmarks"][0]
    return _mutated(bench["metrics"]).map(
        lambda m: {**base, "benchmarks": [{**bench, "metrics": m}]}
    )


class TestAnyJsonIsSafe:
    @settings(
        max_examples=60,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        payload=st.one_of(_json_values(), _mutated_vllm(), _mutated_guidellm()),
        tool=st.sampled_from([None, None, None, "vllm", "guidellm", "aiperf", "llmperf"]),
    )
    def test_import_answers_201_200_or_400_and_never_saves_part(
        self, platform_api, brief, payload, tool
    ):
        raw = json.dumps(payload).encode()
        runs_before, files_before = BenchmarkRun.objects.count(), stored_files()
        response = post_file(platform_api, brief, raw, tool=tool)
        assert response.status_code in (200, 201, 400)
        event(f"HTTP {response.status_code}")
        body = response.json()
        if response.status_code == 400:
            assert body["detail"]
            assert BenchmarkRun.objects.count() == runs_before
            assert stored_files() == files_before
        elif response.status_code == 200:
            assert BenchmarkRun.objects.count() == runs_before
        else:
            created = body if isinstance(body, list) else [body]
            assert BenchmarkRun.objects.count() == runs_before + len(created)
            assert len(stored_files() - files_before) == 1
