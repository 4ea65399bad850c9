"""Decision records: open from a brief, freeze the evidence, review by role, approve or
reject, supersede. Every transition and verdict writes an audit event in the same
transaction; the database refuses changes to frozen evidence (migration 0002)."""

from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from apps.briefs.models import WorkloadBrief
from apps.core.models import Team
from apps.core.roles import DECISION_AUTHORS, QUOTE_EDITORS, Role, has_role, roles_of
from apps.engine import ENGINE_VERSION
from apps.quotes.models import ApiRoute, Quote

from .checklist import QUESTION_KEYS, must_have_warnings
from .frozen import snapshot_of
from .models import Approval, AuditEvent, ChecklistAnswer, DecisionRecord
from .snapshot import build_snapshot, content_hash

Status = DecisionRecord.Status


class TransitionRefused(ValidationError):
    """The record is not in a state that allows this (a clear message says which)."""


def _audit(
    record: DecisionRecord,
    *,
    actor: User,
    action: str,
    from_status: str = "",
    to_status: str = "",
    role: str = "",
    reason: str = "",
) -> AuditEvent:
    return AuditEvent.objects.create(
        record=record,
        actor=actor,
        action=action,
        from_status=from_status,
        to_status=to_status,
        role=role,
        reason=reason,
    )


def _freeze(record: DecisionRecord) -> None:
    """Freeze the evidence as the record's team may see it now; a chosen quote that has
    become confidential to another team cannot be frozen (nor shown to this team)."""
    quote = record.chosen_quote
    if quote is not None and quote.confidential_to_id not in (None, record.team_id):
        raise ValidationError(
            {
                "chosen_quote": f"quote #{quote.pk} is now confidential to another team; "
                "choose another candidate in a new record"
            }
        )
    record.snapshot = build_snapshot(
        brief=record.brief,
        chosen_quote=quote,
        chosen_api_route=record.chosen_api_route,
        chosen_plan=record.chosen_plan,
        acceptance_criteria=record.acceptance_criteria,
        team_id=record.team_id,
    )
    record.content_hash = content_hash(record.snapshot)
    record.engine_version = ENGINE_VERSION
    record.frozen_at = timezone.now()


def _default_criteria(brief: WorkloadBrief) -> dict[str, Any]:
    return {
        "latency_percentile": brief.latency_percentile or None,
        "ttft_target_ms": brief.ttft_target_ms,
        "itl_target_ms": brief.itl_target_ms,
        "e2e_target_ms": brief.e2e_target_ms,
        "acceptance_rate": str(brief.acceptance_rate) if brief.acceptance_rate else None,
        "min_memory_headroom_gb": None,
        "accepted_outputs_per_month": None,
    }


def _check_roles(required_roles: list[str]) -> list[str]:
    roles = list(dict.fromkeys(required_roles))
    unknown = [r for r in roles if r not in Role.values or r == Role.API_CLIENT]
    if not roles or unknown:
        detail = "choose from platform, finance, procurement"
        if unknown:
            detail += f"; not {unknown[0]!r}"
        raise ValidationError({"required_roles": detail})
    return roles


@transaction.atomic
def decision_record_create(
    *,
    brief: WorkloadBrief,
    created_by: User,
    capacity_model: str,
    chosen_quote: Quote | None = None,
    chosen_api_route: ApiRoute | None = None,
    chosen_plan: str = "",
    title: str = "",
    rationale: str = "",
    alternatives: list[dict[str, Any]] | None = None,
    acceptance_criteria: dict[str, Any] | None = None,
    required_roles: list[str] | None = None,
    replaces: DecisionRecord | None = None,
) -> DecisionRecord:
    given = [chosen_quote is not None, chosen_api_route is not None, bool(chosen_plan)]
    if sum(given) != 1:
        raise ValidationError(
            {"chosen_quote": "choose one candidate: a quote, an API route or a serving plan"}
        )
    record = DecisionRecord(
        brief=brief,
        team=brief.team,
        title=title or f"Capacity for {brief.name}",
        chosen_quote=chosen_quote,
        chosen_api_route=chosen_api_route,
        chosen_plan=chosen_plan,
        capacity_model=capacity_model,
        rationale=rationale,
        alternatives=alternatives or [],
        acceptance_criteria=acceptance_criteria or _default_criteria(brief),
        required_roles=_check_roles(
            required_roles or [Role.PLATFORM, Role.FINANCE, Role.PROCUREMENT]
        ),
        created_by=created_by,
        replaces=replaces,
    )
    _freeze(record)
    record.full_clean()
    record.save()
    _audit(record, actor=created_by, action="CREATE", to_status=Status.DRAFT)
    return record


def _locked(record: DecisionRecord) -> DecisionRecord:
    return DecisionRecord.objects.select_for_update().select_related("brief").get(pk=record.pk)


def _expect(record: DecisionRecord, *statuses: str, action: str) -> None:
    if record.status not in statuses:
        raise TransitionRefused(
            f"Cannot {action}: the record is {record.status}, not {' or '.join(statuses)}. "
            "It may have changed since you loaded it; reload and check."
        )


@transaction.atomic
def decision_record_refresh(*, record: DecisionRecord, user: User) -> DecisionRecord:
    """Re-freeze a DRAFT's evidence from the inputs as they are now."""
    record = _locked(record)
    _expect(record, Status.DRAFT, action="refresh the evidence")
    _freeze(record)
    record.save(
        update_fields=["snapshot", "content_hash", "engine_version", "frozen_at", "updated_at"]
    )
    _audit(record, actor=user, action="REFRESH", from_status=Status.DRAFT, to_status=Status.DRAFT)
    return record


@transaction.atomic
def decision_record_update(*, record: DecisionRecord, user: User, **fields: Any) -> DecisionRecord:
    """Edit a DRAFT (title, rationale, capacity model, alternatives, criteria, roles)."""
    record = _locked(record)
    _expect(record, Status.DRAFT, action="edit")
    allowed = {
        "title",
        "rationale",
        "capacity_model",
        "alternatives",
        "acceptance_criteria",
        "required_roles",
    }
    unknown = set(fields) - allowed
    if unknown:
        raise ValidationError({sorted(unknown)[0]: "cannot be changed"})
    if "required_roles" in fields:
        fields["required_roles"] = _check_roles(fields["required_roles"])
    for name, value in fields.items():
        setattr(record, name, value)
    if "acceptance_criteria" in fields:
        _freeze(record)
    record.full_clean()
    record.save()
    _audit(record, actor=user, action="EDIT", from_status=Status.DRAFT, to_status=Status.DRAFT)
    return record


class NotThisPerson(PermissionDenied):
    """The action is refused to this person: another person must take it (one person is not
    a committee), or this one under another role. The message says which; the API answers
    403 with it, the page shows it."""


def submitting_roles(record: DecisionRecord, user: User) -> list[str]:
    """The roles ``user`` may submit ``record`` under: the record's required roles they hold
    and, for its author, the author's own deciding roles too."""
    held = [r.value for r in DECISION_AUTHORS if r in roles_of(user)]
    allowed = [r for r in record.required_roles if r in held]
    if record.created_by_id == user.pk:
        allowed += [r for r in held if r not in allowed]
    return allowed


def _submitting_role(record: DecisionRecord, user: User, wanted: str | None) -> str:
    """The role asked for or, by default, the first of ``submitting_roles``; refused in words
    when it is not one of them."""
    held = [r.value for r in DECISION_AUTHORS if r in roles_of(user)]
    if not held:
        raise PermissionDenied(
            "Records are submitted by platform, finance or procurement; you hold none of them."
        )
    if wanted is not None and wanted not in held:
        raise NotThisPerson(
            f"You do not hold the {wanted} role; submit under a role you hold ({', '.join(held)})."
        )
    allowed = submitting_roles(record, user)
    role = wanted if wanted is not None else next(iter(allowed), None)
    if role is None or role not in allowed:
        needed = ", ".join(record.required_roles)
        raise NotThisPerson(
            f"{role or held[0]} is not one of this record's roles ({needed}); submit as one "
            f"of them, or ask its author ({record.created_by.get_username()}) to submit it."
        )
    return role


@transaction.atomic
def decision_record_submit(
    *, record: DecisionRecord, user: User, role: str | None = None
) -> DecisionRecord:
    """Send a DRAFT for review under one of the record's roles (see ``_submitting_role``).
    The submitter then decides for no role: other people approve it."""
    record = _locked(record)
    _expect(record, Status.DRAFT, action="submit")
    role = _submitting_role(record, user, role)
    record.status = Status.IN_REVIEW
    record.submitted_by = user  # type: ignore[assignment]
    record.submitted_as = role
    record.save(update_fields=["status", "submitted_by", "submitted_as", "updated_at"])
    _audit(
        record,
        actor=user,
        action="SUBMIT",
        from_status=Status.DRAFT,
        to_status=Status.IN_REVIEW,
        role=role,
    )
    return record


def _may_decide(record: DecisionRecord, user: User, role: str, *, verb: str) -> None:
    """Whether ``user`` may give a verdict (``verb``: approve or reject) for ``role``: one of
    the record's roles, held by the user, not yet decided, and by a person who has neither
    submitted the record nor given a verdict on it already (one person is not a committee;
    the database's one_verdict_per_user constraint backs the last rule)."""
    if role not in record.required_roles:
        raise ValidationError({"role": f"{role!r} is not a role this record needs"})
    if role not in roles_of(user):
        raise PermissionDenied(f"Only members of the {role} group can decide for it.")
    if record.submitted_by_id == user.pk:
        raise NotThisPerson(
            f"You submitted this record as {record.submitted_as}; "
            f"another person must {verb} for {role}."
        )
    if record.approvals.filter(role=role).exists():
        raise TransitionRefused(f"The {role} role has already decided on this record.")
    earlier = record.approvals.filter(user=user).first()
    if earlier is not None:
        done = "approved" if earlier.verdict == Approval.Verdict.APPROVE else "rejected"
        raise NotThisPerson(
            f"You already {done} this record as {earlier.role}; "
            f"another person must {verb} for {role}."
        )


def _warnings_acknowledged(
    record: DecisionRecord, *, acknowledged: bool, comment: str
) -> list[str]:
    """The must-have checklist warnings of the record's frozen checklist (question keys), when
    the approver has acknowledged them and said why the risk is accepted; refused otherwise."""
    checklist = snapshot_of(record).get("checklist", {})
    warnings = [w["question"] for w in must_have_warnings(checklist)]
    if not warnings:
        return []
    if not acknowledged:
        raise ValidationError(
            {
                "acknowledge_warnings": "the checklist answers No or Partial to a must-have "
                "question: read the warnings on the record and acknowledge them to approve"
            }
        )
    if not comment.strip():
        raise ValidationError(
            {"comment": "say why the record is approved despite its checklist warnings"}
        )
    return warnings


@transaction.atomic
def decision_record_approve(
    *,
    record: DecisionRecord,
    user: User,
    role: str,
    comment: str = "",
    acknowledge_warnings: bool = False,
) -> DecisionRecord:
    """Approve for one role, with the approver's comment; the record is APPROVED when every
    required role has approved. A record whose frozen checklist answers No or Partial to a
    must-have question (apps.decisions.checklist.MUST_HAVE) is approved only with the warnings
    acknowledged and a comment saying why. The row lock makes two approvals take turns."""
    record = _locked(record)
    _expect(record, Status.IN_REVIEW, action="approve")
    _may_decide(record, user, role, verb="approve")
    acknowledged = _warnings_acknowledged(
        record, acknowledged=acknowledge_warnings, comment=comment
    )
    Approval.objects.create(
        record=record,
        role=role,
        user=user,
        verdict=Approval.Verdict.APPROVE,
        reason=comment.strip(),
        acknowledged_warnings=acknowledged or None,
    )
    _audit(
        record,
        actor=user,
        action="APPROVE",
        from_status=Status.IN_REVIEW,
        to_status=Status.IN_REVIEW,
        role=role,
        reason=comment.strip(),
    )
    approved = set(
        record.approvals.filter(verdict=Approval.Verdict.APPROVE).values_list("role", flat=True)
    )
    if approved >= set(record.required_roles):
        record.status = Status.APPROVED
        record.save(update_fields=["status", "updated_at"])
        _audit(
            record,
            actor=user,
            action="APPROVED",
            from_status=Status.IN_REVIEW,
            to_status=Status.APPROVED,
        )
        if record.replaces_id:
            _supersede(record.replaces, by=record, user=user)  # type: ignore[arg-type]
    return record


@transaction.atomic
def decision_record_reject(
    *, record: DecisionRecord, user: User, role: str, reason: str
) -> DecisionRecord:
    record = _locked(record)
    _expect(record, Status.IN_REVIEW, action="reject")
    if not reason.strip():
        raise ValidationError({"reason": "say why the record is rejected"})
    _may_decide(record, user, role, verb="reject")
    Approval.objects.create(
        record=record, role=role, user=user, verdict=Approval.Verdict.REJECT, reason=reason
    )
    record.status = Status.REJECTED
    record.save(update_fields=["status", "updated_at"])
    _audit(
        record,
        actor=user,
        action="REJECT",
        from_status=Status.IN_REVIEW,
        to_status=Status.REJECTED,
        role=role,
        reason=reason,
    )
    return record


def _supersede(old: DecisionRecord, *, by: DecisionRecord, user: User) -> None:
    old = _locked(old)
    _expect(old, Status.APPROVED, action="supersede")
    old.status = Status.SUPERSEDED
    old.superseded_by = by
    old.save(update_fields=["status", "superseded_by", "updated_at"])
    _audit(
        old,
        actor=user,
        action="SUPERSEDED",
        from_status=Status.APPROVED,
        to_status=Status.SUPERSEDED,
        reason=f"by record #{by.pk}",
    )


@transaction.atomic
def decision_record_supersede(*, record: DecisionRecord, user: User) -> DecisionRecord:
    """Open a new DRAFT that will supersede this APPROVED record once it is approved itself;
    its evidence is frozen from the inputs as they are now."""
    record = _locked(record)
    _expect(record, Status.APPROVED, action="supersede")
    if record.replacements.exclude(status=Status.REJECTED).exists():
        raise TransitionRefused("A newer record to supersede this one is already open.")
    new = decision_record_create(
        brief=record.brief,
        created_by=user,
        capacity_model=record.capacity_model,
        chosen_quote=record.chosen_quote,
        chosen_api_route=record.chosen_api_route,
        title=record.title,
        rationale=record.rationale,
        alternatives=record.alternatives,
        acceptance_criteria=record.acceptance_criteria,
        required_roles=record.required_roles,
        replaces=record,
    )
    _audit(
        record,
        actor=user,
        action="SUPERSEDE_OPENED",
        from_status=Status.APPROVED,
        to_status=Status.APPROVED,
        reason=f"draft #{new.pk}",
    )
    return new


@transaction.atomic
def checklist_answer_set(
    *,
    quote: Quote,
    question: str,
    answer: str,
    user: User,
    team: Team,
    evidence_text: str = "",
    evidence_link: str = "",
    evidence_file: Any = None,
) -> ChecklistAnswer:
    """Answer (or re-answer) one checklist question for a quote, as ``team``'s answer
    (procurement members of the team only); other teams' answers are never touched."""
    if not has_role(user, QUOTE_EDITORS):
        raise PermissionDenied("Only procurement answers the procurement checklist.")
    if not team.members.filter(pk=user.pk).exists():
        raise PermissionDenied(f"You are not a member of {team.name}; answer for your own team.")
    if question not in QUESTION_KEYS:
        raise ValidationError({"question": f"unknown question {question!r}"})
    row = (
        ChecklistAnswer.objects.select_for_update()
        .filter(quote=quote, question=question, team=team)
        .first()
    )
    row = row or ChecklistAnswer(quote=quote, question=question, team=team)
    row.answer = answer
    row.evidence_text = evidence_text
    row.evidence_link = evidence_link
    if evidence_file is not None:
        row.evidence_file_attach(evidence_file)
    row.answered_by = user  # type: ignore[assignment]
    row.full_clean()
    row.save()
    return row


class ChecklistRefused(Exception):
    """Some answers of a whole-checklist save were refused: nothing was saved. ``errors``:
    question key -> the ValidationError of that answer."""

    def __init__(self, errors: dict[str, ValidationError]) -> None:
        super().__init__(f"{len(errors)} answers refused")
        self.errors = errors


def checklist_answers_set(
    *, quote: Quote, user: User, team: Team, answers: dict[str, dict[str, Any]]
) -> list[ChecklistAnswer]:
    """Answer several checklist questions of a quote at once: all are saved, or none (every
    refused answer is reported, by question, in ChecklistRefused)."""
    if not has_role(user, QUOTE_EDITORS):
        raise PermissionDenied("Only procurement answers the procurement checklist.")
    saved: list[ChecklistAnswer] = []
    errors: dict[str, ValidationError] = {}
    with transaction.atomic():  # ChecklistRefused, raised inside, rolls every answer back
        for question, fields in answers.items():
            try:
                with transaction.atomic():
                    saved.append(
                        checklist_answer_set(
                            quote=quote, question=question, user=user, team=team, **fields
                        )
                    )
            except ValidationError as exc:
                errors[question] = exc
        if errors:
            raise ChecklistRefused(errors)
    return saved
