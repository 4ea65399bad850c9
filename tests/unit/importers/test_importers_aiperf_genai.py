import json

import pytest

from apps.benchmarks.importers import AIPERF, GENAI_PERF, parse_result_file


def test_aiperf_v0_1_records(fixture_bytes):
    (run,) = parse_result_file(fixture_bytes("aiperf_v0_1_records.json"))
    r = run.results
    assert run.tool == AIPERF and run.tool_version is None
    assert r["ttft_ms"] == {"mean": 118.5, "p50": 110.25, "p90": 160.0, "p95": 181.5, "p99": 240.0}
    assert r["tpot_ms"] == {"mean": 14.375, "p50": 14.25, "p90": 15.5, "p95": 16.0, "p99": 17.25}
    assert "itl_ms" not in r
    assert r["e2e_latency_ms"]["p99"] == 2210.0
    assert r["completed"] == 400
    assert r["failed"] == 2  # sum of error_summary counts
    assert r["request_throughput_rps"] == 8.2
    assert r["output_tokens_per_s"] == 1049.6
    assert r["duration_s"] == 48.78048780487805
    assert run.conditions["concurrency"] == 16
    assert run.conditions["model"] == "meta-llama/Llama-3.1-8B-Instruct"


def test_aiperf_v0_3_flat(fixture_bytes):
    (run,) = parse_result_file(fixture_bytes("aiperf_v0_3.json"), tool="aiperf")
    r = run.results
    assert run.tool_version == "0.3.0"
    assert r["ttft_ms"]["mean"] == 1588.797775365
    assert r["tpot_ms"] == {"mean": 51.76, "p50": 51.98, "p90": 53.18, "p95": 54.32, "p99": 55.87}
    assert r["itl_ms"] == {"mean": 51.2, "p50": 50.9, "p90": 53.0, "p95": 54.5, "p99": 61.0}
    assert r["completed"] == 200 and r["failed"] == 3
    assert r["goodput_rps"] == 11.2
    assert r["output_tokens_mean"] == 96.85
    assert r["duration_s"] == 15.196591969000002
    assert run.conditions["export_schema_version"] == "1.0"


def test_aiperf_units_converted():
    raw = (
        b'{"aiperf_version": "0.4.0", "time_to_first_token": {"unit": "ns", "avg": 125000000},'
        b' "request_latency": {"unit": "s", "avg": 1.5, "p99": 2.25},'
        b' "benchmark_duration": {"unit": "ms", "avg": 30000}}'
    )
    (run,) = parse_result_file(raw)
    assert run.results["ttft_ms"] == {"mean": 125.0}
    assert run.results["e2e_latency_ms"] == {"mean": 1500.0, "p99": 2250.0}
    assert run.results["duration_s"] == pytest.approx(30.0)


def test_genai_perf_cli_era(fixture_bytes):
    (run,) = parse_result_file(fixture_bytes("genai_perf_v0_0_8.json"))
    r = run.results
    assert run.tool == GENAI_PERF and run.tool_version is None
    assert r["ttft_ms"] == {"mean": 38.25, "p50": 36.5, "p90": 44.0, "p95": 47.5, "p99": 60.0}
    assert r["tpot_ms"] == {"mean": 11.25, "p50": 11.2, "p90": 11.9, "p95": 12.1, "p99": 12.6}
    assert "itl_ms" not in r
    assert r["request_throughput_rps"] == 2.7416
    assert r["output_tokens_per_s"] == 701.9
    assert r["completed"] is None and r["failed"] is None
    assert run.conditions["concurrency"] == 8
    assert run.conditions["model"] == "meta-llama/Meta-Llama-3-8B-Instruct"
    assert run.conditions["input_tokens_mean"] == 200


def test_genai_perf_config_era(fixture_bytes):
    (run,) = parse_result_file(fixture_bytes("genai_perf_v25_config.json"), tool="genai-perf")
    r = run.results
    assert r["ttft_ms"]["p95"] == 131.5
    assert r["tpot_ms"]["mean"] == 11.96
    assert r["completed"] == 316
    assert r["goodput_rps"] == 9.5
    assert run.conditions["concurrency"] == 16
    assert run.conditions["model"] == "Qwen/Qwen2.5-7B-Instruct"
    assert run.conditions["output_tokens_mean"] == 128


class TestAiperf011Phases:
    """AIPerf 0.11 (schema 1.3) names its measured phase ``"name": "profiling"`` and writes no
    ``kind`` (real file: tests/data/benchmarks/real/aiperf_0_11_*)."""

    REAL = "real/aiperf_0_11_qwen3_4b_c16_profile_export_aiperf.json"

    def load(self, fixture_bytes, phases=None):
        data = json.loads(fixture_bytes(self.REAL))
        if phases is not None:
            data["input_config"]["phases"] = phases
        (run,) = parse_result_file(json.dumps(data).encode())
        return run

    def test_the_phase_named_profiling_is_the_load(self, fixture_bytes):
        assert self.load(fixture_bytes).conditions["concurrency"] == 16

    def test_a_warm_up_before_it_is_not_the_load(self, fixture_bytes):
        profiling = json.loads(fixture_bytes(self.REAL))["input_config"]["phases"][0]
        warmup = {**profiling, "name": "warmup", "exclude_from_results": True, "concurrency": 64}
        assert self.load(fixture_bytes, [warmup, profiling]).conditions["concurrency"] == 16

    def test_unnamed_phases_use_the_one_not_excluded_from_the_results(self, fixture_bytes):
        phases = [
            {"type": "concurrency", "exclude_from_results": True, "concurrency": 64},
            {"type": "concurrency", "exclude_from_results": False, "concurrency": 16},
        ]
        assert self.load(fixture_bytes, phases).conditions["concurrency"] == 16

    def test_two_measured_unnamed_phases_give_no_load(self, fixture_bytes):
        phases = [
            {"type": "concurrency", "exclude_from_results": False, "concurrency": 8},
            {"type": "concurrency", "exclude_from_results": False, "concurrency": 16},
        ]
        assert self.load(fixture_bytes, phases).conditions.get("concurrency") is None
