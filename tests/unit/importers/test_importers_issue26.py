"""vLLM ``--metadata`` as the run's label; SGLang's ``failed`` null beside an empty
``errors[]``; an llm-d report's Infinity only where a load setting may be unbounded."""

import json

import pytest

from apps.benchmarks.importers import ImportFormatError, parse_result_file

from .conftest import DATA


def _vllm_lines_with_metadata() -> bytes:
    """The --append-result fixture as vLLM writes it with ``--metadata gpu=h100 tp=2``: the
    pairs land in the result object after num_prompts (vllm/benchmarks/serve.py main_async)."""
    lines = []
    for n, line in enumerate((DATA / "vllm_bench_serve_append.jsonl").read_text().splitlines()):
        if not line.strip():
            continue
        data = json.loads(line)
        out = {}
        for key, value in data.items():
            if key == "request_rate":
                out["gpu"], out["tp"] = "h100", str(n + 1)
            out[key] = value
        lines.append(json.dumps(out))
    return ("\n".join(lines) + "\n").encode()


def test_vllm_metadata_names_each_run_of_an_append_file():
    runs = parse_result_file(_vllm_lines_with_metadata())
    assert [run.label for run in runs][:2] == ["sweep (gpu=h100, tp=1)", "sweep (gpu=h100, tp=2)"]
    assert runs[0].conditions["metadata"] == "gpu=h100, tp=1"


def test_vllm_without_metadata_keeps_its_label():
    runs = parse_result_file((DATA / "vllm_bench_serve_append.jsonl").read_bytes())
    assert "metadata" not in runs[0].conditions


def test_sglang_failed_null_with_an_empty_errors_list_is_no_failure():
    line = json.loads((DATA / "sglang_bench_serving_2025.jsonl").read_text().splitlines()[0]
                      .replace("Infinity", '"inf"'))  # fmt: skip
    line.update(failed=None, errors=["", "", ""])
    (run,) = parse_result_file(json.dumps(line).encode(), tool="sglang")
    assert run.results["failed"] == 0
    line.update(errors=["", "timeout", ""])
    (run,) = parse_result_file(json.dumps(line).encode(), tool="sglang")
    assert run.results["failed"] == 1


def test_infinity_elsewhere_in_a_report_is_still_refused():
    raw = (DATA / "inference_perf_br_v0_2.json").read_text()
    data = json.loads(raw)
    data["results"]["request_performance"]["aggregate"]["latency"]["time_to_first_token"][
        "mean"
    ] = float("inf")
    with pytest.raises(ImportFormatError) as caught:
        parse_result_file(json.dumps(data).encode())
    assert "Infinity" in caught.value.message
