import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.benchmarks.importers import (
    AIPERF,
    GENAI_PERF,
    GUIDELLM,
    LLMPERF,
    MAX_FILE_BYTES,
    VLLM,
    CanonicalRun,
    ImportFormatError,
    content_sha256,
    detect_format,
    parse_result_file,
)

FIXTURES = {
    "vllm_benchmark_serving_v0_4.json": VLLM,
    "vllm_benchmark_serving_v0_6_4.json": VLLM,
    "vllm_bench_serve_v0_11.json": VLLM,
    "guidellm_v0_2.json": GUIDELLM,
    "guidellm_v0_5.json": GUIDELLM,
    "aiperf_v0_1_records.json": AIPERF,
    "aiperf_v0_3.json": AIPERF,
    "genai_perf_v0_0_8.json": GENAI_PERF,
    "genai_perf_v25_config.json": GENAI_PERF,
    "llmperf_summary_flat.json": LLMPERF,
    "llmperf_summary_nested_errors.json": LLMPERF,
}
NAMES = {
    VLLM: "vLLM",
    GUIDELLM: "GuideLLM",
    AIPERF: "AIPerf",
    GENAI_PERF: "GenAI-Perf",
    LLMPERF: "llmperf",
}
MINIMAL_VLLM = {"completed": 10, "request_throughput": 1.0, "mean_ttft_ms": 50.0}


def error_of(raw: bytes, **kw) -> str:
    with pytest.raises(ImportFormatError) as exc:
        parse_result_file(raw, **kw)
    return exc.value.message


@pytest.mark.parametrize(("name", "tool"), FIXTURES.items())
def test_detect_format(fixture_bytes, name, tool):
    assert detect_format(json.loads(fixture_bytes(name))) == tool
    assert all(run.tool == tool for run in parse_result_file(fixture_bytes(name)))


@pytest.mark.parametrize(("name", "tool"), FIXTURES.items())
def test_wrong_tool_named(fixture_bytes, name, tool):
    wrong = VLLM if tool != VLLM else GUIDELLM
    message = error_of(fixture_bytes(name), tool=wrong.lower())
    assert message == f"this is a {NAMES[tool]} file, not {NAMES[wrong]}"


def test_detect_format_unknown():
    assert detect_format({"hello": 1}) is None
    assert detect_format([1, 2]) is None
    assert detect_format("text") is None
    assert detect_format([MINIMAL_VLLM, MINIMAL_VLLM]) == VLLM


def test_unknown_tool_name():
    assert "unknown tool" in error_of(json.dumps(MINIMAL_VLLM).encode(), tool="locust")


def test_not_json():
    assert error_of(b"Serving Benchmark Result\n").startswith("not JSON")
    assert error_of(b"\xff\xfe\x00{").startswith("not JSON")


def test_truncated(fixture_bytes):
    raw = fixture_bytes("vllm_benchmark_serving_v0_6_4.json")
    message = error_of(raw[: len(raw) // 2])
    assert message.startswith("truncated JSON at line")


def test_empty():
    assert error_of(b"") == "empty file"
    assert error_of(b"  \n") == "empty file"


def test_too_large():
    assert error_of(b" " * (MAX_FILE_BYTES + 1)).startswith("file too large")


def test_list_of_junk():
    assert error_of(b'[1, "a", null, {"x": 2}]').startswith("not a benchmark result")
    assert error_of(b"42").startswith("not a benchmark result")


def test_missing_ttft():
    raw = json.dumps({"completed": 3, "request_throughput": 1.0, "mean_tpot_ms": 9.0}).encode()
    assert "missing required figure: ttft" in error_of(raw, tool="vllm")
    assert "missing required figure: ttft" in error_of(b'{"hello": "world"}')


def test_missing_ttft_guidellm(fixture_bytes):
    data = json.loads(fixture_bytes("guidellm_v0_5.json"))
    del data["benchmarks"][1]["metrics"]["time_to_first_token_ms"]
    assert "missing required figure: ttft" in error_of(json.dumps(data).encode())


def test_negative_value():
    raw = json.dumps({**MINIMAL_VLLM, "mean_ttft_ms": -5.0}).encode()
    assert error_of(raw) == "negative value for mean_ttft_ms: -5.0"


@pytest.mark.parametrize("token", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_tokens_refused(token):
    raw = b'{"completed": 1, "request_throughput": 1.0, "mean_ttft_ms": ' + token + b"}"
    assert error_of(raw).startswith("NaN in JSON")


def test_overflowing_float_refused():
    raw = b'{"completed": 1, "request_throughput": 1.0, "mean_ttft_ms": 1e999}'
    assert error_of(raw) == "infinite value for mean_ttft_ms"


def test_wrong_type():
    raw = json.dumps({**MINIMAL_VLLM, "mean_ttft_ms": "fast"}).encode()
    assert error_of(raw).startswith("expected a number for mean_ttft_ms")


def test_guidellm_empty_benchmarks():
    assert error_of(b'{"benchmarks": []}', tool="guidellm") == "GuideLLM report holds no benchmarks"


def test_deeply_nested():
    assert error_of(b"[" * 100_000 + b"]" * 100_000).startswith("not JSON")


def test_content_sha256():
    assert content_sha256(b"abc") == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )


def _check(raw: bytes, tool: str | None = None) -> None:
    try:
        runs = parse_result_file(raw, tool=tool)
    except ImportFormatError as exc:
        assert isinstance(exc.message, str) and exc.message
        return
    assert isinstance(runs, list) and runs
    assert all(isinstance(run, CanonicalRun) for run in runs)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "completed",
                    "request_throughput",
                    "mean_ttft_ms",
                    "benchmarks",
                    "metrics",
                    "time_to_first_token",
                    "records",
                    "unit",
                    "avg",
                    "successful",
                    "mean",
                    "results_ttft_s_mean",
                    "results",
                    "input_config",
                    "request_totals",
                    "x",
                ]
            )
            | st.text(max_size=6),
            children,
            max_size=6,
        )
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.binary(max_size=512),
    st.sampled_from([None, "vllm", "guidellm", "aiperf", "genai-perf", "llmperf"]),
)
def test_fuzz_random_bytes(raw, tool):
    _check(raw, tool)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values, st.sampled_from([None, "vllm", "guidellm", "aiperf", "genai-perf", "llmperf"]))
def test_fuzz_random_json(value, tool):
    _check(json.dumps(value).encode(), tool)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(FIXTURES)), st.data())
def test_fuzz_mutated_fixtures(name, data):
    from pathlib import Path

    raw = (Path(__file__).resolve().parents[2] / "data" / "benchmarks" / name).read_bytes()
    doc = json.loads(raw)
    if isinstance(doc, dict) and doc:
        key = data.draw(st.sampled_from(sorted(doc)))
        doc[key] = data.draw(json_values)
    _check(json.dumps(doc).encode())
