from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_http_methods

from apps.briefs.models import WorkloadBrief
from apps.briefs.selectors import brief_get_for_user
from apps.core.files import private_file_response
from apps.core.roles import BENCHMARK_EDITORS, has_role
from apps.core.users import signed_in

from . import charts, services
from .api.views import upload_too_large
from .display import (
    candidate_words,
    estimate_inputs_words,
    memory_results,
    model_words,
    quote_words,
    results_shown,
)
from .forms import ManualRunForm, UploadForm
from .manual import FAILURE_OPS_CHECKS
from .models import BenchmarkRun
from .selectors import (
    benchmark_run_get_for_user,
    benchmark_runs_for_brief,
    comparison_rows,
    results_table,
)


def _require_editor(request: HttpRequest) -> None:
    if not has_role(request.user, BENCHMARK_EDITORS):
        raise PermissionDenied("Only the platform role writes benchmark runs.")


@login_required
@require_GET
def brief_runs_page(request: HttpRequest, brief_id: int) -> HttpResponse:
    brief = brief_get_for_user(request.user, brief_id)
    runs = benchmark_runs_for_brief(brief)
    for run in runs:  # the quote a run ran on, in words (display.quote_words)
        run.quote_text = quote_words(run.quote) if run.quote is not None else ""  # type: ignore[attr-defined]
    figures = charts.run_figures(comparison_rows(runs))
    return render(
        request,
        "benchmarks/run_list.html",
        {
            "brief": brief,
            "runs": runs,
            "figures": figures,
            "can_edit": has_role(request.user, BENCHMARK_EDITORS),
        },
    )


@login_required
@require_GET
def run_detail_page(request: HttpRequest, pk: int) -> HttpResponse:
    run = benchmark_run_get_for_user(request.user, pk)
    checks = []
    if run.phase == BenchmarkRun.Phase.FAILURE_OPS:
        stored = (run.results or {}).get("checks") or {}
        checks = [
            {"key": key, "name": name, **stored[key]}
            for key, name in FAILURE_OPS_CHECKS.items()
            if key in stored
        ]
    return render(
        request,
        "benchmarks/run_detail.html",
        {
            "run": run,
            "brief": run.brief,
            "rows": results_shown(results_table(run))
            if run.phase == BenchmarkRun.Phase.THROUGHPUT_LATENCY
            else [],
            "checks": checks,
            "estimate": run.estimate_at_import or {},
            "estimate_inputs": estimate_inputs_words(run.estimate_at_import or {}),
            "candidate": candidate_words(run),
            "model": model_words(run.model),
            "memory_results": memory_results(run.results or {})
            if run.phase == BenchmarkRun.Phase.MEMORY_FIT
            else [],
            "conditions": sorted((run.conditions or {}).items()),
        },
    )


@login_required
@require_GET
def run_raw_download(request: HttpRequest, pk: int) -> FileResponse:
    """The results file as imported, to a member of the run's team (see apps.core.files)."""
    run = benchmark_run_get_for_user(request.user, pk)
    if not run.raw_file:
        raise Http404("This run was entered by hand: it has no raw file.")
    return private_file_response(run.raw_file, filename=run.raw_download_name)


def _after_import(
    request: HttpRequest, brief: WorkloadBrief, outcome: services.ImportOutcome
) -> HttpResponse:
    count = len(outcome.runs)
    if outcome.duplicate:
        messages.info(
            request, "This file was already imported for this candidate; nothing new saved."
        )
    else:
        messages.success(
            request,
            f"Imported {count} run{'s' if count != 1 else ''}; "
            "candidate tables are being recomputed.",
        )
    if count == 1:
        return redirect("benchmarks:detail", pk=outcome.runs[0].pk)
    return redirect("benchmarks:brief-runs", brief_id=brief.pk)


@csrf_protect
def _upload_post(request: HttpRequest, brief: WorkloadBrief) -> HttpResponse:
    form = UploadForm(request.POST, request.FILES, brief=brief)
    if form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            outcome = services.benchmark_runs_import(
                brief=brief,
                **form.candidate(),
                tool=form.cleaned_data["tool"] or None,
                conditions=form.conditions(),
                proxy=form.cleaned_data["proxy"],
                raw=upload.read(),
                filename=upload.name or "result.json",
                created_by=signed_in(request.user),
            )
        except ValidationError as exc:
            form.add_service_errors(exc)
        else:
            return _after_import(request, brief, outcome)
    return render(request, "benchmarks/run_upload.html", {"form": form, "brief": brief}, status=400)


@csrf_exempt  # so that an oversized upload is refused before the CSRF check reads the body
@login_required
@require_http_methods(["GET", "POST"])
def run_upload_page(request: HttpRequest, brief_id: int) -> HttpResponse:
    brief = brief_get_for_user(request.user, brief_id)
    _require_editor(request)
    if request.method == "POST":
        reason = upload_too_large(request.META.get("CONTENT_LENGTH"))
        if reason:
            context = {"form": UploadForm(brief=brief), "brief": brief, "upload_error": reason}
            return render(request, "benchmarks/run_upload.html", context, status=400)
        return _upload_post(request, brief)  # CSRF is checked here, on a body of bounded size
    form = UploadForm(brief=brief)
    return render(request, "benchmarks/run_upload.html", {"form": form, "brief": brief})


@login_required
@require_http_methods(["GET", "POST"])
def run_manual_page(request: HttpRequest, brief_id: int) -> HttpResponse:
    brief = brief_get_for_user(request.user, brief_id)
    _require_editor(request)
    form = ManualRunForm(request.POST or None, brief=brief)
    if request.method == "POST" and form.is_valid():
        try:
            run = services.benchmark_run_create_manual(
                brief=brief,
                **form.candidate(),
                phase=form.cleaned_data["phase"],
                label=form.cleaned_data["label"],
                conditions=form.conditions(),
                results=form.results(),
                created_by=signed_in(request.user),
            )
        except ValidationError as exc:
            form.add_service_errors(exc, rename=form.error_names())
        else:
            messages.success(request, "Run saved; candidate tables are being recomputed.")
            return redirect("benchmarks:detail", pk=run.pk)
    return render(request, "benchmarks/run_manual.html", {"form": form, "brief": brief})
