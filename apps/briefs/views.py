from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from apps.benchmarks import charts as run_charts
from apps.benchmarks.selectors import benchmark_runs_for_brief, comparison_rows
from apps.core.roles import BRIEF_EDITORS, has_role
from apps.core.users import signed_in
from apps.engine import EngineInputError, request_model_to_dict
from apps.finance.configuration import fit_row, fit_table

from .charts import memory_breakdown_figure
from .choices import Tooling
from .contract import model_body, request_for_brief
from .display import fit_rows, model_alone, model_in_words, note_parts, read_as
from .forms import BriefForm, missing_in_words, weights_for
from .models import WorkloadBrief
from .selectors import (
    brief_get_for_user,
    brief_list_for_user,
    teams_for_user,
)
from .services import brief_create, brief_update


def _require_editor(request: HttpRequest) -> None:
    if not has_role(request.user, BRIEF_EDITORS):
        raise PermissionDenied("Only the platform role writes briefs.")


def _fields(form: BriefForm) -> dict[str, object]:
    return {k: v for k, v in form.cleaned_data.items() if k != "team"}


def _saved_message(request: HttpRequest, brief: WorkloadBrief) -> None:
    """Say the brief was saved, and what it still needs for a ranking when it is incomplete
    (a QLoRA brief without its sharding says "Sharding")."""
    missing = missing_in_words(brief.missing_fields())
    if missing:
        messages.warning(
            request,
            f"Brief “{brief.name}” saved. It produces no ranking until it has: "
            + "; ".join(missing)
            + ".",
        )
    else:
        messages.success(
            request, f"Brief “{brief.name}” saved; its candidate table is being recomputed."
        )


@login_required
def brief_list_page(request: HttpRequest) -> HttpResponse:
    briefs = list(brief_list_for_user(request.user))
    return render(
        request,
        "briefs/brief_list.html",
        {"briefs": briefs, "can_edit": has_role(request.user, BRIEF_EDITORS)},
    )


@login_required
@require_http_methods(["GET", "POST"])
def brief_create_page(request: HttpRequest) -> HttpResponse:
    _require_editor(request)
    teams = teams_for_user(request.user)
    form = BriefForm(request.POST or None, teams=teams)
    if request.method == "POST" and form.is_valid():
        brief = brief_create(
            team=form.cleaned_data["team"], created_by=signed_in(request.user), **_fields(form)
        )
        _saved_message(request, brief)
        return redirect("briefs:detail", pk=brief.pk)
    return render(request, "briefs/brief_form.html", {"form": form, "brief": None})


@login_required
@require_http_methods(["GET", "POST"])
def brief_edit_page(request: HttpRequest, pk: int) -> HttpResponse:
    brief = brief_get_for_user(request.user, pk)
    _require_editor(request)
    teams = teams_for_user(request.user)
    form = BriefForm(request.POST or None, instance=brief, teams=teams)
    if request.method == "POST" and form.is_valid():
        fields = _fields(form)
        brief = brief_update(brief=brief, team=form.cleaned_data["team"], **fields)
        _saved_message(request, brief)
        return redirect("briefs:detail", pk=brief.pk)
    missing = missing_in_words(brief.missing_fields()) if request.method == "GET" else []
    return render(
        request, "briefs/brief_form.html", {"form": form, "brief": brief, "missing": missing}
    )


@login_required
def brief_detail_page(request: HttpRequest, pk: int) -> HttpResponse:
    brief = brief_get_for_user(request.user, pk)
    configured: list[dict[str, Any]] = []
    engine_error = None
    try:
        configured = [fit_row(c) for c in fit_table(brief)]
    except EngineInputError as exc:
        engine_error = f"{exc.field}: {exc.message}"
    notes = sorted({note for c in configured for note in c["notes"]})
    table = fit_rows(brief, configured)
    by_gpu = {c["gpu"]: c["estimate"] for c in configured}
    estimates = [by_gpu[slug] for slug in table["order"]]  # the chart in the table's order
    run_figures = run_charts.run_figures(comparison_rows(benchmark_runs_for_brief(brief)))
    # What a pasted config or explicit shape was read as (the estimate response's `model`); a
    # preset is known by its name.
    summary = None
    if not brief.model_preset and model_body(brief) is not None:
        try:
            summary = request_model_to_dict(request_for_brief(brief))
        except EngineInputError:
            summary = model_alone(brief)  # a brief not complete yet: its model still reads
    return render(
        request,
        "briefs/brief_detail.html",
        {
            "brief": brief,
            "weights": weights_for(brief.weight_precision, model_body(brief)),
            "model_words": model_in_words(brief),
            "read_as": read_as(summary),
            "missing": missing_in_words(brief.missing_fields()),
            "can_edit": has_role(request.user, BRIEF_EDITORS),
            "estimates": estimates,
            "fit": table,
            "best": table["rows"][0] if table["rows"] and table["rows"][0]["meets"] else None,
            "tooling": ", ".join(dict(Tooling.choices).get(t, t) for t in brief.tooling or []),
            "engine_error": engine_error,
            "assumptions": [note_parts(n) for n in notes],
            "memory_chart": memory_breakdown_figure(estimates, table["names"])
            if estimates
            else None,
            "run_figures": run_figures,
        },
    )
