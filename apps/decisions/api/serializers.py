from typing import Any

from rest_framework import serializers

from apps.core import json_guard
from apps.core.api import FreeFormJson, StrictJsonTypes
from apps.core.roles import DECISION_AUTHORS, Role
from apps.decisions.checklist import QUESTION_KEYS
from apps.decisions.models import ChecklistAnswer, DecisionRecord
from apps.decisions.selectors import (
    alternatives_described,
    approvals_for_record,
    audit_trail_for_record,
    chosen_candidate,
    inputs_changed,
    snapshot_summary,
)
from apps.finance.models import CandidateRow
from apps.finance.state import PLAN_KINDS

DECIDING_ROLES = [r.value for r in DECISION_AUTHORS]

# The plan kinds a record may choose (DecisionRecord.chosen_plan; CandidateRow.Kind names them).
PLAN_CHOICES = [(kind.value, CandidateRow.Kind(kind).label) for kind in PLAN_KINDS]


class AlternativeSerializer(StrictJsonTypes, serializers.Serializer):  # type: ignore[type-arg]
    """One alternative considered: a quote or an API route (exactly one)."""

    quote_id = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    api_route_id = serializers.IntegerField(required=False, allow_null=True, min_value=1)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        quote_id, route_id = attrs.get("quote_id"), attrs.get("api_route_id")
        if (quote_id is None) == (route_id is None):
            raise serializers.ValidationError("give one of quote_id or api_route_id")
        return {"quote_id": quote_id, "api_route_id": route_id}


class DecisionRecordEditSerializer(StrictJsonTypes, serializers.Serializer):  # type: ignore[type-arg]
    title = serializers.CharField(max_length=200, required=False, allow_blank=True)
    rationale = serializers.CharField(required=False, allow_blank=True)
    capacity_model = serializers.ChoiceField(
        choices=DecisionRecord.CapacityModel.choices, required=False
    )
    alternatives = AlternativeSerializer(many=True, required=False)
    acceptance_criteria = serializers.DictField(
        required=False, validators=[FreeFormJson(json_guard.ACCEPTANCE_CRITERIA_LIMIT)]
    )
    required_roles = serializers.ListField(
        child=serializers.CharField(), required=False, allow_empty=False
    )


class DecisionRecordCreateSerializer(DecisionRecordEditSerializer):
    brief = serializers.IntegerField(min_value=1)
    chosen_quote = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    chosen_api_route = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    chosen_plan = serializers.ChoiceField(
        choices=PLAN_CHOICES,
        required=False,
        allow_blank=True,
        help_text="A serving plan of the brief's table (its parts' quotes are frozen with it).",
    )
    capacity_model = serializers.ChoiceField(choices=DecisionRecord.CapacityModel.choices)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        given = [
            attrs.get("chosen_quote") is not None,
            attrs.get("chosen_api_route") is not None,
            bool(attrs.get("chosen_plan")),
        ]
        if sum(given) != 1:
            raise serializers.ValidationError(
                {
                    "chosen_quote": "choose exactly one candidate: chosen_quote, chosen_api_route "
                    "or chosen_plan"
                }
            )
        return attrs


class SubmitSerializer(StrictJsonTypes, serializers.Serializer):  # type: ignore[type-arg]
    role = serializers.ChoiceField(choices=DECIDING_ROLES, required=False)


class VerdictRoleSerializer(StrictJsonTypes, serializers.Serializer):  # type: ignore[type-arg]
    role = serializers.ChoiceField(choices=DECIDING_ROLES)


class ApproveSerializer(VerdictRoleSerializer):
    comment = serializers.CharField(
        allow_blank=True,
        default="",
        help_text="The approver's comment, kept with the verdict and shown on the record and "
        "its PDF; required when acknowledge_warnings is needed.",
    )
    acknowledge_warnings = serializers.BooleanField(
        default=False,
        help_text="Approve over the record's checklist warnings (a must-have question answered "
        "No or Partial: security certifications, data residency, SLA). Without it such a "
        "record is refused with a 400 naming this field.",
    )


class RejectSerializer(VerdictRoleSerializer):
    reason = serializers.CharField(allow_blank=True, default="")


class DecisionRecordOutputSerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    brief_name = serializers.CharField(source="brief.name", read_only=True)
    team = serializers.CharField(source="team.slug", read_only=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True)
    submitted_by = serializers.SerializerMethodField()
    chosen = serializers.SerializerMethodField()
    chosen_plan = serializers.ChoiceField(
        choices=PLAN_CHOICES,
        allow_blank=True,
        read_only=True,
        help_text="The serving plan chosen (MIX or DISAGG); blank for a quote or an API route.",
    )
    submitted_as = serializers.ChoiceField(
        choices=Role.choices,  # DecisionRecord.submitted_as
        allow_blank=True,
        read_only=True,
        help_text="The role it was submitted in; blank until submitted.",
    )
    # Blank for a quote or a route: said so, so that the schema's enum holds "" too (the
    # in-process fuzz meets it once tables are recomputed after each case, issue 24).
    chosen_plan = serializers.ChoiceField(
        choices=list(DecisionRecord._meta.get_field("chosen_plan").choices or []),
        allow_blank=True,
        read_only=True,
        help_text="MIX or DISAGG when a serving plan is chosen; blank for a quote or a route.",
    )

    class Meta:
        model = DecisionRecord
        fields = [
            "id", "title", "status", "brief", "brief_name", "team", "chosen_quote",
            "chosen_api_route", "chosen_plan", "chosen", "capacity_model", "rationale",
            "alternatives",
            "acceptance_criteria", "required_roles", "content_hash", "engine_version",
            "frozen_at", "created_by", "submitted_by", "submitted_as", "replaces",
            "superseded_by", "created_at", "updated_at",
        ]  # fmt: skip
        read_only_fields = fields

    def get_submitted_by(self, record: DecisionRecord) -> str | None:
        return record.submitted_by.get_username() if record.submitted_by else None

    def get_chosen(self, record: DecisionRecord) -> dict[str, Any]:
        chosen = chosen_candidate(record)
        found: dict[str, Any] = {
            k: chosen[k] for k in ("kind", "quote_id", "api_route_id", "label", "provider")
        }
        found["plan"] = chosen.get("plan")
        found["plan_quote_ids"] = chosen.get("plan_quote_ids") or []
        return found


class DecisionRecordDetailSerializer(DecisionRecordOutputSerializer):
    alternatives_described = serializers.SerializerMethodField()
    snapshot_summary = serializers.SerializerMethodField()
    approvals = serializers.SerializerMethodField()
    audit_trail = serializers.SerializerMethodField()
    inputs_changed = serializers.SerializerMethodField()

    class Meta(DecisionRecordOutputSerializer.Meta):
        fields = [
            *DecisionRecordOutputSerializer.Meta.fields,
            "alternatives_described", "snapshot_summary", "approvals", "audit_trail",
            "inputs_changed",
        ]  # fmt: skip
        read_only_fields = fields

    def get_alternatives_described(self, record: DecisionRecord) -> list[dict[str, Any]]:
        return [{k: a[k] for k in ("quote_id", "api_route_id", "label")} for a in
                alternatives_described(record)]  # fmt: skip

    def get_snapshot_summary(self, record: DecisionRecord) -> dict[str, Any]:
        # Documented as free-form JSON (docs/openapi.yaml); its shape: selectors.SnapshotSummary.
        return dict(snapshot_summary(record))

    def get_approvals(self, record: DecisionRecord) -> list[dict[str, Any]]:
        return [
            {**a, "created_at": serializers.DateTimeField().to_representation(a["created_at"])}
            for a in approvals_for_record(record)
        ]

    def get_audit_trail(self, record: DecisionRecord) -> list[dict[str, Any]]:
        return [
            {**e, "created_at": serializers.DateTimeField().to_representation(e["created_at"])}
            for e in audit_trail_for_record(record)
        ]

    def get_inputs_changed(self, record: DecisionRecord) -> list[str]:
        return inputs_changed(record)


class VerifySerializer(serializers.Serializer):  # type: ignore[type-arg]
    intact = serializers.BooleanField()
    content_hash = serializers.CharField()
    computed_hash = serializers.CharField()


class ChecklistAnswerInputSerializer(StrictJsonTypes, serializers.Serializer):  # type: ignore[type-arg]
    question = serializers.ChoiceField(choices=sorted(QUESTION_KEYS))
    answer = serializers.ChoiceField(choices=ChecklistAnswer.Answer.choices)
    evidence_text = serializers.CharField(required=False, allow_blank=True, default="")
    evidence_link = serializers.URLField(required=False, allow_blank=True, default="")


class ChecklistQuestionSerializer(serializers.Serializer):  # type: ignore[type-arg]
    question = serializers.CharField()
    section = serializers.CharField()
    text = serializers.CharField()
    answer = serializers.ChoiceField(choices=ChecklistAnswer.Answer.choices, allow_null=True)
    evidence_text = serializers.CharField(allow_blank=True)
    evidence_link = serializers.CharField(allow_blank=True)
    evidence_file = serializers.CharField(
        allow_blank=True, help_text="The evidence file's name as uploaded; empty if none"
    )
    evidence_file_url = serializers.CharField(
        allow_blank=True, help_text="Where to download it (token or session); empty if none"
    )
    evidence_bytes = serializers.IntegerField(
        allow_null=True, help_text="The evidence file's size in bytes; null if none"
    )
    evidence_sha256 = serializers.CharField(
        allow_blank=True, help_text="The evidence file's SHA-256 (hex); empty if none or unknown"
    )
    must_have = serializers.BooleanField(
        help_text="A must-have question: No or Partial is a warning on decision records"
    )
    warning = serializers.BooleanField(help_text="A must-have question answered No or Partial")
    answered_by = serializers.CharField(allow_null=True)
    answered_at = serializers.DateTimeField(allow_null=True)


class ChecklistSectionSerializer(serializers.Serializer):  # type: ignore[type-arg]
    section = serializers.CharField()
    title = serializers.CharField()
    questions = ChecklistQuestionSerializer(many=True)


class ChecklistSerializer(serializers.Serializer):  # type: ignore[type-arg]
    quote = serializers.IntegerField()
    team = serializers.CharField(help_text="The slug of the team whose answers these are.")
    answered = serializers.IntegerField()
    total = serializers.IntegerField()
    complete = serializers.BooleanField()
    sections = ChecklistSectionSerializer(many=True)
