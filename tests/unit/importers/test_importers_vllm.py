import json

import pytest

from apps.benchmarks.importers import VLLM, parse_result_file
from apps.benchmarks.importers.common import ImportFormatError


def one(raw: bytes):
    runs = parse_result_file(raw)
    assert len(runs) == 1
    return runs[0]


def test_legacy_v0_4_keys(fixture_bytes):
    run = one(fixture_bytes("vllm_benchmark_serving_v0_4.json"))
    r = run.results
    assert run.tool == VLLM
    assert run.tool_version is None
    assert r["ttft_ms"] == {"mean": 61240.5, "p50": 58510.25, "p99": 146203.75}
    assert r["tpot_ms"] == {"mean": 48.125, "p50": 44.5, "p99": 211.75}
    assert "itl_ms" not in r and "e2e_latency_ms" not in r
    assert r["request_throughput_rps"] == 4.166666666666667  # request_inthroughput (sic)
    assert r["output_tokens_per_s"] == 827.6
    assert r["total_tokens_per_s"] == pytest.approx(905.8041666666667 + 827.6, rel=1e-15)
    assert r["completed"] == 1000
    assert r["failed"] is None
    assert r["goodput_rps"] is None
    assert r["input_tokens_mean"] == 217.393
    assert r["output_tokens_mean"] == 198.624
    assert r["duration_s"] == 240.0
    assert run.conditions["backend_version"] == "0.4.0.post1"
    assert run.conditions["request_rate"] == "inf"
    assert "request_inthroughput" in run.source_names["request_throughput_rps"]
    assert "derived" in run.source_names["total_tokens_per_s"]


def test_benchmark_serving_v0_6_4_goodput_colon_and_e2el(fixture_bytes):
    run = one(fixture_bytes("vllm_benchmark_serving_v0_6_4.json"))
    r = run.results
    assert r["ttft_ms"] == {"mean": 85.5, "p50": 72.25, "p90": 130.0, "p95": 151.5, "p99": 203.25}
    assert r["tpot_ms"] == {"mean": 14.5, "p50": 14.25, "p90": 16.5, "p95": 17.25, "p99": 19.0}
    assert r["itl_ms"] == {"mean": 14.375, "p50": 13.5, "p90": 17.0, "p95": 21.5, "p99": 42.75}
    assert r["e2e_latency_ms"] == {
        "mean": 3783.0,
        "p50": 3706.0,
        "p90": 4337.5,
        "p95": 4533.0,
        "p99": 4935.5,
    }
    assert r["goodput_rps"] == 7.5
    assert run.source_names["goodput_rps"].startswith("vLLM: request_goodput:")
    assert r["request_throughput_rps"] == 7.8125
    assert r["output_tokens_per_s"] == 2000.0
    assert r["total_tokens_per_s"] == 10000.0
    assert r["completed"] == 500
    assert r["input_tokens_mean"] == 1024.0
    assert r["output_tokens_mean"] == 256.0
    assert run.conditions["max_concurrency"] == 64
    assert run.label == "vllm rate=8.0 concurrency=64"


def test_bench_serve_v0_11(fixture_bytes):
    run = one(fixture_bytes("vllm_bench_serve_v0_11.json"))
    r = run.results
    assert r["ttft_ms"] == {"mean": 212.5, "p50": 180.75, "p99": 611.25}
    assert r["tpot_ms"] == {"mean": 11.625, "p50": 11.5, "p99": 14.25}
    assert r["itl_ms"] == {"mean": 11.5, "p50": 10.75, "p99": 31.5}
    assert "e2e_latency_ms" not in r  # e2el is not in the default --percentile-metrics
    assert r["completed"] == 990
    assert r["failed"] == 10
    assert r["goodput_rps"] is None  # request_goodput: null without --goodput
    assert r["request_throughput_rps"] == 9.9
    assert r["total_tokens_per_s"] == 12672.0
    assert run.conditions["endpoint_type"] == "openai-chat"
    assert "max_concurrency" in run.conditions
    assert "first token excluded" in run.source_names["tpot_ms"]


def test_append_result_json_lines(fixture_bytes):
    runs = parse_result_file(fixture_bytes("vllm_bench_serve_append.jsonl"), tool="vllm")
    assert [r.conditions["max_concurrency"] for r in runs] == [1, 16]
    assert [r.results["request_throughput_rps"] for r in runs] == [0.5, 6.25]
    assert [r.results["duration_s"] for r in runs] == [400.0, 32.0]
    assert [r.label for r in runs] == ["sweep", "sweep"]


def test_failed_derived_from_errors_list():
    raw = (
        b'{"completed": 3, "request_throughput": 1.0, "mean_ttft_ms": 10.0,'
        b' "errors": ["", "", "", "timeout", ""]}'
    )
    run = one(raw)
    assert run.results["failed"] == 1
    assert "errors[]" in run.source_names["failed"]


class TestTheRequestLog:
    """A --save-detailed file's per-request lengths become the run's request-size buckets."""

    def detailed(self, fixture_bytes, **lists):
        data = json.loads(fixture_bytes("vllm_bench_serve_v0_11.json"))
        data.update(lists)
        return json.dumps(data).encode()

    def test_the_lengths_are_bucketed_by_rank(self, fixture_bytes):
        # 10 requests: prompts 100 x 5 then 1000 x 5, outputs 20 x 9 and one of 500. By rank,
        # prompts split at the median (the 100s, then the 1000s: edges 0.5, 0.8, 0.95 fall in
        # the 1000s, all one size, so one bin); outputs at 0.5 and 0.9 (the 20s, then the 500).
        raw = self.detailed(
            fixture_bytes,
            input_lens=[100] * 5 + [1000] * 5,
            output_lens=[20] * 9 + [500],
        )
        run = one(raw)
        assert run.results["request_size_buckets"] == [
            {"input_tokens": 100, "output_tokens": 20, "share": 0.5},
            {"input_tokens": 1000, "output_tokens": 20, "share": 0.4},
            {"input_tokens": 1000, "output_tokens": 500, "share": 0.1},
        ]
        assert run.results["request_log_requests"] == 10
        assert "input_lens / output_lens (10 requests)" in run.source_names["request_size_buckets"]

    def test_a_file_without_the_lists_has_no_buckets(self, fixture_bytes):
        assert (
            "request_size_buckets" not in one(fixture_bytes("vllm_bench_serve_v0_11.json")).results
        )

    @pytest.mark.parametrize(
        "lists",
        [
            {"input_lens": [100, 200], "output_lens": [20]},
            {"input_lens": [100, "x"], "output_lens": [20, 30]},
            {"input_lens": [0, 0], "output_lens": [0, 0]},
        ],
    )
    def test_bad_lists_are_refused_in_words(self, fixture_bytes, lists):
        with pytest.raises(ImportFormatError, match="input_lens"):
            parse_result_file(self.detailed(fixture_bytes, **lists))


class TestSweepServeRunFiles:
    """`vllm bench sweep serve` adds `run_number` and its serve parameters to each result
    (real file: tests/data/benchmarks/real/vllm_bench_sweep_serve_*)."""

    def sweep_run(self, fixture_bytes, **changes):
        data = json.loads(
            fixture_bytes("real/vllm_bench_sweep_serve_v0_25_1_opt125m_seqs4_c2_run0.json")
        )
        data.update(changes)
        return data

    def test_the_run_number_and_the_parameters_after_it_are_conditions(self, fixture_bytes):
        run = one(json.dumps(self.sweep_run(fixture_bytes)).encode())
        assert run.conditions["sweep_run_number"] == 0
        assert run.conditions["sweep_parameters"] == "max_num_seqs=4"
        assert run.label == "openai rate=inf concurrency=2 run=0 (max_num_seqs=4)"

    def test_a_label_of_its_own_keeps_the_run_number(self, fixture_bytes):
        run = one(json.dumps(self.sweep_run(fixture_bytes, label="tuned")).encode())
        assert run.label == "tuned run=0 (max_num_seqs=4)"

    def test_a_run_number_that_is_not_whole_is_refused_by_name(self, fixture_bytes):
        raw = json.dumps(self.sweep_run(fixture_bytes, run_number=1.5)).encode()
        with pytest.raises(ImportFormatError, match=r"run_number \(vllm bench sweep serve\)"):
            parse_result_file(raw)

    def test_a_serve_result_without_a_run_number_has_no_sweep_conditions(self, fixture_bytes):
        run = one(fixture_bytes("vllm_bench_serve_v0_11.json"))
        assert "sweep_run_number" not in run.conditions
        assert "run=" not in run.label
