"""Reads of the catalog, and the one place catalog rows become engine inputs."""

from django.db.models import QuerySet

from apps.engine import GpuSpec

from .models import Gpu, GpuSystem


def gpu_list(*, vendor: str | None = None) -> QuerySet[Gpu]:
    qs = Gpu.objects.order_by("vendor", "-memory_gb", "slug")
    if vendor:
        qs = qs.filter(vendor__iexact=vendor)
    return qs


def system_list_for_gpu(gpu: Gpu) -> QuerySet[GpuSystem]:
    return GpuSystem.objects.filter(gpu=gpu).order_by("slug")


def gpu_spec_from_row(gpu: Gpu) -> GpuSpec:
    def opt(value: object) -> float | None:
        return float(value) if value is not None else None  # type: ignore[arg-type]

    return GpuSpec(
        slug=gpu.slug,
        name=gpu.name,
        vendor=gpu.vendor,
        form_factor=gpu.form_factor,
        memory_gb=float(gpu.memory_gb),
        memory_bandwidth_tbps=float(gpu.memory_bandwidth_tbps),
        bf16_tflops=float(gpu.bf16_dense_tflops),
        fp8_tflops=opt(gpu.fp8_dense_tflops),
        fp4_tflops=opt(gpu.fp4_dense_tflops),
        int8_tops=opt(gpu.int8_dense_tops),
        tdp_w=float(gpu.tdp_w),
        interconnect=gpu.interconnect,
        interconnect_gbps=float(gpu.interconnect_gbps_bidirectional),
        max_gpus_per_node=gpu.max_gpus_per_node,
        architecture=gpu.architecture,
    )


def gpu_specs() -> tuple[GpuSpec, ...]:
    """Every catalog GPU as the engine sees it."""
    return tuple(gpu_spec_from_row(g) for g in Gpu.objects.order_by("slug"))
