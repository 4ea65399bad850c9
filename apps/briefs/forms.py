import json
from typing import Any

from django import forms

from apps.catalog.selectors import preset_choices
from apps.core import json_guard
from apps.core.forms import percent_field
from apps.engine import EngineInputError, model_from_hf_config
from apps.engine import types as engine
from apps.engine.hf_config import is_hf_quant_config
from apps.engine.request import parse_model

from .choices import MEDIA_TYPES, TOKEN_SERVING_TYPES, TRAINING_TYPES, Tooling
from .display import weights_in_words
from .models import CONCURRENCY_MAX, TOKENS_MAX, WorkloadBrief

FIELDSETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Workload", ("name", "team", "description", "workload_type")),
    (
        "Model",
        (
            "model_preset", "model_hf_config", "model_hf_quant_config", "params_billion",
            "layers", "hidden_size",
            "attention_heads", "kv_heads", "head_dim", "vocab_size", "intermediate_size",
            "experts", "active_experts", "weight_precision", "kv_cache_precision",
            "context_window",
        ),
    ),
    (
        "Requests",
        (
            "input_tokens_p50", "input_tokens_p95", "output_tokens_p50", "output_tokens_p95",
            "concurrency", "requests_per_second", "records_per_job", "image_width",
            "image_height", "clip_seconds", "diffusion_steps", "request_size_buckets",
        ),
    ),
    ("Success", ("success_unit", "acceptance_rate")),
    ("Latency target", ("latency_percentile", "ttft_target_ms", "itl_target_ms", "e2e_target_ms")),
    (
        "Speculative decoding",
        ("speculative_method", "speculative_tokens", "speculative_acceptance_rate"),
    ),
    (
        "Operations",
        (
            "duty_cycle", "hours_per_month", "operating_boundary", "tooling",
            "tolerates_interruptions",
        ),
    ),
    (
        "Training and fine-tuning",
        (
            "training_tokens", "sequence_length", "global_batch_tokens", "optimizer", "sharding",
            "activation_checkpointing", "lora_rank", "checkpoint_interval_minutes",
            "target_eval_score", "deadline_days",
        ),
    ),
)  # fmt: skip


# The words a person reads for each field, with its unit.
LABELS = {
    "name": "Brief name",
    "description": "Description",
    "workload_type": "Workload type",
    "model_preset": "Model preset",
    "model_hf_config": "Hugging Face config.json",
    "model_hf_quant_config": "hf_quant_config.json (NVIDIA ModelOpt)",
    "params_billion": "Parameters (billions)",
    "layers": "Layers",
    "hidden_size": "Hidden size",
    "attention_heads": "Attention heads",
    "kv_heads": "KV heads",
    "head_dim": "Head dimension",
    "vocab_size": "Vocabulary size (tokens)",
    "intermediate_size": "MLP intermediate size",
    "experts": "Experts (mixture of experts)",
    "active_experts": "Active experts per token",
    "weight_precision": "Weight precision",
    "kv_cache_precision": "KV cache precision",
    "context_window": "Context window (tokens)",
    "request_size_buckets": "Request sizes (prompt tokens, output tokens, share)",
    "input_tokens_p50": "Prompt tokens, median (p50)",
    "input_tokens_p95": "Prompt tokens, p95",
    "output_tokens_p50": "Output tokens, median (p50)",
    "output_tokens_p95": "Output tokens, p95",
    "concurrency": "Concurrent requests",
    "requests_per_second": "Requests per second",
    "records_per_job": "Records per job",
    "image_width": "Image width (px)",
    "image_height": "Image height (px)",
    "clip_seconds": "Clip length (s)",
    "diffusion_steps": "Denoising steps per image or clip",
    "success_unit": "What counts as one output",
    "acceptance_rate": "Acceptance rate (%)",
    "latency_percentile": "Latency percentile",
    "ttft_target_ms": "Time to first token target (ms)",
    "itl_target_ms": "Inter-token latency target (ms)",
    "e2e_target_ms": "End-to-end latency target (ms)",
    "speculative_method": "Speculative decoding",
    "speculative_tokens": "Tokens proposed per step",
    "speculative_acceptance_rate": "Draft token acceptance rate (%)",
    "duty_cycle": "Duty cycle",
    "hours_per_month": "Hours a month (h)",
    "operating_boundary": "Operating boundary",
    "tooling": "Tooling",
    "training_tokens": "Training tokens per run",
    "sequence_length": "Sequence length (tokens)",
    "global_batch_tokens": "Global batch (tokens)",
    "optimizer": "Optimizer",
    "sharding": "Sharding",
    "activation_checkpointing": "Activation checkpointing",
    "lora_rank": "LoRA rank",
    "checkpoint_interval_minutes": "Checkpoint interval (minutes)",
    "target_eval_score": "Target evaluation score",
    "deadline_days": "Deadline (days)",
    "tolerates_interruptions": "Tolerates interruptions (spot capacity)",
}
HELP = {
    "model_preset": "A model the engine knows; or paste a config.json, or give the numbers.",
    "model_hf_config": "Paste the model's config.json; a quantization_config in it sets the "
    "weight precision when that is left blank.",
    "model_hf_quant_config": "ModelOpt FP8 / NVFP4 checkpoints keep their quantization here; "
    "it may also be pasted after the config.json above.",
    "params_billion": "Total parameters, in billions (explicit numbers: also give layers, "
    "hidden size and attention heads).",
    "kv_heads": "Key/value heads (grouped-query attention); blank: one per attention head.",
    "context_window": "The longest prompt plus output one request may use, at most the "
    "model's own context window.",
    "input_tokens_p50": "Tokens in a typical prompt. Prompt plus output must fit the "
    "context window.",
    "input_tokens_p95": "Tokens in a long prompt (95 in 100 are no longer); at least the p50.",
    "output_tokens_p95": "Tokens in a long answer; at least the p50.",
    "concurrency": f"Requests in flight at the busiest time, 1 to {CONCURRENCY_MAX:,}.",
    "requests_per_second": "Arrival rate at the busiest time, if you know it instead.",
    "records_per_job": "Prompts, documents or items one batch job processes.",
    "acceptance_rate": "Share of outputs that pass quality checks: 90 means 9 in 10.",
    "speculative_acceptance_rate": "Share of drafted tokens the model keeps: 70 means 7 in 10.",
    "diffusion_steps": "Blank: the model's default (SDXL 40, FLUX.1 [dev] 50). More steps, "
    "better detail, proportionally more GPU time.",
    "sharding": "How model states are split over the GPUs. Needed for a ranking: "
    "None (data parallel) when one GPU holds the whole model, as QLoRA usually does.",
    "optimizer": "The optimizer whose states the GPUs hold (AdamW: 2 states a parameter).",
    "latency_percentile": "The share of requests the targets hold for.",
    "ttft_target_ms": "How long until the first token of an answer appears, in milliseconds.",
    "itl_target_ms": "Time between tokens while an answer streams, in milliseconds.",
    "e2e_target_ms": "Time until the whole answer is done, in milliseconds.",
    "hours_per_month": "Hours a month the workload runs; 730 is always on.",
    "training_tokens": "Tokens the run trains on: dataset tokens times epochs.",
    "sequence_length": f"Tokens in one training sequence, at most {TOKENS_MAX:,}.",
    "global_batch_tokens": "Tokens in one optimizer step, across every GPU.",
    "activation_checkpointing": "Recompute activations in the backward pass: less memory, "
    "more compute.",
    "lora_rank": "The adapters' rank (8 to 64 is usual).",
    "checkpoint_interval_minutes": "How often the run saves a checkpoint.",
    "deadline_days": "The run must finish within this many days; the table is costed at the "
    "cheapest GPU count that does. Blank: 30 days for pre-training, 7 for a full fine-tune, "
    "2 for LoRA / QLoRA.",
    "tolerates_interruptions": "Can the work lose its GPUs at any moment and carry on? Only "
    "then do spot quotes meet the brief. Blank: no for real-time and always-on services, yes "
    "for batch work, evaluation and checkpointed training.",
}
SERVING = frozenset(TOKEN_SERVING_TYPES)
TOKENS_IN = SERVING | {engine.WorkloadType.EMBEDDINGS}
MEDIA = frozenset(MEDIA_TYPES)
TRAINING = frozenset(TRAINING_TYPES)
# A language model's shape: no use to a diffusion (image or video) brief, whose model is a
# preset (the engine answers a media brief only on a diffusion model).
NOT_MEDIA = frozenset(t.value for t in engine.WorkloadType) - MEDIA
# The workload types each field applies to (a field not named here applies to every type).
APPLIES: dict[str, frozenset[str]] = {
    **{
        name: NOT_MEDIA
        for name in (
            "model_hf_config", "model_hf_quant_config", "params_billion", "layers",
            "hidden_size", "attention_heads",
            "kv_heads", "head_dim", "vocab_size", "intermediate_size", "experts",
            "active_experts",
        )
    },
    "kv_cache_precision": SERVING,
    "context_window": TOKENS_IN,
    "input_tokens_p50": TOKENS_IN,
    "input_tokens_p95": TOKENS_IN,
    "output_tokens_p50": SERVING,
    "output_tokens_p95": SERVING,
    "concurrency": TOKENS_IN | MEDIA,
    "requests_per_second": TOKENS_IN | MEDIA,
    "records_per_job": frozenset(
        {
            engine.WorkloadType.BATCH_INFERENCE,
            engine.WorkloadType.EMBEDDINGS,
            engine.WorkloadType.EVALUATION,
        }
    ),
    "image_width": MEDIA,
    "image_height": MEDIA,
    "clip_seconds": frozenset({engine.WorkloadType.VIDEO_GENERATION}),
    "diffusion_steps": MEDIA,
    "request_size_buckets": frozenset({engine.WorkloadType.REALTIME_INFERENCE}),
    "latency_percentile": SERVING | MEDIA,
    "ttft_target_ms": SERVING,
    "itl_target_ms": SERVING,
    "e2e_target_ms": SERVING | MEDIA,
    "speculative_method": SERVING,
    "speculative_tokens": SERVING,
    "speculative_acceptance_rate": SERVING,
    **{
        name: TRAINING
        for name in (
            "training_tokens", "sequence_length", "global_batch_tokens", "optimizer",
            "sharding", "activation_checkpointing", "checkpoint_interval_minutes",
            "target_eval_score", "deadline_days",
        )
    },
    "lora_rank": frozenset(
        {engine.WorkloadType.LORA_FINETUNE, engine.WorkloadType.QLORA_FINETUNE}
    ),
}  # fmt: skip


HELP_TEXT_BUCKETS = (
    "Optional, real-time serving: one bucket a line, shares summing to 1, at most 16. Blank: "
    "derived from the prompt and output p50 and p95 as a log-normal. The GPU mix serves each "
    "bucket on the GPUs that meet the latency target for it."
)

# What WorkloadBrief.missing_fields names besides single fields, in words.
MISSING_WORDS = {
    "model": "the model (a preset, a config.json or its numbers)",
    "concurrency or requests_per_second": "concurrent requests or requests per second",
    "latency target": "a latency target (time to first token, inter-token or end-to-end)",
}


def missing_in_words(names: list[str]) -> list[str]:
    """What a brief still needs, as the form labels it."""
    return [MISSING_WORDS.get(name) or LABELS.get(name, name) for name in names]


def applies(name: str, workload_type: str) -> bool:
    """Whether the field belongs to a brief of ``workload_type`` (every field, with none)."""
    wanted = APPLIES.get(name)
    return wanted is None or not workload_type or workload_type in wanted


def weights_for(weight_precision: str, body: dict[str, Any] | None) -> dict[str, str] | None:
    """{"precision", "source"}: what the weights are sized at and why, in words; None when
    there is no model the engine can read yet."""
    if body is None:
        return None
    try:
        model = parse_model(body)
    except EngineInputError:
        return None
    precision, source = weights_in_words(weight_precision, model)
    return {"precision": precision, "source": source}


def _json_documents(text: str) -> list[str]:
    """The JSON documents pasted one after another (config.json, then hf_quant_config.json):
    each one's text; malformed JSON raises json.JSONDecodeError."""
    decoder = json.JSONDecoder()
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        try:
            _, end = decoder.raw_decode(text, i)
        except (RecursionError, ValueError):
            return [text]  # json_guard.loads refuses it, naming why
        out.append(text[i:end])
        i = end
    return out or [text]


def _pasted_pair(parts: list[Any]) -> Any:
    """One document as it is; config.json and hf_quant_config.json pasted together as the
    config with the ModelOpt file under "hf_quant_config" (BriefForm.clean moves it to its own
    field)."""
    if len(parts) == 1:
        return parts[0]
    quant = [p for p in parts if is_hf_quant_config(p)]
    configs = [p for p in parts if not is_hf_quant_config(p)]
    if len(parts) != 2 or len(quant) != 1 or not isinstance(configs[0], dict):
        raise forms.ValidationError(
            "Paste one config.json, optionally followed by its hf_quant_config.json."
        )
    return {**configs[0], "hf_quant_config": quant[0]}


class HfConfigField(forms.CharField):
    """A pasted Hugging Face config.json, kept as a dict."""

    widget = forms.Textarea(attrs={"rows": 4})

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, dict):
            return json.dumps(value, indent=2)
        return value

    def to_python(self, value: Any) -> dict[str, Any] | None:  # type: ignore[override]
        text = super().to_python(value)
        if not text:
            return None
        try:
            parts = [
                json_guard.loads(part, max_depth=json_guard.MAX_JSON_DEPTH, configs_under=("",))
                for part in _json_documents(text)
            ]
            parsed = _pasted_pair(parts)
        except json_guard.JsonRefused as exc:
            where = f" (at {exc.path})" if exc.path else ""
            raise forms.ValidationError(f"Not accepted: {exc.message}{where}") from exc
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"Not valid JSON: {exc.msg} (line {exc.lineno}).") from exc
        except ValueError as exc:  # an integer of more digits than Python converts
            raise forms.ValidationError(f"Not valid JSON: {exc}") from exc
        if not isinstance(parsed, dict):
            raise forms.ValidationError("Paste the whole config.json object ({...}).")
        for part in parts:
            too_much = json_guard.size_problem(part, json_guard.HF_CONFIG_LIMIT)
            if too_much:
                raise forms.ValidationError(too_much)
        return parsed


class RequestSizesField(forms.CharField):
    """Request-size buckets as lines of "prompt tokens, output tokens, share" (one bucket a
    line), kept as the brief stores them; the brief's clean() checks the buckets."""

    widget = forms.Textarea(attrs={"rows": 3, "placeholder": "512, 128, 0.7\n4000, 512, 0.3"})

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list):
            return "\n".join(
                f"{b['input_tokens']}, {b['output_tokens']}, {b['share']:g}"
                for b in value
                if isinstance(b, dict) and {"input_tokens", "output_tokens", "share"} <= set(b)
            )
        return value

    def to_python(self, value: Any) -> list[dict[str, Any]]:  # type: ignore[override]
        text = super().to_python(value) or ""
        buckets = []
        for number, line in enumerate((ln for ln in text.splitlines() if ln.strip()), start=1):
            parts = [p.strip() for p in line.replace(";", ",").split(",")]
            if len(parts) != 3:
                raise forms.ValidationError(
                    f"Line {number}: give prompt tokens, output tokens and share, "
                    "separated by commas (512, 128, 0.7)."
                )
            try:
                tokens_in, tokens_out, share = int(parts[0]), int(parts[1]), float(parts[2])
            except ValueError as exc:
                raise forms.ValidationError(
                    f"Line {number}: token counts are whole numbers and the share a number "
                    "(512, 128, 0.7)."
                ) from exc
            buckets.append({"input_tokens": tokens_in, "output_tokens": tokens_out, "share": share})
        return buckets


# The catalog's presets as the form offers them: by name, grouped by what they serve.
PRESET_GROUPS = (
    (engine.ModelKind.DECODER, "Language models"),
    (engine.ModelKind.ENCODER, "Embedding models"),
    (engine.ModelKind.DIFFUSION, "Image and video models (diffusion)"),
)


# The model kinds that can serve each kind of work (the engine answers a media brief only on a
# diffusion model, and no other brief on one): an image or video brief lists only diffusion
# presets, an embeddings brief embedding and language models, every other brief (serving,
# batch, fine-tuning, training) language models only.
EMBEDDING_KINDS = frozenset({engine.ModelKind.ENCODER, engine.ModelKind.DECODER})
LANGUAGE_KINDS = frozenset({engine.ModelKind.DECODER})
MEDIA_KINDS = frozenset({engine.ModelKind.DIFFUSION})


def preset_kinds(workload: str) -> frozenset[engine.ModelKind]:
    """The model kinds whose presets a brief of ``workload`` lists (every kind for none)."""
    if workload in MEDIA:
        return MEDIA_KINDS
    if workload == engine.WorkloadType.EMBEDDINGS:
        return EMBEDDING_KINDS
    if workload in {t.value for t in engine.WorkloadType}:
        return LANGUAGE_KINDS
    return frozenset(kind for kind, _ in PRESET_GROUPS)


def preset_workloads(kind: engine.ModelKind) -> str:
    """The workload types a preset of ``kind`` serves, space-separated (the page's script
    hides the others' presets when the type changes)."""
    return " ".join(sorted(t.value for t in engine.WorkloadType if kind in preset_kinds(t.value)))


def preset_options(workload: str = "") -> list[tuple[str, Any]]:
    """The presets a brief of ``workload`` may name, grouped by what they serve; every group
    while no type is chosen."""
    kinds = preset_kinds(workload)
    return [("", "— none —")] + [
        (group, preset_choices(kind=kind)) for kind, group in PRESET_GROUPS if kind in kinds
    ]


class PresetSelect(forms.Select):
    """The preset list, each option naming the workload types it serves (data-workloads); the
    presets of other kinds than ``workload``'s are hidden and disabled (the page's script
    shows them again when the type changes to one they serve)."""

    workload = ""

    def create_option(self, name: str, value: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        option = super().create_option(name, value, *args, **kwargs)
        kind = preset_kind(str(value))
        if kind is not None:
            option["attrs"]["data-workloads"] = preset_workloads(kind)
            if self.workload and kind not in preset_kinds(self.workload):
                option["attrs"].update(hidden=True, disabled=True)
        return option


# The tools each tooling choice applies to (a tool not named here applies to every type): the
# language-model serving frameworks are no use to a diffusion brief, ComfyUI (a diffusion
# pipeline runner) is no use to the others.
TOOL_APPLIES: dict[str, frozenset[str]] = {
    engine.Tooling.VLLM: NOT_MEDIA,
    engine.Tooling.SGLANG: NOT_MEDIA,
    engine.Tooling.TENSORRT_LLM: NOT_MEDIA,
    engine.Tooling.COMFYUI: MEDIA,
}


def tool_applies(tool: str, workload: str) -> bool:
    return not workload or tool not in TOOL_APPLIES or workload in TOOL_APPLIES[tool]


class ToolingCheckboxes(forms.CheckboxSelectMultiple):
    """The tooling choices, each naming the workload types it applies to (data-workloads, as
    the fields do): the page's script shows the chosen type's tools only."""

    def create_option(self, name: str, value: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        option = super().create_option(name, value, *args, **kwargs)
        if str(value) in TOOL_APPLIES:
            option["attrs"]["data-workloads"] = " ".join(sorted(TOOL_APPLIES[str(value)]))
        return option


class PresetField(forms.ChoiceField):
    """A preset of the brief's kind of work: a known preset of another kind is refused in
    words (an unknown one as any invalid choice)."""

    def validate(self, value: Any) -> None:
        kind = preset_kind(str(value)) if value else None
        if kind is not None and not self.valid_value(value):
            raise forms.ValidationError(
                "Not a model for this kind of work: an image or video brief takes an image or "
                "video (diffusion) model, every other brief a language model (or, for "
                "embeddings, an embedding model). Choose one from the list.",
                code="invalid_choice",
            )
        super().validate(value)


def preset_kind(slug: str) -> engine.ModelKind | None:
    return next(
        (kind for kind, _ in PRESET_GROUPS if any(s == slug for s, _ in preset_choices(kind=kind))),
        None,
    )


def needed_by_type() -> dict[str, set[str]]:
    """Each form field -> the workload types whose ranking needs it: what a blank brief of
    each type still misses (WorkloadBrief.missing_fields, the one statement of what a
    ranking needs), the model's ways and the either-or pairs spelled out as their fields."""
    groups = {
        "model": ("model_preset",),
        "concurrency or requests_per_second": ("concurrency", "requests_per_second"),
        "latency target": ("ttft_target_ms", "itl_target_ms", "e2e_target_ms"),
    }
    needed: dict[str, set[str]] = {}
    for workload in engine.WorkloadType:
        for name in WorkloadBrief(workload_type=workload.value).missing_fields():
            for field in groups.get(name, (name,)):
                needed.setdefault(field, set()).add(workload.value)
    return needed


class BriefForm(forms.ModelForm):  # type: ignore[type-arg]
    model_preset = PresetField(required=False, widget=PresetSelect)
    acceptance_rate = percent_field(
        WorkloadBrief, "acceptance_rate", label=LABELS["acceptance_rate"],
        help_text=HELP["acceptance_rate"], required=False,
    )  # fmt: skip
    speculative_acceptance_rate = percent_field(
        WorkloadBrief, "speculative_acceptance_rate",
        label=LABELS["speculative_acceptance_rate"],
        help_text=HELP["speculative_acceptance_rate"], required=False,
    )  # fmt: skip
    request_size_buckets = RequestSizesField(
        required=False, label=LABELS["request_size_buckets"], help_text=HELP_TEXT_BUCKETS
    )
    model_hf_config = HfConfigField(required=False, label="Hugging Face config.json")
    model_hf_quant_config = HfConfigField(required=False, label="hf_quant_config.json")
    tooling = forms.MultipleChoiceField(
        choices=Tooling.choices, required=False, widget=ToolingCheckboxes
    )
    tolerates_interruptions = forms.NullBooleanField(
        required=False,
        widget=forms.Select(
            choices=[
                ("unknown", "Default for this work"),
                ("true", "Yes: spot capacity can serve it"),
                ("false", "No: it needs capacity that stays"),
            ]
        ),
    )

    class Meta:
        model = WorkloadBrief
        fields = [name for _, names in FIELDSETS for name in names]
        labels = LABELS
        help_texts = HELP

    def __init__(self, *args: Any, teams: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        team = self.fields["team"]  # a ModelChoiceField; the stubs type it as Field
        team.queryset = teams  # type: ignore[attr-defined]
        team.empty_label = None  # type: ignore[attr-defined]
        workload = (
            self.data.get(self.add_prefix("workload_type"))
            if self.is_bound
            else self.initial.get("workload_type") or getattr(self.instance, "workload_type", "")
        )
        # A bound form takes only the posted type's presets (another kind's is a field error);
        # the page lists every preset, those of other kinds than the brief's hidden and
        # disabled, so that changing the type offers its own.
        preset = self.fields["model_preset"]
        preset.choices = preset_options(  # type: ignore[attr-defined]
            str(workload or "") if self.is_bound else ""
        )
        preset.widget.workload = str(workload or "")  # type: ignore[attr-defined]
        self.fields["description"].widget.attrs["rows"] = 2
        blank_labels = {
            "weight_precision": "As the checkpoint ships",
            "kv_cache_precision": "Choose a precision",
        }
        for name, text in blank_labels.items():
            field = self.fields[name]
            field.choices = [  # type: ignore[attr-defined]
                ("", text) if value == "" else (value, label)
                for value, label in field.choices  # type: ignore[attr-defined]
            ]
        for name, field in self.fields.items():  # the fields declared here, not from Meta
            field.label = LABELS.get(name, field.label)
            field.help_text = HELP.get(name, field.help_text)

    def clean_model_hf_config(self) -> dict[str, Any] | None:
        config = self.cleaned_data.get("model_hf_config")
        if isinstance(config, dict) and isinstance(config.get("hf_quant_config"), dict):
            # pasted together with its hf_quant_config.json: each to its own field
            self._pasted_quant: dict[str, Any] | None = config["hf_quant_config"]
            config = {k: v for k, v in config.items() if k != "hf_quant_config"}
        if config is not None:
            try:
                model_from_hf_config(config)
            except EngineInputError as exc:
                raise forms.ValidationError(exc.message) from exc
        return config

    def clean_model_hf_quant_config(self) -> dict[str, Any] | None:
        quant = self.cleaned_data.get("model_hf_quant_config") or getattr(
            self, "_pasted_quant", None
        )
        if quant is None:
            return None
        if not is_hf_quant_config(quant):
            raise forms.ValidationError(
                'Not an hf_quant_config.json: it has no "quantization" block with a quant_algo.'
            )
        config = self.cleaned_data.get("model_hf_config")
        if config is None:
            raise forms.ValidationError("Paste the config.json it goes with too.")
        try:
            model_from_hf_config(config, hf_quant_config=quant)
        except EngineInputError as exc:
            raise forms.ValidationError(exc.message) from exc
        return quant

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        given = [
            bool(data.get("model_preset")),
            data.get("model_hf_config") is not None,
            data.get("params_billion") is not None,
        ]
        if sum(given) > 1:
            self.add_error(
                "model_preset",
                "Give the model one way: a preset, a config.json, or explicit numbers.",
            )
        workload = data.get("workload_type") or ""
        # A field the chosen workload type has no use for is emptied (the page hides it): a
        # value left from another type would otherwise be saved, and be wrong, unseen.
        for name in list(data):
            if name in self.fields and not applies(name, workload):
                data[name] = (
                    False
                    if name == "activation_checkpointing"
                    else [] if name == "request_size_buckets"
                    else ("" if isinstance(data[name], str) else None)
                )  # fmt: skip
        if data.get("tooling"):  # likewise a tool the type has no use for (the page hides it)
            data["tooling"] = [t for t in data["tooling"] if tool_applies(t, workload)]
        return data

    def weights(self) -> dict[str, str] | None:
        """What a pasted config's weights are sized at (quantization_config, torch_dtype):
        shown beside the config after a paste, and when a brief with one is edited."""
        if self.is_bound:
            data = getattr(self, "cleaned_data", {})
            config, precision = data.get("model_hf_config"), data.get("weight_precision") or ""
            quant = data.get("model_hf_quant_config")
        else:
            config = self.initial.get("model_hf_config")
            precision = self.initial.get("weight_precision") or ""
            quant = self.initial.get("model_hf_quant_config")
        if not isinstance(config, dict):
            return None
        body: dict[str, Any] = {"hf_config": config}
        if isinstance(quant, dict):
            body["hf_quant_config"] = quant
        return weights_for(precision, body)

    def fieldsets(self) -> list[tuple[str, list[tuple[forms.BoundField, str, str]]]]:
        """Each group's fields, each with the workload types it applies to ("" for all) and
        those whose ranking needs it: the page's script shows only the chosen type's fields
        and marks those a ranking needs; without the script every group shows."""
        needed = needed_by_type()
        return [
            (
                title,
                [
                    (
                        self[name],
                        " ".join(sorted(APPLIES.get(name, ()))),
                        " ".join(sorted(needed.get(name, ()))),
                    )
                    for name in names
                ],
            )
            for title, names in FIELDSETS
        ]
