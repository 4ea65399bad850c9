"""llm-d Benchmark Report 0.1 and 0.2: units read from each Statistics, the first-token
traps (TPOT vs NTPOT), completed derived from requests sent, and field-level refusals."""

import json

import pytest

from apps.benchmarks.importers import INFERENCE_PERF, ImportFormatError, parse_result_file


def one(raw: bytes):
    runs = parse_result_file(raw)
    assert len(runs) == 1
    return runs[0]


def error_of(data: dict) -> str:
    with pytest.raises(ImportFormatError) as exc:
        parse_result_file(json.dumps(data).encode())
    return exc.value.message


def test_v0_1_milliseconds_and_plain_rates(fixture_bytes):
    run = one(fixture_bytes("inference_perf_br_v0_1.json"))
    r = run.results
    assert run.tool == INFERENCE_PERF and run.tool_version is None
    assert r["ttft_ms"] == {"mean": 85.5, "p50": 72.25, "p90": 130.0, "p95": 151.5, "p99": 203.25}
    assert r["tpot_ms"] == {"mean": 14.5, "p50": 14.25, "p90": 16.5, "p95": 17.25, "p99": 19.0}
    assert r["itl_ms"] == {"mean": 14.375, "p50": 13.5, "p90": 17.0, "p95": 21.5, "p99": 42.75}
    assert r["e2e_latency_ms"]["mean"] == 3783.0
    # 500 sent, 2 failed, 0 incomplete
    assert (r["completed"], r["failed"]) == (498, 2)
    assert r["request_throughput_rps"] == 4.98
    assert r["output_tokens_per_s"] == 1274.88 and r["total_tokens_per_s"] == 6374.4
    assert (r["input_tokens_mean"], r["output_tokens_mean"]) == (1024.0, 256.0)
    assert r["duration_s"] == 100.0
    assert run.conditions["model"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert run.conditions["report_schema_version"] == "0.1"
    assert run.label == "inference-perf rate=5.0"


def test_v0_1_ntpot_includes_the_first_token_and_is_not_tpot(fixture_bytes):
    run = one(fixture_bytes("inference_perf_br_v0_1.json"))
    # NTPOT in the file is 14.777 ms/token; tpot_ms comes from time_per_output_token only.
    assert run.results["tpot_ms"]["mean"] == 14.5
    assert "includes the first token" in run.source_names["normalized_time_per_output_token"]
    assert "first token excluded" in run.source_names["tpot_ms.mean"]


def test_v0_2_seconds_become_ms(fixture_bytes):
    run = one(fixture_bytes("inference_perf_br_v0_2.json"))
    r = run.results
    assert run.tool_version == "0.3.0"  # the harness's version (inference-perf)
    assert r["ttft_ms"] == pytest.approx(
        {"mean": 36.8, "p50": 36.2, "p90": 42.6, "p95": 45.2, "p99": 50.3}
    )
    assert r["tpot_ms"] == pytest.approx(
        {"mean": 12.5, "p50": 12.4, "p90": 13.1, "p95": 13.4, "p99": 13.9}
    )
    assert r["itl_ms"]["p99"] == pytest.approx(30.1)
    assert r["e2e_latency_ms"]["mean"] == pytest.approx(12524.3)
    assert "s, x1000" in run.source_names["ttft_ms.mean"]
    assert "s/token, x1000" in run.source_names["tpot_ms.mean"]
    # 300 sent, 0 failed, 1 incomplete
    assert (r["completed"], r["failed"]) == (299, 0)
    assert r["request_throughput_rps"] == pytest.approx(5.0)
    assert r["output_tokens_per_s"] == pytest.approx(5000.0)
    assert r["total_tokens_per_s"] == pytest.approx(15740.0)
    assert r["duration_s"] == pytest.approx(59.8)  # run.time.duration "PT59.8S"
    assert run.conditions["model"] == "Qwen/Qwen3-0.6B"
    assert run.conditions["accelerator"] == "NVIDIA-H100-80GB-HBM3"
    assert run.label == "inference-perf stage 3 rate=5.0"


def test_v0_2_first_spelling_of_the_rate_units(fixture_bytes):
    """The first 0.2 schema (commit 4fb7913b) spelled units token/s and qps and the request
    rate requests_rate."""
    data = json.loads(fixture_bytes("inference_perf_br_v0_2.json"))
    throughput = data["results"]["request_performance"]["aggregate"]["throughput"]
    throughput["requests_rate"] = {"units": "qps", "mean": 5.0}
    del throughput["request_rate"]
    for key in ("input_token_rate", "output_token_rate", "total_token_rate"):
        throughput[key]["units"] = "token/s"
    r = one(json.dumps(data).encode()).results
    assert r["request_throughput_rps"] == 5.0
    assert r["output_tokens_per_s"] == pytest.approx(5000.0)


def test_v0_2_1_is_read_with_the_0_2_layout(fixture_bytes):
    data = json.loads(fixture_bytes("inference_perf_br_v0_2.json"))
    data["version"] = "0.2.1"
    run = one(json.dumps(data).encode())
    assert run.conditions["report_schema_version"] == "0.2.1"
    assert run.results["completed"] == 299


def test_iso_durations_with_hours_and_minutes(fixture_bytes):
    data = json.loads(fixture_bytes("inference_perf_br_v0_2.json"))
    data["run"]["time"]["duration"] = "PT1H2M3.5S"
    assert one(json.dumps(data).encode()).results["duration_s"] == 3723.5


def _v02(fixture_bytes) -> dict:
    return json.loads(fixture_bytes("inference_perf_br_v0_2.json"))


def test_unknown_time_unit_names_the_field(fixture_bytes):
    data = _v02(fixture_bytes)
    latency = data["results"]["request_performance"]["aggregate"]["latency"]
    latency["time_to_first_token"]["units"] = "us"
    assert error_of(data) == (
        "results.request_performance.aggregate.latency.time_to_first_token.units: 'us' is not "
        "a unit of this figure (expected one of ms, s)"
    )


def test_a_time_unit_on_a_per_token_figure_is_refused(fixture_bytes):
    data = _v02(fixture_bytes)
    latency = data["results"]["request_performance"]["aggregate"]["latency"]
    latency["time_per_output_token"]["units"] = "s"
    assert "time_per_output_token.units: 's'" in error_of(data)


def test_a_rate_in_the_wrong_unit_is_refused(fixture_bytes):
    data = _v02(fixture_bytes)
    throughput = data["results"]["request_performance"]["aggregate"]["throughput"]
    throughput["output_token_rate"]["units"] = "queries/s"
    assert "throughput.output_token_rate.units: 'queries/s' is not a rate" in error_of(data)


def test_more_failures_than_requests_is_refused(fixture_bytes):
    data = _v02(fixture_bytes)
    data["results"]["request_performance"]["aggregate"]["requests"]["failures"] = 400
    assert error_of(data) == (
        "results.request_performance.aggregate.requests: failures + incomplete (401) exceed "
        "total (300)"
    )


def test_bad_numbers_and_durations_name_the_field(fixture_bytes):
    data = _v02(fixture_bytes)
    data["results"]["request_performance"]["aggregate"]["latency"]["request_latency"]["p99"] = -1
    assert error_of(data) == (
        "negative value for results.request_performance.aggregate.latency.request_latency.p99: -1.0"
    )
    data = _v02(fixture_bytes)
    data["run"]["time"]["duration"] = "59.8 seconds"
    assert error_of(data) == "run.time.duration: '59.8 seconds' is not an ISO-8601 duration"


def test_missing_ttft_and_unsupported_version(fixture_bytes):
    data = _v02(fixture_bytes)
    del data["results"]["request_performance"]["aggregate"]["latency"]["time_to_first_token"]
    assert "missing required figure: ttft" in error_of(data)
    data = _v02(fixture_bytes)
    data["version"] = "0.3"
    with pytest.raises(ImportFormatError) as exc:
        parse_result_file(json.dumps(data).encode(), tool="inference-perf")
    assert exc.value.message == (
        "version: Benchmark Report schema version '0.3' is not supported (supported: 0.1, 0.2, "
        "0.2.x)"
    )


def test_a_statistics_block_that_is_not_an_object(fixture_bytes):
    data = json.loads(fixture_bytes("inference_perf_br_v0_1.json"))
    data["metrics"]["latency"]["time_to_first_token"] = [1, 2]
    assert error_of(data) == "metrics.latency.time_to_first_token is not an object"


STAGE = "inference_perf_lifecycle_stage_2025_08.json"
SUMMARY = "inference_perf_lifecycle_summary_2026_08.json"


def test_lifecycle_report_before_pr_201_uses_p50(fixture_bytes):
    run = one(fixture_bytes(STAGE))
    r = run.results
    assert run.tool == INFERENCE_PERF
    # Seconds without a unit field; mean/p10/p50/p90 only (no p95/p99 invented).
    assert r["ttft_ms"] == pytest.approx({"mean": 45.5, "p50": 41.0, "p90": 71.2})
    assert r["tpot_ms"] == pytest.approx({"mean": 9.8, "p50": 9.6, "p90": 11.1})
    assert r["itl_ms"] == pytest.approx({"mean": 9.8, "p50": 8.5, "p90": 14.2})
    assert r["e2e_latency_ms"]["mean"] == pytest.approx(1290.1)
    assert "s, x1000" in run.source_names["ttft_ms.p50"]
    assert (r["completed"], r["failed"]) == (595, 5)
    assert r["request_throughput_rps"] == 10.0 and r["output_tokens_per_s"] == 1280.0
    assert (r["input_tokens_mean"], r["output_tokens_mean"]) == (512.0, 128.0)
    assert r["duration_s"] is None  # benchmark_time_seconds came with PR #430
    assert run.conditions["request_rate"] == 10.0
    assert run.label == "inference-perf rate=10.0"


def test_a_summary_of_every_stage_is_refused_for_its_stage_files(fixture_bytes):
    # summary_lifecycle_metrics.json: its load_summary has no stage's send duration or rates.
    with pytest.raises(ImportFormatError) as caught:
        parse_result_file(fixture_bytes(SUMMARY))
    assert "summary over every stage" in caught.value.message
    assert "stage_N_lifecycle_metrics.json" in caught.value.message


def test_lifecycle_bad_values_name_the_field(fixture_bytes):
    data = json.loads(fixture_bytes(STAGE))
    data["successes"]["latency"]["time_to_first_token"]["p90"] = "slow"
    assert error_of(data).startswith(
        "expected a number for successes.latency.time_to_first_token.p90"
    )
    data = json.loads(fixture_bytes(STAGE))
    data["failures"]["count"] = -2
    assert error_of(data) == "negative value for failures.count: -2.0"
    data = json.loads(fixture_bytes(STAGE))
    data["successes"]["latency"]["time_to_first_token"] = None
    assert "missing required figure: ttft" in error_of(data)
