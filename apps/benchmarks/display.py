"""What the benchmark pages show, in words and readable figures (apps.core.formatting): each
canonical figure by name with its unit, a run's candidate by the catalog's names, and the
engine's inputs at import as a sentence. The canonical key stays beside each figure (as code),
since a person may look it up in the API."""

from typing import Any, Final

from apps.catalog.selectors import preset_name
from apps.core import formatting
from apps.quotes.models import TERM_LABELS, Quote

from .models import BenchmarkRun

#: Each canonical latency metric in words (apps.benchmarks.importers.common.LATENCY_METRICS).
METRIC_WORDS: Final = {
    "ttft_ms": "Time to first token",
    "tpot_ms": "Time per output token (first excluded)",
    "itl_ms": "Inter-token latency",
    "e2e_latency_ms": "Request latency, end to end",
}
STAT_WORDS: Final = {"mean": "mean", "p50": "median", "p90": "p90", "p95": "p95", "p99": "p99"}
#: Each canonical scalar in words, with how its figure reads (importers.common.SCALARS).
SCALAR_WORDS: Final = {
    "request_throughput_rps": ("Requests completed per second", "req/s"),
    "output_tokens_per_s": ("Output tokens per second", "tokens/s"),
    "total_tokens_per_s": ("Prompt and output tokens per second", "tokens/s"),
    "completed": ("Requests completed", "requests"),
    "failed": ("Requests failed", "requests"),
    "goodput_rps": ("Goodput (requests within their targets per second)", "req/s"),
    "input_tokens_mean": ("Prompt tokens per request, mean", "tokens"),
    "output_tokens_mean": ("Output tokens per request, mean", "tokens"),
    "duration_s": ("Duration", "s"),
}
#: What the engine's inputs at import are called (BenchmarkRun.estimate_at_import["inputs"]).
INPUT_WORDS: Final = {
    "input_tokens": ("prompt tokens", False),
    "output_tokens": ("output tokens", False),
    "concurrency": ("requests in flight", False),
}


def figure_words(key: str) -> tuple[str, str]:
    """(the figure in words, its unit) for a canonical key ("ttft_ms.p50", "completed")."""
    metric, _, stat = key.partition(".")
    if metric in METRIC_WORDS:
        return f"{METRIC_WORDS[metric]}, {STAT_WORDS.get(stat, stat)}", "ms"
    words, unit = SCALAR_WORDS.get(key, (formatting.words_of_code(key), ""))
    return words, unit


def figure_shown(value: Any, unit: str) -> str:
    """A measured or estimated figure with its unit: latencies as ms / s, counts whole."""
    if value is None or value == "":
        return ""
    if unit == "ms":
        return formatting.latency(value)
    if unit == "requests":
        return formatting.count(value)
    if unit == "tokens":
        return formatting.figure(value, "tokens")
    return formatting.figure(value, unit)


def results_shown(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """apps.benchmarks.selectors.results_table's rows with their words and shown figures."""
    out = []
    for row in rows:
        words, unit = figure_words(row["figure"])
        out.append(
            {
                **row,
                "words": words,
                "shown": figure_shown(row["value"], unit),
                "estimated_shown": figure_shown(row["estimated"], unit),
            }
        )
    return out


def candidate_words(run: BenchmarkRun) -> str:
    """ "1 \u00d7 NVIDIA H100 SXM5", with its system and quote where the run names them."""
    text = f"{formatting.count(run.gpu_count)} {formatting.TIMES} {run.gpu.name}"
    if run.system_id:
        text += f" in {run.system.name}"  # type: ignore[union-attr]
    if run.quote_id:
        text += f" · {quote_words(run.quote)}"  # type: ignore[arg-type]
    return text


def quote_words(quote: Quote) -> str:
    """The quote a run ran on, in words: "Neocloud B's quote (On demand, us-east)"."""
    where = ", ".join(p for p in (TERM_LABELS.get(quote.pricing_term, ""), quote.region) if p)
    return f"{quote.provider.name}'s quote ({where})" if where else f"{quote.provider.name}'s quote"


def model_words(model: str) -> str:
    """A run's model: a catalog preset by its name, anything else as written."""
    return preset_name(model) if model else ""


def estimate_inputs_words(estimate: dict[str, Any]) -> str:
    """The engine's inputs at import as a sentence ("1,024 prompt tokens, 256 output tokens,
    32 requests in flight, each from the run")."""
    inputs = estimate.get("inputs") or {}
    parts = []
    for key, (words, _) in INPUT_WORDS.items():
        value = inputs.get(key)
        if value is None:
            continue
        source = inputs.get(f"{key}_from")
        where = f" (from the {source})" if source and source != "run" else ""
        parts.append(f"{formatting.count(value)} {words}{where}")
    if not parts:
        return ""
    sources = {inputs.get(f"{key}_from") for key in INPUT_WORDS if inputs.get(key) is not None}
    tail = ", each from the run" if sources == {"run"} else ""
    return ", ".join(parts) + tail


def chart_label(run: BenchmarkRun) -> str:
    """A run as a chart names it: "Run 1 · 1 \u00d7 NVIDIA H100 SXM5 · its label"."""
    parts = [f"Run {run.pk}", candidate_words(run)]
    if run.label:
        parts.append(run.label)
    return " · ".join(parts)


def memory_results(results: dict[str, Any]) -> list[tuple[str, str]]:
    """A memory-fit run's results in words: peak memory, OOM rate, headroom."""
    shown = {
        "peak_memory_gb": ("Peak memory", lambda v: formatting.figure(v, "GB")),
        "oom_rate": ("Out-of-memory rate", formatting.percent),
        "headroom_gb": ("Headroom", lambda v: formatting.figure(v, "GB")),
    }
    out = []
    for name, value in results.items():
        words, show = shown.get(name, (formatting.words_of_code(name), formatting.number))
        out.append((words, show(value)))
    return out
