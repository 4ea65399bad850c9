"""The procurement page "Update API prices": genai-prices' list, as a diff, then applied."""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from apps.core.roles import QUOTE_EDITORS, has_role

from . import api_prices
from .api_prices_text import change_text, figure, share
from .forms_api_prices import ApiPricesForm


def _options(form: ApiPricesForm) -> dict[str, Any]:
    data = form.cleaned_data
    return {"day": data["date"], "provider": data["provider"], "all_models": data["all_models"]}


def _new_rows(plan: api_prices.ImportPlan, limit: int) -> list[dict[str, Any]]:
    return [
        {
            "provider": r.provider_name,
            "model": r.model,
            "preset": r.model_preset,
            "input": figure(r.price.input_price_per_mtok),
            "output": figure(r.price.output_price_per_mtok),
            "cached": figure(r.price.cached_input_price_per_mtok),
            "batch": share(r.price.batch_discount),
            "since": r.price.effective_from,
            "notes": r.price.notes,
        }
        for r in plan.new[:limit]
    ]


def _changed_rows(plan: api_prices.ImportPlan, limit: int) -> list[dict[str, Any]]:
    return [
        {
            "route_id": c.route_id,
            "provider": c.listed.provider_name,
            "model": c.listed.model,
            "since": c.listed.price.effective_from,
            "changes": [
                (f.label, change_text(f.label, f.old), change_text(f.label, f.new))
                for f in c.changes
            ],
        }
        for c in plan.changed[:limit]
    ]


def _field_errors(form: ApiPricesForm, exc: ValidationError) -> None:
    errors = exc.message_dict if hasattr(exc, "error_dict") else {"": exc.messages}
    for name, messages_ in errors.items():
        for error in messages_:
            form.add_error(name if name in form.fields else None, error)


@login_required
@require_http_methods(["GET", "POST"])
def api_prices_page(request: HttpRequest) -> HttpResponse:
    """GET with a date: the diff of what an import would change, and a button to apply it.
    POST: apply exactly the diff shown (its fingerprint); if the prices changed meanwhile,
    the new diff is shown again and nothing is written."""
    if not has_role(request.user, QUOTE_EDITORS):
        raise PermissionDenied("Only procurement updates API prices.")
    submitted = request.POST if request.method == "POST" else request.GET
    form = ApiPricesForm(submitted if "date" in submitted or request.method == "POST" else None)
    plan = None
    changed_meanwhile = False
    if form.is_bound and form.is_valid():
        try:
            if request.method == "POST":
                applied = api_prices.apply_import(
                    **_options(form), expected_fingerprint=request.POST.get("fingerprint", "")
                )
                messages.success(
                    request,
                    f"API prices updated from {applied.source}: {len(applied.new)} new routes, "
                    f"{len(applied.changed)} changed, {applied.unchanged} unchanged; candidate "
                    f"tables of {applied.affected_briefs} briefs are being recomputed.",
                )
                return redirect("quotes:list")
            plan = api_prices.plan_import(**_options(form))
        except api_prices.PlanChanged as exc:
            plan, changed_meanwhile = exc.plan, True
        except ValidationError as exc:
            _field_errors(form, exc)
    limit = api_prices.PAGE_LIST_LIMIT
    return render(
        request,
        "quotes/api_prices.html",
        {
            "form": form,
            "plan": plan,
            "new": _new_rows(plan, limit) if plan else [],
            "changed": _changed_rows(plan, limit) if plan else [],
            "more_new": max(len(plan.new) - limit, 0) if plan else 0,
            "more_changed": max(len(plan.changed) - limit, 0) if plan else 0,
            "fingerprint": plan.fingerprint() if plan else "",
            "changed_meanwhile": changed_meanwhile,
            "source": api_prices.source_label(),
        },
    )
