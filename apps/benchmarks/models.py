from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.briefs.models import WorkloadBrief
from apps.catalog.models import Gpu, GpuSystem
from apps.core.choices import register
from apps.core.files import DOWNLOAD_NAME_MAX_CHARS, RandomName, download_filename
from apps.core.models import BaseModel, Team
from apps.quotes.models import Quote


class BenchmarkRun(BaseModel):
    """One measured candidate. Never edited after import; a newer run supersedes it."""

    class Phase(models.TextChoices):
        MEMORY_FIT = "MEMORY_FIT", "Phase 1: memory fit"
        THROUGHPUT_LATENCY = "THROUGHPUT_LATENCY", "Phase 2: throughput and latency"
        FAILURE_OPS = "FAILURE_OPS", "Phase 3: failure and operations"

    class Tool(models.TextChoices):
        MANUAL = "MANUAL", "Entered by hand"
        VLLM = "VLLM", "vllm bench serve"
        GUIDELLM = "GUIDELLM", "GuideLLM"
        AIPERF = "AIPERF", "AIPerf"
        GENAI_PERF = "GENAI_PERF", "GenAI-Perf"
        LLMPERF = "LLMPERF", "llmperf"
        INFERENCE_PERF = "INFERENCE_PERF", "llm-d Benchmark Report (inference-perf)"
        MLPERF_ENDPOINTS = "MLPERF_ENDPOINTS", "MLPerf Endpoints"
        TRTLLM_BENCH = "TRTLLM_BENCH", "trtllm-bench"
        SGLANG_BENCH = "SGLANG_BENCH", "SGLang bench_serving"

    brief = models.ForeignKey(
        WorkloadBrief, on_delete=models.PROTECT, related_name="benchmark_runs"
    )
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="benchmark_runs")
    gpu = models.ForeignKey(Gpu, on_delete=models.PROTECT, related_name="benchmark_runs")
    gpu_count = models.PositiveSmallIntegerField()
    quote = models.ForeignKey(
        Quote, on_delete=models.PROTECT, null=True, blank=True, related_name="benchmark_runs"
    )
    system = models.ForeignKey(
        GpuSystem, on_delete=models.PROTECT, null=True, blank=True, related_name="benchmark_runs"
    )
    phase = models.CharField(max_length=20, choices=Phase.choices)
    tool = models.CharField(max_length=20, choices=Tool.choices, default=Tool.MANUAL)
    tool_version = models.CharField(max_length=40, blank=True)
    label = models.CharField(max_length=200, blank=True)
    model = models.CharField(
        max_length=200,
        blank=True,
        help_text="The model the run belongs to: the brief's preset slug, or its config's "
        "normalised name (apps.benchmarks.model_identity). It measures and calibrates only it.",
    )
    model_named = models.CharField(
        max_length=200,
        blank=True,
        help_text="The model as the results file (or the import's model field) names it.",
    )
    proxy = models.BooleanField(
        default=False,
        help_text="Imported as the closest proxy of the brief's model (another model): it "
        "calibrates only the brief that imported it and is never its measurement.",
    )
    weight_precision = models.CharField(
        max_length=16,
        blank=True,
        help_text="The brief's weight precision when the run was imported ('' if unknown).",
    )
    conditions = models.JSONField(default=dict, blank=True)
    results = models.JSONField(default=dict, blank=True)
    source_names = models.JSONField(
        default=dict,
        blank=True,
        help_text="Each canonical figure -> the tool's own field and unit.",
    )
    estimate_at_import = models.JSONField(
        default=dict,
        blank=True,
        help_text="What the engine predicted for the same conditions when the run was imported.",
    )
    # Private: stored under a random name, served only by the raw-file views (team-checked).
    raw_file = models.FileField(upload_to=RandomName("benchmark-runs"), blank=True)
    raw_filename = models.CharField(
        max_length=DOWNLOAD_NAME_MAX_CHARS,
        blank=True,
        help_text="The name as uploaded (sanitised), which its download is offered under.",
    )
    raw_sha256 = models.CharField(max_length=64, blank=True)
    results_sha256 = models.CharField(
        max_length=64,
        blank=True,
        help_text="SHA-256 of the imported figures (apps.benchmarks.importers.results_fingerprint):"
        " the same run in another file is found by it ('' for a run entered by hand).",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    superseded_by = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="supersedes"
    )

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(gpu_count__gte=1), name="run_gpu_count_positive"),
            models.UniqueConstraint(
                fields=["brief", "gpu", "gpu_count", "raw_sha256", "label"],
                condition=~Q(raw_sha256=""),
                name="run_same_file_imported_once_per_candidate",
            ),
        ]
        indexes = [
            # The duplicate check of an import: a team's runs with the same figures.
            models.Index(fields=["team", "results_sha256"], name="run_team_results_sha256"),
        ]

    def __str__(self) -> str:
        return f"{self.get_phase_display()} · {self.gpu_count}x {self.gpu}"

    @property
    def raw_download_name(self) -> str:
        """The uploaded name; for a file stored before names were kept, its stored name's."""
        return self.raw_filename or download_filename(self.raw_file.name, default="result.json")


register(BenchmarkRun.Phase, name="BenchmarkRun.Phase")
register(BenchmarkRun.Tool, name="BenchmarkRun.Tool")
