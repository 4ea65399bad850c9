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


REAL_NO_STREAMING = "real/trtllm_bench_gpt_oss_120b_tp8_eagle_report.json"


class TestTheRealReportWithoutStreaming:
    """A report trtllm-bench 1.1.0rc2 wrote (tests/data/benchmarks/real/SOURCES.md), run
    without --streaming."""

    def test_it_is_refused_for_its_missing_ttft(self, fixture_bytes):
        with pytest.raises(ImportFormatError, match="no streaming_metrics"):
            parse_result_file(fixture_bytes(REAL_NO_STREAMING))

    def test_the_hand_written_reports_blocks_have_the_real_reports_keys(self, fixture_bytes):
        real = json.loads(fixture_bytes(REAL_NO_STREAMING))
        hand = json.loads(fixture_bytes(NEW))
        for block in ("engine", "world_info", "request_info", "performance"):
            assert set(hand[block]) == set(real[block]), block
        assert set(hand["performance"]["request_latency_percentiles_ms"]) == set(
            real["performance"]["request_latency_percentiles_ms"]
        )

    def test_with_a_streaming_block_its_own_figures_are_read(self, fixture_bytes):
        # The streaming block is the hand-written report's (the real run measured none); every
        # figure checked here is the real report's.
        data = json.loads(fixture_bytes(REAL_NO_STREAMING))
        data["streaming_metrics"] = json.loads(fixture_bytes(NEW))["streaming_metrics"]
        run = one(json.dumps(data).encode())
        r, c = run.results, run.conditions
        assert run.tool_version == "1.1.0rc2"
        assert run.label == "Pytorch tp=8"
        assert (c["tp_size"], c["ep_size"], c["world_size"]) == (8, 4, 8)
        assert c["quantization"] == "W4A8_MXFP4_MXFP8"
        assert c["speculative_decoding"] == "Eagle"
        assert c["avg_num_concurrent_requests"] == pytest.approx(504.9831724789833)
        assert "gpu_name" not in c  # no machine block in this report
        assert r["request_throughput_rps"] == pytest.approx(7.365094240276497)
        assert r["output_tokens_per_s"] == pytest.approx(3770.9282510215667)  # not per GPU
        assert r["total_tokens_per_s"] == pytest.approx(7541.856502043133)
        assert r["e2e_latency_ms"]["p50"] == pytest.approx(68816.111396)
        assert r["e2e_latency_ms"]["mean"] == pytest.approx(68564.387094662)
        assert r["completed"] == 1000
        assert r["input_tokens_mean"] == r["output_tokens_mean"] == 512.0
        assert r["duration_s"] == pytest.approx(135.775587844)
