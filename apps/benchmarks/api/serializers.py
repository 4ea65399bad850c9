from typing import Any

from django.urls import reverse
from rest_framework import serializers

from apps.benchmarks.importers import ImportFormatError, normalise_tool
from apps.benchmarks.manual import MIN_REQUEST_RATE
from apps.benchmarks.models import BenchmarkRun
from apps.catalog.models import Gpu, GpuSystem
from apps.core import json_guard
from apps.core.api import FreeFormJson, StrictJsonTypes
from apps.engine.constants import MAX_GPU_COUNT, MAX_REPORTED_CONCURRENCY
from apps.quotes.models import Quote
from apps.quotes.selectors import quote_list_for_user

# error_messages as the stubs type them (str or lazy str values).
_GPU_ERRORS: dict[str, Any] = {"does_not_exist": "no GPU '{value}' in the catalog"}
_SYSTEM_ERRORS: dict[str, Any] = {"does_not_exist": "no system '{value}' in the catalog"}
_QUOTE_ERRORS: dict[str, Any] = {"does_not_exist": "no quote #{pk_value}"}
MANUAL_PHASES = (BenchmarkRun.Phase.MEMORY_FIT, BenchmarkRun.Phase.FAILURE_OPS)


class VisibleQuoteField(serializers.PrimaryKeyRelatedField):  # type: ignore[type-arg]
    """A quote the requesting user may see: another team's confidential quote is answered
    exactly like an id that does not exist, at the same step, so the answer does not tell
    whether it exists. Without a request in the context only public quotes are found."""

    queryset = Quote.objects.all()  # the model, for the schema; each lookup uses the one below

    def get_queryset(self) -> Any:
        request = self.context.get("request")
        if request is None:
            return Quote.objects.filter(confidential_to__isnull=True)
        return quote_list_for_user(request.user, include_retired=True)


class _CandidateFields(StrictJsonTypes, serializers.Serializer):  # type: ignore[type-arg]
    brief = serializers.IntegerField(min_value=1)
    gpu = serializers.SlugRelatedField(
        slug_field="slug", queryset=Gpu.objects.all(), error_messages=_GPU_ERRORS
    )
    gpu_count = serializers.IntegerField(min_value=1, max_value=MAX_GPU_COUNT)
    quote = VisibleQuoteField(required=False, allow_null=True, error_messages=_QUOTE_ERRORS)
    system = serializers.SlugRelatedField(
        slug_field="slug",
        queryset=GpuSystem.objects.select_related("gpu"),
        required=False,
        allow_null=True,
        error_messages=_SYSTEM_ERRORS,
    )


class ImportInputSerializer(_CandidateFields):
    """Multipart: the results file, the candidate it measured, optionally the tool's name and
    conditions the file does not record."""

    # The GPU and its count may be left out where the file says them (its facts win).
    gpu = serializers.SlugRelatedField(
        slug_field="slug", queryset=Gpu.objects.all(), error_messages=_GPU_ERRORS, required=False,
        help_text="The GPU the run was measured on; optional where the file names it (a form "
        "value that contradicts the file is a 400).",
    )  # fmt: skip
    gpu_count = serializers.IntegerField(
        min_value=1, max_value=MAX_GPU_COUNT, required=False,
        help_text="GPUs per replica; optional where the file says it.",
    )  # fmt: skip
    # A form has no null: leave the quote or the system out instead.
    quote = VisibleQuoteField(required=False, error_messages=_QUOTE_ERRORS)
    system = serializers.SlugRelatedField(
        slug_field="slug",
        queryset=GpuSystem.objects.select_related("gpu"),
        required=False,
        error_messages=_SYSTEM_ERRORS,
    )
    file = serializers.FileField()
    tool = serializers.CharField(required=False, allow_blank=True, max_length=40)
    model = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="The model benchmarked: required where the file names none, or where the "
        "brief names none (its model given as numbers).",
    )
    proxy = serializers.BooleanField(
        required=False,
        default=False,
        help_text="true: the file's model is not the brief's but its closest proxy. The run "
        "then calibrates this brief only and never makes a row MEASURED. Without it a file of "
        "another model is refused (400 naming model).",
    )
    precision = serializers.CharField(required=False, allow_blank=True, max_length=40)
    framework = serializers.CharField(required=False, allow_blank=True, max_length=80)
    framework_version = serializers.CharField(required=False, allow_blank=True, max_length=80)
    burst_profile = serializers.CharField(required=False, allow_blank=True, max_length=200)
    concurrency = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_REPORTED_CONCURRENCY,
        help_text="Requests in flight the run was set to, where the file does not say it; a "
        "value that contradicts the file's is a 400 naming concurrency.",
    )  # fmt: skip
    request_rate = serializers.FloatField(
        required=False, min_value=MIN_REQUEST_RATE,
        help_text="Requests per second the run was set to, where the file does not say it; a "
        "value that contradicts the file's is a 400 naming request_rate.",
    )  # fmt: skip

    CONDITION_FIELDS = (
        "model", "precision", "framework", "framework_version", "burst_profile", "concurrency",
        "request_rate",
    )  # fmt: skip

    def validate_tool(self, value: str) -> str:
        if not value.strip():
            return ""
        try:
            return normalise_tool(value)
        except ImportFormatError as exc:
            raise serializers.ValidationError(exc.message) from exc


class ManualRunInputSerializer(_CandidateFields):
    """JSON: a Phase 1 or Phase 3 run entered by hand (results checked per phase)."""

    phase = serializers.ChoiceField(choices=[(p.value, p.label) for p in MANUAL_PHASES])
    label = serializers.CharField(  # type: ignore[assignment]  # a field named like Field.label
        required=False, allow_blank=True, max_length=200
    )
    conditions = serializers.JSONField(
        required=False, validators=[FreeFormJson(json_guard.BENCHMARK_CONDITIONS_LIMIT)]
    )
    results = serializers.JSONField(validators=[FreeFormJson(json_guard.BENCHMARK_RESULTS_LIMIT)])


class BenchmarkRunOutputSerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    gpu = serializers.SlugRelatedField(slug_field="slug", read_only=True)  # type: ignore[var-annotated]
    system = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)  # type: ignore[var-annotated]
    raw_file_url = serializers.SerializerMethodField(
        help_text="Where to download the results file as imported (token or session); null if "
        "the run was entered by hand"
    )

    class Meta:
        model = BenchmarkRun
        fields = [
            "id", "brief", "gpu", "gpu_count", "quote", "system", "phase", "model",
            "model_named", "proxy", "weight_precision", "tool",
            "tool_version", "label", "conditions", "results", "source_names",
            "estimate_at_import", "raw_sha256", "raw_file_url", "superseded_by", "created_by",
            "created_at",
        ]  # fmt: skip
        read_only_fields = fields

    def get_raw_file_url(self, run: BenchmarkRun) -> str | None:
        if not run.raw_file:
            return None
        return reverse("api:benchmark-run-raw", args=[run.pk])  # token or session, team-checked


def import_output(runs: list[BenchmarkRun], *, duplicate: bool) -> Any:
    """One object for a file of one run, a list for a file of several; each says whether it
    was already imported."""
    data = [{**BenchmarkRunOutputSerializer(run).data, "duplicate": duplicate} for run in runs]
    return data[0] if len(data) == 1 else data
