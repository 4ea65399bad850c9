"""Entry points: detect a result file's tool and parse it into canonical runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import (
    aiperf,
    csv_exports,
    genai_perf,
    guidellm,
    inference_perf,
    llmperf,
    mlperf_endpoints,
    sglang_bench,
    trtllm_bench,
    vllm,
)
from .common import (
    AIPERF,
    GENAI_PERF,
    GUIDELLM,
    INFERENCE_PERF,
    LLMPERF,
    MLPERF_ENDPOINTS,
    SGLANG_BENCH,
    TOOL_DISPLAY,
    TOOLS,
    TRTLLM_BENCH,
    VLLM,
    CanonicalRun,
    ImportFormatError,
    load_json,
    load_yaml,
)
from .request_logs import (
    AIPERF_RECORDS,
    LLMPERF_REQUESTS,
    looks_like_aiperf_records,
    looks_like_llmperf_requests,
    parse_aiperf_records,
    parse_llmperf_requests,
)

_Detector = Callable[[dict[str, Any]], bool]
_Parser = Callable[[object], list[CanonicalRun]]

# Order matters: AIPerf mimics GenAI-Perf's layout, so it is tried first; an SGLang line
# carries vLLM's key names (bench_serving was adapted from benchmark_serving.py), so SGLang
# is tried before vLLM.
_DETECTORS: tuple[tuple[str, _Detector], ...] = (
    (GUIDELLM, guidellm.looks_like),
    (INFERENCE_PERF, inference_perf.looks_like),
    (MLPERF_ENDPOINTS, mlperf_endpoints.looks_like),
    (TRTLLM_BENCH, trtllm_bench.looks_like),
    (SGLANG_BENCH, sglang_bench.looks_like),
    (VLLM, vllm.looks_like),
    (LLMPERF, llmperf.looks_like),
    (AIPERF, aiperf.looks_like),
    (GENAI_PERF, genai_perf.looks_like),
)
_PARSERS: dict[str, _Parser] = {
    VLLM: vllm.parse,
    GUIDELLM: guidellm.parse,
    AIPERF: aiperf.parse,
    GENAI_PERF: genai_perf.parse,
    LLMPERF: llmperf.parse,
    INFERENCE_PERF: inference_perf.parse,
    MLPERF_ENDPOINTS: mlperf_endpoints.parse,
    TRTLLM_BENCH: trtllm_bench.parse,
    SGLANG_BENCH: sglang_bench.parse,
}
#: Tools whose files may be JSON lines (a list of run objects), with their line detector.
_LINE_TOOLS: tuple[tuple[str, _Detector], ...] = (
    (SGLANG_BENCH, sglang_bench.looks_like),
    (VLLM, vllm.looks_like),
)
_ALIASES = {
    "VLLM": VLLM,
    "VLLM_BENCH_SERVE": VLLM,
    "BENCHMARK_SERVING": VLLM,
    "GUIDELLM": GUIDELLM,
    "AIPERF": AIPERF,
    "GENAI_PERF": GENAI_PERF,
    "GENAIPERF": GENAI_PERF,
    "LLMPERF": LLMPERF,
    "INFERENCE_PERF": INFERENCE_PERF,
    "LLM_D": INFERENCE_PERF,
    "LLM_D_BENCHMARK": INFERENCE_PERF,
    "BENCHMARK_REPORT": INFERENCE_PERF,
    "MLPERF_ENDPOINTS": MLPERF_ENDPOINTS,
    "MLPERF": MLPERF_ENDPOINTS,
    "TRTLLM_BENCH": TRTLLM_BENCH,
    "TRTLLM": TRTLLM_BENCH,
    "SGLANG_BENCH": SGLANG_BENCH,
    "SGLANG": SGLANG_BENCH,
    "BENCH_SERVING": SGLANG_BENCH,
}


def detect_format(data: object) -> str | None:
    """The tool (one of ``TOOLS``) that wrote the decoded JSON ``data``, or None when it
    matches none of them.

    A list is recognised only as JSON lines of one tool: SGLang ``bench_serving
    --output-file`` or vLLM ``--append-result`` (objects that all look like its results).
    """
    if isinstance(data, list):
        for tool, looks_like_line in _LINE_TOOLS:
            if data and all(isinstance(item, dict) and looks_like_line(item) for item in data):
                return tool
        return None
    if not isinstance(data, dict):
        return None
    for tool, looks_like in _DETECTORS:
        if looks_like(data):
            return tool
    return None


def normalise_tool(tool: str) -> str:
    key = tool.strip().upper().replace("-", "_").replace(" ", "_")
    if key not in _ALIASES:
        raise ImportFormatError(f"unknown tool {tool!r}; expected one of {', '.join(TOOLS)}")
    return _ALIASES[key]


def parse_result_file(raw: bytes, *, tool: str | None = None) -> list[CanonicalRun]:
    """Parse one result file into canonical runs (GuideLLM files and JSON lines may hold
    several).

    ``tool`` names the tool the caller believes wrote the file; the content is
    checked against it. Raises only ``ImportFormatError``.
    """
    try:
        return _parse(raw, tool)
    except ImportFormatError:
        raise
    except RecursionError:
        raise ImportFormatError("not JSON: nested too deeply") from None
    except Exception as exc:  # the contract: any input bytes give only ImportFormatError
        raise ImportFormatError(
            f"unreadable result file ({type(exc).__name__}); the content does not match "
            "any supported layout"
        ) from exc


def _load(raw: bytes) -> Any:
    """The file's document: JSON (or JSON lines); else YAML, which an llm-d Benchmark Report is
    written in, when the text is a YAML mapping; else the JSON loader's own error."""
    head = raw.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if head in (b"{", b"[") or not head:
        return load_json(raw)
    try:
        loaded = load_yaml(raw)
    except ImportFormatError as exc:
        if not exc.message.startswith("not YAML"):
            raise  # a YAML document with what a report may not hold (aliases, NaN)
        loaded = None
    if isinstance(loaded, dict):
        return loaded
    return load_json(raw)  # raises, in its own words ("does not start with '{' or '['")


def _parse(raw: bytes, tool: str | None) -> list[CanonicalRun]:
    if not isinstance(raw, bytes | bytearray | memoryview):
        raise ImportFormatError("expected the file's bytes")
    raw = bytes(raw)
    named = normalise_tool(tool) if tool is not None else None
    csv_tool = csv_exports.detect(raw)
    if csv_tool is not None:
        if named not in (None, csv_tool):
            raise ImportFormatError(
                f"this is a {TOOL_DISPLAY[csv_tool]} CSV export, not {TOOL_DISPLAY[named]}"
            )
        return csv_exports.parse(raw, csv_tool)
    data = _load(raw)
    if looks_like_aiperf_records(data):
        if named not in (None, AIPERF):
            raise ImportFormatError(f"this is an {AIPERF_RECORDS} file, not {TOOL_DISPLAY[named]}")
        return parse_aiperf_records(data)
    if isinstance(data, list) and looks_like_llmperf_requests(data):
        if named not in (None, LLMPERF):
            raise ImportFormatError(
                f"this is an {LLMPERF_REQUESTS} file, not {TOOL_DISPLAY[named]}"
            )
        return parse_llmperf_requests(data)
    detected = detect_format(data)
    if named is not None and detected is not None and detected != named:
        raise ImportFormatError(
            f"this is a {TOOL_DISPLAY[detected]} file, not {TOOL_DISPLAY[named]}"
        )
    chosen = named or detected
    if chosen is None:
        if isinstance(data, list):
            raise ImportFormatError(
                "not a benchmark result: a JSON list that is not vLLM --append-result or "
                "SGLang bench_serving lines"
            )
        if not isinstance(data, dict):
            raise ImportFormatError(
                f"not a benchmark result: the JSON is a {type(data).__name__}, not an object"
            )
        raise ImportFormatError(
            "unrecognised result file: not vLLM, GuideLLM, AIPerf, GenAI-Perf, llmperf, llm-d "
            "Benchmark Report, MLPerf Endpoints, trtllm-bench or SGLang bench_serving output, "
            "nor an AIPerf, GenAI-Perf or GuideLLM CSV export (missing required figure: ttft)"
        )
    runs = _PARSERS[chosen](data)
    if not runs:
        raise ImportFormatError(f"no runs found in this {TOOL_DISPLAY[chosen]} file")
    return runs
