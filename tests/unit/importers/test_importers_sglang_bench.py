"""SGLang bench_serving JSON lines: the 2024 and 2025 layouts, measured vs set concurrency,
Infinity as the default request rate, derived rates, and refusals."""

import json

import pytest

from apps.benchmarks.importers import SGLANG_BENCH, VLLM, ImportFormatError, parse_result_file
from apps.benchmarks.importers.api import detect_format
from apps.benchmarks.importers.common import load_json

OLD = "sglang_bench_serving_2024.jsonl"
NEW = "sglang_bench_serving_2025.jsonl"


def error_of(raw: bytes, **kw) -> str:
    with pytest.raises(ImportFormatError) as exc:
        parse_result_file(raw, **kw)
    return exc.value.message


def test_2025_line(fixture_bytes):
    (run,) = parse_result_file(fixture_bytes(NEW))
    r = run.results
    assert run.tool == SGLANG_BENCH and run.tool_version is None
    assert r["ttft_ms"] == {"mean": 262.5, "p50": 240.0, "p99": 640.0}  # no p90/p95 invented
    assert r["tpot_ms"] == {"mean": 9.5, "p50": 9.25, "p99": 12.0}
    assert r["itl_ms"] == {"mean": 9.4, "p50": 8.75, "p95": 14.5, "p99": 38.25}
    assert r["e2e_latency_ms"] == {"mean": 5118.0, "p50": 5090.5, "p99": 5702.25}
    assert "first token excluded" in run.source_names["tpot_ms.mean"]
    assert r["request_throughput_rps"] == 12.5
    assert r["output_tokens_per_s"] == 6400.0
    assert r["total_tokens_per_s"] == 32000.0  # input_throughput + output_throughput
    assert "derived" in run.source_names["total_tokens_per_s"]
    assert (r["completed"], r["failed"]) == (2000, None)
    assert (r["input_tokens_mean"], r["output_tokens_mean"]) == (2048.0, 512.0)
    assert r["duration_s"] == 160.0


def test_measured_concurrency_is_not_the_setting(fixture_bytes):
    (run,) = parse_result_file(fixture_bytes(NEW))
    assert run.conditions["max_concurrency"] == 64
    assert run.conditions["measured_concurrency"] == 63.975
    assert "concurrency" not in run.conditions
    assert run.label == "sglang rate=inf concurrency=64"


def test_infinity_request_rate_is_read_as_inf(fixture_bytes):
    raw = fixture_bytes(NEW)
    assert b'"request_rate": Infinity' in raw
    (run,) = parse_result_file(raw)
    assert run.conditions["request_rate"] == "inf"


def test_infinity_anywhere_else_is_refused(fixture_bytes):
    raw = fixture_bytes(NEW).replace(b'"mean_ttft_ms": 262.5', b'"mean_ttft_ms": Infinity')
    assert error_of(raw) == "NaN in JSON: the file contains the non-standard token Infinity"
    assert error_of(b'{"request_rate": -Infinity}').startswith("NaN in JSON")
    with pytest.raises(ImportFormatError, match="Infinity"):
        load_json(b'{"request_rate": [Infinity]}')
    with pytest.raises(ImportFormatError, match="Infinity"):
        load_json(b"Infinity")


def test_2024_lines_give_one_run_each(fixture_bytes):
    runs = parse_result_file(fixture_bytes(OLD))
    assert [run.label for run in runs] == ["sglang rate=4", "sglang rate=8"]
    first, second = (run.results for run in runs)
    # The 2024 layout has medians only for TTFT and ITL, and no TPOT at all.
    assert first["ttft_ms"] == {"p50": 48.5}
    assert first["itl_ms"] == {"p50": 13.25}
    assert first["e2e_latency_ms"] == {"mean": 3521.5, "p50": 3400.25}
    assert "tpot_ms" not in first  # no TTFT mean to derive it from
    assert first["request_throughput_rps"] == 4.0  # derived completed / duration
    assert "derived" in runs[0].source_names["request_throughput_rps"]
    assert first["output_tokens_per_s"] == 1024.0
    assert first["total_tokens_per_s"] == 5120.0  # (input + output tokens) / duration
    assert second["request_throughput_rps"] == pytest.approx(1000 / 125.5)
    assert (first["input_tokens_mean"], first["output_tokens_mean"]) == (1024.0, 256.0)


def test_an_sglang_line_is_not_taken_for_vllm(fixture_bytes):
    data = json.loads(fixture_bytes(NEW).replace(b"Infinity", b'"inf"'))
    assert detect_format(data) == SGLANG_BENCH
    assert detect_format([data, data]) == SGLANG_BENCH
    assert error_of(fixture_bytes(NEW), tool="vllm") == (
        "this is a SGLang bench_serving file, not vLLM"
    )
    assert detect_format({"completed": 1, "request_throughput": 1.0, "mean_ttft_ms": 1.0}) == VLLM


def test_bad_lines_name_the_line_and_field(fixture_bytes):
    lines = fixture_bytes(OLD).splitlines()
    bad = json.loads(lines[1])
    bad["median_ttft_ms"] = "slow"
    raw = lines[0] + b"\n" + json.dumps(bad).encode() + b"\n"
    assert error_of(raw) == "expected a number for line 2: median_ttft_ms, got str: 'slow'"
    one = json.loads(lines[0])
    one["completed"] = -1
    assert error_of(json.dumps(one).encode()) == "negative value for completed: -1.0"
    del one["median_ttft_ms"]
    one["completed"] = 1000
    assert "missing required figure: ttft" in error_of(json.dumps(one).encode())


class TestTheRequestLog:
    """An --output-details line's per-request lengths become the run's request-size buckets,
    as a vLLM --save-detailed file's do; a failed request (output length 0) is left out."""

    def detailed(self, fixture_bytes, **lists):
        line = fixture_bytes(NEW).replace(b"Infinity", b'"inf"')
        data = {**json.loads(line), **lists, "errors": [""] * len(lists.get("input_lens", []))}
        return json.dumps(data).replace('"inf"', "Infinity").encode()

    def test_the_lengths_are_bucketed_and_failed_requests_left_out(self, fixture_bytes):
        raw = self.detailed(
            fixture_bytes,
            input_lens=[100] * 5 + [1000] * 5 + [700],
            output_lens=[20] * 9 + [500] + [0],  # the last request failed
        )
        (run,) = parse_result_file(raw)
        assert run.results["request_size_buckets"] == [
            {"input_tokens": 100, "output_tokens": 20, "share": 0.5},
            {"input_tokens": 1000, "output_tokens": 20, "share": 0.4},
            {"input_tokens": 1000, "output_tokens": 500, "share": 0.1},
        ]
        assert "input_lens / output_lens (11 requests)" in run.source_names["request_size_buckets"]

    def test_a_line_without_details_has_no_buckets(self, fixture_bytes):
        (run,) = parse_result_file(fixture_bytes(NEW))
        assert "request_size_buckets" not in run.results

    def test_bad_lists_are_refused_in_words(self, fixture_bytes):
        raw = self.detailed(fixture_bytes, input_lens=[100, 200], output_lens=[20])
        assert "input_lens and output_lens must be lists" in error_of(raw)
