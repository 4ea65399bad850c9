from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q

from apps.core import bounds
from apps.core.models import BaseModel, Team
from apps.engine import EngineInputError, ModelKind, ModelSpec
from apps.engine import WorkloadType as EngineWorkloadType
from apps.engine import types as engine
from apps.engine.constants import MAX_TOKENS_PER_REQUEST
from apps.engine.costing import SuccessUnit as EngineSuccessUnit
from apps.engine.request import parse_model
from apps.engine.request_sizes import (
    FIELD as BUCKETS_FIELD,
)
from apps.engine.request_sizes import (
    SizeBucket,
    lognormal_buckets,
    validate_buckets,
)
from apps.engine.speculative import SPECULATIVE_MAX_TOKENS
from apps.engine.units import table_unit, unit_applies

from .choices import (
    MEDIA_TYPES,
    TOKEN_SERVING_TYPES,
    TRAINING_TYPES,
    DutyCycle,
    LatencyPercentile,
    OperatingBoundary,
    Optimizer,
    Precision,
    Sharding,
    SpeculativeMethod,
    SuccessUnit,
    WorkloadType,
)
from .contract import model_body

# Hours in an average month (8,760 h / 12): the ceiling for hours_per_month.
HOURS_PER_MONTH_MAX = 744  # 31 days x 24 h, the longest month

# Bounds that refuse absurd inputs (the form and the API both save through full_clean, so these
# hold for both; the API's serializer repeats the same numbers, apps/briefs/api/serializers.py).
# Tokens in one request: the longest context window published is 10M tokens (Llama 4 Scout,
# https://ai.meta.com/blog/llama-4-multimodal-intelligence/), the engine's own ceiling
# (apps.engine.constants.MAX_TOKENS_PER_REQUEST); a request is further held to its model's
# context window in clean().
TOKENS_MAX = MAX_TOKENS_PER_REQUEST
# Concurrent requests: a million in flight is far beyond any one deployment (vLLM's scheduler
# holds at most --max-num-seqs, default 256 per replica,
# https://docs.vllm.ai/en/latest/configuration/engine_args.html); a larger figure is a typo.
CONCURRENCY_MAX = 1_000_000
# Training tokens in one run: 10^16 is hundreds of times the largest published pre-training
# run (Llama 3: 15.6T tokens, https://arxiv.org/abs/2407.21783).
TRAINING_TOKENS_MAX = 10**16
# Tokens in one global batch, records in one job: a trillion of either is a typo.
BATCH_TOKENS_MAX = 10**12
RECORDS_MAX = 10**12
# A latency target above ten million ms (about 2.8 hours) is not a latency target.
LATENCY_TARGET_MAX_MS = 10**7
# Image sides, pixels: what the engine reads (apps/briefs/contract.py _media).
IMAGE_SIDE_MIN, IMAGE_SIDE_MAX = 64, 16384
# Denoising steps per image or clip: what the engine reads (apps/engine/request.py, image.steps).
DIFFUSION_STEPS_MIN, DIFFUSION_STEPS_MAX = 1, 1000
LORA_RANK_MAX = 65536
CHECKPOINT_INTERVAL_MAX_MINUTES = 100_000
# A training deadline: up to five years (the longest horizon a quote or a capex depreciation
# takes here).
DEADLINE_DAYS_MAX = 1826


def interruptions_tolerated_by_default(workload_type: str, duty_cycle: str) -> bool:
    """Spot capacity serves work that can lose its GPUs and carry on: not a real-time or an
    always-on service, but batch jobs, evaluation and training (checkpointed) can."""
    if workload_type in TRAINING_TYPES:
        return True
    if workload_type == EngineWorkloadType.REALTIME_INFERENCE:
        return False
    return duty_cycle != engine.DutyCycle.ALWAYS_ON


def _int_or_none(value: object) -> int | None:
    """A field's value as an int, or None (clean() runs even when the field's own check
    failed, so the value may not be one)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _between(lo: int, hi: int) -> list[Callable[[Any], None]]:
    return [MinValueValidator(lo), MaxValueValidator(hi)]


def _positive(field: str) -> Q:
    return Q(**{f"{field}__isnull": True}) | Q(**{f"{field}__gt": 0})


class WorkloadBrief(BaseModel):
    """What a team needs to run: the input of every estimate, ranking and decision."""

    name = models.CharField(max_length=200)
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="briefs")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    description = models.TextField(blank=True)
    workload_type = models.CharField(max_length=24, choices=WorkloadType.choices)

    # Model shape: a preset, a pasted Hugging Face config.json, or explicit numbers.
    model_preset = models.CharField(max_length=64, blank=True)
    model_hf_config = models.JSONField(null=True, blank=True)
    # NVIDIA ModelOpt's hf_quant_config.json, which a ModelOpt FP8 / NVFP4 checkpoint ships
    # beside config.json (its quantization lives there); read with model_hf_config.
    model_hf_quant_config = models.JSONField(null=True, blank=True)
    params_billion = models.DecimalField(max_digits=9, decimal_places=3, null=True, blank=True)
    layers = models.PositiveIntegerField(null=True, blank=True, validators=_between(1, 10_000))
    hidden_size = models.PositiveIntegerField(
        null=True, blank=True, validators=_between(1, 1_000_000)
    )
    attention_heads = models.PositiveIntegerField(
        null=True, blank=True, validators=_between(1, 100_000)
    )
    kv_heads = models.PositiveIntegerField(null=True, blank=True, validators=_between(1, 100_000))
    head_dim = models.PositiveIntegerField(null=True, blank=True, validators=_between(1, 100_000))
    vocab_size = models.PositiveIntegerField(
        null=True, blank=True, validators=_between(1, 10_000_000)
    )
    intermediate_size = models.PositiveIntegerField(
        null=True, blank=True, validators=_between(1, 10**8)
    )
    experts = models.PositiveIntegerField(null=True, blank=True, validators=_between(1, 4096))
    active_experts = models.PositiveIntegerField(
        null=True, blank=True, validators=_between(1, 4096)
    )

    # Blank: as the checkpoint ships (a pasted config's quantization_config, then its
    # torch_dtype; presets without either are sized at BF16 and the estimate's notes say so).
    weight_precision = models.CharField(
        max_length=8,
        choices=Precision.choices,
        blank=True,
        help_text="Leave blank to size the weights as the checkpoint ships.",
    )
    kv_cache_precision = models.CharField(max_length=8, choices=Precision.choices, blank=True)
    context_window = models.PositiveIntegerField(
        null=True, blank=True, validators=_between(1, TOKENS_MAX)
    )

    # Request shape (token counts are per request).
    input_tokens_p50 = models.PositiveIntegerField(
        null=True, blank=True, validators=_between(1, TOKENS_MAX)
    )
    input_tokens_p95 = models.PositiveIntegerField(
        null=True, blank=True, validators=_between(1, TOKENS_MAX)
    )
    output_tokens_p50 = models.PositiveIntegerField(
        null=True, blank=True, validators=_between(1, TOKENS_MAX)
    )
    output_tokens_p95 = models.PositiveIntegerField(
        null=True, blank=True, validators=_between(1, TOKENS_MAX)
    )
    concurrency = models.PositiveIntegerField(
        null=True, blank=True, validators=_between(1, CONCURRENCY_MAX)
    )
    requests_per_second = models.DecimalField(
        max_digits=10, decimal_places=3, null=True, blank=True,
        validators=bounds.between(bounds.REQUESTS_PER_SECOND_MIN, bounds.REQUESTS_PER_SECOND_MAX),
    )  # fmt: skip
    records_per_job = models.PositiveBigIntegerField(
        null=True, blank=True, validators=_between(1, RECORDS_MAX)
    )
    image_width = models.PositiveIntegerField(
        null=True, blank=True, validators=_between(IMAGE_SIDE_MIN, IMAGE_SIDE_MAX)
    )
    image_height = models.PositiveIntegerField(
        null=True, blank=True, validators=_between(IMAGE_SIDE_MIN, IMAGE_SIDE_MAX)
    )
    clip_seconds = models.DecimalField(
        max_digits=7, decimal_places=2, null=True, blank=True,
        validators=bounds.between(bounds.CLIP_SECONDS_MIN, bounds.CLIP_SECONDS_MAX),
    )  # fmt: skip
    # Blank: the model preset's own default (SDXL 40, FLUX.1 50: apps/engine/presets.py).
    diffusion_steps = models.PositiveSmallIntegerField(
        null=True, blank=True, validators=_between(DIFFUSION_STEPS_MIN, DIFFUSION_STEPS_MAX)
    )

    success_unit = models.CharField(max_length=16, choices=SuccessUnit.choices, blank=True)
    acceptance_rate = models.DecimalField(
        max_digits=5,
        decimal_places=4,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0.0001")), MaxValueValidator(Decimal("1"))],
        help_text="Share of outputs that pass quality checks (0-1].",
    )

    latency_percentile = models.CharField(
        max_length=8, choices=LatencyPercentile.choices, blank=True
    )
    ttft_target_ms = models.PositiveIntegerField(
        null=True, blank=True, validators=_between(1, LATENCY_TARGET_MAX_MS)
    )
    itl_target_ms = models.PositiveIntegerField(
        null=True, blank=True, validators=_between(1, LATENCY_TARGET_MAX_MS)
    )
    e2e_target_ms = models.PositiveIntegerField(
        null=True, blank=True, validators=_between(1, LATENCY_TARGET_MAX_MS)
    )

    # The request-size distribution, as [{"input_tokens", "output_tokens", "share"}] (at most
    # MAX_BUCKETS; shares sum to 1). Empty: derived from the p50/p95 token counts as a
    # log-normal grid (apps.engine.request_sizes.lognormal_buckets). The GPU mix reads it.
    request_size_buckets = models.JSONField(
        default=list,
        blank=True,
        verbose_name="request sizes",
        help_text="Request-size buckets and their shares; blank: derived from p50 and p95.",
    )

    duty_cycle = models.CharField(max_length=16, choices=DutyCycle.choices, blank=True)
    hours_per_month = models.DecimalField(
        max_digits=5,
        decimal_places=1,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0.1")), MaxValueValidator(HOURS_PER_MONTH_MAX)],
    )
    operating_boundary = models.CharField(
        max_length=20, choices=OperatingBoundary.choices, blank=True
    )
    tooling = models.JSONField(default=list, blank=True)

    # Speculative decoding / multi-token prediction: all three or none (blank method).
    speculative_method = models.CharField(
        max_length=16,
        choices=SpeculativeMethod.choices,
        blank=True,
        verbose_name="speculative decoding",
        help_text="Leave blank for plain decoding (one token per step).",
    )
    speculative_tokens = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(SPECULATIVE_MAX_TOKENS)],
        verbose_name="tokens proposed per step",
    )
    speculative_acceptance_rate = models.DecimalField(
        max_digits=5,
        decimal_places=4,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("1"))],
        verbose_name="draft token acceptance rate",
        help_text="Share of proposed tokens the model accepts, each (0-1).",
    )

    # Training and fine-tuning.
    training_tokens = models.PositiveBigIntegerField(
        null=True, blank=True, validators=_between(1, TRAINING_TOKENS_MAX)
    )
    sequence_length = models.PositiveIntegerField(
        null=True, blank=True, validators=_between(1, TOKENS_MAX)
    )
    global_batch_tokens = models.PositiveBigIntegerField(
        null=True, blank=True, validators=_between(1, BATCH_TOKENS_MAX)
    )
    optimizer = models.CharField(max_length=20, choices=Optimizer.choices, blank=True)
    sharding = models.CharField(max_length=8, choices=Sharding.choices, blank=True)
    activation_checkpointing = models.BooleanField(default=False)
    lora_rank = models.PositiveIntegerField(
        null=True, blank=True, validators=_between(1, LORA_RANK_MAX)
    )
    checkpoint_interval_minutes = models.PositiveIntegerField(
        null=True, blank=True, validators=_between(1, CHECKPOINT_INTERVAL_MAX_MINUTES)
    )
    target_eval_score = models.DecimalField(max_digits=7, decimal_places=4, null=True, blank=True)
    deadline_days = models.PositiveIntegerField(
        "deadline, days",
        null=True,
        blank=True,
        validators=_between(1, DEADLINE_DAYS_MAX),
        help_text="The run must finish within this many days: the table is costed at the "
        "cheapest GPU count that does (blank: 30 days for pre-training, 7 for a full "
        "fine-tune, 2 for LoRA / QLoRA).",
    )
    # Whether the work survives capacity taken back mid-run (blank: the default for its kind,
    # ``interruptions_tolerated``); spot quotes meet only a brief whose work does.
    tolerates_interruptions = models.BooleanField(
        "tolerates interruptions",
        null=True,
        blank=True,
        help_text="Can the work lose its GPUs at any moment and carry on (spot capacity)? "
        "Blank: no for real-time and always-on services, yes for batch work, evaluation and "
        "checkpointed training.",
    )

    # Bumped by every change to the brief; candidate tables record which version they used.
    inputs_version = models.PositiveIntegerField(default=1)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(acceptance_rate__isnull=True)
                | (Q(acceptance_rate__gt=0) & Q(acceptance_rate__lte=1)),
                name="brief_acceptance_rate_in_0_1",
                violation_error_message="The acceptance rate must be above 0 and at most 1.",
            ),
            models.CheckConstraint(
                condition=Q(hours_per_month__isnull=True)
                | (Q(hours_per_month__gt=0) & Q(hours_per_month__lte=HOURS_PER_MONTH_MAX)),
                name="brief_hours_per_month_in_range",
                violation_error_message=(
                    f"Hours per month must be above 0 and at most {HOURS_PER_MONTH_MAX}."
                ),
            ),
            models.CheckConstraint(
                condition=Q(input_tokens_p50__isnull=True)
                | Q(input_tokens_p95__isnull=True)
                | Q(input_tokens_p95__gte=F("input_tokens_p50")),
                name="brief_input_p95_at_least_p50",
                violation_error_message="Prompt tokens: the p95 must be at least the p50.",
            ),
            models.CheckConstraint(
                condition=Q(output_tokens_p50__isnull=True)
                | Q(output_tokens_p95__isnull=True)
                | Q(output_tokens_p95__gte=F("output_tokens_p50")),
                name="brief_output_p95_at_least_p50",
                violation_error_message="Output tokens: the p95 must be at least the p50.",
            ),
            models.CheckConstraint(
                condition=_positive("params_billion"),
                name="brief_params_positive",
                violation_error_message="Parameters (billions) must be above 0.",
            ),
            models.CheckConstraint(
                condition=_positive("requests_per_second"),
                name="brief_rps_positive",
                violation_error_message="Requests per second must be above 0.",
            ),
            models.CheckConstraint(
                condition=Q(experts__isnull=True)
                | Q(active_experts__isnull=True)
                | Q(active_experts__lte=F("experts")),
                name="brief_active_experts_within_experts",
                violation_error_message="Active experts per token cannot be more than the experts.",
            ),
            models.CheckConstraint(
                condition=Q(inputs_version__gte=1),
                name="brief_version_positive",
                violation_error_message="The inputs version must be at least 1.",
            ),
            models.CheckConstraint(
                condition=(
                    Q(speculative_method="")
                    & Q(speculative_tokens__isnull=True)
                    & Q(speculative_acceptance_rate__isnull=True)
                )
                | (
                    ~Q(speculative_method="")
                    & Q(speculative_tokens__gte=1)
                    & Q(speculative_tokens__lte=SPECULATIVE_MAX_TOKENS)
                    & Q(speculative_acceptance_rate__gte=0)
                    & Q(speculative_acceptance_rate__lte=1)
                ),
                name="brief_speculative_all_or_none",
                violation_error_message=(
                    "Give the speculative decoding method, the tokens proposed per step and "
                    "the acceptance rate together, or none of them."
                ),
            ),
            models.UniqueConstraint(fields=["team", "name"], name="brief_name_unique_per_team"),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        """The model must be one the engine can read, and of a kind the workload can use
        (a diffusion model for image and video generation, and only there); a request fits the
        model's context window; each p95 is at least its p50; the success unit one the workload
        produces (apps.engine.units.unit_applies); speculative decoding is given whole (method,
        tokens and acceptance rate) or not at all. Errors are collected per field, in words
        (the check constraints are the database's backstop)."""
        errors: dict[str, str] = {}
        if self.request_size_buckets:
            try:
                size_buckets_of(self.request_size_buckets)
            except EngineInputError as exc:
                errors["request_size_buckets"] = exc.message
            if self.workload_type != EngineWorkloadType.REALTIME_INFERENCE:
                errors["request_size_buckets"] = (
                    "only real-time inference briefs use request-size buckets (the GPU mix)"
                )
        self._clean_speculative()
        self._clean_order(errors)
        spec = self._clean_model(errors)
        if spec is not None:
            self._clean_context(errors, spec.max_context_tokens)
        # Only known values: clean() runs even when a field's own check failed.
        if self.workload_type in WorkloadType.values and self.success_unit in SuccessUnit.values:
            workload = EngineWorkloadType(self.workload_type)
            if not unit_applies(EngineSuccessUnit(self.success_unit), workload):
                fitting = [
                    u.label for u in SuccessUnit if unit_applies(EngineSuccessUnit(u), workload)
                ]
                outputs = table_unit(self.success_unit).outputs
                errors["success_unit"] = (
                    f"{self.get_workload_type_display()} briefs do not "
                    f"produce {outputs}; choose one of: {', '.join(fitting)}"
                )
        if errors:
            raise ValidationError(errors)

    def _clean_order(self, errors: dict[str, str]) -> None:
        """p95 at least p50, active experts within experts: beside the field, in words."""
        pairs = (
            ("input_tokens_p50", "input_tokens_p95", "Prompt tokens"),
            ("output_tokens_p50", "output_tokens_p95", "Output tokens"),
        )
        for low, high, what in pairs:
            p50, p95 = _int_or_none(getattr(self, low)), _int_or_none(getattr(self, high))
            if p50 is not None and p95 is not None and p95 < p50:
                errors[high] = (
                    f"{what}: the p95 ({p95:,}) must be at least the p50 ({p50:,}); "
                    "the p95 is the longer request."
                )
        experts, active = _int_or_none(self.experts), _int_or_none(self.active_experts)
        if experts is not None and active is not None and active > experts:
            errors["active_experts"] = (
                f"Active experts per token ({active:,}) cannot be more than the experts "
                f"({experts:,})."
            )

    def _clean_context(self, errors: dict[str, str], model_max: int) -> None:
        """Every request within the context window: the brief's (which the model must hold),
        else the model's own."""
        window = _int_or_none(self.context_window)
        if window is not None and window > model_max:
            errors["context_window"] = (
                f"This model reads at most {model_max:,} tokens (its context window); "
                f"{window:,} is more."
            )
            return
        limit = window or model_max
        whose = "this brief's context window" if window else "the model's context window"
        for name, what in (
            ("input_tokens_p50", "Prompt tokens (p50)"),
            ("input_tokens_p95", "Prompt tokens (p95)"),
            ("output_tokens_p50", "Output tokens (p50)"),
            ("output_tokens_p95", "Output tokens (p95)"),
        ):
            value = _int_or_none(getattr(self, name))
            if value is not None and value > limit and name not in errors:
                errors[name] = f"{what}: {value:,} is more than {whose} ({limit:,} tokens)."
        prompt = _int_or_none(self.input_tokens_p95) or _int_or_none(self.input_tokens_p50)
        output = _int_or_none(self.output_tokens_p95) or _int_or_none(self.output_tokens_p50)
        if self.workload_type in TOKEN_SERVING_TYPES and prompt and output:
            field = "input_tokens_p95" if self.input_tokens_p95 is not None else "input_tokens_p50"
            if prompt + output > limit and not {field, "output_tokens_p95"} & set(errors):
                errors[field] = (
                    f"A prompt of {prompt:,} tokens plus {output:,} output tokens is "
                    f"{prompt + output:,}, more than {whose} ({limit:,} tokens): shorten one."
                )

    def _clean_model(self, errors: dict[str, str]) -> ModelSpec | None:
        if not self.workload_type or not self.has_model_shape():
            return None
        field = (
            "model_preset"
            if self.model_preset
            else ("model_hf_config" if self.model_hf_config else "params_billion")
        )
        try:
            spec = parse_model(model_body(self))
        except EngineInputError as exc:
            errors[field] = exc.message
            return None
        workload = (
            WorkloadType(self.workload_type).label
            if self.workload_type in WorkloadType.values
            else str(self.workload_type)
        )
        media = self.workload_type in MEDIA_TYPES
        if media and spec.kind != ModelKind.DIFFUSION:
            errors[field] = f"{workload} needs a diffusion model (sdxl, flux.1-dev)."
            return None
        if not media and spec.kind == ModelKind.DIFFUSION:
            errors[field] = f"A diffusion model cannot serve {workload}."
            return None
        return spec

    def _clean_speculative(self) -> None:
        given = {
            "speculative_method": bool(self.speculative_method),
            "speculative_tokens": self.speculative_tokens is not None,
            "speculative_acceptance_rate": self.speculative_acceptance_rate is not None,
        }
        if any(given.values()) and not all(given.values()):
            raise ValidationError(
                {
                    name: "Give the method, the tokens proposed per step and the acceptance "
                    "rate together, or none of them."
                    for name, present in given.items()
                    if not present
                }
            )
        if self.speculative_method and self.workload_type not in TOKEN_SERVING_TYPES:
            raise ValidationError(
                {"speculative_method": "Speculative decoding applies to LLM serving only."}
            )

    @property
    def is_training(self) -> bool:
        return self.workload_type in TRAINING_TYPES

    @property
    def interruptions_tolerated(self) -> bool:
        """Whether spot capacity can serve the brief: as it says, else no for real-time serving
        and always-on services, yes for batch work, evaluation and (checkpointed) training."""
        if self.tolerates_interruptions is not None:
            return self.tolerates_interruptions
        return interruptions_tolerated_by_default(self.workload_type, self.duty_cycle)

    def has_model_shape(self) -> bool:
        if self.model_preset or self.model_hf_config:
            return True
        explicit = ("params_billion", "layers", "hidden_size", "attention_heads")
        return all(getattr(self, name) is not None for name in explicit)

    def missing_fields(self) -> list[str]:
        """The fields this brief still needs before it can be estimated and ranked.

        A brief may be saved incomplete ("you are still buying possibility, not capacity");
        it then produces no ranking until this list is empty.
        """
        missing: list[str] = []

        def need(*names: str) -> None:
            for name in names:
                value = getattr(self, name)
                if value is None or value == "":
                    missing.append(name)

        need("workload_type")
        if not self.has_model_shape():
            missing.append("model")
        # weight_precision may stay blank: the engine then reads the checkpoint's own precision.
        need("success_unit", "acceptance_rate", "duty_cycle")
        need("hours_per_month", "operating_boundary")
        kind = self.workload_type
        if kind in TOKEN_SERVING_TYPES or kind == engine.WorkloadType.EMBEDDINGS:
            need("input_tokens_p50", "input_tokens_p95")
        if kind in TOKEN_SERVING_TYPES:
            need("kv_cache_precision", "output_tokens_p50", "output_tokens_p95")
        if kind == engine.WorkloadType.REALTIME_INFERENCE:
            if self.concurrency is None and self.requests_per_second is None:
                missing.append("concurrency or requests_per_second")
            need("latency_percentile")
            if self.latency_percentile != LatencyPercentile.OFFLINE and not (
                self.ttft_target_ms or self.itl_target_ms or self.e2e_target_ms
            ):
                missing.append("latency target")
        if kind in (engine.WorkloadType.BATCH_INFERENCE, engine.WorkloadType.EMBEDDINGS):
            need("records_per_job")
        if kind in MEDIA_TYPES:
            need("image_width", "image_height")
            if self.concurrency is None and self.requests_per_second is None:
                missing.append("concurrency or requests_per_second")
        if kind == engine.WorkloadType.VIDEO_GENERATION:
            need("clip_seconds")
        if kind in TRAINING_TYPES:
            need("training_tokens", "sequence_length", "global_batch_tokens", "optimizer")
            need("sharding", "checkpoint_interval_minutes")
        if kind in (engine.WorkloadType.LORA_FINETUNE, engine.WorkloadType.QLORA_FINETUNE):
            need("lora_rank")
        return missing

    @property
    def is_complete(self) -> bool:
        return not self.missing_fields()


def size_buckets_of(raw: Any) -> tuple[SizeBucket, ...]:
    """Stored request-size buckets ([{"input_tokens", "output_tokens", "share"}]) as the
    engine's, checked (EngineInputError naming the field and, where one is, the bucket)."""
    if not isinstance(raw, list):
        raise EngineInputError(BUCKETS_FIELD, "must be a list of buckets")
    buckets = []
    for i, item in enumerate(raw, start=1):
        if not isinstance(item, dict) or set(item) != {"input_tokens", "output_tokens", "share"}:
            raise EngineInputError(
                BUCKETS_FIELD, f"bucket {i}: give input_tokens, output_tokens and share"
            )
        tokens_in, tokens_out, share = item["input_tokens"], item["output_tokens"], item["share"]
        if any(isinstance(v, bool) or not isinstance(v, int) for v in (tokens_in, tokens_out)):
            raise EngineInputError(BUCKETS_FIELD, f"bucket {i}: token counts must be whole numbers")
        if isinstance(share, bool) or not isinstance(share, int | float | Decimal):
            raise EngineInputError(BUCKETS_FIELD, f"bucket {i}: share must be a number")
        buckets.append(
            SizeBucket(input_tokens=tokens_in, output_tokens=tokens_out, share=float(share))
        )
    return validate_buckets(buckets)


def brief_size_buckets(brief: "WorkloadBrief") -> tuple[tuple[SizeBucket, ...], str]:
    """The brief's request-size buckets and where they came from (its own, or the log-normal
    default from its p50/p95 token counts)."""
    if brief.request_size_buckets:
        return size_buckets_of(brief.request_size_buckets), "the brief's request-size buckets"
    p50_in, p50_out = brief.input_tokens_p50 or 1, brief.output_tokens_p50 or 1
    return (
        lognormal_buckets(
            p50_in,
            max(p50_in, brief.input_tokens_p95 or p50_in),
            p50_out,
            max(p50_out, brief.output_tokens_p95 or p50_out),
        ),
        "log-normal request sizes from the brief's p50 and p95 token counts",
    )
