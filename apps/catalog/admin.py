from django.contrib import admin

from .models import Gpu, GpuSystem, ModelPreset


@admin.register(Gpu)
class GpuAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("slug", "name", "vendor", "memory_gb", "memory_bandwidth_tbps", "checked_date")
    list_filter = ("vendor", "architecture", "form_factor")
    search_fields = ("slug", "name")


@admin.register(GpuSystem)
class GpuSystemAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("slug", "name", "gpu", "gpus_per_node", "gpus_per_domain", "fabric")
    list_select_related = ("gpu",)


@admin.register(ModelPreset)
class ModelPresetAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("slug", "name", "kind", "params_billion", "active_params_billion")
    list_filter = ("kind",)
    search_fields = ("slug", "name")
