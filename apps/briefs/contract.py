"""The brief at its two boundaries: the API contract's JSON body, and the engine's typed inputs.

docs/design.md's POST /api/v1/estimate body is the shape the brief API speaks (``brief_to_body``,
``body_to_fields``). The engine's inputs for a stored brief are built here from the model's
fields, typed, with no JSON in between: ``request_for_brief`` (the EstimateRequest, checked by
the engine's own field readers, so a bad value is the same EngineInputError the API gives) and
``demand_for_brief`` (the month of work the costing prices).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from apps.engine import constants as c
from apps.engine.costing import Demand, OperatingBoundary, SuccessUnit
from apps.engine.costing_constants import SECONDS_PER_HOUR
from apps.engine.frameworks import framework_from_tooling
from apps.engine.request import parse_model, parse_speculative, resolve_weight_precision
from apps.engine.types import (
    LLM_SERVING_TYPES,
    MEDIA_TYPES,
    TRAINING_TYPES,
    DutyCycle,
    EngineInputError,
    EstimateRequest,
    ModelKind,
    Optimizer,
    Precision,
    Sharding,
    TrainingSpec,
    WorkloadType,
)
from apps.engine.units import DEFAULT_UNITS
from apps.engine.validation import get_bool, get_float, get_int

if TYPE_CHECKING:  # the model imports this module (WorkloadBrief.clean reads model_body)
    from .models import WorkloadBrief

EXPLICIT_MODEL_FIELDS = (
    "params_billion", "layers", "hidden_size", "attention_heads", "kv_heads", "head_dim",
    "vocab_size", "intermediate_size", "experts", "active_experts",
)  # fmt: skip
# Brief fields that are sent and stored as they are (same name in the body and the model).
PLAIN_FIELDS = (
    "name", "description", "workload_type", "weight_precision", "kv_cache_precision",
    "context_window", "concurrency", "requests_per_second", "records_per_job", "success_unit",
    "acceptance_rate", "duty_cycle", "hours_per_month", "operating_boundary", "tooling",
    "tolerates_interruptions",
)  # fmt: skip
TRAINING_FIELDS = (
    "tokens", "sequence_length", "global_batch_tokens", "optimizer", "sharding",
    "activation_checkpointing", "lora_rank", "checkpoint_interval_minutes", "target_eval_score",
    "deadline_days",
)  # fmt: skip
_TRAINING_TO_MODEL = {"tokens": "training_tokens"}


def _num(value: Any) -> Any:
    """Decimals travel as JSON numbers."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def model_body(brief: WorkloadBrief) -> dict[str, Any] | None:
    if brief.model_preset:
        return {"preset": brief.model_preset}
    if brief.model_hf_config:
        if brief.model_hf_quant_config:
            return {
                "hf_config": brief.model_hf_config,
                "hf_quant_config": brief.model_hf_quant_config,
            }
        return {"hf_config": brief.model_hf_config}
    explicit = {
        name: _num(getattr(brief, name))
        for name in EXPLICIT_MODEL_FIELDS
        if getattr(brief, name) is not None
    }
    return explicit or None


def latency_body(brief: WorkloadBrief) -> dict[str, Any] | str | None:
    if brief.latency_percentile == "OFFLINE":
        return "offline"
    if not brief.latency_percentile:
        return None
    suffix = brief.latency_percentile.lower()
    body: dict[str, Any] = {}
    if brief.ttft_target_ms is not None:
        body[f"ttft_{suffix}_ms"] = brief.ttft_target_ms
    if brief.itl_target_ms is not None:
        body[f"itl_{suffix}_ms"] = brief.itl_target_ms
    if brief.e2e_target_ms is not None:
        body[f"e2e_{suffix}_s"] = brief.e2e_target_ms / 1000
    return body


def speculative_body(brief: WorkloadBrief) -> dict[str, Any] | None:
    """The brief's speculative decoding as the contract's `speculative` object, or None."""
    if not brief.speculative_method:
        return None
    rate = brief.speculative_acceptance_rate
    return {
        "method": brief.speculative_method,
        "tokens": brief.speculative_tokens,
        "acceptance_rate": float(rate) if rate is not None else None,
    }


def brief_to_body(brief: WorkloadBrief) -> dict[str, Any]:
    """The stored brief in the contract's shape (None for what is not given)."""
    body: dict[str, Any] = {name: _num(getattr(brief, name)) for name in PLAIN_FIELDS}
    body["speculative"] = speculative_body(brief)
    body["model"] = model_body(brief)
    for key in ("input_tokens", "output_tokens"):
        p50, p95 = getattr(brief, f"{key}_p50"), getattr(brief, f"{key}_p95")
        body[key] = {"p50": p50, "p95": p95} if p50 is not None else None
    body["latency_target"] = latency_body(brief)
    body["request_size_buckets"] = list(brief.request_size_buckets or []) or None
    if brief.image_width or brief.image_height:
        media: dict[str, Any] = {"width": brief.image_width, "height": brief.image_height}
        if brief.diffusion_steps is not None:
            media["steps"] = brief.diffusion_steps
        if brief.workload_type == "VIDEO_GENERATION":
            body["video"] = {**media, "seconds": _num(brief.clip_seconds)}
        else:
            body["image"] = media
    if brief.is_training:
        training = {
            name: _num(getattr(brief, _TRAINING_TO_MODEL.get(name, name)))
            for name in TRAINING_FIELDS
        }
        body["training"] = training
    return body


def estimate_body_for_brief(brief: WorkloadBrief) -> dict[str, Any]:
    """The body the engine's parser takes: empty values dropped, p99 targets as the target."""
    body = {k: v for k, v in brief_to_body(brief).items() if v not in (None, "", [])}
    framework = framework_from_tooling(brief.tooling or [])
    if framework is not None:  # the scheduler limits of the brief's serving framework
        body["framework"] = framework.value
    for key in (
        "name", "description", "success_unit", "operating_boundary", "tooling",
        "request_size_buckets",  # the GPU mix's, not the engine's per-GPU estimate's
        "tolerates_interruptions",  # the costing's (spot quotes), not the engine's
    ):  # fmt: skip
        body.pop(key, None)
    latency = body.get("latency_target")
    if isinstance(latency, dict):
        # The engine checks one tail target; a p99 target is held to the same estimate.
        body["latency_target"] = {
            k.replace("_p99_", "_p95_"): v for k, v in latency.items() if v is not None
        }
    training = body.get("training")
    if isinstance(training, dict):
        interval = training.pop("checkpoint_interval_minutes", None)
        training.pop("target_eval_score", None)
        training.pop("deadline_days", None)  # the costing's configuration, not the engine's
        body["training"] = {k: v for k, v in training.items() if v not in (None, "")}
        if interval:
            body["training"]["checkpoint_interval_hours"] = interval / 60
    return body


def body_to_fields(body: dict[str, Any]) -> dict[str, Any]:
    """Validated API input (the contract's shape) → WorkloadBrief field values."""
    fields: dict[str, Any] = {name: body[name] for name in PLAIN_FIELDS if name in body}
    if "speculative" in body:
        spec = body["speculative"] or {}
        fields["speculative_method"] = spec.get("method", "")
        fields["speculative_tokens"] = spec.get("tokens")
        fields["speculative_acceptance_rate"] = spec.get("acceptance_rate")
    if body.get("framework"):
        # The brief keeps its serving framework as the first entry of its tooling, the one
        # estimate_body_for_brief sends (a PATCH view passes the stored tooling in the body).
        framework = body["framework"]
        others = [t for t in body.get("tooling") or [] if t != framework]
        fields["tooling"] = [framework, *others]
    if "model" in body:
        model = body["model"] or {}
        fields["model_preset"] = model.get("preset", "")
        fields["model_hf_config"] = model.get("hf_config")
        fields["model_hf_quant_config"] = model.get("hf_quant_config")
        for name in EXPLICIT_MODEL_FIELDS:
            fields[name] = model.get(name)
    for key in ("input_tokens", "output_tokens"):
        if key in body:
            tokens = body[key] or {}
            fields[f"{key}_p50"] = tokens.get("p50")
            fields[f"{key}_p95"] = tokens.get("p95", tokens.get("p50"))
    if "latency_target" in body:
        latency = body["latency_target"]
        fields.update(latency_percentile="", ttft_target_ms=None)
        fields.update(itl_target_ms=None, e2e_target_ms=None)
        if latency == "offline":
            fields["latency_percentile"] = "OFFLINE"
        elif latency:
            p99 = any("_p99_" in key for key in latency)
            suffix = "p99" if p99 else "p95"
            fields["latency_percentile"] = suffix.upper()
            fields["ttft_target_ms"] = latency.get(f"ttft_{suffix}_ms")
            fields["itl_target_ms"] = latency.get(f"itl_{suffix}_ms")
            e2e = latency.get(f"e2e_{suffix}_s")
            fields["e2e_target_ms"] = round(e2e * 1000) if e2e is not None else None
    if "request_size_buckets" in body:
        fields["request_size_buckets"] = [
            {
                "input_tokens": b["input_tokens"],
                "output_tokens": b["output_tokens"],
                "share": float(b["share"]),
            }
            for b in body["request_size_buckets"] or []
        ]
    media = body.get("image") or body.get("video")
    if media:
        fields["image_width"] = media.get("width")
        fields["image_height"] = media.get("height")
        if "seconds" in media:
            fields["clip_seconds"] = media.get("seconds")
        if "steps" in media:
            fields["diffusion_steps"] = media.get("steps")
    if body.get("training"):
        for name in TRAINING_FIELDS:
            if name in body["training"]:
                fields[_TRAINING_TO_MODEL.get(name, name)] = body["training"][name]
    return fields


# --- The engine's inputs, typed ---------------------------------------------------------------
# Each value is checked by the engine's own reader (apps.engine.validation), under the contract's
# field name, so a stored brief fails exactly where the same body would fail the API.


def _int(value: Any, field: str, *, lo: int, hi: int, default: int | None = None) -> int | None:
    return get_int({field: _num(value)}, field, field, lo=lo, hi=hi, default=default)


def _float(
    value: Any, field: str, *, lo: float, hi: float, default: float | None = None
) -> float | None:
    return get_float({field: _num(value)}, field, field, lo=lo, hi=hi, default=default)


def _tokens(
    brief: WorkloadBrief,
    key: str,
    *,
    required: bool,
    default: tuple[int, int],
    instead: int | None = None,
) -> tuple[int, int]:
    p50_value, p95_value = getattr(brief, f"{key}_p50"), getattr(brief, f"{key}_p95")
    if instead is not None:
        p50_value = p95_value = instead
    if p50_value is None:
        if required:
            raise EngineInputError(key, "is required for this workload type")
        return default
    hi = c.MAX_TOKENS_PER_REQUEST
    p50 = _int(p50_value, f"{key}.p50", lo=1, hi=hi)
    p95 = _int(p95_value, f"{key}.p95", lo=1, hi=hi, default=p50)
    assert p50 is not None and p95 is not None  # noqa: S101 - p50 given, p95 defaults to it
    if p95 < p50:
        raise EngineInputError(f"{key}.p95", "must be >= p50")
    return p50, p95


def _training(brief: WorkloadBrief, workload: WorkloadType) -> TrainingSpec:
    lora_default = (
        c.DEFAULT_LORA_RANK
        if workload in (WorkloadType.LORA_FINETUNE, WorkloadType.QLORA_FINETUNE)
        else None
    )
    interval = brief.checkpoint_interval_minutes
    seq = _int(
        brief.sequence_length,
        "training.sequence_length",
        lo=1,
        hi=c.MAX_TOKENS_PER_REQUEST,
        default=c.DEFAULT_TRAINING_SEQUENCE_LENGTH,
    )
    return TrainingSpec(
        sequence_length=seq or c.DEFAULT_TRAINING_SEQUENCE_LENGTH,
        tokens=_float(brief.training_tokens, "training.tokens", lo=0.0, hi=1e16),
        global_batch_tokens=_int(
            brief.global_batch_tokens, "training.global_batch_tokens", lo=1, hi=10**12
        ),
        optimizer=Optimizer(brief.optimizer) if brief.optimizer else Optimizer.ADAMW,
        sharding=Sharding(brief.sharding) if brief.sharding else Sharding.NONE,
        activation_checkpointing=get_bool(
            {"v": brief.activation_checkpointing},
            "v",
            "training.activation_checkpointing",
            default=False,
        ),
        lora_rank=_int(brief.lora_rank, "training.lora_rank", lo=1, hi=65536, default=lora_default),
        checkpoint_interval_hours=_float(
            interval / 60 if interval else None,
            "training.checkpoint_interval_hours",
            lo=0.0,
            hi=1e5,
        ),
    )


def _media(brief: WorkloadBrief) -> tuple[int | None, int | None]:
    """(pixels per image or frame, frames per clip) of a media brief."""
    if not (brief.image_width or brief.image_height):
        return None, None
    video = brief.workload_type == WorkloadType.VIDEO_GENERATION
    prefix = "video" if video else "image"
    width = _int(brief.image_width, f"{prefix}.width", lo=64, hi=16384)
    height = _int(brief.image_height, f"{prefix}.height", lo=64, hi=16384)
    if width is None or height is None:
        missing = "width" if width is None else "height"
        raise EngineInputError(f"{prefix}.{missing}", "is required")
    frames = None
    if video and brief.clip_seconds is not None:
        seconds = _float(brief.clip_seconds, "video.seconds", lo=0.0, hi=3600.0) or 0.0
        frames = max(1, int(seconds * c.DEFAULT_VIDEO_FPS))
    return width * height, frames


def _latency(brief: WorkloadBrief) -> tuple[float | None, float | None, float | None]:
    """(TTFT ms, ITL ms, end-to-end s) targets; the engine holds a p99 target as its p95."""
    if brief.latency_percentile in ("", "OFFLINE"):
        return None, None, None
    e2e = brief.e2e_target_ms / 1000 if brief.e2e_target_ms is not None else None
    return (
        _float(brief.ttft_target_ms, "latency_target.ttft_p95_ms", lo=0.0, hi=1e8),
        _float(brief.itl_target_ms, "latency_target.itl_p95_ms", lo=0.0, hi=1e8),
        _float(e2e, "latency_target.e2e_p95_s", lo=0.0, hi=1e7),
    )


def request_for_brief(
    brief: WorkloadBrief,
    *,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    concurrency: int | None = None,
) -> EstimateRequest:
    """The engine's request for a stored brief, on every catalog GPU at the engine's own count
    (``dataclasses.replace`` it to force ``gpus`` / ``gpu_count``). Raises EngineInputError,
    naming the field, for a brief the engine cannot estimate yet.

    ``input_tokens``, ``output_tokens`` (per request, p50 = p95) and ``concurrency``, where
    given, stand in for the brief's (a benchmark run's conditions), checked the same way."""
    if not brief.workload_type:
        raise EngineInputError("workload_type", "is required")
    workload = WorkloadType(brief.workload_type)
    model = parse_model(model_body(brief))
    if workload in MEDIA_TYPES and model.kind is not ModelKind.DIFFUSION:
        raise EngineInputError(
            "model", f"{workload} needs a diffusion model (e.g. sdxl, flux.1-dev)"
        )
    if workload not in MEDIA_TYPES and model.kind is ModelKind.DIFFUSION:
        raise EngineInputError("model", f"a diffusion model cannot serve {workload}")
    explicit = {"weight_precision": brief.weight_precision} if brief.weight_precision else {}
    weight_precision, note = resolve_weight_precision(explicit, model)
    # QLoRA keeps its frozen base in 4-bit NormalFloat whatever the weights would be served at
    # (the engine's QLoRA notes say so): a note on the served precision would contradict it.
    if note is not None and workload is not WorkloadType.QLORA_FINETUNE:
        model = replace(model, notes=(note, *model.notes))
    llm = workload in LLM_SERVING_TYPES
    in50, in95 = _tokens(
        brief,
        "input_tokens",
        required=llm or workload is WorkloadType.EMBEDDINGS,
        default=(512, 512),
        instead=input_tokens,
    )
    out50, out95 = _tokens(
        brief, "output_tokens", required=llm, default=(128, 128), instead=output_tokens
    )
    # Checked in the order the contract body is read (apps.engine.request), so that a brief
    # with several bad fields names the same one both ways.
    training = _training(brief, workload) if workload in TRAINING_TYPES else None
    pixels, frames = _media(brief)
    steps = _int(
        brief.diffusion_steps,
        "video.steps" if workload == WorkloadType.VIDEO_GENERATION else "image.steps",
        lo=1,
        hi=1000,
    )
    conc = _int(
        brief.concurrency if concurrency is None else concurrency,
        "concurrency",
        lo=1,
        hi=1_000_000,
    )
    rps = _float(brief.requests_per_second, "requests_per_second", lo=0.0, hi=1e7)
    ttft, itl, e2e = _latency(brief)
    return EstimateRequest(
        workload_type=workload,
        model=model,
        weight_precision=weight_precision,
        kv_cache_precision=Precision(brief.kv_cache_precision or Precision.BF16),
        input_tokens_p50=in50,
        input_tokens_p95=in95,
        output_tokens_p50=out50,
        output_tokens_p95=out95,
        concurrency=conc,
        requests_per_second=rps,
        ttft_p95_ms=ttft,
        itl_p95_ms=itl,
        e2e_p95_s=e2e,
        training=training,
        duty_cycle=DutyCycle(brief.duty_cycle or DutyCycle.ALWAYS_ON),
        hours_per_month=_float(
            brief.hours_per_month,
            "hours_per_month",
            lo=0.0,
            hi=744.0,
            default=c.HOURS_PER_MONTH_ALWAYS_ON,
        )
        or c.HOURS_PER_MONTH_ALWAYS_ON,
        records_per_job=_int(brief.records_per_job, "records_per_job", lo=1, hi=10**12),
        acceptance_rate=_float(
            brief.acceptance_rate, "acceptance_rate", lo=0.0, hi=1.0, default=1.0
        )
        or 1.0,
        image_pixels=pixels,
        diffusion_steps=steps,
        video_frames=frames,
        speculative=parse_speculative(speculative_body(brief), workload),
        framework=framework_from_tooling(brief.tooling or []),
    )


def _d(value: Any) -> Decimal | None:
    return None if value is None else Decimal(str(value))


def requests_per_month(brief: WorkloadBrief, e2e_latencies_s: Iterable[float]) -> Decimal | None:
    """The same monthly demand for every candidate: the brief's request rate, or its
    concurrency over the typical (median) end-to-end latency of the GPUs that fit (Little's
    law)."""
    hours = Decimal(brief.hours_per_month or 0)
    if brief.requests_per_second:
        return brief.requests_per_second * SECONDS_PER_HOUR * hours
    if brief.workload_type != WorkloadType.REALTIME_INFERENCE or not brief.concurrency:
        return None
    latencies = sorted(x for x in e2e_latencies_s if x)
    if not latencies:
        return None
    median = Decimal(str(latencies[len(latencies) // 2]))
    return Decimal(brief.concurrency) / median * SECONDS_PER_HOUR * hours


def demand_for_brief(brief: WorkloadBrief, e2e_latencies_s: Iterable[float]) -> Demand:
    """The month of work the costing prices; ``e2e_latencies_s``: the end-to-end latency of
    each GPU that fits (for a real-time brief given as concurrency)."""

    def mean(p50: int | None, p95: int | None) -> Decimal:
        return Decimal(p50 or p95 or 0)

    training = brief.is_training
    workload = WorkloadType(brief.workload_type)
    return Demand(
        workload_type=workload,
        success_unit=SuccessUnit(brief.success_unit or DEFAULT_UNITS[workload]),
        hours_per_month=Decimal(brief.hours_per_month or 0),
        # A brief not yet complete (a what-if saved early) is sized for its fit table at the
        # costing's own defaults; its candidate table waits for the missing fields.
        duty_cycle=DutyCycle(brief.duty_cycle) if brief.duty_cycle else DutyCycle.ALWAYS_ON,
        input_tokens_mean=mean(brief.input_tokens_p50, brief.input_tokens_p95),
        output_tokens_mean=mean(brief.output_tokens_p50, brief.output_tokens_p95),
        requests_per_month=requests_per_month(brief, e2e_latencies_s),
        records_per_job=_d(brief.records_per_job),
        training_tokens=_d(brief.training_tokens) if training else None,
        checkpoint_interval_minutes=_d(brief.checkpoint_interval_minutes),
        acceptance_rate=brief.acceptance_rate,
        operating_boundary=OperatingBoundary(brief.operating_boundary)
        if brief.operating_boundary
        else None,
        clip_seconds=brief.clip_seconds,
        tolerates_interruptions=brief.interruptions_tolerated,
    )
