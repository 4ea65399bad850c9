"""The four formats added with issue 17 among the others: each fixture is detected as its
tool, naming another tool is refused, tool names are accepted, and no mutation of a fixture
makes a parser fail other than with its own ImportFormatError."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.benchmarks.importers import (
    INFERENCE_PERF,
    MLPERF_ENDPOINTS,
    SGLANG_BENCH,
    TOOLS,
    TRTLLM_BENCH,
    VLLM,
    CanonicalRun,
    ImportFormatError,
    detect_format,
    normalise_tool,
    parse_result_file,
)
from apps.benchmarks.importers.common import TOOL_DISPLAY, load_json

from .conftest import DATA

FIXTURES = {
    "inference_perf_br_v0_1.json": INFERENCE_PERF,
    "inference_perf_br_v0_2.json": INFERENCE_PERF,
    "inference_perf_lifecycle_stage_2025_08.json": INFERENCE_PERF,
    "mlperf_endpoints_result_summary_2026_05.json": MLPERF_ENDPOINTS,
    "mlperf_endpoints_result_summary_2026_08.json": MLPERF_ENDPOINTS,
    "trtllm_bench_v0_18.json": TRTLLM_BENCH,
    "trtllm_bench_v1_1.json": TRTLLM_BENCH,
    "sglang_bench_serving_2024.jsonl": SGLANG_BENCH,
    "sglang_bench_serving_2025.jsonl": SGLANG_BENCH,
}
# inference-perf's summary over every stage: its tool's own file, refused on purpose.
REFUSED = {"inference_perf_lifecycle_summary_2026_08.json"}
OTHERS = sorted(p.name for p in DATA.iterdir() if p.suffix in (".json", ".jsonl"))


@pytest.mark.parametrize(("name", "tool"), FIXTURES.items())
def test_each_fixture_is_detected_as_its_tool(fixture_bytes, name, tool):
    assert detect_format(load_json(fixture_bytes(name))) == tool
    runs = parse_result_file(fixture_bytes(name))
    assert runs and all(run.tool == tool for run in runs)
    assert all(run.source_names for run in runs)


@pytest.mark.parametrize(("name", "tool"), FIXTURES.items())
def test_naming_another_tool_is_refused(fixture_bytes, name, tool):
    with pytest.raises(ImportFormatError) as exc:
        parse_result_file(fixture_bytes(name), tool="vllm")
    assert exc.value.message == f"this is a {TOOL_DISPLAY[tool]} file, not vLLM"


@pytest.mark.parametrize("name", OTHERS)
def test_no_older_fixture_is_taken_for_a_new_format(fixture_bytes, name):
    if name in FIXTURES or name in REFUSED:
        return
    assert detect_format(load_json(fixture_bytes(name))) not in FIXTURES.values()


@pytest.mark.parametrize(
    ("given", "tool"),
    [
        ("inference-perf", INFERENCE_PERF),
        ("llm-d", INFERENCE_PERF),
        ("mlperf-endpoints", MLPERF_ENDPOINTS),
        ("MLPerf", MLPERF_ENDPOINTS),
        ("trtllm-bench", TRTLLM_BENCH),
        ("sglang", SGLANG_BENCH),
        ("bench_serving", SGLANG_BENCH),
        ("vllm", VLLM),
    ],
)
def test_tool_names(given, tool):
    assert normalise_tool(given) == tool
    assert tool in TOOLS


def test_fixtures_name_the_tool_they_claim(fixture_bytes):
    """Where a format records the model, the fixture names it (the import checks it)."""
    named = {
        name: {run.conditions.get("model") for run in parse_result_file(fixture_bytes(name))}
        for name in FIXTURES
    }
    assert named["inference_perf_br_v0_2.json"] == {"Qwen/Qwen3-0.6B"}
    assert named["trtllm_bench_v1_1.json"] == {"meta-llama/Llama-3.1-70B-Instruct"}
    # inference-perf's own report, MLPerf Endpoints and SGLang write no model into their results.
    assert named["inference_perf_lifecycle_stage_2025_08.json"] == {None}
    assert named["mlperf_endpoints_result_summary_2026_08.json"] == {None}
    assert named["sglang_bench_serving_2025.jsonl"] == {None}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


def _mutate(doc, data):
    """Replace one value somewhere in ``doc`` (up to three levels down)."""
    node = doc
    for _ in range(data.draw(st.integers(0, 3))):
        if isinstance(node, dict) and node:
            key = data.draw(st.sampled_from(sorted(node)))
            if isinstance(node[key], dict | list) and node[key]:
                node = node[key]
                continue
        break
    if isinstance(node, dict) and node:
        node[data.draw(st.sampled_from(sorted(node)))] = data.draw(json_values)
    elif isinstance(node, list) and node:
        node[data.draw(st.integers(0, len(node) - 1))] = data.draw(json_values)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(FIXTURES)), st.data())
def test_fuzz_mutated_fixtures(name, data):
    doc = load_json((DATA / name).read_bytes())
    _mutate(doc, data)
    tool = data.draw(st.sampled_from([None, "inference-perf", "mlperf", "trtllm-bench", "sglang"]))
    try:
        runs = parse_result_file(json.dumps(doc).encode(), tool=tool)
    except ImportFormatError as exc:
        # A message of the parser's own, not the catch-all for an exception it let through.
        assert exc.message and not exc.message.startswith("unreadable result file"), exc.message
        return
    assert runs and all(isinstance(run, CanonicalRun) for run in runs)
