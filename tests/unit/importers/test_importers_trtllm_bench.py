"""trtllm-bench --report_json: ms percentile blocks, system vs per-GPU vs per-user rates,
the report before and after the total rate, and a report without --streaming refused."""

import json

import pytest

from apps.benchmarks.importers import TRTLLM_BENCH, ImportFormatError, parse_result_file

OLD = "trtllm_bench_v0_18.json"
NEW = "trtllm_bench_v1_1.json"


def one(raw: bytes):
    runs = parse_result_file(raw)
    assert len(runs) == 1
    return runs[0]


def error_of(data: dict) -> str:
    with pytest.raises(ImportFormatError) as exc:
        parse_result_file(json.dumps(data).encode())
    return exc.value.message


def test_report_before_the_total_rate(fixture_bytes):
    run = one(fixture_bytes(OLD))
    r = run.results
    assert run.tool == TRTLLM_BENCH and run.tool_version == "0.18.0"
    assert r["ttft_ms"] == {"mean": 310.0, "p50": 280.5, "p90": 450.0, "p95": 520.25, "p99": 700.0}
    assert r["tpot_ms"] == {"mean": 15.0, "p50": 14.8, "p90": 16.5, "p95": 17.1, "p99": 18.9}
    assert r["e2e_latency_ms"] == {
        "mean": 7975.0, "p50": 7900.0, "p90": 8600.0, "p95": 8850.0, "p99": 9400.0,
    }  # fmt: skip
    assert "itl_ms" not in r
    assert r["total_tokens_per_s"] is None  # no system_total_throughput_tok_s before PR #3212
    assert (r["completed"], r["failed"]) == (1000, None)
    assert r["duration_s"] == 125.0
    assert run.conditions["model"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert "concurrency" not in run.conditions  # avg_num_concurrent_requests is measured
    assert run.conditions["avg_num_concurrent_requests"] == 63.8


def test_system_rate_not_the_per_gpu_rate(fixture_bytes):
    run = one(fixture_bytes(NEW))
    r = run.results
    # world_size 4: system 4800 tok/s, per GPU 1200 tok/s; the system rate is kept.
    assert run.conditions["world_size"] == 4
    assert r["output_tokens_per_s"] == 4800.0
    assert r["total_tokens_per_s"] == 15040.0
    assert "per GPU" in run.source_names["output_throughput_per_gpu_tok_s"]
    assert "first" in run.source_names["output_tokens_per_s"]  # OSL includes the first token
    assert r["request_throughput_rps"] == 5.0
    assert (r["input_tokens_mean"], r["output_tokens_mean"]) == (2048.0, 960.0)
    assert run.conditions["gpu_name"] == "NVIDIA H100 80GB HBM3"
    assert run.label == "Pytorch tp=4"


def test_per_user_speeds_are_not_system_rates(fixture_bytes):
    run = one(fixture_bytes(NEW))
    assert 42.9 not in run.results.values() and 44.4 not in run.results.values()
    assert "per-request" in run.source_names["output_throughput_per_user_tok_s"]


def test_averages_fill_in_when_a_block_lacks_them(fixture_bytes):
    data = json.loads(fixture_bytes(NEW))
    del data["streaming_metrics"]["ttft_percentiles"]["average"]
    run = one(json.dumps(data).encode())
    assert run.results["ttft_ms"]["mean"] == 820.0
    assert run.source_names["ttft_ms.mean"] == "trtllm-bench: streaming_metrics.avg_ttft_ms (ms)"


def test_without_streaming_there_is_no_ttft(fixture_bytes):
    data = json.loads(fixture_bytes(NEW))
    del data["streaming_metrics"]
    message = error_of(data)
    assert message.startswith("missing required figure: ttft")
    assert "--streaming" in message


def test_bad_files_name_the_field(fixture_bytes):
    data = json.loads(fixture_bytes(NEW))
    data["performance"]["system_output_throughput_tok_s"] = -3
    assert error_of(data) == ("negative value for performance.system_output_throughput_tok_s: -3.0")
    data = json.loads(fixture_bytes(NEW))
    data["performance"]["output_throughput_per_gpu_tok_s"] = "fast"
    assert error_of(data).startswith(
        "expected a number for performance.output_throughput_per_gpu_tok_s"
    )
    data = json.loads(fixture_bytes(NEW))
    data["streaming_metrics"]["tpot_percentiles"] = [1]
    assert error_of(data) == "streaming_metrics.tpot_percentiles is not an object"
    data = json.loads(fixture_bytes(NEW))
    data["request_info"]["num_requests"] = 10.5
    assert error_of(data) == "expected a whole number for request_info.num_requests, got 10.5"
