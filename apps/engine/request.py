"""Validate the JSON body of POST /api/v1/estimate into an EstimateRequest."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import Any

from apps.engine import constants as c
from apps.engine.hf_config import model_from_hf_config
from apps.engine.presets import PRESETS
from apps.engine.shapes import Shape, count_params, lora_in_out
from apps.engine.speculative import SPECULATIVE_MAX_TOKENS
from apps.engine.types import (
    LLM_SERVING_TYPES,
    MEDIA_TYPES,
    TRAINING_TYPES,
    DutyCycle,
    EngineInputError,
    EstimateRequest,
    Framework,
    Layout,
    ModelKind,
    ModelSpec,
    Optimizer,
    Precision,
    Sharding,
    SpeculativeMethod,
    SpeculativeSpec,
    TrainingSpec,
    WorkloadType,
)
from apps.engine.validation import get_bool, get_enum, get_float, get_int, req_int, require_dict

_MAX_DIM = 1_000_000
# Weights with neither a weight_precision nor a checkpoint dtype to go by: BF16, the dtype every
# current open-weight LLM release ships in (and EstimateRequest's own default).
DEFAULT_WEIGHT_PRECISION = Precision.BF16


def _explicit_model(m: Mapping[str, Any]) -> ModelSpec:
    layers = req_int(m, "layers", "model.layers", lo=1, hi=10_000)
    hidden = req_int(m, "hidden_size", "model.hidden_size", lo=1, hi=_MAX_DIM)
    heads = req_int(m, "attention_heads", "model.attention_heads", lo=1, hi=hidden)
    kv = get_int(m, "kv_heads", "model.kv_heads", lo=1, hi=heads, default=heads) or heads
    head_dim = (
        get_int(m, "head_dim", "model.head_dim", lo=1, hi=_MAX_DIM, default=max(hidden // heads, 1))
        or 1
    )
    vocab = get_int(m, "vocab_size", "model.vocab_size", lo=1, hi=10_000_000, default=32000) or 1
    inter = (
        get_int(
            m,
            "intermediate_size",
            "model.intermediate_size",
            lo=1,
            hi=100 * _MAX_DIM,
            default=4 * hidden,
        )
        or 1
    )
    experts = get_int(m, "experts", "model.experts", lo=1, hi=4096, default=1) or 1
    active = get_int(m, "active_experts", "model.active_experts", lo=1, hi=experts, default=1) or 1
    kind = get_enum(m, "kind", "model.kind", ModelKind, default=ModelKind.DECODER)
    assert kind is not None  # noqa: S101 - default given
    shape = Shape(
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv,
        head_dim=head_dim,
        vocab=vocab,
        intermediate=inter,
        experts=experts,
        active_experts=active,
    )
    computed_total, computed_active = count_params(shape)
    total_b = get_float(m, "params_billion", "model.params_billion", lo=0.0, hi=100_000.0)
    total = total_b * 1e9 if total_b is not None else computed_total
    active_b = get_float(
        m, "active_params_billion", "model.active_params_billion", lo=0.0, hi=100_000.0
    )
    if active_b is not None and active_b * 1e9 > total:
        raise EngineInputError("model.active_params_billion", "must not exceed params_billion")
    if active_b is None:
        active_b = total * (computed_active / computed_total) / 1e9
    name = m.get("name")
    return ModelSpec(
        name=name[:200] if isinstance(name, str) else "custom",
        params_billion=total / 1e9,
        active_params_billion=active_b,
        layers=layers,
        hidden_size=hidden,
        attention_heads=heads,
        kv_heads=kv,
        head_dim=head_dim,
        vocab_size=vocab,
        intermediate_size=inter,
        experts=experts,
        active_experts=active,
        kind=kind,
        lora_in_out=lora_in_out(shape) if kind is ModelKind.DECODER else None,
        max_context_tokens=get_int(
            m,
            "max_context_tokens",
            "model.max_context_tokens",
            lo=1,
            hi=c.MAX_TOKENS_PER_REQUEST,
            default=131072,
        )
        or 131072,
    )


def parse_model(value: Any) -> ModelSpec:
    m = require_dict(value, "model")
    if "hf_quant_config" in m and "hf_config" not in m:
        raise EngineInputError("model.hf_quant_config", "goes with model.hf_config")
    if "preset" in m:
        preset = m["preset"]
        if not isinstance(preset, str):
            raise EngineInputError("model.preset", "must be a string")
        spec = PRESETS.get(preset.strip().lower())
        if spec is None:
            raise EngineInputError("model.preset", f"unknown preset {preset[:60]!r}")
        return spec
    if "hf_config" in m:
        quant = m.get("hf_quant_config")
        return model_from_hf_config(
            m["hf_config"],
            field="model.hf_config",
            hf_quant_config=None if quant is None else require_dict(quant, "model.hf_quant_config"),
            quant_field="model.hf_quant_config",
        )
    if "layers" in m or "params_billion" in m:
        return _explicit_model(m)
    raise EngineInputError("model", "give one of preset, hf_config or explicit numbers")


def resolve_weight_precision(
    body: Mapping[str, Any], model: ModelSpec
) -> tuple[Precision, str | None]:
    """The weight precision a request is sized at, and a note saying where it came from.

    An explicit weight_precision wins (noted when it overrides a quantized checkpoint); without
    one, a quantized checkpoint is sized as published, else the config's torch_dtype, else BF16.
    """
    explicit = get_enum(body, "weight_precision", "weight_precision", Precision)
    ck = model.checkpoint
    if explicit is not None:
        if ck is not None and explicit is not ck.precision:
            return explicit, (
                f"weights: the weight precision {explicit} overrides the checkpoint's "
                f"quantization_config ({ck.label})"
            )
        return explicit, None
    if ck is not None:
        return ck.precision, f"weights: sized from the checkpoint's quantization_config: {ck.label}"
    if model.native_precision is not None:
        chosen = model.native_precision
        return chosen, f"weights: no weight precision given; sized at the config's dtype ({chosen})"
    chosen = DEFAULT_WEIGHT_PRECISION
    return chosen, (
        f"weights: no weight precision given and the model states no dtype; sized at {chosen} "
        "(the default)"
    )


def _weight_precision(body: Mapping[str, Any], model: ModelSpec) -> tuple[Precision, ModelSpec]:
    """The request's weight precision, and the model with the note saying where it came from."""
    chosen, note = resolve_weight_precision(body, model)
    if note is None:
        return chosen, model
    return chosen, replace(model, notes=(note, *model.notes))


def _tokens(
    data: Mapping[str, Any], key: str, *, required: bool, lo: int, default: tuple[int, int]
) -> tuple[int, int]:
    raw = data.get(key)
    if raw is None:
        if required:
            raise EngineInputError(key, "is required for this workload type")
        return default
    d = require_dict(raw, key)
    p50 = req_int(d, "p50", f"{key}.p50", lo=lo, hi=c.MAX_TOKENS_PER_REQUEST)
    p95 = get_int(d, "p95", f"{key}.p95", lo=lo, hi=c.MAX_TOKENS_PER_REQUEST, default=p50)
    assert p95 is not None  # noqa: S101 - default given
    if p95 < p50:
        raise EngineInputError(f"{key}.p95", "must be >= p50")
    return p50, p95


def _training(raw: Any, wt: WorkloadType) -> TrainingSpec:
    t = require_dict(raw, "training")
    seq = get_int(
        t,
        "sequence_length",
        "training.sequence_length",
        lo=1,
        hi=c.MAX_TOKENS_PER_REQUEST,
        default=c.DEFAULT_TRAINING_SEQUENCE_LENGTH,
    )
    lora_default = (
        c.DEFAULT_LORA_RANK
        if wt in (WorkloadType.LORA_FINETUNE, WorkloadType.QLORA_FINETUNE)
        else None
    )
    sharding = get_enum(t, "sharding", "training.sharding", Sharding, default=Sharding.NONE)
    optimizer = get_enum(t, "optimizer", "training.optimizer", Optimizer, default=Optimizer.ADAMW)
    tokens = get_float(t, "tokens", "training.tokens", lo=0.0, hi=1e16)
    return TrainingSpec(
        sequence_length=seq or c.DEFAULT_TRAINING_SEQUENCE_LENGTH,
        tokens=tokens,
        global_batch_tokens=get_int(
            t, "global_batch_tokens", "training.global_batch_tokens", lo=1, hi=10**12
        ),
        optimizer=optimizer or Optimizer.ADAMW,
        sharding=sharding or Sharding.NONE,
        activation_checkpointing=get_bool(
            t, "activation_checkpointing", "training.activation_checkpointing", default=False
        ),
        lora_rank=get_int(
            t, "lora_rank", "training.lora_rank", lo=1, hi=65536, default=lora_default
        ),
        micro_batch_sequences=get_int(
            t, "micro_batch_size", "training.micro_batch_size", lo=1, hi=65536, default=1
        )
        or 1,
        checkpoint_interval_hours=get_float(
            t, "checkpoint_interval_hours", "training.checkpoint_interval_hours", lo=0.0, hi=1e5
        ),
    )


_SPECULATIVE_KEYS = frozenset({"method", "tokens", "acceptance_rate", "draft_params_billion"})


def parse_speculative(raw: Any, wt: WorkloadType) -> SpeculativeSpec | None:
    """`speculative`: {"method": "MTP" | "EAGLE" | "DRAFT_MODEL", "tokens": k proposed per step,
    "acceptance_rate": per-token acceptance in [0, 1], "draft_params_billion": DRAFT_MODEL only}."""
    if raw is None:
        return None
    if wt not in LLM_SERVING_TYPES:
        raise EngineInputError("speculative", f"not allowed for {wt}")
    s = require_dict(raw, "speculative")
    unknown = sorted(k for k in s if k not in _SPECULATIVE_KEYS)
    if unknown:
        raise EngineInputError(f"speculative.{str(unknown[0])[:40]}", "unknown field")
    method = get_enum(s, "method", "speculative.method", SpeculativeMethod)
    if method is None:
        raise EngineInputError("speculative.method", "is required")
    tokens = req_int(s, "tokens", "speculative.tokens", lo=1, hi=SPECULATIVE_MAX_TOKENS)
    rate = get_float(
        s, "acceptance_rate", "speculative.acceptance_rate", lo=0.0, hi=1.0, exclusive_lo=False
    )
    if rate is None:
        raise EngineInputError("speculative.acceptance_rate", "is required")
    draft = get_float(
        s, "draft_params_billion", "speculative.draft_params_billion", lo=0.0, hi=100_000.0
    )
    if draft is not None and method is not SpeculativeMethod.DRAFT_MODEL:
        raise EngineInputError("speculative.draft_params_billion", "only for method DRAFT_MODEL")
    return SpeculativeSpec(
        method=method, tokens=tokens, acceptance_rate=rate, draft_params_billion=draft
    )


def _gpus(raw: Any, known: Collection[str]) -> tuple[str, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or not raw:
        raise EngineInputError("gpus", "must be a non-empty list of GPU slugs")
    out: list[str] = []
    for i, slug in enumerate(raw):
        if not isinstance(slug, str) or slug not in known:
            raise EngineInputError(f"gpus[{i}]", "unknown GPU slug")
        if slug not in out:
            out.append(slug)
    return tuple(out)


def parse_estimate_request(data: Any, *, known_gpus: Collection[str]) -> EstimateRequest:
    body = require_dict(data, "body")
    wt = get_enum(body, "workload_type", "workload_type", WorkloadType)
    if wt is None:
        raise EngineInputError("workload_type", "is required")
    model = parse_model(body.get("model"))
    if wt in MEDIA_TYPES and model.kind is not ModelKind.DIFFUSION:
        raise EngineInputError("model", f"{wt} needs a diffusion model (e.g. sdxl, flux.1-dev)")
    if wt not in MEDIA_TYPES and model.kind is ModelKind.DIFFUSION:
        raise EngineInputError("model", f"a diffusion model cannot serve {wt}")
    weight_p, model = _weight_precision(body, model)
    kv_p = (
        get_enum(
            body, "kv_cache_precision", "kv_cache_precision", Precision, default=Precision.BF16
        )
        or Precision.BF16
    )
    llm = wt in LLM_SERVING_TYPES
    in50, in95 = _tokens(
        body,
        "input_tokens",
        required=llm or wt is WorkloadType.EMBEDDINGS,
        lo=1,
        default=(512, 512),
    )
    out50, out95 = _tokens(body, "output_tokens", required=llm, lo=1, default=(128, 128))
    if wt in TRAINING_TYPES:
        if body.get("training") is None:
            raise EngineInputError("training", f"is required for {wt}")
        training: TrainingSpec | None = _training(body["training"], wt)
    else:
        if body.get("training") is not None:
            raise EngineInputError("training", f"not allowed for {wt}")
        training = None
    latency = body.get("latency_target")
    lat: Mapping[str, Any] = {}
    if latency is not None and latency != "offline":
        lat = require_dict(latency, "latency_target")
    image = body.get("image")
    img: Mapping[str, Any] = require_dict(image, "image") if image is not None else {}
    video = body.get("video")
    vid: Mapping[str, Any] = require_dict(video, "video") if video is not None else {}
    media = img or vid
    pixels = None
    if media.get("width") is not None or media.get("height") is not None:
        prefix = "image" if img else "video"
        width = req_int(media, "width", f"{prefix}.width", lo=64, hi=16384)
        height = req_int(media, "height", f"{prefix}.height", lo=64, hi=16384)
        pixels = width * height
    frames = get_int(vid, "frames", "video.frames", lo=1, hi=100_000)
    if frames is None and vid.get("seconds") is not None:
        seconds = get_float(vid, "seconds", "video.seconds", lo=0.0, hi=3600.0) or 0.0
        fps = get_int(vid, "fps", "video.fps", lo=1, hi=240, default=c.DEFAULT_VIDEO_FPS) or 1
        frames = max(1, int(seconds * fps))
    duty = get_enum(body, "duty_cycle", "duty_cycle", DutyCycle, default=DutyCycle.ALWAYS_ON)
    return EstimateRequest(
        workload_type=wt,
        model=model,
        weight_precision=weight_p,
        kv_cache_precision=kv_p,
        input_tokens_p50=in50,
        input_tokens_p95=in95,
        output_tokens_p50=out50,
        output_tokens_p95=out95,
        concurrency=get_int(body, "concurrency", "concurrency", lo=1, hi=1_000_000),
        requests_per_second=get_float(
            body, "requests_per_second", "requests_per_second", lo=0.0, hi=1e7
        ),
        ttft_p95_ms=get_float(lat, "ttft_p95_ms", "latency_target.ttft_p95_ms", lo=0.0, hi=1e8),
        itl_p95_ms=get_float(lat, "itl_p95_ms", "latency_target.itl_p95_ms", lo=0.0, hi=1e8),
        e2e_p95_s=get_float(lat, "e2e_p95_s", "latency_target.e2e_p95_s", lo=0.0, hi=1e7),
        gpus=_gpus(body.get("gpus"), known_gpus),
        gpu_count=get_int(body, "gpu_count", "gpu_count", lo=1, hi=c.MAX_GPU_COUNT),
        training=training,
        duty_cycle=duty or DutyCycle.ALWAYS_ON,
        hours_per_month=get_float(
            body,
            "hours_per_month",
            "hours_per_month",
            lo=0.0,
            hi=744.0,
            default=c.HOURS_PER_MONTH_ALWAYS_ON,
        )
        or 730.0,
        records_per_job=get_int(body, "records_per_job", "records_per_job", lo=1, hi=10**12),
        acceptance_rate=get_float(
            body, "acceptance_rate", "acceptance_rate", lo=0.0, hi=1.0, default=1.0
        )
        or 1.0,
        image_pixels=pixels,
        diffusion_steps=get_int(
            media, "steps", "image.steps" if img else "video.steps", lo=1, hi=1000
        ),
        video_frames=frames,
        speculative=parse_speculative(body.get("speculative"), wt),
        framework=get_enum(body, "framework", "framework", Framework),
        framework_version=parse_framework_version(body.get("framework_version")),
        layout=parse_layout(body.get("layout"), wt, body.get("gpu_count")),
    )


_LAYOUT_PART = re.compile(r"^(DP|TP|PP|DEP)(\d+)$")
# A release as frameworks number them (PEP 440 style): "0.11.0", "0.5.6.post2", "1.3.0rc20",
# "0.17.post1.dev", "0.7.4.dev181+gf35f8e22" (a leading "v" is dropped);
# FRAMEWORK_VERSION_MAX_CHARS bounds what an estimate echoes back in its notes.
_FRAMEWORK_VERSION = re.compile(
    r"^\d+(?:\.\d+){0,3}(?:\.?(?:post|rc|dev)\d*){0,2}(?:\+[a-z0-9.]{1,16})?$"
)
FRAMEWORK_VERSION_MAX_CHARS = 32


def parse_framework_version(raw: Any) -> str | None:
    """`framework_version`: the serving framework's release ("0.11.0"); None: not given (the
    newest measured kernel tables, kernel_tables.moe_version_for)."""
    if raw is None:
        return None
    if not isinstance(raw, str) or len(raw) > FRAMEWORK_VERSION_MAX_CHARS:
        raise EngineInputError(
            "framework_version", "must be a release string such as '0.11.0' or '1.3.0rc20'"
        )
    text = raw.strip().lower().removeprefix("v")
    if not _FRAMEWORK_VERSION.match(text):
        raise EngineInputError(
            "framework_version", f"unknown release {raw[:24]!r}; expected e.g. '0.11.0'"
        )
    return text


def parse_layout(raw: Any, wt: WorkloadType, gpu_count: Any) -> Layout | None:
    """`layout`: the parallel layout to evaluate, as the estimate names it ("TP8", "DEP8",
    "TP2xPP2", "DP2xTP4", "PP4"); serving only. It fixes the GPU count (a `gpu_count` that
    differs is refused)."""
    if raw is None:
        return None
    if wt not in LLM_SERVING_TYPES:
        raise EngineInputError("layout", f"not allowed for {wt}")
    if not isinstance(raw, str) or len(raw) > 40:
        raise EngineInputError("layout", "must be a string such as 'TP8', 'DEP8' or 'TP2xPP2'")
    sizes = {"DP": 1, "TP": 1, "PP": 1, "DEP": 1}
    for part in raw.upper().replace(" ", "").split("X"):
        found = _LAYOUT_PART.match(part)
        if found is None or int(found.group(2)) < 1:
            raise EngineInputError("layout", f"unknown layout part {part[:20]!r}")
        sizes[found.group(1)] = int(found.group(2))
    if sizes["DEP"] > 1 and (sizes["TP"] > 1 or sizes["PP"] > 1):
        raise EngineInputError("layout", "DEP combines only with DP (e.g. 'DP2xDEP8')")
    layout = Layout(tp=sizes["TP"], pp=sizes["PP"], dep=sizes["DEP"], replicas=sizes["DP"])
    if layout.gpus > c.MAX_GPU_COUNT:
        raise EngineInputError("layout", f"uses {layout.gpus} GPUs, more than {c.MAX_GPU_COUNT}")
    given = isinstance(gpu_count, int) and not isinstance(gpu_count, bool)
    if given and gpu_count != layout.gpus:
        raise EngineInputError("layout", f"uses {layout.gpus} GPUs; gpu_count is {gpu_count}")
    return layout
