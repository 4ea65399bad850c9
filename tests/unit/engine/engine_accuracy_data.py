"""Published measurements vs the engine (shared by the accuracy test and bench/accuracy.py)."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from engine_catalog import gpu, load_gpus

from apps.engine import (
    PRESETS,
    EstimateRequest,
    Precision,
    TrainingSpec,
    WorkloadType,
    estimate_at,
)
from apps.engine.request import parse_framework_version
from apps.engine.serving import candidate_layouts
from apps.engine.types import Framework, GpuSpec, Layout, SpeculativeMethod, SpeculativeSpec

MEASUREMENTS_CSV = Path(__file__).resolve().parents[2] / "data" / "published_measurements.csv"


@dataclass(frozen=True, kw_only=True, slots=True)
class Comparison:
    id: str
    conditions: str
    metric: str
    published: float
    estimated: float
    expected_miss: str
    source: str
    notes: str
    layout: str | None = None  # the layout the engine evaluated the row at
    batch: int | None = None  # the batch it chose for an offline row

    @property
    def error(self) -> float:
        """Signed relative error (estimate - published) / published; fits rows: 0 or 1."""
        if self.metric == "fits":
            return 0.0 if bool(self.published) == bool(self.estimated) else 1.0
        return (self.estimated - self.published) / self.published


def _framework(text: str) -> Framework | None:
    """The serving framework a row's `framework` column names (its scheduler limits bound an
    offline batch), or None (the engine's default, vLLM)."""
    lowered = text.lower()
    for needle, framework in (
        ("sglang", Framework.SGLANG),
        ("tensorrt-llm", Framework.TENSORRT_LLM),
        ("vllm", Framework.VLLM),
    ):
        if needle in lowered:
            return framework
    return None


def _speculative(text: str | None) -> SpeculativeSpec | None:
    """The optional `speculative` column, "METHOD:tokens:acceptance" (e.g. "MTP:3:0.72"); rows
    before the column existed leave it out (csv.DictReader then gives None)."""
    if not text:
        return None
    method, tokens, rate = text.split(":")
    return SpeculativeSpec(
        method=SpeculativeMethod(method), tokens=int(tokens), acceptance_rate=float(rate)
    )


def _request(row: dict[str, str]) -> EstimateRequest:
    wt = WorkloadType(row["workload"])
    tin = int(row["input_tokens"] or 0)
    tout = int(row["output_tokens"] or 0)
    training = None
    if wt is WorkloadType.TRAINING:
        training = TrainingSpec(sequence_length=tin)
    return EstimateRequest(
        workload_type=wt,
        model=PRESETS[row["model"]],
        weight_precision=Precision(row["precision"]),
        kv_cache_precision=Precision(row["kv_precision"] or row["precision"]),
        input_tokens_p50=max(tin, 1),
        input_tokens_p95=max(tin, 1),
        output_tokens_p50=max(tout, 1),
        output_tokens_p95=max(tout, 1),
        concurrency=int(row["concurrency"]) if row["concurrency"] else None,
        training=training,
        framework=_framework(row["framework"]),
        framework_version=parse_framework_version(row.get("framework_version") or None),
        speculative=_speculative(row.get("speculative")),
    )


_STATED_LAYOUT = re.compile(r"\b(?:(DEP)(\d+)|TP(\d+)(?:\s*x\s*PP(\d+))?|PP(\d+))\b")


def stated_layout(framework: str, gpu_count: int) -> Layout | None:
    """The parallel layout a row's `framework` column states ("SGLang (TP8)", "TP16 over two
    nodes", "TP2 x PP2", "DEP8"), when it uses the row's GPU count; else None."""
    m = _STATED_LAYOUT.search(framework)
    if m is None:
        return None
    dep, dep_n, tp, tp_pp, pp = m.groups()
    if dep:
        layout = Layout(dep=int(dep_n))
    elif tp:
        layout = Layout(tp=int(tp), pp=int(tp_pp or 1))
    else:
        layout = Layout(pp=int(pp))
    return layout if layout.gpus == gpu_count else None


def _layout(row: dict[str, str], req: EstimateRequest, g: GpuSpec) -> Layout | None:
    """The layout a published figure was measured at: the one the source states (the
    `framework` column, e.g. "SGLang (TP8)"), else TP over the row's GPUs, which is what vLLM,
    SGLang and TensorRT-LLM run unless told otherwise (attention data parallel, expert parallel
    and pipeline stages are opt-in flags); None (the engine's own choice of one engine over the
    GPUs) when TP cannot split the model that many ways."""
    count = int(row["gpu_count"])
    stated = stated_layout(row["framework"], count)
    if stated is not None:
        return stated
    tp = Layout(tp=count)
    return tp if tp in candidate_layouts(req.model, g, count) else None


_BATCH = re.compile(r"batch chosen: (\d+) sequence")


def _value(row: dict[str, str]) -> float:
    return _evaluate(row)[0]


def _evaluate(row: dict[str, str]) -> tuple[float, str | None, int | None]:
    """(the engine's figure for the row's metric, the layout it used, the offline batch it
    chose or None)."""
    # A published figure on N GPUs is one serving engine over them, never several data-parallel
    # engines side by side.
    req = _request(row)
    g = gpu(row["gpu"])
    e = estimate_at(req, g, int(row["gpu_count"]), layout=_layout(row, req, g), data_parallel=False)
    metric = row["metric"]
    p = e.performance
    values: dict[str, float | None] = {
        "fits": 1.0 if e.fits else 0.0,
        "max_context_tokens": float(e.max_context_tokens),
        "output_tokens_per_s": p.output_tokens_per_s,
        "output_tokens_per_s_per_gpu": p.output_tokens_per_s_per_gpu,
        "ttft_ms": p.ttft_ms,
        "itl_ms": p.itl_ms,
        "training_tokens_per_s_per_gpu": p.training_tokens_per_s_per_gpu,
        "images_per_hour": p.images_per_hour,
    }
    value = values[metric]
    if metric == "output_tokens_per_s" and row["workload"] == "REALTIME_INFERENCE":
        # vLLM benchmark_latency reports batch x output / end-to-end latency (prefill included).
        conc = int(row["concurrency"] or 1)
        value = conc * int(row["output_tokens"]) / (p.e2e_latency_s or 1.0)
    if value is None:
        raise ValueError(f"{row['id']}: engine gave no {metric}")
    chosen = next((m for n in e.notes if (m := _BATCH.search(n))), None)
    return float(value), e.layout, int(chosen.group(1)) if chosen else None


# Memory facts (what fits where); every one must match, with no expected_miss allowed.
FIT_METRICS = frozenset({"fits"})


@dataclass(frozen=True, kw_only=True, slots=True)
class Skipped:
    """A published point the harness cannot evaluate yet (e.g. a GPU the catalog lacks)."""

    id: str
    reason: str


# What issue 12 calls "today's architectures": MoE, MLA, windowed / chunked / linear attention,
# quantized checkpoints (FP8, MXFP4) or 4-bit serving, on Blackwell or CDNA3/CDNA4 GPUs.
CURRENT_ARCHITECTURES = frozenset({"BLACKWELL", "CDNA3", "CDNA4"})


def is_current_architecture(row: dict[str, str]) -> bool:
    """Whether a CSV row is about today's model or GPU architectures (decided from the preset and
    the catalog, not from the row's id)."""
    m = PRESETS[row["model"]]
    modern_model = (
        m.experts > 1
        or m.kv_lora_rank is not None
        or m.attention is not None
        or m.checkpoint is not None
        or row["precision"] in ("FP4", "INT4")
    )
    known = {g.slug: g for g in load_gpus()}
    g = known.get(row["gpu"])
    modern_gpu = (
        g is None or g.architecture in CURRENT_ARCHITECTURES
    )  # unknown: newer than the catalog
    return modern_model or modern_gpu


def load_rows(path: Path = MEASUREMENTS_CSV) -> list[dict[str, str]]:
    """The CSV's rows as read, skipped ones included."""
    return _rows(path)


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _skip_reason(row: dict[str, str]) -> str | None:
    known = {g.slug for g in load_gpus()}
    if row["gpu"] not in known:
        return (
            f"GPU {row['gpu']!r} is not in apps/catalog/data/gpus.csv yet "
            "(added by the catalog branch)"
        )
    return None


def load_skipped(path: Path = MEASUREMENTS_CSV) -> list[Skipped]:
    """Points left out of `load_comparisons`, with the reason."""
    out = []
    for row in _rows(path):
        reason = _skip_reason(row)
        if reason is not None:
            out.append(Skipped(id=row["id"], reason=reason))
    return out


def load_comparisons(path: Path = MEASUREMENTS_CSV) -> list[Comparison]:
    """Every point the engine can evaluate (see `load_skipped` for the rest)."""
    out = []
    for row in _rows(path):
        if _skip_reason(row) is not None:
            continue
        conditions = (
            f"{row['model']} on {row['gpu_count']}x {row['gpu']} {row['precision']}, "
            f"{row['framework']}, in/out {row['input_tokens']}/{row['output_tokens']}, "
            f"batch {row['concurrency']}"
        )
        if row.get("speculative"):
            conditions += f", speculative {row['speculative']}"
        estimated, layout, batch = _evaluate(row)
        out.append(
            Comparison(
                id=row["id"],
                conditions=conditions,
                metric=row["metric"],
                published=float(row["published"]),
                estimated=estimated,
                layout=layout,
                batch=batch,
                expected_miss=row["expected_miss"],
                source=row["source"],
                notes=row["notes"],
            )
        )
    return out
