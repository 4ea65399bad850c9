"""The brief API speaks the estimate contract's shape plus the brief's own fields."""

from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.briefs.choices import (
    TRAINING_TYPES,
    DutyCycle,
    OperatingBoundary,
    Optimizer,
    Precision,
    Sharding,
    SpeculativeMethod,
    SuccessUnit,
    Tooling,
    WorkloadType,
)
from apps.briefs.contract import (
    EXPLICIT_MODEL_FIELDS,
    TRAINING_FIELDS,
    body_to_fields,
    brief_to_body,
)
from apps.briefs.models import (
    CONCURRENCY_MAX,
    DEADLINE_DAYS_MAX,
    HOURS_PER_MONTH_MAX,
    TOKENS_MAX,
    WorkloadBrief,
)
from apps.core import bounds, json_guard
from apps.core.api import FreeFormJson, StrictJsonTypes
from apps.engine import PRESETS, EngineInputError, model_from_hf_config
from apps.engine.request_sizes import MAX_BUCKETS
from apps.engine.speculative import SPECULATIVE_MAX_TOKENS
from apps.engine.types import LLM_SERVING_TYPES, Framework

MAX_TOKENS = TOKENS_MAX  # one home: apps.briefs.models (with its source)

# A brief field's place in the body (the model's checks name the brief's fields).
FIELD_TO_BODY: dict[str, tuple[str, ...]] = {
    "input_tokens_p50": ("input_tokens", "p50"),
    "input_tokens_p95": ("input_tokens", "p95"),
    "output_tokens_p50": ("output_tokens", "p50"),
    "output_tokens_p95": ("output_tokens", "p95"),
    "model_preset": ("model", "preset"),
    "model_hf_config": ("model", "hf_config"),
    "model_hf_quant_config": ("model", "hf_quant_config"),
    **{name: ("model", name) for name in EXPLICIT_MODEL_FIELDS},
    "speculative_method": ("speculative", "method"),
    "speculative_tokens": ("speculative", "tokens"),
    "speculative_acceptance_rate": ("speculative", "acceptance_rate"),
    # The latency target is one object in the body ({"ttft_p95_ms": 500, ...}).
    **{
        name: ("latency_target",)
        for name in ("latency_percentile", "ttft_target_ms", "itl_target_ms", "e2e_target_ms")
    },
    "training_tokens": ("training", "tokens"),
    **{name: ("training", name) for name in TRAINING_FIELDS if name != "tokens"},
    "image_width": ("image", "width"),
    "image_height": ("image", "height"),
    "clip_seconds": ("video", "seconds"),
    "diffusion_steps": ("image", "steps"),
}
_MEDIA_FIELDS = ("image_width", "image_height", "diffusion_steps")
# The workload type whose width and height the body sends under "video" (else "image").
VIDEO_WORKLOAD = "VIDEO_GENERATION"


def body_errors(exc: DjangoValidationError, *, video: bool = False) -> dict[str, Any]:
    """The model's errors (by brief field) placed where the body has the field (a video
    brief's width and height under ``video``); two fields in one place share its list."""
    out: dict[str, Any] = {}
    for name, messages in exc.message_dict.items():
        path = FIELD_TO_BODY.get(name, (name,))
        if video and name in _MEDIA_FIELDS:
            path = ("video", path[-1])
        where = out
        for part in path[:-1]:
            where = where.setdefault(part, {})
        where.setdefault(path[-1], [])
        where[path[-1]] += [m for m in messages if m not in where[path[-1]]]
    return out


class TokensSerializer(StrictJsonTypes, serializers.Serializer):  # type: ignore[type-arg]
    p50 = serializers.IntegerField(min_value=1, max_value=MAX_TOKENS)
    p95 = serializers.IntegerField(min_value=1, max_value=MAX_TOKENS, required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # p50 is required, also in a PATCH (StrictJsonTypes asks a nested object whole).
        if "p95" in attrs and "p50" in attrs and attrs["p95"] < attrs["p50"]:
            raise serializers.ValidationError({"p95": "must be at least p50"})
        return attrs


class ModelShapeSerializer(StrictJsonTypes, serializers.Serializer):  # type: ignore[type-arg]
    preset = serializers.CharField(required=False, max_length=64)
    hf_config = serializers.DictField(
        required=False, validators=[FreeFormJson(json_guard.HF_CONFIG_LIMIT)]
    )
    hf_quant_config = serializers.DictField(
        required=False,
        validators=[FreeFormJson(json_guard.HF_CONFIG_LIMIT)],
        help_text="NVIDIA ModelOpt's hf_quant_config.json, with hf_config (FP8 / NVFP4 exports).",
    )
    params_billion = serializers.DecimalField(
        max_digits=9, decimal_places=3, min_value=Decimal("0.001"), required=False
    )
    layers = serializers.IntegerField(min_value=1, max_value=10_000, required=False)
    hidden_size = serializers.IntegerField(min_value=1, max_value=1_000_000, required=False)
    attention_heads = serializers.IntegerField(min_value=1, max_value=100_000, required=False)
    kv_heads = serializers.IntegerField(min_value=1, max_value=100_000, required=False)
    head_dim = serializers.IntegerField(min_value=1, max_value=100_000, required=False)
    vocab_size = serializers.IntegerField(min_value=1, max_value=10_000_000, required=False)
    intermediate_size = serializers.IntegerField(min_value=1, max_value=10**8, required=False)
    experts = serializers.IntegerField(min_value=1, max_value=4096, required=False)
    active_experts = serializers.IntegerField(min_value=1, max_value=4096, required=False)

    def validate_preset(self, value: str) -> str:
        if value not in PRESETS:
            raise serializers.ValidationError(f"unknown preset {value[:60]!r}")
        return value

    def validate_hf_config(self, value: dict[str, Any]) -> dict[str, Any]:
        try:
            model_from_hf_config(value)
        except EngineInputError as exc:
            raise serializers.ValidationError(exc.message) from exc
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        ways = ["preset" in attrs, "hf_config" in attrs, "params_billion" in attrs]
        if sum(ways) > 1:
            raise serializers.ValidationError("give one of preset, hf_config or explicit numbers")
        quant = attrs.get("hf_quant_config")
        if quant is not None:
            if "hf_config" not in attrs:
                raise serializers.ValidationError({"hf_quant_config": "goes with hf_config"})
            try:
                model_from_hf_config(attrs["hf_config"], hf_quant_config=quant)
            except EngineInputError as exc:
                raise serializers.ValidationError({"hf_quant_config": exc.message}) from exc
        experts, active = attrs.get("experts"), attrs.get("active_experts")
        if experts and active and active > experts:
            raise serializers.ValidationError({"active_experts": "must not exceed experts"})
        return attrs


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "enum": ["offline"]},
            {
                "type": "object",
                "properties": {
                    key: {"type": "number", "minimum": 0, "exclusiveMinimum": True}
                    for key in (
                        "ttft_p95_ms", "itl_p95_ms", "e2e_p95_s",
                        "ttft_p99_ms", "itl_p99_ms", "e2e_p99_s",
                    )
                },
                "additionalProperties": False,
            },
        ]
    }
)  # fmt: skip
class LatencyTargetField(serializers.Field):  # type: ignore[type-arg]
    """``"offline"`` or ``{"ttft_p95_ms", "itl_p95_ms", "e2e_p95_s"}`` (or the _p99_ names)."""

    KEYS = {"ttft_p95_ms", "itl_p95_ms", "e2e_p95_s", "ttft_p99_ms", "itl_p99_ms", "e2e_p99_s"}

    def to_internal_value(self, data: Any) -> Any:
        if data == "offline":
            return data
        if not isinstance(data, dict):
            raise serializers.ValidationError('must be "offline" or an object of targets')
        unknown = set(data) - self.KEYS
        if unknown:
            raise serializers.ValidationError(f"unknown target {sorted(unknown)[0]!r}")
        if any("_p95_" in k for k in data) and any("_p99_" in k for k in data):
            raise serializers.ValidationError("give targets at one percentile, p95 or p99")
        for key, value in data.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise serializers.ValidationError(f"{key} must be a positive number")
            if value > 10**7:
                raise serializers.ValidationError(f"{key} is absurdly large")
        return data

    def to_representation(self, value: Any) -> Any:
        return value


class SizeBucketSerializer(StrictJsonTypes, serializers.Serializer):  # type: ignore[type-arg]
    """One request-size bucket: its prompt and output tokens and its share of the requests."""

    input_tokens = serializers.IntegerField(min_value=1, max_value=MAX_TOKENS)
    output_tokens = serializers.IntegerField(min_value=1, max_value=MAX_TOKENS)
    share = serializers.FloatField(min_value=0, max_value=1)


class MediaSerializer(StrictJsonTypes, serializers.Serializer):  # type: ignore[type-arg]
    width = serializers.IntegerField(min_value=64, max_value=16384)
    height = serializers.IntegerField(min_value=64, max_value=16384)
    seconds = serializers.DecimalField(
        max_digits=7,
        decimal_places=2,
        min_value=bounds.CLIP_SECONDS_MIN,
        max_value=bounds.CLIP_SECONDS_MAX,
        required=False,
    )
    steps = serializers.IntegerField(
        min_value=1,
        max_value=1000,
        required=False,
        help_text="Denoising steps per image or clip; blank: the model's default (SDXL 40).",
    )


class SpeculativeSerializer(StrictJsonTypes, serializers.Serializer):  # type: ignore[type-arg]
    """Speculative decoding / multi-token prediction, applied to inter-token latency and
    throughput (the engine's notes say how)."""

    method = serializers.ChoiceField(
        choices=SpeculativeMethod.choices,
        help_text="MTP (the model's multi-token-prediction head), EAGLE, or DRAFT_MODEL.",
    )
    tokens = serializers.IntegerField(
        min_value=1, max_value=SPECULATIVE_MAX_TOKENS, help_text="Draft tokens proposed per step."
    )
    acceptance_rate = serializers.DecimalField(
        max_digits=5,
        decimal_places=4,
        min_value=Decimal("0"),
        max_value=Decimal("1"),
        help_text="Probability that each proposed token is accepted (0-1).",
    )


class SpeculativeOutputSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """The stored speculative decoding, as the input takes it (the rate as a JSON number)."""

    method = serializers.ChoiceField(choices=SpeculativeMethod.choices)
    tokens = serializers.IntegerField(min_value=1, max_value=SPECULATIVE_MAX_TOKENS)
    acceptance_rate = serializers.FloatField(min_value=0, max_value=1)


class TrainingSerializer(StrictJsonTypes, serializers.Serializer):  # type: ignore[type-arg]
    tokens = serializers.IntegerField(min_value=1, max_value=10**16, required=False)
    sequence_length = serializers.IntegerField(min_value=1, max_value=MAX_TOKENS, required=False)
    global_batch_tokens = serializers.IntegerField(min_value=1, max_value=10**12, required=False)
    optimizer = serializers.ChoiceField(choices=Optimizer.choices, required=False)
    sharding = serializers.ChoiceField(choices=Sharding.choices, required=False)
    activation_checkpointing = serializers.BooleanField(required=False)
    lora_rank = serializers.IntegerField(min_value=1, max_value=65536, required=False)
    checkpoint_interval_minutes = serializers.IntegerField(
        min_value=1, max_value=100_000, required=False
    )
    target_eval_score = serializers.DecimalField(max_digits=7, decimal_places=4, required=False)
    deadline_days = serializers.IntegerField(
        min_value=1,
        max_value=DEADLINE_DAYS_MAX,
        required=False,
        allow_null=True,
        help_text="Days the run must finish in: costed at the cheapest GPU count that does "
        "(null or left out: 30 for pre-training, 7 for a full fine-tune, 2 for LoRA / QLoRA).",
    )


class BriefInputSerializer(StrictJsonTypes, serializers.Serializer):  # type: ignore[type-arg]
    name = serializers.CharField(max_length=200)
    team = serializers.IntegerField(required=False, help_text="Team id; defaults to your team.")
    description = serializers.CharField(required=False, allow_blank=True)
    workload_type = serializers.ChoiceField(choices=WorkloadType.choices)
    model = ModelShapeSerializer(required=False)
    weight_precision = serializers.ChoiceField(
        choices=Precision.choices,
        required=False,
        allow_blank=True,
        help_text="Blank or left out: size the weights as the checkpoint ships (a pasted "
        "config's quantization_config, then its torch_dtype, else BF16).",
    )
    kv_cache_precision = serializers.ChoiceField(choices=Precision.choices, required=False)
    context_window = serializers.IntegerField(min_value=1, max_value=MAX_TOKENS, required=False)
    input_tokens = TokensSerializer(required=False)
    output_tokens = TokensSerializer(required=False)
    concurrency = serializers.IntegerField(min_value=1, max_value=CONCURRENCY_MAX, required=False)
    requests_per_second = serializers.DecimalField(
        max_digits=10,
        decimal_places=3,
        min_value=bounds.REQUESTS_PER_SECOND_MIN,
        max_value=bounds.REQUESTS_PER_SECOND_MAX,
        required=False,
    )
    records_per_job = serializers.IntegerField(min_value=1, max_value=10**12, required=False)
    image = MediaSerializer(required=False)
    video = MediaSerializer(required=False)
    success_unit = serializers.ChoiceField(choices=SuccessUnit.choices, required=False)
    acceptance_rate = serializers.DecimalField(
        max_digits=5,
        decimal_places=4,
        min_value=Decimal("0.0001"),
        max_value=Decimal("1"),
        required=False,
    )
    latency_target = LatencyTargetField(required=False)
    # max_length is a ListSerializer argument (DRF's LIST_SERIALIZER_KWARGS) the stubs lack.
    request_size_buckets = SizeBucketSerializer(  # type: ignore[call-arg]
        many=True,
        required=False,
        allow_null=True,
        max_length=MAX_BUCKETS,
        help_text="Real-time briefs: the request-size distribution the GPU mix serves, as "
        "buckets whose shares sum to 1; null or left out: derived from the input and output "
        "p50/p95 as a log-normal grid.",
    )
    duty_cycle = serializers.ChoiceField(choices=DutyCycle.choices, required=False)
    hours_per_month = serializers.DecimalField(
        max_digits=5,
        decimal_places=1,
        min_value=Decimal("0.1"),
        max_value=Decimal(HOURS_PER_MONTH_MAX),
        required=False,
    )
    operating_boundary = serializers.ChoiceField(choices=OperatingBoundary.choices, required=False)
    tooling = serializers.ListField(
        child=serializers.ChoiceField(choices=Tooling.choices), required=False, max_length=20
    )
    training = TrainingSerializer(required=False)
    tolerates_interruptions = serializers.BooleanField(
        required=False,
        allow_null=True,
        help_text="Whether the work can lose its GPUs at any moment and carry on: only then "
        "do spot quotes meet the brief (null or left out: false for real-time and always-on "
        "services, true for batch work, evaluation and checkpointed training).",
    )
    speculative = SpeculativeSerializer(required=False, allow_null=True)
    # Accepted so the estimate body can be posted as it is; a brief does not store them.
    gpus = serializers.ListField(child=serializers.CharField(), required=False, write_only=True)
    gpu_count = serializers.IntegerField(required=False, write_only=True)
    framework = serializers.ChoiceField(
        choices=[(f.value, dict(Tooling.choices)[f.value]) for f in Framework],
        required=False,
        write_only=True,
        help_text="The serving framework whose scheduler limits apply; stored as the first "
        "entry of the brief's tooling.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        training_types = TRAINING_TYPES
        # A PATCH may leave the workload type out: the view passes the stored one in context.
        workload_type = attrs.get("workload_type", self.context.get("workload_type"))
        if attrs.get("training") and workload_type not in training_types:
            raise serializers.ValidationError({"training": f"not allowed for {workload_type}"})
        if attrs.get("image") and attrs.get("video"):
            raise serializers.ValidationError({"video": "give image or video, not both"})
        serving_types = LLM_SERVING_TYPES
        if attrs.get("speculative") and workload_type not in serving_types:
            raise serializers.ValidationError(
                {"speculative": f"not allowed for {workload_type}: LLM serving only"}
            )
        if not self.partial:
            # The brief's own checks (a request within the model's context window, p95 at
            # least p50, ...), named as the body names the field; a PATCH meets the same
            # checks when the merged brief is saved (services.brief_update: full_clean).
            fields = {k: v for k, v in body_to_fields(attrs).items() if k != "team"}
            try:
                WorkloadBrief(**fields).clean()
            except DjangoValidationError as exc:
                video = attrs.get("workload_type") == VIDEO_WORKLOAD
                raise serializers.ValidationError(body_errors(exc, video=video)) from exc
        return attrs


class BriefOutputSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """The stored brief in the contract's shape, with its id, team and completeness."""

    id = serializers.IntegerField()
    team = serializers.IntegerField(source="team_id")
    name = serializers.CharField()
    description = serializers.CharField()
    workload_type = serializers.CharField()
    model = serializers.DictField(allow_null=True)
    weight_precision = serializers.CharField()
    kv_cache_precision = serializers.CharField()
    context_window = serializers.IntegerField(allow_null=True)
    input_tokens = serializers.DictField(allow_null=True)
    output_tokens = serializers.DictField(allow_null=True)
    concurrency = serializers.IntegerField(allow_null=True)
    requests_per_second = serializers.FloatField(allow_null=True)
    records_per_job = serializers.IntegerField(allow_null=True)
    image = serializers.DictField(required=False)
    video = serializers.DictField(required=False)
    success_unit = serializers.CharField()
    acceptance_rate = serializers.FloatField(allow_null=True)
    latency_target = serializers.JSONField(allow_null=True)
    request_size_buckets = SizeBucketSerializer(many=True, allow_null=True)
    duty_cycle = serializers.CharField()
    hours_per_month = serializers.FloatField(allow_null=True)
    operating_boundary = serializers.CharField()
    tooling = serializers.ListField(child=serializers.CharField())
    training = serializers.DictField(required=False)
    tolerates_interruptions = serializers.BooleanField(allow_null=True)
    interruptions_tolerated = serializers.BooleanField(
        help_text="Whether spot quotes meet the brief: tolerates_interruptions, else the "
        "default for its kind of work."
    )
    speculative = SpeculativeOutputSerializer(allow_null=True)
    missing_fields = serializers.ListField(child=serializers.CharField())
    complete = serializers.BooleanField()
    inputs_version = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    def to_representation(self, instance: Any) -> dict[str, Any]:
        missing = instance.missing_fields()
        return {
            "id": instance.pk,
            "team": instance.team_id,
            **brief_to_body(instance),
            "interruptions_tolerated": instance.interruptions_tolerated,
            "missing_fields": missing,
            "complete": not missing,
            "inputs_version": instance.inputs_version,
            "created_at": serializers.DateTimeField().to_representation(instance.created_at),
            "updated_at": serializers.DateTimeField().to_representation(instance.updated_at),
        }
