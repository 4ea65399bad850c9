"""The finance admin: assumptions are edited here by an administrator; candidate tables and
their rows are computed (apps.finance.services), so the admin shows them read-only (no add,
change or delete) with their figures as the pages write them (apps.core.formatting): money
with its currency, unit costs in the table's unit at 4 significant figures."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from apps.core import formatting

from .models import CandidateRow, CandidateTable, FinanceAssumptions
from .units import unit_for


@admin.register(FinanceAssumptions)
class FinanceAssumptionsAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("__str__", "reporting_currency", "labour_rate_per_hour", "version")
    list_select_related = ("brief",)


class ComputedReadOnly:
    """No add, change or delete: the rows are the recompute's, never typed in."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _unit_cost(row: CandidateRow) -> str:
    unit = unit_for(row.table.success_unit)
    if row.effective_unit_cost is None:
        return "—"
    scale = unit.scale if unit else 1
    words = unit.label if unit else "per accepted output"
    return f"{formatting.unit_cost(row.effective_unit_cost * scale, row.table.currency)} {words}"


def _monthly(row: CandidateRow) -> str:
    return formatting.money(row.monthly_cost, row.table.currency)


def _candidate(row: CandidateRow) -> str:
    if row.quote_id:
        return str(row.quote)
    if row.api_route_id:
        return str(row.api_route)
    return formatting.label(row.candidate_kind, "CandidateRow.Kind")


class CandidateRowInline(ComputedReadOnly, admin.TabularInline):  # type: ignore[type-arg]
    model = CandidateRow
    extra = 0
    max_num = 0
    fields = ("candidate", "unit_cost", "monthly", "meets_constraints")
    readonly_fields = fields

    @admin.display(description="Candidate")
    def candidate(self, row: CandidateRow) -> str:
        return _candidate(row)

    @admin.display(description="Unit cost")
    def unit_cost(self, row: CandidateRow) -> str:
        return _unit_cost(row)

    @admin.display(description="Monthly cost")
    def monthly(self, row: CandidateRow) -> str:
        return _monthly(row)


@admin.register(CandidateTable)
class CandidateTableAdmin(ComputedReadOnly, admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("brief", "computed_at", "computed_version", "requested_version")
    list_select_related = ("brief",)
    readonly_fields = (
        "computed_at", "computed_version", "requested_version", "queued_at", "engine_version",
    )  # fmt: skip
    inlines = (CandidateRowInline,)


@admin.register(CandidateRow)
class CandidateRowAdmin(ComputedReadOnly, admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("candidate", "brief", "unit_cost", "monthly", "meets_constraints", "basis")
    list_select_related = ("table__brief", "quote__provider", "quote__gpu", "api_route__provider")
    list_filter = ("candidate_kind", "meets_constraints", "basis")
    fields = (
        "brief", "candidate", "candidate_kind", "unit_cost", "monthly", "meets_constraints",
        "basis", "gpu_count", "replicas", "pricing_term", "layout",
    )  # fmt: skip
    readonly_fields = fields

    @admin.display(description="Brief")
    def brief(self, row: CandidateRow) -> str:
        return str(row.table.brief)

    @admin.display(description="Candidate")
    def candidate(self, row: CandidateRow) -> str:
        return _candidate(row)

    @admin.display(description="Unit cost", ordering="effective_unit_cost")
    def unit_cost(self, row: CandidateRow) -> str:
        return _unit_cost(row)

    @admin.display(description="Monthly cost", ordering="monthly_cost")
    def monthly(self, row: CandidateRow) -> str:
        return _monthly(row)
