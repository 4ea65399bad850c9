"""Shared pieces of the benchmark-result importers: the canonical record, the one
error type, JSON (and YAML) loading that refuses NaN/Infinity and lone surrogates, and
number/unit helpers.

Pure Python (the stdlib and PyYAML). Nothing here may import Django.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import yaml

from apps.engine.request_sizes import buckets_from_requests
from apps.engine.types import EngineInputError

VLLM: Final = "VLLM"
GUIDELLM: Final = "GUIDELLM"
AIPERF: Final = "AIPERF"
GENAI_PERF: Final = "GENAI_PERF"
LLMPERF: Final = "LLMPERF"
INFERENCE_PERF: Final = "INFERENCE_PERF"
MLPERF_ENDPOINTS: Final = "MLPERF_ENDPOINTS"
TRTLLM_BENCH: Final = "TRTLLM_BENCH"
SGLANG_BENCH: Final = "SGLANG_BENCH"
TOOLS: Final = (
    VLLM,
    GUIDELLM,
    AIPERF,
    GENAI_PERF,
    LLMPERF,
    INFERENCE_PERF,
    MLPERF_ENDPOINTS,
    TRTLLM_BENCH,
    SGLANG_BENCH,
)
TOOL_DISPLAY: Final = {
    VLLM: "vLLM",
    GUIDELLM: "GuideLLM",
    AIPERF: "AIPerf",
    GENAI_PERF: "GenAI-Perf",
    LLMPERF: "llmperf",
    INFERENCE_PERF: "llm-d Benchmark Report",
    MLPERF_ENDPOINTS: "MLPerf Endpoints",
    TRTLLM_BENCH: "trtllm-bench",
    SGLANG_BENCH: "SGLang bench_serving",
}

MAX_FILE_BYTES: Final = 20 * 1024 * 1024

#: Latency metrics of the canonical set; each is a dict of the STATS below.
LATENCY_METRICS: Final = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_latency_ms")
#: Statistics a latency metric may hold (absent ones are omitted, never None).
STATS: Final = ("mean", "p50", "p90", "p95", "p99")
#: Scalar figures of the canonical set; None when the file does not give them.
SCALARS: Final = (
    "request_throughput_rps",
    "output_tokens_per_s",
    "total_tokens_per_s",
    "completed",
    "failed",
    "goodput_rps",
    "input_tokens_mean",
    "output_tokens_mean",
    "duration_s",
)

JsonObject = dict[str, Any]

#: A UTF-16 surrogate code point. JSON's ``"\\ud800"`` escape decodes to one when it is not
#: half of a pair; it is not Unicode text and cannot be encoded as UTF-8, so SQLite fails
#: after the row is inserted and PostgreSQL refuses it.
SURROGATE: Final = re.compile("[\ud800-\udfff]")
#: How much of a key a path in an error message shows.
MAX_KEY_SHOWN: Final = 40


class ImportFormatError(Exception):
    """The one error the importers raise; ``message`` says what is wrong."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class CanonicalRun:
    """One measured run in the canonical vocabulary (the README's "Benchmark results" table).

    ``results`` holds ``ttft_ms``, ``tpot_ms`` (first token excluded), ``itl_ms``
    (gap between streamed chunks) and ``e2e_latency_ms`` as dicts of whichever of
    mean/p50/p90/p95/p99 the file gives (a metric with none is left out), plus
    the scalars in ``SCALARS`` (None when absent).
    """

    tool: str
    tool_version: str | None
    results: dict[str, Any]
    conditions: dict[str, Any] = field(default_factory=dict)
    source_names: dict[str, str] = field(default_factory=dict)
    label: str | None = None


def content_sha256(raw: bytes) -> str:
    """Hex SHA-256 of the raw file bytes (used to de-duplicate imports)."""
    return hashlib.sha256(raw).hexdigest()


def results_fingerprint(results: Mapping[str, Any]) -> str:
    """Hex SHA-256 of a run's canonical figures, written as JSON with sorted keys: two files
    holding the same measurement (a copy, or a tool's two exports of one run) give the same
    fingerprint. A float is written as Python's shortest repr, which a JSON column gives back
    unchanged, so a stored run's figures fingerprint as they did at import."""
    text = json.dumps(results, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class _Infinity:
    """Stands for a bare ``Infinity`` token until the key it belongs to is known."""


_INFINITY: Final = _Infinity()
#: The keys whose value may be the non-standard token ``Infinity`` (an unbounded load
#: setting): SGLang's bench_serving writes its default ``--request-rate inf`` with
#: ``json.dumps`` (python/sglang/bench_serving.py ``result = {"request_rate": ...}``), vLLM its
#: ``max_concurrency``, and an llm-d Benchmark Report's JSON export its load's
#: ``concurrency`` / ``rate_qps`` (``.inf`` in the YAML: br_v0_2_1_example.yaml
#: ``scenario.load.standardized.concurrency``). Each is read as the string "inf" (what vLLM
#: writes for the same setting); the token anywhere else, and NaN / -Infinity anywhere,
#: refuse the file.
INFINITE_OK_KEYS: Final = frozenset({"request_rate", "concurrency", "rate_qps", "max_concurrency"})


def _refuse_constant(name: str) -> Any:
    if name == "Infinity":
        return _INFINITY
    raise ImportFormatError(f"NaN in JSON: the file contains the non-standard token {name}")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if value is _INFINITY:
            if key not in INFINITE_OK_KEYS:
                raise ImportFormatError(
                    "NaN in JSON: the file contains the non-standard token Infinity"
                )
            value = "inf"
        out[key] = value
    return out


def _json_loads(text: str) -> Any:
    return json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_pairs)


def _decode_error(text: str, err: json.JSONDecodeError) -> ImportFormatError:
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return ImportFormatError("not JSON: the file does not start with '{' or '['")
    if err.pos >= len(text.rstrip()) - 1:
        return ImportFormatError(
            f"truncated JSON at line {err.lineno} column {err.colno}: {err.msg}"
        )
    return ImportFormatError(f"not JSON: {err.msg} at line {err.lineno} column {err.colno}")


def load_json(raw: bytes) -> Any:
    """Decode ``raw`` as UTF-8 JSON, refusing NaN/Infinity.

    A file of several JSON objects, one per line (``vllm bench serve
    --append-result``), is returned as a list of those objects.
    """
    if len(raw) > MAX_FILE_BYTES:
        raise ImportFormatError(
            f"file too large: {len(raw)} bytes, the limit is {MAX_FILE_BYTES} bytes"
        )
    if not raw.strip():
        raise ImportFormatError("empty file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"not JSON: not UTF-8 text (byte {exc.start})") from None
    try:
        loaded = _json_loads(text)
    except json.JSONDecodeError as err:
        if err.msg == "Extra data":
            lines = _load_json_lines(text)
            if lines is not None:
                _refuse_surrogates(lines)
                return lines
        raise _decode_error(text, err) from None
    except RecursionError:
        raise ImportFormatError("not JSON: nested too deeply") from None
    _refuse_surrogates(loaded)
    return loaded


class _NoAliasLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """YAML's safe loader (libyaml's where installed): plain data, no Python objects."""


def load_yaml(raw: bytes) -> Any:
    """Decode ``raw`` as a UTF-8 YAML document (an llm-d Benchmark Report is written as YAML),
    refusing what the JSON loader refuses: anchors and aliases (a few bytes could expand to
    gigabytes), NaN, an infinity outside ``INFINITE_OK_KEYS`` (read as "inf" there) and lone
    surrogates. Dates and times become ISO-8601 text, as the report's JSON export writes them."""
    if len(raw) > MAX_FILE_BYTES:
        raise ImportFormatError(
            f"file too large: {len(raw)} bytes, the limit is {MAX_FILE_BYTES} bytes"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"not YAML: not UTF-8 text (byte {exc.start})") from None
    try:
        for event in yaml.parse(text, Loader=_NoAliasLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise ImportFormatError("YAML anchors and aliases are not accepted in a report")
        loaded = yaml.load(text, Loader=_NoAliasLoader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "not YAML"
        raise ImportFormatError(f"not YAML: {problem}{where}") from None
    plain = _plain(loaded)
    _refuse_surrogates(plain)
    return plain


def _plain(value: Any, key: str = "", depth: int = 0) -> Any:
    """A loaded YAML value as JSON would hold it (see ``load_yaml``)."""
    if depth > 200:
        raise ImportFormatError("not YAML: nested too deeply")
    if isinstance(value, dict):
        return {str(k): _plain(v, str(k), depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, key, depth + 1) for v in value]
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        if value > 0 and key in INFINITE_OK_KEYS:
            return "inf"
        raise ImportFormatError(f"NaN in YAML: {key or 'a value'} is {value}")
    if isinstance(value, bytes):
        raise ImportFormatError(f"not a report: binary data in {key or 'a value'}")
    return value


def _shown(text: str) -> str:
    return text[:MAX_KEY_SHOWN].encode("utf-8", "backslashreplace").decode("utf-8")


def _refuse_surrogates(value: Any) -> None:
    """Refuse a lone surrogate in any string or key, naming where (without recursion)."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                name = f"{path}.{_shown(str(key))}" if path else _shown(str(key))
                _refuse_surrogate_in(str(key), f"the key {name}")
                stack.append((child, name))
        elif isinstance(item, list):
            stack.extend((child, f"{path}[{i}]") for i, child in enumerate(item))
        elif isinstance(item, str):
            _refuse_surrogate_in(item, path or "the top level")
        elif item is _INFINITY:  # a bare Infinity outside any object (e.g. in a list)
            raise ImportFormatError(
                "NaN in JSON: the file contains the non-standard token Infinity"
            )


def _refuse_surrogate_in(text: str, where: str) -> None:
    bad = SURROGATE.search(text)
    if bad:
        raise ImportFormatError(
            f"not Unicode text: a lone surrogate (U+{ord(bad.group()):X}) in {where}"
        )


def _load_json_lines(text: str) -> list[Any] | None:
    out: list[Any] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            item = _json_loads(line)
        except (json.JSONDecodeError, RecursionError):
            return None
        if not isinstance(item, dict):
            return None
        out.append(item)
    return out if len(out) > 1 else None


def as_object(value: object) -> JsonObject:
    """``value`` if it is a JSON object, else an empty dict."""
    return value if isinstance(value, dict) else {}


def optional_object(
    container: JsonObject, key: str, parent: str = "", hint: str = ""
) -> JsonObject:
    """The JSON object at ``container[key]`` (an empty dict if absent or null); anything else
    refuses the file, naming the field's path (``parent.key``) and, optionally, what belongs
    there (``hint``)."""
    value = container.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        path = f"{parent}.{key}" if parent else key
        raise ImportFormatError(f"{path} is not an object{hint}")
    return value


def number(container: Mapping[str, Any], key: str, what: str) -> float | None:
    """A finite, non-negative number at ``container[key]``; None if absent/null."""
    if key not in container:
        return None
    value = container[key]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ImportFormatError(
            f"expected a number for {what}, got {type(value).__name__}: {str(value)[:40]!r}"
        )
    try:
        result = float(value)
    except OverflowError:
        raise ImportFormatError(f"number too large for {what}") from None
    if math.isnan(result):
        raise ImportFormatError(f"NaN in {what}")
    if math.isinf(result):
        raise ImportFormatError(f"infinite value for {what}")
    if result < 0:
        raise ImportFormatError(f"negative value for {what}: {result}")
    return result


def count(container: Mapping[str, Any], key: str, what: str) -> int | None:
    """A whole, non-negative number at ``container[key]``; None if absent/null."""
    value = number(container, key, what)
    if value is None:
        return None
    if value != math.floor(value):
        raise ImportFormatError(f"expected a whole number for {what}, got {value}")
    return int(value)


def condition_value(value: object) -> Any:
    """Keep a condition only if it is a plain JSON scalar (or a short list of them)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return value[:16]
    return None


#: time unit -> (multiply, divide) to reach milliseconds
_TO_MS: Final = {
    "ms": (1.0, 1.0),
    "s": (1000.0, 1.0),
    "sec": (1000.0, 1.0),
    "seconds": (1000.0, 1.0),
    "us": (1.0, 1000.0),
    "µs": (1.0, 1000.0),
    "ns": (1.0, 1_000_000.0),
}


def to_ms(value: float, unit: str, what: str) -> float:
    """Convert ``value`` in ``unit`` (ms, s/sec, us, ns) to milliseconds."""
    factors = _TO_MS.get(unit.strip().lower())
    if factors is None:
        raise ImportFormatError(f"unknown time unit {unit!r} for {what}")
    mul, div = factors
    return value * mul / div


def to_seconds(value: float, unit: str, what: str) -> float:
    """Convert ``value`` in ``unit`` to seconds."""
    factors = _TO_MS.get(unit.strip().lower())
    if factors is None:
        raise ImportFormatError(f"unknown time unit {unit!r} for {what}")
    mul, div = factors
    return value * mul / div / 1000.0


class RunBuilder:
    """Collects canonical figures and their source names, then checks and freezes them."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self.prefix = TOOL_DISPLAY[tool]
        self.latency: dict[str, dict[str, float]] = {m: {} for m in LATENCY_METRICS}
        self.scalars: dict[str, Any] = dict.fromkeys(SCALARS)
        self.sources: dict[str, str] = {}
        self.extra: dict[str, Any] = {}  # figures beyond the scalars (the request log's buckets)

    def stat(self, metric: str, stat: str, value: float | None, source: str) -> None:
        if value is None:
            return
        self.latency[metric][stat] = value
        self.sources[f"{metric}.{stat}"] = f"{self.prefix}: {source}"

    def scalar(self, name: str, value: float | int | None, source: str) -> None:
        if value is None:
            return
        self.scalars[name] = value
        self.sources[name] = f"{self.prefix}: {source}"

    def note(self, key: str, text: str) -> None:
        """Record why a figure was left out (e.g. a first-token-inclusive field)."""
        self.sources[key] = f"{self.prefix}: {text}"

    def request_log(self, data: Mapping[str, Any], inputs: str, outputs: str) -> None:
        """The run's request-size buckets from its per-request prompt and output lengths
        (``data[inputs]``, ``data[outputs]``: lists of token counts, as a detailed result file
        holds them), for a brief's GPU mix (apps.engine.request_sizes.buckets_from_requests).
        Nothing when the file has no such lists; an error when they are not whole numbers."""
        ins, outs = data.get(inputs), data.get(outputs)
        if not isinstance(ins, list) or not isinstance(outs, list) or not ins:
            return
        if len(ins) != len(outs) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in [*ins, *outs]
        ):
            raise ImportFormatError(
                f"{inputs} and {outputs} must be lists of whole token counts of the same length"
            )
        try:
            buckets = buckets_from_requests(ins, outs)
        except EngineInputError as exc:
            raise ImportFormatError(f"{inputs} / {outputs}: {exc.message}") from exc
        self.extra["request_size_buckets"] = [
            {"input_tokens": b.input_tokens, "output_tokens": b.output_tokens, "share": b.share}
            for b in buckets
        ]
        self.extra["request_log_requests"] = len(ins)
        self.sources["request_size_buckets"] = (
            f"{self.prefix}: {inputs} / {outputs} ({len(ins)} requests), bucketed"
        )

    def build(
        self,
        *,
        tool_version: str | None,
        conditions: Mapping[str, Any],
        label: str | None,
    ) -> CanonicalRun:
        if not self.latency["ttft_ms"]:
            raise ImportFormatError(
                f"missing required figure: ttft (no time-to-first-token in this {self.prefix} "
                "result)"
            )
        results: dict[str, Any] = {m: dict(s) for m, s in self.latency.items() if s}
        results.update(self.scalars)
        results.update(self.extra)
        clean = {k: condition_value(v) for k, v in conditions.items()}
        return CanonicalRun(
            tool=self.tool,
            tool_version=tool_version,
            results=results,
            conditions={k: v for k, v in clean.items() if v is not None},
            source_names=dict(self.sources),
            label=label,
        )


def derive_tpot_mean(builder: RunBuilder, how: str) -> None:
    """tpot_ms.mean = (e2e - ttft) / (output_tokens - 1), from means.

    Used only where a tool gives no first-token-excluded per-token figure.
    It is a ratio of means, not the mean of per-request ratios.
    """
    e2e = builder.latency["e2e_latency_ms"].get("mean")
    ttft = builder.latency["ttft_ms"].get("mean")
    out_tokens = builder.scalars["output_tokens_mean"]
    if e2e is None or ttft is None or out_tokens is None or out_tokens <= 1 or e2e < ttft:
        return
    builder.stat(
        "tpot_ms",
        "mean",
        (e2e - ttft) / (out_tokens - 1),
        f"derived (e2e_mean - ttft_mean) / (output_tokens_mean - 1) because {how}; "
        "ratio of means, approximate",
    )
