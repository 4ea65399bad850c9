from django.conf import settings
from django.core.files import File
from django.db import models
from django.db.models import Q

from apps.briefs.models import WorkloadBrief
from apps.catalog.models import GpuSystem
from apps.core.choices import register, text_choices
from apps.core.files import (
    DOWNLOAD_NAME_MAX_CHARS,
    RandomName,
    download_filename,
    file_size_and_sha256,
)
from apps.core.models import BaseModel, Team
from apps.core.roles import Role
from apps.engine.capacity_model import CapacityOption
from apps.finance.models import CandidateRow
from apps.finance.state import PLAN_KINDS
from apps.quotes.models import ApiRoute, Quote


class AppendOnlyError(Exception):
    """An attempt to change or delete an append-only row."""


class AppendOnlyQuerySet(models.QuerySet):  # type: ignore[type-arg]
    """Audit events and approvals are never updated or deleted (database triggers refuse it
    too; see migration 0002)."""

    def update(self, **kwargs: object) -> int:
        raise AppendOnlyError(f"{self.model.__name__} rows are append-only")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError(f"{self.model.__name__} rows are append-only")


class AppendOnlyModel(models.Model):
    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args: object, **kwargs: object) -> None:
        if not self._state.adding:
            raise AppendOnlyError(f"{type(self).__name__} rows are append-only")
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError(f"{type(self).__name__} rows are append-only")


class DecisionRecordQuerySet(models.QuerySet):  # type: ignore[type-arg]
    def delete(self) -> tuple[int, dict[str, int]]:
        if self.exclude(status="DRAFT").exists():
            raise AppendOnlyError("only a DRAFT decision record can be deleted")
        return super().delete()


def default_required_roles() -> list[str]:
    return [Role.PLATFORM.value, Role.FINANCE.value, Role.PROCUREMENT.value]


class DecisionRecord(BaseModel):
    """A GPU commitment with its evidence frozen, reviewed and approved by role."""

    class Status(models.TextChoices):
        DRAFT = "DRAFT"
        IN_REVIEW = "IN_REVIEW"
        APPROVED = "APPROVED"
        REJECTED = "REJECTED"
        SUPERSEDED = "SUPERSEDED"

    CapacityModel = text_choices(
        CapacityOption,
        {
            "RENT_ON_DEMAND": "Rent on demand",
            "RENT_SPOT": "Rent spot",
            "RESERVE_1Y": "Reserve 1 year",
            "RESERVE_3Y": "Reserve 3 years",
            "BUY": "Buy",
            "API": "Model / API route",
        },
        name="DecisionRecord.CapacityModel",
    )

    objects = DecisionRecordQuerySet.as_manager()

    brief = models.ForeignKey(WorkloadBrief, on_delete=models.PROTECT, related_name="decisions")
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="decisions")
    title = models.CharField(max_length=200)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.DRAFT)
    chosen_quote = models.ForeignKey(
        Quote, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    chosen_api_route = models.ForeignKey(
        ApiRoute, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # A serving plan of several quotes chosen as one candidate (its parts' quotes are frozen
    # with it): "MIX" or "DISAGG", blank for a quote or a route.
    chosen_plan = models.CharField(
        max_length=8,
        blank=True,
        choices=[(kind.value, CandidateRow.Kind(kind).label) for kind in PLAN_KINDS],
    )
    capacity_model = models.CharField(max_length=16, choices=CapacityModel.choices)
    rationale = models.TextField(blank=True)
    acceptance_criteria = models.JSONField(default=dict, blank=True)
    required_roles = models.JSONField(default=default_required_roles)
    snapshot = models.JSONField(default=dict, blank=True)
    content_hash = models.CharField(max_length=64, blank=True)
    engine_version = models.CharField(max_length=20, blank=True)
    frozen_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    submitted_as = models.CharField(max_length=16, choices=Role.choices, blank=True)
    superseded_by = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="supersedes"
    )
    replaces = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="replacements",
        help_text="The approved record this one will supersede once approved.",
    )
    alternatives = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=~(Q(chosen_quote__isnull=False) & Q(chosen_api_route__isnull=False))
                & ~(Q(chosen_quote__isnull=False) & ~Q(chosen_plan=""))
                & ~(Q(chosen_api_route__isnull=False) & ~Q(chosen_plan="")),
                name="decision_one_chosen_candidate",
            ),
            models.CheckConstraint(
                condition=Q(status="DRAFT") | ~Q(content_hash=""),
                name="decision_frozen_beyond_draft",
            ),
            models.CheckConstraint(
                condition=~Q(status="SUPERSEDED") | Q(superseded_by__isnull=False),
                name="decision_superseded_names_successor",
            ),
        ]

    def __str__(self) -> str:
        return self.title

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        if self.status != self.Status.DRAFT:
            raise AppendOnlyError("only a DRAFT decision record can be deleted")
        return super().delete(*args, **kwargs)  # type: ignore[arg-type]


class Approval(AppendOnlyModel):
    class Verdict(models.TextChoices):
        APPROVE = "APPROVE"
        REJECT = "REJECT"

    record = models.ForeignKey(DecisionRecord, on_delete=models.PROTECT, related_name="approvals")
    role = models.CharField(max_length=16, choices=Role.choices)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    verdict = models.CharField(max_length=8, choices=Verdict.choices)
    # The approver's comment, or why the record was rejected (required then).
    reason = models.TextField(blank=True)
    # The must-have checklist warnings this verdict was given over (question keys), each
    # acknowledged by the approver (apps.decisions.checklist.MUST_HAVE); null for none. (No
    # default: on SQLite a column with one rebuilds the table, which would drop its triggers.)
    acknowledged_warnings = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["record", "role"], name="one_verdict_per_role"),
            # One person is not a committee: whatever roles a user holds, they give one
            # verdict per record (services.decision_record_approve explains it in words).
            models.UniqueConstraint(fields=["record", "user"], name="one_verdict_per_user"),
            models.CheckConstraint(
                condition=Q(verdict="APPROVE") | ~Q(reason=""), name="rejection_needs_reason"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.role}: {self.verdict}"


class AuditEvent(AppendOnlyModel):
    """Append-only trail of every transition and approval of a decision record."""

    record = models.ForeignKey(
        DecisionRecord, on_delete=models.PROTECT, related_name="audit_events"
    )
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    action = models.CharField(max_length=32)
    from_status = models.CharField(max_length=12, blank=True)
    to_status = models.CharField(max_length=12, blank=True)
    role = models.CharField(max_length=16, blank=True)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self) -> str:
        return f"{self.action} {self.from_status}→{self.to_status}"


#: The download name of an evidence file uploaded without a usable name.
DEFAULT_EVIDENCE_FILENAME = "evidence"


class ChecklistAnswer(BaseModel):
    """One team's procurement-checklist answer for a candidate (a quote, or a GPU system).
    Each team answers a public quote for itself: it reads and changes only its own answers
    and evidence files, and its decision records freeze only those."""

    class Answer(models.TextChoices):
        YES = "YES", "Yes"
        NO = "NO", "No"
        PARTIAL = "PARTIAL", "Partial"
        NOT_APPLICABLE = "NOT_APPLICABLE", "Not applicable"

    quote = models.ForeignKey(
        Quote, on_delete=models.PROTECT, null=True, blank=True, related_name="checklist_answers"
    )
    system = models.ForeignKey(
        GpuSystem, on_delete=models.PROTECT, null=True, blank=True, related_name="checklist_answers"
    )
    question = models.CharField(max_length=40)
    answer = models.CharField(max_length=16, choices=Answer.choices)
    evidence_text = models.TextField(blank=True)
    evidence_link = models.URLField(blank=True)
    # Private: stored under a random name, served only by the evidence views (quote-checked).
    evidence_file = models.FileField(upload_to=RandomName("checklist-evidence"), blank=True)
    evidence_filename = models.CharField(
        max_length=DOWNLOAD_NAME_MAX_CHARS,
        blank=True,
        help_text="The name as uploaded (sanitised), which its download is offered under.",
    )
    # What the record and the PDF say of the file: its size and SHA-256, taken as it is stored
    # (files stored before these fields: worked out when a record freezes them).
    evidence_bytes = models.PositiveBigIntegerField(null=True, blank=True)
    evidence_sha256 = models.CharField(max_length=64, blank=True)
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    team = models.ForeignKey(
        Team,
        on_delete=models.PROTECT,
        related_name="checklist_answers",
        help_text="The team whose answer this is; only its members read or change it.",
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(Q(quote__isnull=False) & Q(system__isnull=True))
                | (Q(quote__isnull=True) & Q(system__isnull=False)),
                name="checklist_quote_xor_system",
            ),
            models.UniqueConstraint(
                fields=["quote", "question", "team"],
                condition=Q(quote__isnull=False),
                name="checklist_one_answer_per_team_quote_question",
            ),
            models.UniqueConstraint(
                fields=["system", "question", "team"],
                condition=Q(system__isnull=False),
                name="checklist_one_answer_per_team_system_question",
            ),
        ]

    def evidence_file_attach(self, upload: File) -> None:
        """Attach an uploaded file: stored under a random name (upload_to), its uploaded name
        kept, sanitised, for the download."""
        self.evidence_file = upload
        self.evidence_filename = download_filename(upload.name, default=DEFAULT_EVIDENCE_FILENAME)
        self.evidence_bytes, self.evidence_sha256 = file_size_and_sha256(upload)

    @property
    def evidence_download_name(self) -> str:
        """The uploaded name; for a file stored before names were kept, its stored name's."""
        return self.evidence_filename or download_filename(
            self.evidence_file.name, default=DEFAULT_EVIDENCE_FILENAME
        )


# The words a person reads for the record's own vocabularies (apps.core.choices' registry; the
# model choices stay as migrated). An audit event's action is a code the services write.
register(
    DecisionRecord.Status,
    {
        "DRAFT": "Draft",
        "IN_REVIEW": "In review",
        "APPROVED": "Approved",
        "REJECTED": "Rejected",
        "SUPERSEDED": "Superseded",
    },
    name="DecisionRecord.Status",
)
register(Approval.Verdict, {"APPROVE": "Approved", "REJECT": "Rejected"}, name="Approval.Verdict")
register(ChecklistAnswer.Answer, name="ChecklistAnswer.Answer")


class AuditAction(models.TextChoices):
    """What an audit event records (AuditEvent.action), in words."""

    CREATE = "CREATE", "Opened"
    EDIT = "EDIT", "Edited"
    REFRESH = "REFRESH", "Evidence refreshed"
    SUBMIT = "SUBMIT", "Submitted for review"
    APPROVE = "APPROVE", "Approved for a role"
    APPROVED = "APPROVED", "Approved by every role"
    REJECT = "REJECT", "Rejected"
    SUPERSEDE_OPENED = "SUPERSEDE_OPENED", "Successor draft opened"
    SUPERSEDED = "SUPERSEDED", "Superseded"


register(AuditAction, name="AuditEvent.Action")
