"""Published measurements vs the engine (shared by the accuracy test and bench/accuracy.py)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from engine_catalog import gpu

from apps.engine import (
    PRESETS,
    EstimateRequest,
    Precision,
    TrainingSpec,
    WorkloadType,
    estimate_at,
)

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

    @property
    def error(self) -> float:
        """Signed relative error (estimate - published) / published; fits rows: 0 or 1."""
        if self.metric == "fits":
            return 0.0 if bool(self.published) == bool(self.estimated) else 1.0
        return (self.estimated - self.published) / self.published


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
    )


def _value(row: dict[str, str]) -> float:
    e = estimate_at(_request(row), gpu(row["gpu"]), int(row["gpu_count"]))
    metric = row["metric"]
    p = e.performance
    values: dict[str, float | None] = {
        "fits": 1.0 if e.fits else 0.0,
        "output_tokens_per_s": p.output_tokens_per_s,
        "output_tokens_per_s_per_gpu": p.output_tokens_per_s_per_gpu,
        "ttft_ms": p.ttft_ms,
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
    return float(value)


def load_comparisons(path: Path = MEASUREMENTS_CSV) -> list[Comparison]:
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = []
    for row in rows:
        conditions = (
            f"{row['model']} on {row['gpu_count']}x {row['gpu']} {row['precision']}, "
            f"{row['framework']}, in/out {row['input_tokens']}/{row['output_tokens']}, "
            f"batch {row['concurrency']}"
        )
        out.append(
            Comparison(
                id=row["id"],
                conditions=conditions,
                metric=row["metric"],
                published=float(row["published"]),
                estimated=_value(row),
                expected_miss=row["expected_miss"],
                source=row["source"],
                notes=row["notes"],
            )
        )
    return out
