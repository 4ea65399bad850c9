from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from apps.benchmarks import charts
from apps.benchmarks.selectors import (
    benchmark_run_list_for_user,
    calibration_for_gpu_page,
    comparison_rows,
)

from .models import Gpu
from .selectors import gpu_list, system_list_for_gpu


@login_required
def gpu_list_page(request: HttpRequest) -> HttpResponse:
    vendor = request.GET.get("vendor") or None
    gpus = list(gpu_list(vendor=vendor))
    vendors = sorted(Gpu.objects.values_list("vendor", flat=True).distinct())
    return render(
        request, "catalog/gpu_list.html", {"gpus": gpus, "vendors": vendors, "vendor": vendor}
    )


@login_required
def gpu_detail_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The datasheet, the systems built on it, and how its benchmark runs (of the user's
    teams) compare with the engine's estimates, with the calibration they imply."""
    gpu = get_object_or_404(Gpu, slug=slug)
    systems = list(system_list_for_gpu(gpu))
    runs = list(benchmark_run_list_for_user(request.user).filter(gpu=gpu))
    return render(
        request,
        "catalog/gpu_detail.html",
        {
            "gpu": gpu,
            "systems": systems,
            "figures": charts.run_figures(comparison_rows(runs)),
            "calibrations": calibration_for_gpu_page(request.user, gpu.slug),
        },
    )
