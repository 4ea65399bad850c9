import pytest

from apps.benchmarks.importers import LLMPERF, parse_result_file


def test_flat_summary_seconds_to_ms(fixture_bytes):
    (run,) = parse_result_file(fixture_bytes("llmperf_summary_flat.json"))
    r = run.results
    assert run.tool == LLMPERF and run.tool_version == "2023-08-31"
    assert r["ttft_ms"] == pytest.approx(
        {"mean": 500.0, "p50": 462.5, "p90": 710.0, "p95": 840.0, "p99": 1125.0}, rel=1e-12
    )
    assert r["e2e_latency_ms"] == pytest.approx(
        {"mean": 9812.5, "p50": 9780.0, "p90": 10200.0, "p95": 10375.0, "p99": 10750.0}, rel=1e-12
    )
    # inter_token_latency_s includes the first token: tpot mean is derived, no percentiles
    assert r["tpot_ms"] == pytest.approx({"mean": (9812.5 - 500.0) / 149}, rel=1e-12)
    assert r["tpot_ms"]["mean"] == pytest.approx(62.5)
    assert "derived" in run.source_names["tpot_ms.mean"]
    assert "itl_ms" not in r
    assert r["completed"] == 200 and r["failed"] == 0
    assert r["request_throughput_rps"] == pytest.approx(48.92 / 60, rel=1e-12)
    assert r["duration_s"] == pytest.approx(200 * 60 / 48.92, rel=1e-12)
    assert r["output_tokens_per_s"] == 122.3
    assert r["input_tokens_mean"] == 550.0 and r["output_tokens_mean"] == 150.0
    assert r["total_tokens_per_s"] is None
    assert run.conditions["concurrency"] == 8
    assert run.label == "concurrency=8"


def test_nested_summary_with_errors(fixture_bytes):
    (run,) = parse_result_file(fixture_bytes("llmperf_summary_nested_errors.json"), tool="llmperf")
    r = run.results
    assert r["ttft_ms"]["p99"] == pytest.approx(750.0, rel=1e-12)
    assert r["completed"] == 494 and r["failed"] == 6
    assert r["tpot_ms"]["mean"] == pytest.approx((8050.0 - 300.0) / 250.0, rel=1e-12)
    assert run.conditions["additional_sampling_params_temperature"] == 0.0
    assert run.conditions["error_code_frequency"] == "{429: 6}"


def test_itl_s_never_lands_in_tpot_or_itl(fixture_bytes):
    (run,) = parse_result_file(fixture_bytes("llmperf_summary_flat.json"))
    assert run.results["tpot_ms"]["mean"] != pytest.approx(65.41666666666666)
    assert set(run.results["tpot_ms"]) == {"mean"}
