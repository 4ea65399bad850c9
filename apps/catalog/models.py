from django.core.validators import MaxValueValidator
from django.db import models
from django.db.models import Q

from apps.core.choices import register, text_choices
from apps.core.models import BaseModel
from apps.engine import types as engine

#: Upper bound of ``Gpu.device_memory_mib``: 64 TiB, far above any GPU; explicit so validation
#: and the API schema are the same on SQLite and PostgreSQL.
MAX_DEVICE_MEMORY_MIB = 64 * 2**20


class Gpu(BaseModel):
    """One GPU model with its datasheet figures (dense, not sparse) and where they came from."""

    # The architectures' names as their vendors write them (NVIDIA: "NVIDIA Volta / Turing /
    # Ampere / Ada Lovelace / Hopper / Blackwell / Blackwell Ultra architecture"; AMD: "AMD CDNA 3
    # / CDNA 4 architecture", the Instinct MI300 and MI350 series white papers).
    Architecture = text_choices(
        engine.Architecture,
        {
            "VOLTA": "Volta",
            "TURING": "Turing",
            "AMPERE": "Ampere",
            "ADA": "Ada Lovelace",
            "HOPPER": "Hopper",
            "BLACKWELL": "Blackwell",
            "BLACKWELL_ULTRA": "Blackwell Ultra",
            "CDNA3": "CDNA 3",
            "CDNA4": "CDNA 4",
        },
        name="Gpu.Architecture",
    )

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=120)
    vendor = models.CharField(max_length=40, db_index=True)
    form_factor = models.CharField(max_length=40)
    architecture = models.CharField(max_length=16, choices=Architecture.choices)
    memory_gb = models.DecimalField(max_digits=7, decimal_places=2)
    # Total memory the driver reports (nvidia-smi / amd-smi "Total", MiB = 2**20 bytes); null
    # where no measured figure is on file. The engine sizes against this when it is known.
    device_memory_mib = models.PositiveIntegerField(
        null=True, blank=True, validators=[MaxValueValidator(MAX_DEVICE_MEMORY_MIB)]
    )
    memory_type = models.CharField(max_length=20)
    memory_bandwidth_tbps = models.DecimalField(max_digits=6, decimal_places=3)
    bf16_dense_tflops = models.DecimalField(max_digits=8, decimal_places=2)
    fp8_dense_tflops = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True)
    fp4_dense_tflops = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True)
    int8_dense_tops = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True)
    # Explicit bounds keep validation and the API schema the same on SQLite and PostgreSQL.
    tdp_w = models.PositiveIntegerField(validators=[MaxValueValidator(100_000)])
    interconnect = models.CharField(max_length=60)
    interconnect_gbps_bidirectional = models.DecimalField(max_digits=7, decimal_places=1)
    max_gpus_per_node = models.PositiveSmallIntegerField(validators=[MaxValueValidator(4096)])
    source = models.CharField(max_length=300)
    checked_date = models.DateField()

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(memory_gb__gt=0), name="gpu_memory_positive"),
            models.CheckConstraint(
                condition=Q(memory_bandwidth_tbps__gt=0), name="gpu_bandwidth_positive"
            ),
            models.CheckConstraint(condition=Q(bf16_dense_tflops__gt=0), name="gpu_bf16_positive"),
            models.CheckConstraint(
                condition=Q(fp8_dense_tflops__isnull=True) | Q(fp8_dense_tflops__gt=0),
                name="gpu_fp8_positive_or_null",
            ),
            models.CheckConstraint(
                condition=Q(fp4_dense_tflops__isnull=True) | Q(fp4_dense_tflops__gt=0),
                name="gpu_fp4_positive_or_null",
            ),
            models.CheckConstraint(
                condition=Q(max_gpus_per_node__gte=1), name="gpu_per_node_at_least_one"
            ),
            models.CheckConstraint(
                condition=Q(device_memory_mib__isnull=True) | Q(device_memory_mib__gt=0),
                name="gpu_device_memory_positive_or_null",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class GpuSystem(BaseModel):
    """A node or rack shape built from one GPU model: 8x H100 HGX, GB200 NVL72."""

    class Scale(models.TextChoices):
        NODE = "NODE", "Node"
        RACK = "RACK", "Rack-scale domain"

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=120)
    gpu = models.ForeignKey(Gpu, on_delete=models.PROTECT, related_name="systems")
    scale = models.CharField(max_length=8, choices=Scale.choices)
    gpus_per_node = models.PositiveSmallIntegerField()
    gpus_per_domain = models.PositiveSmallIntegerField(
        help_text="GPUs that share one high-bandwidth (NVLink / Infinity Fabric) domain."
    )
    fabric = models.CharField(max_length=120)
    fabric_gbps_per_gpu = models.DecimalField(max_digits=7, decimal_places=1)
    scale_out_network = models.CharField(max_length=120, blank=True)
    source = models.CharField(max_length=300)
    checked_date = models.DateField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(gpus_per_node__gte=1), name="system_gpus_per_node_positive"
            ),
            models.CheckConstraint(
                condition=Q(gpus_per_domain__gte=1), name="system_gpus_per_domain_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class ModelPreset(BaseModel):
    """A known model architecture: the numbers the engine needs to size it."""

    Kind = text_choices(
        engine.ModelKind,
        {
            "DECODER": "Decoder LLM",
            "ENCODER": "Encoder (embeddings)",
            "DIFFUSION": "Diffusion (image / video)",
        },
        name="ModelPreset.Kind",
    )

    # Common names keep their dots (llama-3.1-8b), so this is not a SlugField.
    slug = models.CharField(max_length=64, unique=True)
    name = models.CharField(max_length=120)
    kind = models.CharField(max_length=12, choices=Kind.choices)
    params_billion = models.DecimalField(max_digits=9, decimal_places=3)
    active_params_billion = models.DecimalField(max_digits=9, decimal_places=3)
    layers = models.PositiveIntegerField(null=True, blank=True)
    hidden_size = models.PositiveIntegerField(null=True, blank=True)
    attention_heads = models.PositiveIntegerField(null=True, blank=True)
    kv_heads = models.PositiveIntegerField(null=True, blank=True)
    head_dim = models.PositiveIntegerField(null=True, blank=True)
    vocab_size = models.PositiveIntegerField(null=True, blank=True)
    intermediate_size = models.PositiveIntegerField(null=True, blank=True)
    experts = models.PositiveIntegerField(default=1)
    active_experts = models.PositiveIntegerField(default=1)
    source = models.CharField(max_length=300, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(params_billion__gt=0), name="preset_params_positive"
            ),
            models.CheckConstraint(
                condition=Q(active_params_billion__gt=0)
                & Q(active_params_billion__lte=models.F("params_billion")),
                name="preset_active_within_total",
            ),
            models.CheckConstraint(
                condition=Q(active_experts__gte=1) & Q(active_experts__lte=models.F("experts")),
                name="preset_active_experts_within_experts",
            ),
        ]

    def __str__(self) -> str:
        return self.name


register(GpuSystem.Scale, name="GpuSystem.Scale")
