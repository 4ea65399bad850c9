from django.contrib import admin

from .models import ApiRoute, Provider, Quote


@admin.register(Provider)
class ProviderAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("name", "website")
    search_fields = ("name",)


@admin.register(Quote)
class QuoteAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = (
        "provider", "gpu", "system", "pricing_term", "hourly_price_per_gpu", "currency",
        "quote_date", "valid_until", "retired",
    )  # fmt: skip
    list_filter = ("pricing_term", "currency", "retired", "provider")
    list_select_related = ("provider", "gpu", "system")
    readonly_fields = ("version",)

    def has_delete_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False  # quotes are retired, never deleted: decision records cite them


@admin.register(ApiRoute)
class ApiRouteAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("provider", "model", "input_price_per_mtok", "output_price_per_mtok", "retired")
    list_filter = ("retired", "provider")
    list_select_related = ("provider",)
    readonly_fields = ("version",)

    def has_delete_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False
