from django.contrib import admin

from .models import WorkloadBrief


@admin.register(WorkloadBrief)
class WorkloadBriefAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("name", "team", "workload_type", "model_preset", "updated_at")
    list_filter = ("workload_type", "team")
    list_select_related = ("team",)
    search_fields = ("name", "model_preset")
    readonly_fields = ("inputs_version", "created_at", "updated_at")
