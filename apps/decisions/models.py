from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.briefs.models import WorkloadBrief
from apps.core.models import BaseModel, Team
from apps.core.roles import Role
from apps.quotes.models import ApiRoute, Quote


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

    class CapacityModel(models.TextChoices):
        RENT_ON_DEMAND = "RENT_ON_DEMAND", "Rent on demand"
        RENT_SPOT = "RENT_SPOT", "Rent spot"
        RESERVE_1Y = "RESERVE_1Y", "Reserve 1 year"
        RESERVE_3Y = "RESERVE_3Y", "Reserve 3 years"
        BUY = "BUY", "Buy"
        API = "API", "Model / API route"

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

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=~(Q(chosen_quote__isnull=False) & Q(chosen_api_route__isnull=False)),
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


class Approval(BaseModel):
    class Verdict(models.TextChoices):
        APPROVE = "APPROVE"
        REJECT = "REJECT"

    record = models.ForeignKey(DecisionRecord, on_delete=models.PROTECT, related_name="approvals")
    role = models.CharField(max_length=16, choices=Role.choices)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    verdict = models.CharField(max_length=8, choices=Verdict.choices)
    reason = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["record", "role"], name="one_verdict_per_role"),
            models.CheckConstraint(
                condition=Q(verdict="APPROVE") | ~Q(reason=""), name="rejection_needs_reason"
            ),
        ]


class AuditEvent(models.Model):
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
