from decimal import Decimal
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from apps.briefs.models import WorkloadBrief
from apps.catalog.models import Gpu, GpuSystem
from apps.core.forms import PercentField
from apps.engine.constants import MAX_GPU_COUNT, MAX_REPORTED_CONCURRENCY
from apps.quotes.models import Quote
from apps.quotes.selectors import quotes_for_team

from .importers.common import TOOL_DISPLAY
from .manual import FAILURE_OPS_CHECKS, MEMORY_FIT_FIELDS, MIN_REQUEST_RATE
from .models import BenchmarkRun


class _CandidateForm(forms.Form):
    gpu = forms.ModelChoiceField(
        queryset=Gpu.objects.order_by("vendor", "name"), to_field_name="slug", label="GPU"
    )
    gpu_count = forms.IntegerField(
        min_value=1, max_value=MAX_GPU_COUNT, initial=1, label="GPUs in the run",
        help_text="All the GPUs that served the run, across its replicas.",
    )  # fmt: skip
    quote = forms.ModelChoiceField(
        queryset=Quote.objects.none(),  # set per brief: the quotes its team may see
        required=False,
        label="Quote measured on",
        help_text="The quote the run was measured on, if any.",
    )
    system = forms.ModelChoiceField(
        queryset=GpuSystem.objects.select_related("gpu").order_by("name"),
        to_field_name="slug",
        required=False,
        label="System",
        help_text="The node or rack system, if the run names one.",
    )

    def __init__(self, *args: Any, brief: WorkloadBrief, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["quote"].queryset = quotes_for_team(brief.team_id)  # type: ignore[attr-defined]

    def candidate(self) -> dict[str, Any]:
        return {k: self.cleaned_data.get(k) for k in ("gpu", "gpu_count", "quote", "system")}

    def add_service_errors(
        self, exc: ValidationError, rename: dict[str, str] | None = None
    ) -> None:
        for field, errors in exc.message_dict.items():
            name = (rename or {}).get(field, field)
            for error in errors:
                self.add_error(name if name in self.fields else None, f"{error}")


class UploadForm(_CandidateForm):
    file = forms.FileField(help_text="The tool's own results file, as it was written.")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Where the file says them, its GPU and count win (apps.benchmarks.file_facts).
        self.fields["gpu"].required = False
        self.fields["gpu_count"].required = False

    tool = forms.ChoiceField(
        choices=[("", "Detect from the file"), *TOOL_DISPLAY.items()], required=False,
        label="Benchmark tool",
    )  # fmt: skip
    model = forms.CharField(
        max_length=200,
        required=False,
        help_text="The model benchmarked, where the file does not name it (or the brief has "
        "no model name).",
    )
    proxy = forms.BooleanField(
        required=False,
        label="Proxy of the brief's model",
        help_text="The file's model is another model, the closest proxy: it calibrates this "
        "brief only and is never its measurement.",
    )
    precision = forms.CharField(
        max_length=40, required=False, label="Weight precision", help_text="FP8, BF16, INT4…"
    )
    framework = forms.CharField(max_length=80, required=False, help_text="vLLM, SGLang, TGI…")
    framework_version = forms.CharField(max_length=80, required=False)
    burst_profile = forms.CharField(
        max_length=200, required=False, help_text="How requests arrived (steady, bursts of 50…)."
    )
    concurrency = forms.IntegerField(
        min_value=1, max_value=MAX_REPORTED_CONCURRENCY, required=False,
        label="Concurrency (requests in flight)",
        help_text="The load the run was set to, where the file does not say it (a value that "
        "contradicts the file is refused).",
    )  # fmt: skip
    request_rate = forms.FloatField(
        min_value=MIN_REQUEST_RATE, required=False, label="Request rate (requests per second)",
        help_text="The arrival rate the run was set to, where the file does not say it.",
    )  # fmt: skip

    CONDITION_FIELDS = (
        "model", "precision", "framework", "framework_version", "burst_profile", "concurrency",
        "request_rate",
    )  # fmt: skip

    def conditions(self) -> dict[str, Any]:
        return {
            k: self.cleaned_data[k]
            for k in self.CONDITION_FIELDS
            if self.cleaned_data[k] not in (None, "")
        }


_RESULT_CHOICES = [("", "not run"), ("pass", "pass"), ("fail", "fail")]


class ManualRunForm(_CandidateForm):
    """Phase 1 (peak memory, OOM rate, headroom) or Phase 3 (the failure and operations checks,
    each pass/fail with a measured time and notes)."""

    phase = forms.ChoiceField(
        choices=[
            (BenchmarkRun.Phase.MEMORY_FIT, BenchmarkRun.Phase.MEMORY_FIT.label),
            (BenchmarkRun.Phase.FAILURE_OPS, BenchmarkRun.Phase.FAILURE_OPS.label),
        ]
    )
    label = forms.CharField(max_length=200, required=False, help_text="Your name for the run.")
    model = forms.CharField(max_length=200, required=False, help_text="The model that ran.")
    precision = forms.CharField(
        max_length=40, required=False, label="Weight precision", help_text="FP8, BF16, INT4…"
    )
    framework = forms.CharField(max_length=80, required=False, help_text="vLLM, SGLang, TGI…")
    framework_version = forms.CharField(max_length=80, required=False)
    input_tokens = forms.IntegerField(
        min_value=1, required=False, label="Prompt tokens per request"
    )
    output_tokens = forms.IntegerField(
        min_value=1, required=False, label="Output tokens per request"
    )
    concurrency = forms.IntegerField(min_value=1, required=False, label="Requests in flight")
    request_rate = forms.FloatField(
        min_value=0, required=False, label="Request rate (requests per second)"
    )
    burst_profile = forms.CharField(
        max_length=200, required=False, help_text="How requests arrived (steady, bursts of 50…)."
    )
    peak_memory_gb = forms.FloatField(min_value=0, required=False, label="Peak memory (GB)")
    oom_rate = PercentField(
        min_share=Decimal(0), max_share=Decimal(1), required=False,
        label="Out-of-memory rate (%)", help_text="Requests that ran out of memory: 2 means 2 %.",
    )  # fmt: skip
    headroom_gb = forms.FloatField(min_value=0, required=False, label="Headroom (GB)")

    CONDITION_FIELDS = (
        "model", "precision", "framework", "framework_version", "input_tokens",
        "output_tokens", "concurrency", "request_rate", "burst_profile",
    )  # fmt: skip

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for key, name in FAILURE_OPS_CHECKS.items():
            self.fields[f"{key}_result"] = forms.ChoiceField(
                choices=_RESULT_CHOICES, required=False, label=name
            )
            self.fields[f"{key}_time_s"] = forms.FloatField(
                min_value=0, required=False, label="Time taken (s)"
            )
            self.fields[f"{key}_notes"] = forms.CharField(
                max_length=2000, required=False, label="Notes"
            )

    def check_rows(self) -> list[tuple[Any, Any, Any]]:
        return [
            (self[f"{key}_result"], self[f"{key}_time_s"], self[f"{key}_notes"])
            for key in FAILURE_OPS_CHECKS
        ]

    def conditions(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {k: data[k] for k in self.CONDITION_FIELDS if data.get(k) not in (None, "")}

    def results(self) -> dict[str, Any]:
        data = self.cleaned_data
        if data["phase"] == BenchmarkRun.Phase.MEMORY_FIT:
            # The OOM rate arrives as a share (a Decimal, from a percentage); the run stores floats.
            return {
                name: float(data[name]) if isinstance(data.get(name), Decimal) else data.get(name)
                for name in MEMORY_FIT_FIELDS
            }
        checks = {}
        for key in FAILURE_OPS_CHECKS:
            result = data.get(f"{key}_result")
            if result:
                checks[key] = {
                    "passed": result == "pass",
                    "time_s": data.get(f"{key}_time_s"),
                    "notes": data.get(f"{key}_notes") or "",
                }
        return {"checks": checks}

    def error_names(self) -> dict[str, str]:
        """Service error keys -> this form's fields."""
        names = {f"results.{n}": n for n in MEMORY_FIT_FIELDS}
        names.update({f"conditions.{n}": n for n in self.CONDITION_FIELDS})
        for key in FAILURE_OPS_CHECKS:
            names[f"results.checks.{key}.time_s"] = f"{key}_time_s"
            names[f"results.checks.{key}.notes"] = f"{key}_notes"
        return names
