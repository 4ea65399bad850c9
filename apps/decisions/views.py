"""Decision-record pages: list, open from a brief's candidate table, detail with the frozen
evidence, review actions (POST only), exports, verify, and the procurement checklist."""

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.briefs.models import WorkloadBrief
from apps.briefs.selectors import brief_get_for_user
from apps.catalog.models import Gpu, GpuSystem
from apps.core.files import private_file_response
from apps.core.query import MAX_ID
from apps.core.roles import DECISION_AUTHORS, QUOTE_EDITORS, Role, has_role, roles_of
from apps.core.users import signed_in
from apps.engine.capacity_model import CapacityOption
from apps.engine.costing import PricingTerm
from apps.engine.costing_breakeven import capacity_option_for_term
from apps.finance import charts
from apps.finance.selectors import ranking_for_brief
from apps.finance.shown import ShownRow, shown_rows
from apps.finance.units import unit_words
from apps.quotes.models import ApiRoute, Quote
from apps.quotes.selectors import quote_get_for_user

from . import services
from .candidate_words import API_TERM_WORDS, candidate_labels
from .checklist import QUESTIONS
from .exports import decision_record_csv
from .forms import (
    ChecklistForm,
    DecisionRecordForm,
    SubmitForm,
    VerdictForm,
    encode_candidate,
    initial_criteria,
)
from .frozen import snapshot_of
from .models import DecisionRecord
from .pdf_store import decision_record_pdf_response
from .selectors import (
    EVIDENCE_PAGE_URL,
    alternatives_described,
    approval_progress,
    approvals_for_record,
    audit_trail_for_record,
    candidate_label,
    candidate_rows,
    checklist_answer_with_file,
    checklist_completeness_by_quote,
    checklist_for_quote,
    checklist_frozen_by_section,
    checklist_team_for_user,
    checklist_warnings,
    chosen_candidate,
    decision_record_get_for_user,
    decision_record_list_for_user,
    inputs_changed,
    record_verify,
    roles_user_may_decide,
    unapprovable_warning,
    why_user_may_not_decide,
)

Status = DecisionRecord.Status
PLANS = ("MIX", "DISAGG")


def capacity_option_for_quote(quote: Quote) -> CapacityOption:
    """The capacity option a record choosing ``quote`` is (the engine's one mapping)."""
    return capacity_option_for_term(
        PricingTerm(quote.pricing_term),
        commitment_months=quote.minimum_commitment_months,
        bought=quote.capex_per_gpu is not None,
    )


def capacity_option_for_plan(row: ShownRow) -> CapacityOption:
    """A serving plan's option: that of its largest pool (most GPUs)."""
    parts = row.get("mix") or row.get("pools") or []
    if not parts:
        return CapacityOption.RENT_ON_DEMAND

    def gpus(part: Mapping[str, Any]) -> int:  # a MIX part, or a DISAGG pool's JSON
        return int(part.get("gpu_count") or part.get("gpus_per_instance") or 1) * int(
            part.get("replicas") or part.get("instances") or 1
        )

    largest = max(parts, key=gpus)
    return capacity_option_for_term(PricingTerm(largest["pricing_term"]))


def _require_author(request: HttpRequest) -> None:
    if not has_role(request.user, DECISION_AUTHORS):
        raise PermissionDenied("Decision records are written by platform, finance or procurement.")


def _add_errors(form: Any, exc: ValidationError) -> None:
    if hasattr(exc, "error_dict"):
        for field, errors in exc.message_dict.items():
            for error in errors:
                form.add_error(field if field in form.fields else None, error)
    else:
        for error in exc.messages:
            form.add_error(None, error)


def _sentence(message: str) -> str:
    """A service's refusal as a sentence on the page ("say why …" -> "Say why ….")."""
    text = message.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _int(value: str | None) -> int | None:
    """A row id from the query string, or None: ASCII digits that fit a BigAutoField only
    (``"²".isdigit()`` is true, and ``int("²")`` raises)."""
    if value and len(value) <= len(str(MAX_ID)) and value.isascii() and value.isdigit():
        return int(value) if int(value) <= MAX_ID else None
    return None


# --- List and detail -----------------------------------------------------------------------


@login_required
@require_GET
def decision_list_page(request: HttpRequest) -> HttpResponse:
    page = Paginator(decision_record_list_for_user(request.user), 50).get_page(
        request.GET.get("page")
    )
    records = [(r, chosen_candidate(r)["label"]) for r in page.object_list]
    return render(request, "decisions/record_list.html", {"page": page, "records": records})


@login_required
@require_GET
def decision_detail_page(request: HttpRequest, pk: int) -> HttpResponse:
    record = decision_record_get_for_user(request.user, pk)
    is_author = has_role(request.user, DECISION_AUTHORS)
    snap = snapshot_of(record)
    snap_table = snap.get("candidate_table", {})
    rows = candidate_rows(record)
    currency, unit = snap_table.get("currency") or "USD", unit_words(snap_table.get("unit"))
    figures = []
    if any(r["effective_unit_cost"] is not None for r in rows):
        for r in rows:  # the bars read as the table's rows (told apart by region, not ids)
            r["chart_label"] = r["label"]
        figure = charts.unit_cost_figure(shown_rows(rows), unit, currency)
        figures.append(("decision-unit-cost-chart", "decision-unit-cost-data", figure))
    chosen = chosen_candidate(record)
    live_checklist = (
        checklist_completeness_by_quote([record.chosen_quote_id], team_id=record.team_id)[
            record.chosen_quote_id
        ]
        if record.chosen_quote_id
        else None
    )
    user = signed_in(request.user)
    held = [r for r in DECISION_AUTHORS if r in roles_of(user)]
    may_submit_as = services.submitting_roles(record, user) if is_author else []
    open_replacement = record.replacements.exclude(status=Status.REJECTED).first()
    submit_roles = [(r.value, r.label) for r in held if r in may_submit_as]
    can_edit = is_author and record.status == Status.DRAFT
    return render(
        request,
        "decisions/record_detail.html",
        {
            "record": record,
            "chosen": chosen,
            "alternatives": alternatives_described(record),
            "rows": rows,
            "currency": currency,
            "unit": unit,
            "computed_at": snap_table.get("computed_at"),
            "criteria": list((record.acceptance_criteria or {}).items()),
            "checklist": snap.get("checklist", {}),
            # Frozen with the record (records frozen before the FX-rate table have none).
            "fx_rates": snap.get("fx_rates", []),
            "checklist_sections": checklist_frozen_by_section(record),
            "checklist_warnings": checklist_warnings(record),
            "live_checklist": live_checklist,
            "approvals": approvals_for_record(record),
            "audit_trail": audit_trail_for_record(record),
            "inputs_changed": inputs_changed(record),
            "figures": figures,
            "can_edit": can_edit,
            "submit_roles": submit_roles,
            "progress": approval_progress(record, viewer=user),
            "submit_warning": unapprovable_warning(record, submitter=user)
            if can_edit and submit_roles
            else "",
            "decide_roles": roles_user_may_decide(record, signed_in(request.user))
            if is_author
            else [],
            "why_not_deciding": why_user_may_not_decide(record, signed_in(request.user))
            if is_author
            else "",
            "can_supersede": is_author
            and record.status == Status.APPROVED
            and not open_replacement,
            "open_replacement": open_replacement,
        },
    )


# --- Open and edit -------------------------------------------------------------------------


def _brief_criteria(brief: WorkloadBrief) -> dict[str, Any]:
    return {
        "latency_percentile": brief.latency_percentile or None,
        "ttft_target_ms": brief.ttft_target_ms,
        "itl_target_ms": brief.itl_target_ms,
        "e2e_target_ms": brief.e2e_target_ms,
        "acceptance_rate": brief.acceptance_rate,
    }


def _candidates(
    brief: WorkloadBrief, *, except_quote: int | None, except_route: int | None
) -> list[tuple[str, str]]:
    choices = []
    names = dict(Gpu.objects.values_list("slug", "name"))
    names.update(GpuSystem.objects.values_list("slug", "name"))
    for row in ranking_for_brief(brief)["rows"]:
        if row["quote_id"] is None and row["api_route_id"] is None:
            continue  # a serving plan: chosen on its own (?plan=), not listed as an alternative
        if row["quote_id"] is not None and row["quote_id"] == except_quote:
            continue
        if row["api_route_id"] is not None and row["api_route_id"] == except_route:
            continue
        key = encode_candidate(quote_id=row["quote_id"], api_route_id=row["api_route_id"])
        choices.append((key, row))
    rows = [row for _, row in choices]
    quote_ids = [r["quote_id"] for r in rows if r["quote_id"] is not None]
    quotes: dict[Any, dict[str, Any]] = {
        q["id"]: dict(q)
        for q in Quote.objects.filter(pk__in=quote_ids).values("id", "region", "quote_date")
    }
    labels = candidate_labels(rows, names, quotes)
    return [(key, label) for (key, _), label in zip(choices, labels, strict=True)]


def _chosen_from_query(
    request: HttpRequest, brief: WorkloadBrief
) -> tuple[Quote | None, ApiRoute | None]:
    quote_id, route_id = _int(request.GET.get("quote")), _int(request.GET.get("route"))
    if (quote_id is None) == (route_id is None) or request.GET.get("plan"):
        return None, None
    if quote_id is not None:
        quote = quote_get_for_user(request.user, quote_id)
        if quote.confidential_to_id not in (None, brief.team_id):
            raise Http404("No such quote.")
        return quote, None
    # route_id is set here: exactly one of the two ids is.
    route = ApiRoute.objects.select_related("provider").filter(pk=route_id).first()  # type: ignore[misc]
    if route is None:
        return None, None
    return None, route


@login_required
@require_http_methods(["GET", "POST"])
def decision_create_page(request: HttpRequest) -> HttpResponse:
    brief_id = _int(request.GET.get("brief"))
    if brief_id is None:
        messages.error(request, "Open a decision record from a brief's candidate table.")
        return redirect("decisions:list")
    brief = brief_get_for_user(request.user, brief_id)
    _require_author(request)
    quote, route = _chosen_from_query(request, brief)
    plan = request.GET.get("plan") or ""
    plan_row = (
        next((r for r in ranking_for_brief(brief)["rows"] if r["candidate_kind"] == plan), None)
        if plan in PLANS
        else None
    )
    if quote is None and route is None and plan_row is None:
        messages.error(
            request,
            "Choose one candidate (a quote, an API route or a serving plan) from the table.",
        )
        return redirect("briefs:finance", pk=brief.pk)
    if quote is not None:
        term = quote.get_pricing_term_display()  # type: ignore[attr-defined]
        label = f"{quote.provider.name} · {quote.gpu or quote.system} · {term}"
        label += f" · {quote.region}" if quote.region else ""
        capacity = capacity_option_for_quote(quote)
    elif route is not None:
        label = f"{route.provider.name} · {route.model} · {API_TERM_WORDS}"
        capacity = CapacityOption.API
    elif plan_row is not None:
        names = dict(Gpu.objects.values_list("slug", "name"))
        label = candidate_label(plan_row, names)
        capacity = capacity_option_for_plan(plan_row)
    else:  # pragma: no cover - returned above
        raise Http404("No such candidate.")
    candidates = _candidates(
        brief,
        except_quote=quote.pk if quote else None,
        except_route=route.pk if route else None,
    )
    form = DecisionRecordForm(
        request.POST or None,
        candidates=candidates,
        initial={"capacity_model": capacity, **initial_criteria(_brief_criteria(brief))},
    )
    if request.method == "POST" and form.is_valid():
        try:
            record = services.decision_record_create(
                brief=brief,
                created_by=signed_in(request.user),
                chosen_quote=quote,
                chosen_api_route=route,
                chosen_plan=plan if plan_row is not None else "",
                **form.service_fields(),
            )
        except ValidationError as exc:
            _add_errors(form, exc)
        else:
            messages.success(request, "Decision record opened; its evidence is frozen.")
            return redirect("decisions:detail", pk=record.pk)
    return render(
        request,
        "decisions/record_form.html",
        {"form": form, "brief": brief, "chosen_label": label, "record": None},
    )


@login_required
@require_http_methods(["GET", "POST"])
def decision_edit_page(request: HttpRequest, pk: int) -> HttpResponse:
    record = decision_record_get_for_user(request.user, pk)
    _require_author(request)
    if record.status != Status.DRAFT:
        messages.error(request, f"Only a DRAFT can be edited; this record is {record.status}.")
        return redirect("decisions:detail", pk=record.pk)
    chosen = chosen_candidate(record)
    candidates = _candidates(
        record.brief, except_quote=chosen["quote_id"], except_route=chosen["api_route_id"]
    )
    selected = [
        encode_candidate(quote_id=a.get("quote_id"), api_route_id=a.get("api_route_id"))
        for a in record.alternatives
    ]
    known = {key for key, _ in candidates}
    candidates += [(a, a) for a in selected if a not in known]
    form = DecisionRecordForm(
        request.POST or None,
        candidates=candidates,
        initial={
            "title": record.title,
            "capacity_model": record.capacity_model,
            "rationale": record.rationale,
            "required_roles": record.required_roles,
            "alternatives": selected,
            **initial_criteria(record.acceptance_criteria),
        },
    )
    if request.method == "POST" and form.is_valid():
        fields = form.service_fields()
        fields["title"] = fields["title"] or record.title
        try:
            services.decision_record_update(record=record, user=signed_in(request.user), **fields)
        except services.TransitionRefused as exc:
            messages.error(request, " ".join(exc.messages))
            return redirect("decisions:detail", pk=record.pk)
        except ValidationError as exc:
            _add_errors(form, exc)
        else:
            messages.success(request, "Draft saved.")
            return redirect("decisions:detail", pk=record.pk)
    return render(
        request,
        "decisions/record_form.html",
        {"form": form, "brief": record.brief, "chosen_label": chosen["label"], "record": record},
    )


# --- Review actions (POST only) -------------------------------------------------------------


def _act(
    request: HttpRequest, pk: int, call: Callable[..., DecisionRecord], success: str, **kwargs: Any
) -> HttpResponse:
    """Run one workflow service for the record; a refused transition, bad input or a refusal
    that another person must act (services.NotThisPerson) becomes a message on the detail
    page (nothing changes); a role the user lacks is a 403."""
    record = decision_record_get_for_user(request.user, pk)
    _require_author(request)
    try:
        result = call(record=record, user=request.user, **kwargs)
    except ValidationError as exc:  # TransitionRefused included
        messages.error(request, " ".join(_sentence(m) for m in exc.messages))
        return redirect("decisions:detail", pk=record.pk)
    except services.NotThisPerson as exc:
        messages.error(request, str(exc))
        return redirect("decisions:detail", pk=record.pk)
    messages.success(request, success)
    return redirect("decisions:detail", pk=result.pk)


@login_required
@require_POST
def decision_submit_action(request: HttpRequest, pk: int) -> HttpResponse:
    form = SubmitForm(request.POST)
    role = form.cleaned_data["role"] if form.is_valid() else None
    response = _act(
        request, pk, services.decision_record_submit, "Submitted for review.", role=role or None
    )
    record = decision_record_get_for_user(request.user, pk)
    if record.status == Status.IN_REVIEW and record.submitted_by_id == request.user.pk:
        warning = unapprovable_warning(record, submitter=signed_in(request.user), submitted=True)
        if warning:
            messages.warning(request, warning)
    return response


def _role_words(role: str) -> str:
    return str(Role(role).label) if role in Role.values else role


@login_required
@require_POST
def decision_approve_action(request: HttpRequest, pk: int) -> HttpResponse:
    form = VerdictForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose the role you approve for.")
        return redirect("decisions:detail", pk=pk)
    role = form.cleaned_data["role"]
    return _act(
        request,
        pk,
        services.decision_record_approve,
        f"Approved as {_role_words(role)}.",
        role=role,
        comment=form.cleaned_data["comment"],
        acknowledge_warnings=form.cleaned_data["acknowledge_warnings"],
    )


@login_required
@require_POST
def decision_reject_action(request: HttpRequest, pk: int) -> HttpResponse:
    form = VerdictForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose the role you reject for.")
        return redirect("decisions:detail", pk=pk)
    role = form.cleaned_data["role"]
    return _act(
        request,
        pk,
        services.decision_record_reject,
        f"Rejected as {_role_words(role)}.",
        role=role,
        reason=form.cleaned_data["reason"],
    )


@login_required
@require_POST
def decision_supersede_action(request: HttpRequest, pk: int) -> HttpResponse:
    return _act(
        request,
        pk,
        services.decision_record_supersede,
        "A new draft is open; once approved it supersedes the old record.",
    )


@login_required
@require_POST
def decision_refresh_action(request: HttpRequest, pk: int) -> HttpResponse:
    return _act(
        request, pk, services.decision_record_refresh, "Evidence re-frozen from today's inputs."
    )


# --- Exports and verify --------------------------------------------------------------------


@login_required
@require_GET
def decision_export_csv(request: HttpRequest, pk: int) -> HttpResponse:
    record = decision_record_get_for_user(request.user, pk)
    response = HttpResponse(
        decision_record_csv(snapshot_of(record)), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="decision-{record.pk}.csv"'
    return response


@login_required
@require_GET
def decision_export_pdf(request: HttpRequest, pk: int) -> HttpResponse:
    record = decision_record_get_for_user(request.user, pk)
    return decision_record_pdf_response(record)


@login_required
@require_GET
def decision_verify_page(request: HttpRequest, pk: int) -> HttpResponse:
    record = decision_record_get_for_user(request.user, pk)
    return render(
        request, "decisions/verify.html", {"record": record, "result": record_verify(record)}
    )


# --- The procurement checklist -------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def quote_checklist_page(request: HttpRequest, quote_id: int) -> HttpResponse:
    """Every question in one form: one POST saves all the answers given or changed, at once;
    when any is refused nothing is saved and every typed value comes back with the errors."""
    quote = quote_get_for_user(request.user, quote_id)
    can_edit = has_role(request.user, QUOTE_EDITORS)
    if request.method == "POST" and not can_edit:
        raise PermissionDenied("Only the procurement role answers the checklist.")
    team = checklist_team_for_user(request.user, request.GET.get("team", ""))
    checklist = checklist_for_quote(quote, team=team, evidence_url_name=EVIDENCE_PAGE_URL)
    items = [item for section in checklist["sections"] for item in section["questions"]]
    form = ChecklistForm(request.POST or None, request.FILES or None, items=items)
    if request.method == "POST" and form.is_valid():
        answers = form.answers()
        try:
            services.checklist_answers_set(
                quote=quote, user=signed_in(request.user), team=team, answers=answers
            )
        except services.ChecklistRefused as exc:
            for key, error in exc.errors.items():
                _add_errors(form.forms[key], error)
        else:
            saved = len(answers)
            messages.success(
                request,
                f"{saved} answer{'s' if saved != 1 else ''} saved."
                if saved
                else "No answer changed.",
            )
            url = reverse("decisions:checklist", kwargs={"quote_id": quote.pk})
            return redirect(f"{url}?{urlencode({'team': team.slug})}")
    for item in items:
        item["form"] = form.forms[item["question"]]
    return render(
        request,
        "decisions/checklist.html",
        {
            "quote": quote,
            "team": team,
            "checklist": checklist,
            "can_edit": can_edit,
            "question_count": len(QUESTIONS),
            "questions_with_errors": form.questions_with_errors()
            if request.method == "POST"
            else [],
            "texts": {q.key: q.text for q in QUESTIONS},
        },
    )


@login_required
@require_GET
def quote_checklist_evidence_download(
    request: HttpRequest, quote_id: int, question: str
) -> FileResponse:
    """A team's answer's evidence file, to its members who may see the quote (see
    apps.core.files); another team's file is 404."""
    quote = quote_get_for_user(request.user, quote_id)
    team = checklist_team_for_user(request.user, request.GET.get("team", ""))
    answer = checklist_answer_with_file(quote, question, team=team)
    return private_file_response(answer.evidence_file, filename=answer.evidence_download_name)
