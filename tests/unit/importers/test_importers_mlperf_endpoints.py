"""MLPerf Endpoints result_summary.json: nanoseconds, output-only TPS, the two layouts (QPS/TPS
derived before they were written), percentile keys, and refusals."""

import json

import pytest

from apps.benchmarks.importers import MLPERF_ENDPOINTS, ImportFormatError, parse_result_file

OLD = "mlperf_endpoints_result_summary_2026_05.json"
NEW = "mlperf_endpoints_result_summary_2026_08.json"


def one(raw: bytes):
    runs = parse_result_file(raw)
    assert len(runs) == 1
    return runs[0]


def error_of(data: dict) -> str:
    with pytest.raises(ImportFormatError) as exc:
        parse_result_file(json.dumps(data).encode())
    return exc.value.message


@pytest.mark.parametrize("name", [OLD, NEW])
def test_nanoseconds_become_ms(fixture_bytes, name):
    run = one(fixture_bytes(name))
    r = run.results
    assert run.tool == MLPERF_ENDPOINTS
    assert r["ttft_ms"] == {"mean": 250.0, "p50": 231.5, "p90": 402.0, "p95": 455.0, "p99": 610.25}
    assert r["tpot_ms"] == {"mean": 18.25, "p50": 18.0, "p90": 21.0, "p95": 22.5, "p99": 26.0}
    assert r["e2e_latency_ms"]["mean"] == 9575.75
    assert "ns, /1e6" in run.source_names["ttft_ms.p90"]
    assert "first token excluded" in run.source_names["tpot_ms.mean"]
    assert "itl_ms" not in r
    assert (r["completed"], r["failed"]) == (998, 2)
    assert r["duration_s"] == 200.0
    assert r["output_tokens_mean"] == 512.0
    assert r["total_tokens_per_s"] is None  # tps is output tokens only: no total is made up


def test_may_2026_layout_derives_qps_and_tps_as_its_report_methods_did(fixture_bytes):
    run = one(fixture_bytes(OLD))
    r = run.results
    assert run.tool_version == "0.1.0"
    assert r["request_throughput_rps"] == 998 / 200.0
    assert r["output_tokens_per_s"] == 998 * 512 / 200.0
    assert "as Report.qps()" in run.source_names["request_throughput_rps"]
    assert "OUTPUT" in run.source_names["output_tokens_per_s"]
    assert r["input_tokens_mean"] is None  # input_sequence_lengths came later
    assert run.label is None  # no run_config yet


def test_current_layout_keeps_qps_tps_and_the_legacy_window(fixture_bytes):
    run = one(fixture_bytes(NEW))
    r = run.results
    assert run.tool_version == "0.2.0"
    # The legacy LoadGen window: (completed - 1) / window, tokens / window.
    assert r["request_throughput_rps"] == pytest.approx(997 / 199.6)
    assert r["output_tokens_per_s"] == pytest.approx(2560.0)
    assert "legacy LoadGen window" in run.source_names["output_tokens_per_s"]
    assert r["input_tokens_mean"] == 1024.0
    assert run.conditions["load_pattern"] == "poisson"
    assert run.conditions["target_qps"] == 5.0
    assert "concurrency" not in run.conditions  # target_concurrency is null for poisson
    assert run.label == "poisson qps=5.0"


def test_a_concurrency_run_records_its_concurrency(fixture_bytes):
    data = json.loads(fixture_bytes(NEW))
    data["run_config"]["load_pattern"] = {"type": "concurrency", "target_concurrency": 32}
    data["legacy_loadgen_window_duration_ns"] = None
    run = one(json.dumps(data).encode())
    assert run.conditions["concurrency"] == 32
    assert run.label == "concurrency concurrency=32"
    assert "over the run" in run.source_names["request_throughput_rps"]


def test_integer_percentile_keys_and_a_grid_without_p95(fixture_bytes):
    data = json.loads(fixture_bytes(NEW))
    data["ttft"]["percentiles"] = {"50": 231.5e6, "90": 402e6, "99": 610.25e6}
    ttft = one(json.dumps(data).encode()).results["ttft_ms"]
    assert ttft == {"mean": 250.0, "p50": 231.5, "p90": 402.0, "p99": 610.25}  # no p95 invented


def test_median_is_the_p50_when_the_grid_has_no_50(fixture_bytes):
    data = json.loads(fixture_bytes(NEW))
    data["ttft"]["percentiles"] = {"90.0": 402e6}
    assert one(json.dumps(data).encode()).results["ttft_ms"]["p50"] == 231.5


def test_bad_files_name_the_field(fixture_bytes):
    data = json.loads(fixture_bytes(NEW))
    data["tpot"]["percentiles"]["90.0"] = "slow"
    assert error_of(data).startswith("expected a number for tpot.percentiles.90.0")
    data = json.loads(fixture_bytes(NEW))
    data["n_samples_failed"] = 1.5
    assert error_of(data) == "expected a whole number for n_samples_failed, got 1.5"
    data = json.loads(fixture_bytes(NEW))
    data["latency"] = "fast"
    assert error_of(data) == "latency is not an object (a rollup with avg/percentiles)"
    data = json.loads(fixture_bytes(NEW))
    data["ttft"] = {}
    assert "missing required figure: ttft" in error_of(data)
