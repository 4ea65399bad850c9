"""Reads of decision records, scoped to the user's teams; what changed since freezing; the
procurement checklist with its completeness; the plain report the exports draw."""

from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from typing import Any, NotRequired, TypedDict, cast
from urllib.parse import urlencode

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import Http404
from django.urls import reverse

from apps.core.models import Team
from apps.core.roles import Role, roles_of
from apps.finance.lines import PLAN_WORDS
from apps.finance.shown import NotCostedEntry, Sensitivity, ShownRow
from apps.quotes.models import Quote

from .candidate_words import (
    API_TERM_WORDS,
    QuoteLike,
    RowLike,
    base_label,
    candidate_labels,
    configuration,
)
from .checklist import (
    MUST_HAVE,
    QUESTION_KEYS,
    QUESTIONS,
    SECTIONS,
    SHORT_ANSWERS,
    ChecklistWarning,
    must_have_warnings,
)
from .frozen import (
    BodyJson,
    FrozenAnswer,
    FrozenAssumptions,
    FrozenChecklist,
    FrozenFxRate,
    FrozenOwned,
    FrozenQuote,
    FrozenRoute,
    Snapshot,
    snapshot_of,
)
from .models import Approval, AuditEvent, ChecklistAnswer, DecisionRecord
from .snapshot import checklist_evidence, content_hash, inputs_fingerprint


def decision_record_list_for_user(
    user: AbstractBaseUser | AnonymousUser,
) -> QuerySet[DecisionRecord]:
    qs = DecisionRecord.objects.select_related(
        "brief",
        "team",
        "chosen_quote__provider",
        "chosen_api_route__provider",
        "created_by",
    ).order_by("-updated_at", "-id")
    if getattr(user, "is_superuser", False):
        return qs
    return qs.filter(team__members=user)  # type: ignore[misc]


def decision_record_get_for_user(user: AbstractBaseUser | AnonymousUser, pk: int) -> DecisionRecord:
    """The record, or 404 when it does not exist or belongs to another team."""
    try:
        return decision_record_list_for_user(user).get(pk=pk)
    except DecisionRecord.DoesNotExist:
        raise Http404("No such decision record.") from None


class ApprovalShown(TypedDict):
    role: str
    verdict: str
    user: str
    reason: str
    acknowledged_warnings: list[str]  # the checklist questions the approver acknowledged
    created_at: datetime


def approvals_for_record(record: DecisionRecord) -> list[ApprovalShown]:
    rows = (
        Approval.objects.filter(record=record).select_related("user").order_by("created_at", "id")
    )
    return [
        {
            "role": a.role,
            "verdict": a.verdict,
            "user": a.user.get_username(),
            "reason": a.reason,
            "acknowledged_warnings": a.acknowledged_warnings or [],
            "created_at": a.created_at,
        }
        for a in rows
    ]


class AuditShown(TypedDict):
    action: str
    from_status: str
    to_status: str
    role: str
    actor: str
    reason: str
    created_at: datetime


def audit_trail_for_record(record: DecisionRecord) -> list[AuditShown]:
    rows = AuditEvent.objects.filter(record=record).select_related("actor").order_by("id")
    return [
        {
            "action": e.action,
            "from_status": e.from_status,
            "to_status": e.to_status,
            "role": e.role,
            "actor": e.actor.get_username(),
            "reason": e.reason,
            "created_at": e.created_at,
        }
        for e in rows
    ]


def record_verify(record: DecisionRecord) -> dict[str, Any]:
    computed = content_hash(record.snapshot)
    return {
        "intact": computed == record.content_hash,
        "content_hash": record.content_hash,
        "computed_hash": computed,
    }


# --- What changed since freezing ------------------------------------------------------------


def _versions_changed(
    kind: str, frozen: Mapping[str, int], now: Mapping[str, int], names: dict[str, str]
) -> list[str]:
    """Each frozen quote or route that changed or is gone, by its words (``names``: id ->
    "provider · GPU · term"), not its id."""
    changes = []
    for key in sorted(frozen, key=int):
        what = f"the {kind} {names[key]}" if key in names else f"a frozen {kind}"
        if key not in now:
            changes.append(f"{what} no longer exists")
        elif now[key] != frozen[key]:
            changes.append(f"{what} changed since freezing (version {frozen[key]} → {now[key]})")
    return changes


def _answers_differ(live: list[FrozenAnswer], frozen: list[FrozenAnswer]) -> bool:
    """Whether the live checklist answers differ from the frozen ones, compared on the fields
    the frozen answers hold (a record frozen before answers kept their file's name, size and
    hash compares on what it kept)."""
    if len(live) != len(frozen):
        return True
    return any(
        {k: now.get(k) for k in then} != then for now, then in zip(live, frozen, strict=True)
    )


def inputs_changed(record: DecisionRecord) -> list[str]:
    """Sentences naming what the frozen figures rest on that has changed since (empty: nothing).

    Compares the snapshot's inputs fingerprint with one recomputed now for the same quotes and
    routes, and the frozen procurement checklist of the chosen quote with the live one."""
    snap = snapshot_of(record)
    frozen = snap.get("inputs")
    if not frozen:
        return ["the record has no frozen evidence"]
    quote_ids = [int(k) for k in frozen.get("quotes", {})]
    route_ids = [int(k) for k in frozen.get("api_routes", {})]
    now = inputs_fingerprint(record.brief, quote_ids, route_ids)
    changes = []
    if now["brief_version"] != frozen.get("brief_version"):
        changes.append(
            f"the brief changed since freezing "
            f"(version {frozen.get('brief_version')} → {now['brief_version']})"
        )
    quote_names = {str(q["id"]): _quote_words(q) for q in snap.get("quotes", []) if "id" in q}
    route_names = {
        str(r["id"]): f"{r.get('provider')} · {r.get('model')}"
        for r in snap.get("api_routes", [])
        if "id" in r
    }
    changes += _versions_changed("quote", frozen.get("quotes", {}), now["quotes"], quote_names)
    changes += _versions_changed(
        "API route", frozen.get("api_routes", {}), now["api_routes"], route_names
    )
    runs_then, runs_now = set(frozen.get("benchmark_runs", [])), set(now["benchmark_runs"])
    if runs_now - runs_then:
        changes.append("benchmark runs were added")
    if runs_then - runs_now:
        changes.append("benchmark runs were removed")
    if now["assumptions"] != frozen.get("assumptions"):
        changes.append("finance assumptions changed")
    if record.chosen_quote_id is not None and "checklist" in snap:
        then = snap["checklist"]
        live = checklist_evidence(quote=record.chosen_quote, team_id=record.team_id)
        if _answers_differ(live["answers"], then.get("answers") or []):
            changes.append(
                "the procurement checklist of the chosen quote changed "
                f"(answered {then.get('answered')}/{then.get('total')} → "
                f"{live['answered']}/{live['total']})"
            )
    return changes


# --- The procurement checklist -------------------------------------------------------------


def checklist_team_for_user(user: AbstractBaseUser | AnonymousUser, slug: str = "") -> Team:
    """The team whose checklist answers ``user`` reads and writes: the team ``slug`` names
    (``?team=`` on the pages and the API; 404 unless they are a member), else their first team
    by name. A user in no team has no checklist (403 in words)."""
    teams = Team.objects.filter(members=user.pk).order_by("name")
    if slug:
        team = teams.filter(slug=slug).first()
        if team is None:
            raise Http404(f"You are not a member of a team {slug!r}.")
        return team
    team = teams.first()
    if team is None:
        raise PermissionDenied(
            "Checklist answers are kept per team and you belong to none; ask an administrator "
            "to add you to your team."
        )
    return team


def checklist_completeness_by_quote(
    quote_ids: list[int], *, team_id: int
) -> dict[int, tuple[int, int]]:
    """(answered, total) per quote id, of ``team_id``'s answers; every id asked about is in
    the answer."""
    counts = Counter(
        ChecklistAnswer.objects.filter(
            quote_id__in=quote_ids, question__in=QUESTION_KEYS, team_id=team_id
        ).values_list("quote_id", flat=True)
    )
    return {qid: (counts.get(qid, 0), len(QUESTIONS)) for qid in quote_ids}


#: Where a checklist answer's evidence file is downloaded from: the page view (a session,
#: else the sign-in page) or the API view (a token or a session); both check the quote.
EVIDENCE_PAGE_URL = "decisions:checklist-evidence"
EVIDENCE_API_URL = "api:quote-checklist-evidence"


def checklist_for_quote(quote: Quote, *, team: Team, evidence_url_name: str) -> dict[str, Any]:
    """Every question by section with ``team``'s live answer (or None), and the completeness.
    An evidence file is named by its uploaded name and linked to ``evidence_url_name``
    (EVIDENCE_PAGE_URL or EVIDENCE_API_URL, with ``?team=``), never to its storage."""
    answers = {
        a.question: a
        for a in ChecklistAnswer.objects.filter(quote=quote, team=team).select_related(
            "answered_by", "team"
        )
    }
    sections = []
    for code, title in SECTIONS:
        questions = []
        for q in QUESTIONS:
            if q.section != code:
                continue
            a = answers.get(q.key)
            questions.append(
                {
                    "question": q.key,
                    "section": q.section,
                    "text": q.text,
                    "answer": a.answer if a else None,
                    "evidence_text": a.evidence_text if a else "",
                    "evidence_link": a.evidence_link if a else "",
                    "evidence_file": a.evidence_download_name if a and a.evidence_file else "",
                    "evidence_file_url": _evidence_url(a, evidence_url_name) if a else "",
                    "evidence_bytes": a.evidence_bytes if a and a.evidence_file else None,
                    "evidence_sha256": a.evidence_sha256 if a and a.evidence_file else "",
                    "must_have": q.key in MUST_HAVE,
                    "warning": a is not None and q.key in MUST_HAVE and a.answer in SHORT_ANSWERS,
                    "answered_by": a.answered_by.get_username() if a else None,
                    "answered_at": a.updated_at if a else None,
                }
            )
        sections.append({"section": code, "title": title, "questions": questions})
    answered = sum(1 for key in answers if key in QUESTION_KEYS)
    return {
        "quote": quote.pk,
        "team": team.slug,
        "answered": answered,
        "total": len(QUESTIONS),
        "complete": answered == len(QUESTIONS),
        "sections": sections,
    }


def _evidence_url(answer: ChecklistAnswer, url_name: str) -> str:
    if not answer.evidence_file:
        return ""
    url = reverse(url_name, kwargs={"quote_id": answer.quote_id, "question": answer.question})
    return f"{url}?{urlencode({'team': answer.team.slug})}"


def checklist_answer_with_file(quote: Quote, question: str, *, team: Team) -> ChecklistAnswer:
    """``team``'s answer to ``question`` of the quote if it has an evidence file, else 404
    (the caller has already looked the quote up for the user, quote_get_for_user, and the
    team, checklist_team_for_user): another team's file is not found."""
    answer = (
        ChecklistAnswer.objects.filter(quote=quote, question=question, team=team)
        .exclude(evidence_file="")
        .first()
    )
    if answer is None:
        raise Http404("No evidence file for this question.")
    return answer


# --- Plain data for the pages and the exports ----------------------------------------------
# Each read of the frozen snapshot goes through ``frozen.Snapshot`` (``snapshot_of``); what these
# functions give the pages, the API and the PDF is typed below.


class AlternativeRef(TypedDict, total=False):
    """One of ``DecisionRecord.alternatives``: the quote or the API route set aside."""

    quote_id: int | None
    api_route_id: int | None


def _alternatives(record: DecisionRecord) -> list[AlternativeRef]:
    return cast(list[AlternativeRef], record.alternatives or [])


class ChosenCandidate(TypedDict):
    """The chosen candidate as frozen (``chosen_candidate``): a quote's, an API route's or a
    serving plan's (``kind`` "quote", "api_route" or "plan")."""

    kind: str
    quote_id: int | None
    api_route_id: int | None
    label: str
    provider: str | None
    row: ShownRow | None  # its candidate-table row (None: not in the frozen table)
    evidence: FrozenQuote | FrozenRoute | None  # a plan's: its first part's quote
    # A plan only: its candidate kind, its parts' quote ids and their frozen quotes.
    plan: NotRequired[str]
    plan_quote_ids: NotRequired[list[int]]
    parts: NotRequired[list[FrozenQuote]]


class CandidateRow(ShownRow):
    """A frozen candidate row as the record page and the PDF list it (``candidate_rows``)."""

    label: str
    gpus_paid: str  # "18 GPUs (18 replicas x 1)", "—" for none
    chosen: bool
    alternative: bool


class AlternativeDescribed(TypedDict):
    quote_id: int | None
    api_route_id: int | None
    label: str
    row: ShownRow | None


class ChecklistCount(TypedDict):
    answered: int | None
    total: int | None


class SnapshotSummary(TypedDict):
    """What the API's record detail says of the frozen evidence (``snapshot_summary``)."""

    format: int | None
    engine_version: str | None
    computed_at: str | None
    currency: str | None
    unit: str | None
    no_ranking_reason: str | None
    candidates: int
    quotes: int
    api_routes: int
    benchmark_runs: int
    checklist: ChecklistCount
    chosen_row: ShownRow | None


class AnswerShown(FrozenAnswer, total=True):
    """A frozen answer, marked when its question is a must-have (warned: answered No or
    Partial)."""

    must_have: bool
    warning: bool


class ChecklistSection(TypedDict):
    section: str
    title: str
    answers: list[AnswerShown]


class ReportBrief(TypedDict):
    """The frozen brief as the PDF reads it (its name from the live brief when not frozen)."""

    id: int | None
    name: str
    workload_type: str | None
    model: BodyJson | None
    success_unit: str | None
    concurrency: int | None
    latency_target: BodyJson | None
    inputs_version: int | None


class RecordReport(TypedDict):
    """Everything the PDF shows (``decision_record_report``), read once by
    ``report_data.report_of``; its JSON is ``pdf_store.report_digest``'s input."""

    id: int
    title: str
    status: str
    team: str
    capacity_model: str  # in words
    rationale: str
    acceptance_criteria: BodyJson
    required_roles: list[str]
    brief: ReportBrief
    chosen: ChosenCandidate
    alternatives: list[str]  # their labels
    currency: str
    unit: str
    computed_at: str | None
    rows: list[CandidateRow]
    owned_hardware: list[FrozenOwned]
    checklist: FrozenChecklist
    # The must-have questions answered No or Partial (each approval acknowledged them: its
    # ``acknowledged_warnings``); what the PDF must show beside the checklist.
    checklist_warnings: list[ChecklistWarning]
    approvals: list[ApprovalShown]
    audit_trail: list[AuditShown]
    content_hash: str
    engine_version: str
    frozen_at: datetime | None
    # What the PDF's commercial summary and "why it lost" read (apps.decisions.exports);
    # a record frozen before a field existed lacks it, and the PDF says "not recorded".
    capacity_model_code: str
    alternative_refs: list[AlternativeRef]
    quotes: list[FrozenQuote]
    api_routes: list[FrozenRoute]
    fx_rates: list[FrozenFxRate]
    assumptions: FrozenAssumptions
    sensitivity: Sensitivity
    not_costed: list[NotCostedEntry]


def catalog_names(snapshot: Snapshot) -> dict[str, str]:
    """GPU and system slugs to the names a person reads, from a snapshot's frozen quotes
    (records frozen before the names were frozen keep their slugs)."""
    names: dict[str, str] = {}
    for q in snapshot.get("quotes", []):
        for slug, name in (
            (q.get("gpu"), q.get("gpu_name")),
            (q.get("system"), q.get("system_name")),
        ):
            if slug and name:
                names[slug] = name
    return names


#: A candidate the record names but did not freeze (a record from before its evidence was kept).
NOT_FROZEN = "a candidate not in the frozen evidence"


def candidate_label(
    row: RowLike, names: dict[str, str] | None = None, quote: QuoteLike | None = None
) -> str:
    """provider · GPU name (system) · term in words (apps.decisions.candidate_words), the GPU
    and system by name where ``names`` (slug -> name) or the frozen ``quote`` has them; a
    table's rows are labelled together (``candidate_labels``) so that no two read alike."""
    return base_label(row, names or {}, quote or {})


def frozen_quotes(snapshot: Snapshot) -> dict[int | None, FrozenQuote]:
    return {q.get("id"): q for q in snapshot.get("quotes", [])}


def _frozen_rows(snapshot: Snapshot) -> list[ShownRow]:
    return snapshot.get("candidate_table", {}).get("rows", [])


def labelled_rows(snapshot: Snapshot) -> list[tuple[ShownRow, str]]:
    """The frozen candidate table's rows, each with its label (none two alike)."""
    rows = _frozen_rows(snapshot)
    labels = candidate_labels(rows, catalog_names(snapshot), frozen_quotes(snapshot))
    return list(zip(rows, labels, strict=True))


def _label_of(snapshot: Snapshot, row: ShownRow) -> str:
    return next((label for r, label in labelled_rows(snapshot) if r is row), "")


def _quote_words(evidence: FrozenQuote) -> str:
    """A frozen quote without a row: provider · GPU · term, region."""
    label = base_label({}, {}, evidence)
    return f"{label} · {evidence['region']}" if evidence.get("region") else label


def _is_row(
    row: ShownRow, *, quote_id: int | None, api_route_id: int | None, plan: str | None = None
) -> bool:
    if plan:
        return bool(row.get("candidate_kind") == plan)
    if quote_id is not None:
        return bool(row.get("quote_id") == quote_id)
    return api_route_id is not None and row.get("api_route_id") == api_route_id


def chosen_candidate(record: DecisionRecord) -> ChosenCandidate:
    """The chosen candidate as frozen: its candidate-table row when it has one, and its
    quote or route evidence."""
    snap = snapshot_of(record)
    chosen = snap.get("chosen", {})
    qid, rid, plan = chosen.get("quote_id"), chosen.get("api_route_id"), chosen.get("plan")
    rows = _frozen_rows(snap)
    row = next((r for r in rows if _is_row(r, quote_id=qid, api_route_id=rid, plan=plan)), None)
    if plan:
        ids = chosen.get("plan_quote_ids") or []
        parts = [q for q in snap.get("quotes", []) if q["id"] in ids]
        return {
            "kind": "plan",
            "plan": plan,
            "quote_id": None,
            "api_route_id": None,
            "plan_quote_ids": ids,
            "label": _label_of(snap, row) if row else PLAN_WORDS.get(plan, plan),
            "provider": ", ".join(dict.fromkeys(q["provider"] for q in parts)),
            "row": row,
            "evidence": parts[0] if parts else None,
            "parts": parts,
        }
    evidence: FrozenQuote | FrozenRoute | None
    words: str | None = None  # the evidence in words, for a chosen candidate without a row
    if qid is not None:
        quote = next((q for q in snap.get("quotes", []) if q["id"] == qid), None)
        evidence, kind = quote, "quote"
        if quote is not None:
            words = _quote_words(quote)
    else:
        route = next((r for r in snap.get("api_routes", []) if r["id"] == rid), None)
        evidence, kind = route, "api_route"
        if route is not None:
            words = f"{route['provider']} · {route['model']} · {API_TERM_WORDS}"
    if row is not None:
        label = _label_of(snap, row)
    elif words is not None:
        label = words
    else:
        label = NOT_FROZEN
    return {
        "kind": kind,
        "quote_id": qid,
        "api_route_id": rid,
        "label": label,
        "provider": (evidence.get("provider") if evidence else None)
        or (row.get("provider") if row else None),
        "row": row,
        "evidence": evidence,
    }


def candidate_rows(record: DecisionRecord) -> list[CandidateRow]:
    """The frozen candidate table, each row labelled (its term in the label), with the GPUs it
    pays for, and marked chosen or alternative."""
    snap = snapshot_of(record)
    chosen = snap.get("chosen", {})
    alternatives = _alternatives(record)
    rows: list[CandidateRow] = []
    for row, label in labelled_rows(snap):
        is_chosen = _is_row(
            row,
            quote_id=chosen.get("quote_id"),
            api_route_id=chosen.get("api_route_id"),
            plan=chosen.get("plan"),
        )
        is_alternative = any(
            _is_row(row, quote_id=a.get("quote_id"), api_route_id=a.get("api_route_id"))
            for a in alternatives
        )
        rows.append(
            {
                **row,
                "label": label,
                "gpus_paid": configuration(row) or "—",
                "chosen": is_chosen,
                "alternative": is_alternative and not is_chosen,
            }
        )
    return rows


def alternatives_described(record: DecisionRecord) -> list[AlternativeDescribed]:
    snap = snapshot_of(record)
    labelled = labelled_rows(snap)
    quotes = frozen_quotes(snap)
    described: list[AlternativeDescribed] = []
    for alt in _alternatives(record):
        qid, rid = alt.get("quote_id"), alt.get("api_route_id")
        found = next(
            ((r, label) for r, label in labelled if _is_row(r, quote_id=qid, api_route_id=rid)),
            None,
        )
        if found is not None:
            label = found[1]
        elif qid is not None and qid in quotes:
            label = _quote_words(quotes[qid])
        else:
            label = NOT_FROZEN
        described.append(
            {
                "quote_id": qid,
                "api_route_id": rid,
                "label": label,
                "row": found[0] if found else None,
            }
        )
    return described


def snapshot_summary(record: DecisionRecord) -> SnapshotSummary:
    snap = snapshot_of(record)
    table = snap.get("candidate_table", {})
    checklist = snap.get("checklist", {})
    return {
        "format": snap.get("format"),
        "engine_version": snap.get("engine_version"),
        "computed_at": table.get("computed_at"),
        "currency": table.get("currency"),
        "unit": table.get("unit"),
        "no_ranking_reason": table.get("no_ranking_reason"),
        "candidates": len(table.get("rows", [])),
        "quotes": len(snap.get("quotes", [])),
        "api_routes": len(snap.get("api_routes", [])),
        "benchmark_runs": len(snap.get("benchmark_runs", [])),
        "checklist": {"answered": checklist.get("answered"), "total": checklist.get("total")},
        "chosen_row": chosen_candidate(record)["row"],
    }


def checklist_frozen_by_section(record: DecisionRecord) -> list[ChecklistSection]:
    """The frozen checklist by section, each answer marked when its question is a must-have
    (and warned when that answer is No or Partial)."""
    answers = snapshot_of(record).get("checklist", {}).get("answers", [])
    warned = {w["question"] for w in checklist_warnings(record)}
    return [
        {
            "section": code,
            "title": title,
            "answers": [
                {
                    **a,
                    "must_have": a.get("question") in MUST_HAVE,
                    "warning": a.get("question") in warned,
                }
                for a in answers
                if a["section"] == code
            ],
        }
        for code, title in SECTIONS
    ]


def checklist_warnings(record: DecisionRecord) -> list[ChecklistWarning]:
    """The must-have questions the record's frozen checklist answers No or Partial."""
    return must_have_warnings(snapshot_of(record).get("checklist", {}))


def decision_record_report(record: DecisionRecord) -> RecordReport:
    """Everything the PDF shows, as plain data (the PDF itself is drawn without queries)."""
    snap = snapshot_of(record)
    brief = snap.get("brief", {})
    table = snap.get("candidate_table", {})
    checklist = snap.get("checklist", {})
    return {
        "id": record.pk,
        "title": record.title,
        "status": record.status,
        "team": record.team.name,
        "capacity_model": record.get_capacity_model_display(),
        "rationale": record.rationale,
        "acceptance_criteria": record.acceptance_criteria,
        "required_roles": record.required_roles,
        "brief": {
            "id": brief.get("id"),
            "name": brief.get("name") or record.brief.name,
            "workload_type": brief.get("workload_type"),
            "model": brief.get("model"),
            "success_unit": brief.get("success_unit"),
            "concurrency": brief.get("concurrency"),
            "latency_target": brief.get("latency_target"),
            "inputs_version": brief.get("inputs_version"),
        },
        "chosen": chosen_candidate(record),
        "alternatives": [a["label"] for a in alternatives_described(record)],
        "currency": table.get("currency") or "USD",
        "unit": table.get("unit") or "output",
        "computed_at": table.get("computed_at"),
        "rows": candidate_rows(record),
        "owned_hardware": snap.get("owned_hardware", []),
        "checklist": {
            "answered": checklist.get("answered", 0),
            "total": checklist.get("total", len(QUESTIONS)),
            "answers": checklist.get("answers", []),
        },
        "checklist_warnings": checklist_warnings(record),
        "approvals": approvals_for_record(record),
        "audit_trail": audit_trail_for_record(record),
        "content_hash": record.content_hash,
        "engine_version": record.engine_version,
        "frozen_at": record.frozen_at,
        "capacity_model_code": record.capacity_model,
        "alternative_refs": [
            {"quote_id": a.get("quote_id"), "api_route_id": a.get("api_route_id")}
            for a in _alternatives(record)
        ],
        "quotes": snap.get("quotes", []),
        "api_routes": snap.get("api_routes", []),
        "fx_rates": snap.get("fx_rates", []),
        "assumptions": snap.get("assumptions", {}),
        "sensitivity": table.get("sensitivity") or {},
        "not_costed": table.get("not_costed", []),
    }


def why_user_may_not_decide(record: DecisionRecord, user: User) -> str:
    """Why this user gives no verdict on a record in review although they hold one of its
    roles (what the page says instead of the buttons); empty when nothing stops them."""
    if record.status != DecisionRecord.Status.IN_REVIEW:
        return ""
    if record.submitted_by_id == user.pk:
        return f"You submitted this record as {record.submitted_as}; other people approve it."
    earlier = Approval.objects.filter(record=record, user=user).first()
    if earlier is not None:
        return (
            f"You already approved this record as {earlier.role}; "
            "other people approve for the remaining roles."
        )
    return ""


def roles_user_may_decide(record: DecisionRecord, user: User) -> list[str]:
    """The required roles this user could approve or reject for now (what the page offers;
    the service checks again when the verdict arrives): none for the submitter or for someone
    who has already given a verdict on this record."""
    if record.status != DecisionRecord.Status.IN_REVIEW or why_user_may_not_decide(record, user):
        return []
    held = roles_of(user)
    decided = set(Approval.objects.filter(record=record).values_list("role", flat=True))
    return [role for role in record.required_roles if role in held and role not in decided]


def _approvers_by_role(
    record: DecisionRecord, roles: list[str], exclude_ids: set[int]
) -> dict[str, list[str]]:
    """Per role, the usernames who could give its verdict: active members of the role's group
    who see the record (its team's members, or a superuser), less ``exclude_ids``."""
    found: dict[str, list[str]] = {role: [] for role in roles}
    rows = (
        User.objects.filter(is_active=True, groups__name__in=roles)
        .filter(Q(teams=record.team_id) | Q(is_superuser=True))
        .exclude(pk__in=[pk for pk in exclude_ids if pk is not None])
        .values_list("groups__name", "username")
        .distinct()
        .order_by("username")
    )
    for role, username in rows:
        if role in found and username not in found[role]:
            found[role].append(username)
    return found


def approval_progress(record: DecisionRecord, *, viewer: User | None = None) -> dict[str, Any]:
    """Which required roles have decided and which are pending, and who may still decide for
    each: never the submitter, nor someone who has given a verdict on the record already (one
    person is not a committee). For a DRAFT, ``viewer`` is taken as its submitter to be, so
    that the page can warn before they submit.

    ``roles``: [{"role", "label", "verdict", "by", "eligible"}] in the record's order;
    ``pending``: the roles without a verdict; ``no_approver``: pending roles nobody may decide.
    """
    verdicts = {a.role: a for a in Approval.objects.filter(record=record).select_related("user")}
    exclude = {a.user_id for a in verdicts.values()}
    if record.status == DecisionRecord.Status.DRAFT:
        if viewer is not None:
            exclude.add(viewer.pk)
    elif record.submitted_by_id is not None:
        exclude.add(record.submitted_by_id)
    pending = [r for r in record.required_roles if r not in verdicts]
    eligible = _approvers_by_role(record, pending, exclude)
    rows = []
    for role in record.required_roles:
        verdict = verdicts.get(role)
        rows.append(
            {
                "role": role,
                "label": Role(role).label if role in Role.values else role,
                "verdict": (
                    None
                    if verdict is None
                    else "approved"
                    if verdict.verdict == Approval.Verdict.APPROVE
                    else "rejected"
                ),
                "by": verdict.user.get_username() if verdict else "",
                "eligible": eligible.get(role, []),
            }
        )
    open_statuses = (DecisionRecord.Status.DRAFT, DecisionRecord.Status.IN_REVIEW)
    no_approver = (
        [r["role"] for r in rows if r["verdict"] is None and not r["eligible"]]
        if record.status in open_statuses
        else []
    )
    return {
        "roles": rows,
        "pending": pending,
        # The pending roles in words, for "Still pending: Platform and Finance."
        "pending_labels": [r["label"] for r in rows if r["verdict"] is None],
        "no_approver": no_approver,
        "no_approver_labels": [r["label"] for r in rows if r["role"] in no_approver],
    }


def unapprovable_warning(
    record: DecisionRecord, *, submitter: User, submitted: bool = False
) -> str:
    """What to tell the person about to submit (or who has just submitted) when a required role
    would have nobody to approve for it; empty when every role has someone."""
    labels = approval_progress(record, viewer=submitter)["no_approver_labels"]
    if not labels:
        return ""
    names = " and ".join(labels) if len(labels) < 3 else ", ".join(labels)
    return (
        f"{'Nobody' if submitted else 'Once you submit, nobody'} can approve for {names}: team "
        f"{record.team.name} has no other active member with that role (the person who submits "
        "a record approves for no role). Ask an administrator to add one"
        + (
            ", who can then approve here."
            if submitted
            else ", or take the role off the record before submitting."
        )
    )
