"""CSV exports: AIPerf ``profile_export_aiperf.csv``, GenAI-Perf
``profile_export_genai_perf.csv`` and GuideLLM ``benchmarks.csv``.

The layouts, as each tool's exporter writes them:

* AIPerf (ai-dynamo/aiperf ``aiperf/exporters/csv_exporter.py`` ``CsvExporter``): sections
  separated by a blank row. The first, ``Metric,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,
  p99,std`` (``STAT_KEYS`` in ``aiperf/common/constants.py``), one row per metric with
  percentiles; the second, ``Metric,Value``, the single-value metrics (``metric.avg``). A
  metric is named by its ``header`` and display unit: ``Time to First Token (ms)``,
  ``Request Throughput (requests/sec)``, ``Benchmark Duration (sec)``; a unit of ``count`` or
  ``requests`` is left off (``Request Count``). Numbers are ``f"{value:.2f}"``. A GPU-telemetry
  section (``Endpoint,GPU_Index,GPU_Name,...``) may follow; it is not read.
* GenAI-Perf (triton-inference-server/perf_analyzer ``genai-perf/genai_perf/export_data/
  csv_exporter.py``): the same two sections, but its statistics run ``avg,min,max,p99,p95,
  p90,p75,p50,p25`` (``,p10,p5,p1`` since PR #334, May 2025), its names are the metric's name
  in title case with the unit (``Time To First Token (ms)``, ``Request Throughput (per sec)``,
  ``Request Count (count)``, ``exporter_utils.format_metric_name``) and its numbers are
  ``f"{value:,.2f}"``: thousands separated by commas ("1,146.31", quoted by the CSV writer).
  A missing statistic is ``N/A``; files of 2024 wrote ``-1.00`` for a metric the run did not
  measure (no streaming): both are read as absent.
* GuideLLM 0.4+ (vllm-project/guidellm ``src/guidellm/benchmark/outputs/csv.py``
  ``GenerativeBenchmarkerCSV``): three header rows (group, field, unit or statistic) and one
  row per benchmark. A distribution is four columns, ``(group, "Successful <unit>", "Mean" |
  "Median" | "Std Dev" | "Percentiles")``, the last holding the text ``[min, p0.1, p1, p5,
  p10, p25, p75, p90, p95, p99, max]``.
* GuideLLM 0.2 / 0.3 (``src/guidellm/benchmark/output.py`` ``save_csv``): one header row,
  ``Type,Run Id,Id,Name,Start Time,End Time,Duration,Successful Requests,...``; a distribution
  is ``"<Status> <metric> mean"``, ``... median``, ``... std dev`` and ``... [min, 0.1, 1, 5,
  10, 25, 75, 90, 95, 99, max]`` (a list), with the metric's field name spelt out
  (``Time to first token ms``, ``Request latency``); ``Args`` holds the strategy as JSON.

The traps are the tools' own (see the package docstring): AIPerf / GenAI-Perf
``Inter Token Latency`` and GuideLLM ``Inter Token Latency`` exclude the first token ->
``tpot_ms``; AIPerf ``Inter Chunk Latency`` -> ``itl_ms``; GuideLLM ``Time per Output Token``
includes it and is not used; GuideLLM request latency is in seconds. A CSV export holds no
model name (a GuideLLM one may, in its JSON columns): the import must say which model ran.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

from .common import (
    AIPERF,
    GENAI_PERF,
    GUIDELLM,
    MAX_FILE_BYTES,
    TOOL_DISPLAY,
    CanonicalRun,
    ImportFormatError,
    RunBuilder,
    as_object,
    to_ms,
    to_seconds,
)

# A GuideLLM row holds its benchmark's configuration as JSON in single cells; csv's default
# limit of 131,072 characters a cell would refuse a long one. The file's own size limit
# (MAX_FILE_BYTES) bounds every cell anyway. The csv module's limit is process-wide, so it is
# raised only while an export is read (`_cells_up_to`) and put back after: the quote CSV keeps
# its own, lower limit.
CELL_CHARS_MAX: Final = MAX_FILE_BYTES


@contextmanager
def _cells_up_to(limit: int) -> Iterator[None]:
    before = csv.field_size_limit(limit)
    try:
        yield
    finally:
        csv.field_size_limit(before)


#: A metric name with its unit in parentheses: "Time to First Token (ms)".
NAME_AND_UNIT: Final = re.compile(r"^(?P<name>.*?)\s*(?:\((?P<unit>[^()]*)\))?\s*$")
#: What the AIPerf / GenAI-Perf exports write for a statistic they do not have.
MISSING_TEXT: Final = frozenset({"", "N/A", "n/a", "NA", "None", "nan"})
#: GenAI-Perf's 2024 exporter wrote -1 for a metric the run did not measure
#: (csv_exporter.py @ 699bdd51: ``self._stats.get(metric, -1)``).
GENAI_PERF_MISSING: Final = -1.0
#: AIPerf / GenAI-Perf metric names (lower case, without the unit) -> canonical latency slot.
LATENCY_NAMES: Final = {
    "time to first token": "ttft_ms",
    "inter token latency": "tpot_ms",
    "inter chunk latency": "itl_ms",
    "request latency": "e2e_latency_ms",
}
LATENCY_NOTES: Final = {
    "tpot_ms": "; first token excluded",
    "itl_ms": "; gap between streamed chunks",
}
#: ... -> canonical scalar slot (its ``avg`` or ``Value``).
SCALAR_NAMES: Final = {
    "request throughput": "request_throughput_rps",
    "output token throughput": "output_tokens_per_s",
    "total token throughput": "total_tokens_per_s",
    "input sequence length": "input_tokens_mean",
    "output sequence length": "output_tokens_mean",
    "request count": "completed",
    "error request count": "failed",
    "goodput": "goodput_rps",
    "request goodput": "goodput_rps",
}
WHOLE_SCALARS: Final = frozenset({"completed", "failed"})
DURATION_NAME: Final = "benchmark duration"
READ_NAMES: Final = frozenset({*LATENCY_NAMES, *SCALAR_NAMES, DURATION_NAME})
#: Statistic columns of AIPerf / GenAI-Perf -> canonical statistic.
STAT_COLUMNS: Final = {"avg": "mean", "p50": "p50", "p90": "p90", "p95": "p95", "p99": "p99"}
#: Positions in GuideLLM's percentile list ``[min, p0.1, p1, p5, p10, p25, p75, p90, p95,
#: p99, max]`` (guidellm csv.py ``_add_distribution_stats``; output.py in 0.2 / 0.3).
GUIDELLM_PERCENTILES: Final = (("p90", 7), ("p95", 8), ("p99", 9))
GUIDELLM_PERCENTILE_COUNT: Final = 11
#: GuideLLM 0.4+ distributions read: (group, unit) -> (canonical slot, scale to the slot's unit,
#: the unit as the file spells it).
GUIDELLM_LATENCIES: Final = {
    ("Time to First Token", "ms"): ("ttft_ms", 1.0),
    ("Inter Token Latency", "ms"): ("tpot_ms", 1.0),
    ("Request Latency", "Sec"): ("e2e_latency_ms", 1000.0),
}
GUIDELLM_SCALARS: Final = {
    ("Server Throughput", "Requests/Sec"): "request_throughput_rps",
    ("Token Throughput", "Output Tokens/Sec"): "output_tokens_per_s",
    ("Token Throughput", "Total Tokens/Sec"): "total_tokens_per_s",
    ("Token Metrics", "Input Tokens"): "input_tokens_mean",
    ("Token Metrics", "Output Tokens"): "output_tokens_mean",
}
#: GuideLLM 0.2 / 0.3: the metric as its header spells it -> (slot, scale, unit).
GUIDELLM_V03_LATENCIES: Final = {
    "Time to first token ms": ("ttft_ms", 1.0, "ms"),
    "Inter token latency ms": ("tpot_ms", 1.0, "ms"),
    "Request latency": ("e2e_latency_ms", 1000.0, "s"),
}
GUIDELLM_V03_SCALARS: Final = {
    "Requests per second": "request_throughput_rps",
    "Output tokens per second": "output_tokens_per_s",
    "Tokens per second": "total_tokens_per_s",
    "Prompt token count": "input_tokens_mean",
    "Output token count": "output_tokens_mean",
}
#: A strategy kind -> (its profile's key for the setting, the condition it sets).
GUIDELLM_LOAD_KEYS: Final = {
    "concurrent": ("streams", "concurrency"),
    "constant": ("rate", "request_rate"),
    "poisson": ("rate", "request_rate"),
}
GUIDELLM_V03_PERCENTILES_SUFFIX: Final = "[min, 0.1, 1, 5, 10, 25, 75, 90, 95, 99, max]"
#: The first cells that open each layout.
GUIDELLM_V04_FIRST: Final = "Run Info"
GUIDELLM_V03_FIRST: Final = ("Type", "Run Id")
METRIC_FIRST: Final = "Metric"

Rows = list[list[str]]


def _rows(raw: bytes) -> Rows:
    if len(raw) > MAX_FILE_BYTES:
        raise ImportFormatError(
            f"file too large: {len(raw)} bytes, the limit is {MAX_FILE_BYTES} bytes"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"not CSV: not UTF-8 text (byte {exc.start})") from None
    if "\x00" in text:
        raise ImportFormatError("not CSV: the file contains NUL bytes")
    try:
        with _cells_up_to(CELL_CHARS_MAX):
            return [[cell.strip() for cell in row] for row in csv.reader(io.StringIO(text))]
    except csv.Error as exc:
        raise ImportFormatError(f"not CSV: {exc}") from None


def detect(raw: bytes) -> str | None:
    """The tool whose CSV export ``raw`` is, from its first row; None when it is not one."""
    head = raw.lstrip(b"\xef\xbb\xbf \t\r\n")[:200]
    if head[:1] in (b"{", b"[") or b"," not in head:
        return None
    try:
        first = next(csv.reader(io.StringIO(head.decode("utf-8", "ignore").splitlines()[0])))
    except (StopIteration, csv.Error, IndexError):
        return None
    first = [cell.strip() for cell in first]
    if first and first[0] == GUIDELLM_V04_FIRST:
        return GUIDELLM
    if tuple(first[:2]) == GUIDELLM_V03_FIRST:
        return GUIDELLM
    if first[:1] == [METRIC_FIRST]:
        return _metric_tool(first)
    return None


def _metric_tool(header: list[str]) -> str:
    """AIPerf writes its percentiles upwards after ``max`` (p1 ... p99) or, with only a
    ``Value`` section, no statistics at all; GenAI-Perf writes them downwards (p99 first)."""
    stats = header[1:]
    if "max" in stats and stats.index("max") + 1 < len(stats):
        return GENAI_PERF if stats[stats.index("max") + 1] == "p99" else AIPERF
    return AIPERF


def parse(raw: bytes, tool: str) -> list[CanonicalRun]:
    rows = _rows(raw)
    if tool == GUIDELLM:
        first = rows[0] if rows else []
        if first[:1] == [GUIDELLM_V04_FIRST]:
            return _guidellm_v04(rows)
        return _guidellm_v03(rows)
    return [_metric_sections(rows, tool)]


def _number(text: str, what: str, tool: str) -> float | None:
    """A cell's number (thousands separators allowed); None for the tools' "missing" texts."""
    if text in MISSING_TEXT:
        return None
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        raise ImportFormatError(f"expected a number for {what}, got {text[:40]!r}") from None
    if not math.isfinite(value):
        raise ImportFormatError(f"not a finite number for {what}: {text[:40]!r}")
    if value == GENAI_PERF_MISSING and tool == GENAI_PERF:
        return None
    if value < 0:
        raise ImportFormatError(f"negative value for {what}: {value:g}")
    return value


def _whole(value: float | None, what: str) -> int | None:
    if value is None:
        return None
    if value != math.floor(value):
        raise ImportFormatError(f"expected a whole number for {what}, got {value:g}")
    return int(value)


def _sections(rows: Rows) -> list[Rows]:
    """The row blocks between blank rows."""
    sections: list[Rows] = []
    current: Rows = []
    for row in rows:
        if not any(row):
            if current:
                sections.append(current)
            current = []
        else:
            current.append(row)
    if current:
        sections.append(current)
    return sections


def _metric_sections(rows: Rows, tool: str) -> CanonicalRun:
    """One run from an AIPerf or GenAI-Perf CSV export."""
    display = TOOL_DISPLAY[tool]
    b = RunBuilder(tool)
    seen: set[str] = set()
    for section in _sections(rows):
        header = section[0]
        if header[:1] != [METRIC_FIRST]:
            continue  # GPU telemetry (Endpoint,GPU_Index,...): not a figure of the run
        columns = header[1:]
        for row in section[1:]:
            match = NAME_AND_UNIT.match(row[0])
            name = (match.group("name") if match else row[0]).strip()
            unit = ((match.group("unit") if match else None) or "").strip()
            key = name.lower()
            if key in seen and key in READ_NAMES:  # a figure read twice would be ambiguous
                raise ImportFormatError(f"the {display} CSV names {name} twice")
            seen.add(key)
            cells = dict(zip(columns, row[1:], strict=False))
            if columns == ["Value"]:
                cells = {"avg": cells.get("Value", "")}
            _metric_row(b, tool, key, row[0], unit, cells)
    return b.build(tool_version=None, conditions={"export": f"{display} CSV"}, label=None)


def _metric_row(
    b: RunBuilder, tool: str, key: str, shown: str, unit: str, cells: dict[str, str]
) -> None:
    if key in LATENCY_NAMES:
        canon = LATENCY_NAMES[key]
        for column, stat in STAT_COLUMNS.items():
            value = _number(cells.get(column, ""), f"{shown} {column}", tool)
            if value is None:
                continue
            ms = to_ms(value, unit or "ms", shown)
            b.stat(canon, stat, ms, f"{shown} {column} ({unit}{LATENCY_NOTES.get(canon, '')})")
    elif key in SCALAR_NAMES:
        canon = SCALAR_NAMES[key]
        value = _number(cells.get("avg", ""), f"{shown} avg", tool)
        b.scalar(canon, _whole(value, shown) if canon in WHOLE_SCALARS else value, shown)
    elif key == DURATION_NAME:
        value = _number(cells.get("avg", ""), shown, tool)
        if value is not None:
            b.scalar("duration_s", to_seconds(value, unit or "sec", shown), shown)


# GuideLLM ---------------------------------------------------------------------------------


def _json_cell(text: str, what: str) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise ImportFormatError(f"{what} is not JSON") from None
    return as_object(value)


def _percentile_list(text: str, what: str) -> list[float] | None:
    if not text:
        return None
    try:
        values = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise ImportFormatError(f"{what} is not a list of numbers: {text[:40]!r}") from None
    if (
        not isinstance(values, list)
        or len(values) != GUIDELLM_PERCENTILE_COUNT
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    ):
        raise ImportFormatError(
            f"{what} must be the {GUIDELLM_PERCENTILE_COUNT} numbers [min, 0.1, 1, 5, 10, 25, "
            "75, 90, 95, 99, max]"
        )
    return [float(v) for v in values]


def _guidellm_distribution(
    b: RunBuilder,
    canon: str,
    scale: float,
    cell: Callable[[str], str],
    names: dict[str, str],
    what: str,
    unit: str,
) -> None:
    """Mean, median and percentiles of one GuideLLM distribution; ``names`` maps mean / median
    / percentiles to the columns ``cell`` reads."""
    conv = f"{unit}, x{scale:g}" if scale != 1.0 else unit
    for stat, column in (("mean", names["mean"]), ("p50", names["median"])):
        value = _number(cell(column), f"{what} {column}", GUIDELLM)
        b.stat(canon, stat, None if value is None else value * scale, f"{column} ({conv})")
    pcts = _percentile_list(cell(names["percentiles"]), f"{what} {names['percentiles']}")
    for stat, index in GUIDELLM_PERCENTILES if pcts else ():
        b.stat(canon, stat, pcts[index] * scale, f"{names['percentiles']}[{index}] ({conv})")  # type: ignore[index]


def _guidellm_v04(rows: Rows) -> list[CanonicalRun]:
    if len(rows) < 4:
        raise ImportFormatError("GuideLLM CSV holds no benchmarks (only its header rows)")
    width = len(rows[0])
    headers = [tuple(row[i] if i < len(row) else "" for row in rows[:3]) for i in range(width)]
    runs = []
    for number, row in enumerate(rows[3:], start=1):
        if not any(row):
            continue
        values = dict(zip(headers, row, strict=False))
        runs.append(_guidellm_v04_run(values, number))
    if not runs:
        raise ImportFormatError("GuideLLM CSV holds no benchmarks (only its header rows)")
    return runs


def _guidellm_v04_run(values: dict[tuple[str, ...], str], number: int) -> CanonicalRun:
    what = f"benchmark row {number}"
    b = RunBuilder(GUIDELLM)

    def cell(column: str) -> str:
        group, field, stat = column.split(" | ")
        return values.get((group, field, stat), "")

    for (group, unit), (canon, scale) in GUIDELLM_LATENCIES.items():
        base = f"{group} | Successful {unit}"
        _guidellm_distribution(
            b, canon, scale, cell,
            {"mean": f"{base} | Mean", "median": f"{base} | Median",
             "percentiles": f"{base} | Percentiles"},
            what, unit,
        )  # fmt: skip
    b.note(
        "time_per_output_token_ms",
        "not used: Time per Output Token includes the first token (TTFT); tpot_ms comes from "
        "Inter Token Latency",
    )
    b.note("itl_ms", "absent: GuideLLM reports per-request averages, not chunk gaps")
    for (group, unit), canon in GUIDELLM_SCALARS.items():
        column = f"{group} | Successful {unit} | Mean"
        b.scalar(canon, _number(cell(column), f"{what} {column}", GUIDELLM), f"{column}")
    for canon, status in (("completed", "Successful"), ("failed", "Errored")):
        column = f"Request Counts | {status} | "
        b.scalar(canon, _whole(_number(cell(column), what, GUIDELLM), column), column.strip(" |"))
    duration = _number(cell("Timings | Duration | Sec"), f"{what} Timings Duration", GUIDELLM)
    b.scalar("duration_s", duration, "Timings | Duration (Sec)")

    strategy = cell("Benchmark | Strategy | ")
    profile = _json_cell(cell("Run Info | Profile | "), f"{what} Run Info Profile")
    index = _whole(_number(cell("Run Info | Run Index | "), f"{what} Run Index", GUIDELLM), what)
    conditions, label = _guidellm_load(strategy, profile, index)
    backend = _json_cell(cell("Run Info | Backend | "), f"{what} Run Info Backend")
    arguments = _json_cell(cell("Runtime Info | Arguments | "), f"{what} Runtime Info Arguments")
    metadata = _json_cell(cell("Runtime Info | Metadata | "), f"{what} Runtime Info Metadata")
    conditions["model"] = arguments.get("model") or backend.get("model")
    conditions["backend"] = arguments.get("backend") or backend.get("type_") or backend.get("kind")
    conditions["target"] = arguments.get("target") or backend.get("target")
    conditions["incomplete_requests"] = _whole(
        _number(cell("Request Counts | Incomplete | "), what, GUIDELLM), what
    )
    conditions["export"] = "GuideLLM CSV"
    version = metadata.get("guidellm_version")
    return b.build(
        tool_version=version if isinstance(version, str) else None,
        conditions=conditions,
        label=label,
    )


def _guidellm_load(
    strategy: str, profile: dict[str, Any], index: int | None
) -> tuple[dict[str, Any], str | None]:
    """The run's load from ``Benchmark | Strategy``: GuideLLM 0.8 writes the strategy's display
    text there (``concurrent@2``, ``constant@5.00``: kind@setting), earlier 0.4+ files its kind
    alone, whose setting is then the profile's (``Run Info | Profile``) ``streams`` or ``rate``
    at the run's ``Run Index`` (guidellm ``BenchmarkConfig.run_index``: "index of this run
    within the benchmark series")."""
    if not strategy:
        return {}, None
    kind, _, setting = strategy.partition("@")
    conditions: dict[str, Any] = {"strategy": kind}
    if kind == "synchronous":
        conditions["concurrency"] = 1
        return conditions, strategy
    key, name = GUIDELLM_LOAD_KEYS.get(kind, ("", ""))
    if not key:
        return conditions, strategy
    value: Any = None
    if setting:
        try:
            value = float(setting)
        except ValueError:
            value = None
    else:
        values = profile.get(key)
        if isinstance(values, int | float) and not isinstance(values, bool):
            values = [values]
        if isinstance(values, list) and index is not None and 0 <= index < len(values):
            value = values[index]
    if isinstance(value, int | float) and not isinstance(value, bool):
        conditions[name] = int(value) if name == "concurrency" and value == int(value) else value
        unit = " req/s" if name == "request_rate" else ""
        return conditions, strategy if setting else f"{kind}@{value}{unit}"
    return conditions, strategy


def _guidellm_v03(rows: Rows) -> list[CanonicalRun]:
    if len(rows) < 2:
        raise ImportFormatError("GuideLLM CSV holds no benchmarks (only its header row)")
    header = rows[0]
    runs = []
    for number, row in enumerate(rows[1:], start=1):
        if not any(row):
            continue
        values = dict(zip(header, row, strict=False))
        runs.append(_guidellm_v03_run(values, number))
    return runs


def _guidellm_v03_run(values: dict[str, str], number: int) -> CanonicalRun:
    what = f"benchmark row {number}"
    b = RunBuilder(GUIDELLM)

    def cell(column: str) -> str:
        return values.get(column, "")

    for metric, (canon, scale, unit) in GUIDELLM_V03_LATENCIES.items():
        base = f"Successful {metric}"
        _guidellm_distribution(
            b, canon, scale, cell,
            {"mean": f"{base} mean", "median": f"{base} median",
             "percentiles": f"{base} {GUIDELLM_V03_PERCENTILES_SUFFIX}"},
            what, unit,
        )  # fmt: skip
    b.note(
        "time_per_output_token_ms",
        "not used: Time per output token includes the first token (TTFT)",
    )
    b.note("itl_ms", "absent: GuideLLM reports per-request averages, not chunk gaps")
    for metric, canon in GUIDELLM_V03_SCALARS.items():
        column = f"Successful {metric} mean"
        b.scalar(canon, _number(cell(column), f"{what} {column}", GUIDELLM), column)
    for canon, column in (("completed", "Successful Requests"), ("failed", "Errored Requests")):
        b.scalar(canon, _whole(_number(cell(column), what, GUIDELLM), column), column)
    b.scalar("duration_s", _number(cell("Duration"), f"{what} Duration", GUIDELLM), "Duration (s)")

    args = _json_cell(cell("Args"), f"{what} Args")
    worker = _json_cell(cell("Worker"), f"{what} Worker")
    strategy = as_object(args.get("strategy"))
    kind = strategy.get("type_")
    conditions: dict[str, Any] = {"strategy": kind} if isinstance(kind, str) else {}
    if kind == "concurrent":
        conditions["concurrency"] = strategy.get("streams")
    elif kind in ("constant", "poisson"):
        conditions["request_rate"] = strategy.get("rate")
    elif kind == "synchronous":
        conditions["concurrency"] = 1
    conditions["model"] = worker.get("backend_model")
    conditions["target"] = worker.get("backend_target")
    conditions["incomplete_requests"] = _whole(
        _number(cell("Incomplete Requests"), what, GUIDELLM), what
    )
    conditions["export"] = "GuideLLM CSV"
    name = cell("Name")
    return b.build(tool_version=None, conditions=conditions, label=name or None)
