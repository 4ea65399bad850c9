from django.contrib import admin

from .models import Approval, AuditEvent, ChecklistAnswer, DecisionRecord


class ApprovalInline(admin.TabularInline):  # type: ignore[type-arg]
    model = Approval
    extra = 0
    can_delete = False
    readonly_fields = ("role", "user", "verdict", "reason", "created_at")


@admin.register(DecisionRecord)
class DecisionRecordAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("title", "brief", "status", "capacity_model", "content_hash", "updated_at")
    list_filter = ("status", "capacity_model")
    list_select_related = ("brief",)
    readonly_fields = (
        "status", "snapshot", "content_hash", "engine_version", "frozen_at", "submitted_by",
        "submitted_as", "superseded_by", "replaces", "brief", "team", "chosen_quote",
        "chosen_api_route", "created_by",
    )  # fmt: skip
    inlines = (ApprovalInline,)

    # Records change through the workflow (services), never by hand once they leave DRAFT;
    # the database refuses it too.
    def has_change_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return obj is None or obj.status == DecisionRecord.Status.DRAFT

    def has_delete_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return obj is not None and obj.status == DecisionRecord.Status.DRAFT

    def has_add_permission(self, request):  # type: ignore[no-untyped-def]
        return False  # open records from a brief's candidate table, so evidence is frozen


@admin.register(Approval)
class ApprovalAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("record", "role", "verdict", "user", "created_at")
    list_select_related = ("record", "user")

    def has_add_permission(self, request):  # type: ignore[no-untyped-def]
        return False

    def has_change_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False

    def has_delete_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False


@admin.register(ChecklistAnswer)
class ChecklistAnswerAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("quote", "system", "team", "question", "answer", "answered_by", "updated_at")
    list_select_related = ("quote", "system", "team", "answered_by")
    list_filter = ("team",)


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Read-only: the trail is append-only."""

    list_display = ("record", "action", "from_status", "to_status", "actor", "created_at")
    list_select_related = ("record", "actor")

    def has_add_permission(self, request):  # type: ignore[no-untyped-def]
        return False

    def has_change_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False

    def has_delete_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False
