from django.contrib import admin

from .models import BenchmarkRun


@admin.register(BenchmarkRun)
class BenchmarkRunAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("id", "brief", "gpu", "gpu_count", "phase", "tool", "created_at")
    list_filter = ("phase", "tool")
    list_select_related = ("brief", "gpu")
    readonly_fields = ("raw_sha256", "created_at", "updated_at")
