import pytest

from apps.benchmarks.importers import GUIDELLM, parse_result_file


def test_v0_2_schema_two_benchmarks(fixture_bytes):
    runs = parse_result_file(fixture_bytes("guidellm_v0_2.json"))
    assert [r.label for r in runs] == ["synchronous", "constant@4.0 req/s"]
    sync, const = runs
    assert sync.tool == GUIDELLM and sync.tool_version is None
    # p50 falls back to "median" when percentiles has no p50 (0.2.x)
    assert sync.results["ttft_ms"] == {
        "mean": 40.0,
        "p50": 39.5,
        "p90": 44.0,
        "p95": 46.0,
        "p99": 51.0,
    }
    assert "median" in sync.source_names["ttft_ms.p50"]
    # inter_token_latency_ms (first token excluded) -> tpot_ms
    assert sync.results["tpot_ms"] == {
        "mean": 10.8,
        "p50": 10.75,
        "p90": 11.0,
        "p95": 11.25,
        "p99": 11.5,
    }
    # request_latency is seconds
    assert sync.results["e2e_latency_ms"] == pytest.approx(
        {"mean": 2794.0, "p50": 2790.0, "p90": 2850.0, "p95": 2900.0, "p99": 2950.0}, rel=1e-12
    )
    assert "itl_ms" not in sync.results
    assert sync.results["completed"] == 10 and sync.results["failed"] == 0
    assert sync.results["request_throughput_rps"] == 0.35714285714285715
    assert sync.results["output_tokens_per_s"] == 91.42857142857143
    assert sync.results["total_tokens_per_s"] == 274.2857142857143
    assert sync.results["input_tokens_mean"] == 512.0
    assert sync.results["output_tokens_mean"] == 256.0
    assert sync.results["duration_s"] == 28.0
    assert sync.conditions["model"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert sync.conditions["concurrency"] == 1
    assert const.results["completed"] == 118 and const.results["failed"] == 2
    assert const.results["e2e_latency_ms"]["mean"] == pytest.approx(6342.5, rel=1e-12)
    assert const.results["tpot_ms"]["mean"] == 24.5
    assert const.conditions["request_rate"] == 4.0


def test_time_per_output_token_never_used_for_tpot(fixture_bytes):
    runs = parse_result_file(fixture_bytes("guidellm_v0_2.json"))
    assert runs[0].results["tpot_ms"]["mean"] != 10.9375  # time_per_output_token_ms mean
    assert "includes the first token" in runs[0].source_names["time_per_output_token_ms"]


def test_v0_5_schema_metadata_and_config(fixture_bytes):
    runs = parse_result_file(fixture_bytes("guidellm_v0_5.json"), tool="guidellm")
    assert len(runs) == 2
    c8, c32 = runs
    assert c8.tool_version == "0.5.0"
    assert c8.label == "concurrent@8" and c32.label == "concurrent@32"
    assert c8.results["ttft_ms"] == {
        "mean": 65.0,
        "p50": 61.5,
        "p90": 82.0,
        "p95": 90.5,
        "p99": 118.0,
    }
    assert "percentiles.p50" in c8.source_names["ttft_ms.p50"]
    assert c8.results["tpot_ms"] == {
        "mean": 12.3,
        "p50": 12.25,
        "p90": 12.9,
        "p95": 13.2,
        "p99": 14.1,
    }
    assert c8.results["e2e_latency_ms"] == pytest.approx(
        {"mean": 1627.1, "p50": 1620.0, "p90": 1700.0, "p95": 1740.0, "p99": 1850.0}, rel=1e-12
    )
    assert c8.results["completed"] == 236 and c8.results["failed"] == 0
    assert c8.conditions["incomplete_requests"] == 8
    assert c8.results["request_throughput_rps"] == 4.916666666666667
    assert c8.results["duration_s"] == 48.0
    assert c8.conditions["model"] == "Qwen/Qwen3-8B"
    assert c8.conditions["concurrency"] == 8
    assert c32.results["completed"] == 580 and c32.results["failed"] == 3
    assert c32.results["request_throughput_rps"] == 12.083333333333334
    assert c32.results["output_tokens_per_s"] == 1546.6666666666667
    assert c32.results["total_tokens_per_s"] == 13920.0
