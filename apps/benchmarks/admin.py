from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from .models import BenchmarkRun


@admin.register(BenchmarkRun)
class BenchmarkRunAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Read-only: runs are never edited after import (a newer run supersedes them), and they
    are created through the services so that their estimate and the recompute happen."""

    list_display = (
        "id",
        "brief",
        "gpu",
        "gpu_count",
        "phase",
        "tool",
        "superseded_by",
        "created_at",
    )
    list_filter = ("phase", "tool")
    list_select_related = ("brief", "gpu")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
