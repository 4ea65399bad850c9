"""Estimate -> the JSON object of docs/design.md's POST /api/v1/estimate response."""

from __future__ import annotations

import math
from typing import Any

from apps.engine.model_summary import model_summary, model_summary_to_dict
from apps.engine.types import Estimate, EstimateRequest


def _r(x: float | None, digits: int) -> float | None:
    if x is None or not math.isfinite(x):
        return None
    return round(x, digits)


def _gb(x: float) -> float:
    return round(x, 2) if abs(x) < 100 else round(x, 1)


def estimate_to_dict(e: Estimate) -> dict[str, Any]:
    m = e.memory
    p = e.performance
    out: dict[str, Any] = {
        "gpu": e.gpu,
        "gpu_count": e.gpu_count,
        "layout": e.layout,  # serving: e.g. "TP8", "DEP8", "TP2xPP2"; None for other workloads
        "fits": e.fits,
        "fit": e.fit.value,
        "fit_advice": e.fit_advice,
        "memory_capacity_gb": _gb(e.memory_capacity_gb),
        "memory_capacity_source": e.memory_capacity_source,
        "memory": {
            "weights_gb": _gb(m.weights_gb),
            "kv_cache_gb": _gb(m.kv_cache_gb),
            "activations_gb": _gb(m.activations_gb),
            "gradients_gb": _gb(m.gradients_gb),
            "optimizer_gb": _gb(m.optimizer_gb),
            "adapters_gb": _gb(m.adapters_gb),
            "overhead_gb": _gb(m.overhead_gb),
            "safety_margin_gb": _gb(m.safety_margin_gb),
            "total_gb": _gb(m.total_gb),
            "capacity_gb": _gb(m.capacity_gb),
            "headroom_gb": _gb(m.headroom_gb),
        },
        "max_concurrency": e.max_concurrency,
        "max_context_tokens": e.max_context_tokens,
        "performance": {
            "output_tokens_per_s": _r(p.output_tokens_per_s, 1),
            "output_tokens_per_s_per_gpu": _r(p.output_tokens_per_s_per_gpu, 1),
            "ttft_ms": _r(p.ttft_ms, 1),
            "itl_ms": _r(p.itl_ms, 2),
            "e2e_latency_s": _r(p.e2e_latency_s, 3),
            "bound": p.bound.value if p.bound is not None else None,
            "training_tokens_per_s_per_gpu": _r(p.training_tokens_per_s_per_gpu, 1),
            "records_per_s": _r(p.records_per_s, 2),
            "images_per_hour": _r(p.images_per_hour, 1),
            "clips_per_hour": _r(p.clips_per_hour, 2),
        },
        "meets_latency_target": e.meets_latency_target,
        "capacity": None,
        "training": None,
        "basis": e.basis,
        "notes": list(e.notes),
    }
    if e.capacity is not None:
        cap = e.capacity
        out["capacity"] = {
            "max_concurrency_at_target": cap.max_concurrency_at_target,
            "replicas": cap.replicas,
            "gpus_total": cap.gpus_total,
            "gpu_hours_per_month": _r(cap.gpu_hours_per_month, 1),
            "requests_per_s_at_target": _r(cap.requests_per_s_at_target, 4),
        }
    if e.training is not None:
        t = e.training
        out["training"] = {
            "tokens_per_s_total": _r(t.tokens_per_s_total, 1),
            "time_to_train_hours": _r(t.time_to_train_hours, 2),
            "checkpoint_size_gb": _gb(t.checkpoint_size_gb),
            "checkpoint_write_s": _r(t.checkpoint_write_s, 1),
            "mfu": _r(t.mfu, 3),
        }
    return out


def request_model_to_dict(request: EstimateRequest) -> dict[str, Any]:
    """The response's top-level `model`: the model as the engine read it at the request's
    precisions (total and active parameters, weight precision per tensor group, weights GB, KV
    bytes per token, attention layer types; apps/engine/model_summary.py)."""
    return model_summary_to_dict(
        model_summary(request.model, request.weight_precision, request.kv_cache_precision)
    )
