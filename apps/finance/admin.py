from django.contrib import admin

from .models import CandidateRow, CandidateTable, FinanceAssumptions


@admin.register(FinanceAssumptions)
class FinanceAssumptionsAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("__str__", "reporting_currency", "labour_rate_per_hour", "version")
    list_select_related = ("brief",)


class CandidateRowInline(admin.TabularInline):  # type: ignore[type-arg]
    model = CandidateRow
    extra = 0
    can_delete = False
    fields = ("candidate_kind", "quote", "api_route", "monthly_cost", "effective_unit_cost")
    readonly_fields = fields


@admin.register(CandidateTable)
class CandidateTableAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("brief", "computed_at", "computed_version", "requested_version")
    list_select_related = ("brief",)
    readonly_fields = (
        "computed_at", "computed_version", "requested_version", "queued_at", "engine_version",
    )  # fmt: skip
    inlines = (CandidateRowInline,)


@admin.register(CandidateRow)
class CandidateRowAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("table", "candidate_kind", "effective_unit_cost", "meets_constraints")
    list_select_related = ("table__brief",)
