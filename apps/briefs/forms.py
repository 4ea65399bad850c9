import json
from typing import Any

from django import forms

from apps.core import json_guard
from apps.engine import PRESETS, EngineInputError, model_from_hf_config

from .choices import Tooling
from .models import WorkloadBrief

FIELDSETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Workload", ("name", "team", "description", "workload_type")),
    (
        "Model",
        (
            "model_preset", "model_hf_config", "params_billion", "layers", "hidden_size",
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
            "image_height", "clip_seconds",
        ),
    ),
    ("Success", ("success_unit", "acceptance_rate")),
    ("Latency target", ("latency_percentile", "ttft_target_ms", "itl_target_ms", "e2e_target_ms")),
    (
        "Speculative decoding",
        ("speculative_method", "speculative_tokens", "speculative_acceptance_rate"),
    ),
    ("Operations", ("duty_cycle", "hours_per_month", "operating_boundary", "tooling")),
    (
        "Training and fine-tuning",
        (
            "training_tokens", "sequence_length", "global_batch_tokens", "optimizer", "sharding",
            "activation_checkpointing", "lora_rank", "checkpoint_interval_minutes",
            "target_eval_score",
        ),
    ),
)  # fmt: skip


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
            parsed = json_guard.loads(text, max_depth=json_guard.MAX_JSON_DEPTH)
        except json_guard.JsonRefused as exc:
            where = f" (at {exc.path})" if exc.path else ""
            raise forms.ValidationError(f"Not accepted: {exc.message}{where}") from exc
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"Not valid JSON: {exc.msg} (line {exc.lineno}).") from exc
        except ValueError as exc:  # an integer of more digits than Python converts
            raise forms.ValidationError(f"Not valid JSON: {exc}") from exc
        if not isinstance(parsed, dict):
            raise forms.ValidationError("Paste the whole config.json object ({...}).")
        return parsed


class BriefForm(forms.ModelForm):  # type: ignore[type-arg]
    model_preset = forms.ChoiceField(required=False)
    model_hf_config = HfConfigField(required=False, label="Hugging Face config.json")
    tooling = forms.MultipleChoiceField(
        choices=Tooling.choices, required=False, widget=forms.CheckboxSelectMultiple
    )

    class Meta:
        model = WorkloadBrief
        fields = [name for _, names in FIELDSETS for name in names]

    def __init__(self, *args: Any, teams: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        team = self.fields["team"]  # a ModelChoiceField; the stubs type it as Field
        team.queryset = teams  # type: ignore[attr-defined]
        team.empty_label = None  # type: ignore[attr-defined]
        presets = [("", "— none —")] + [(slug, slug) for slug in sorted(PRESETS)]
        self.fields["model_preset"].choices = presets  # type: ignore[attr-defined]

    def clean_model_hf_config(self) -> dict[str, Any] | None:
        config = self.cleaned_data.get("model_hf_config")
        if config is not None:
            try:
                model_from_hf_config(config)
            except EngineInputError as exc:
                raise forms.ValidationError(exc.message) from exc
        return config

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
        return data

    def fieldsets(self) -> list[tuple[str, list[forms.BoundField]]]:
        return [(title, [self[name] for name in names]) for title, names in FIELDSETS]
