from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.briefs.selectors import teams_for_user
from apps.catalog.models import Gpu, GpuSystem
from apps.core.roles import QUOTE_EDITORS, has_role
from apps.core.users import signed_in

from . import services
from .comparison import base_equivalents, price_comparison
from .csv_rows import MAX_CSV_BYTES, QuoteRowParser
from .csv_template import column_help, template_csv
from .forms import ApiRouteForm, ProviderForm, QuoteForm, QuoteImportForm
from .models import ApiRoute, Provider, Quote
from .selectors import (
    api_route_list,
    provider_list,
    quote_change_refusal,
    quote_get_for_user,
    quote_ids_user_may_change,
    quote_is_stale,
    quote_list_for_user,
)


def _require_quote_owner(request: HttpRequest, quote: Quote) -> None:
    """Only the team that entered a quote (or a superuser) edits or retires it."""
    refusal = quote_change_refusal(request.user, quote)
    if refusal is not None:
        raise PermissionDenied(refusal)


def _require_procurement(request: HttpRequest) -> None:
    if not has_role(request.user, QUOTE_EDITORS):
        raise PermissionDenied("Only procurement writes quotes and API routes.")


def quote_words(quote: Quote) -> str:
    """provider · GPU (or system) · term · region: how a message names a quote."""
    what = quote.gpu.name if quote.gpu else quote.system.name if quote.system else "GPU"
    term = quote.get_pricing_term_display()  # type: ignore[attr-defined]
    return " · ".join(p for p in (quote.provider.name, what, term, quote.region) if p)


def _form_errors(form: Any, exc: ValidationError) -> None:
    for field, errors in exc.message_dict.items():
        for error in errors:
            form.add_error(field if field in form.fields else None, error)


@login_required
def quote_list_page(request: HttpRequest) -> HttpResponse:
    today = timezone.localdate()
    show_retired = request.GET.get("retired") == "1"
    listed = list(quote_list_for_user(request.user, include_retired=show_retired))
    base, equivalents = base_equivalents(listed)
    changeable = quote_ids_user_may_change(request.user, listed)
    quotes = [
        {
            "quote": q,
            "may_change": q.pk in changeable,
            "stale": quote_is_stale(q, today=today),
            "age": (today - q.quote_date).days,
            **equivalents[q.pk],
        }
        for q in listed
    ]
    return render(
        request,
        "quotes/quote_list.html",
        {
            "quotes": quotes,
            "base_currency": base,
            "routes": list(api_route_list()),
            "can_edit": has_role(request.user, QUOTE_EDITORS),
            "show_retired": show_retired,
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def quote_edit_page(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    _require_procurement(request)
    quote = quote_get_for_user(request.user, pk) if pk else None
    if quote is not None:
        _require_quote_owner(request, quote)
    form = QuoteForm(request.POST or None, instance=quote, teams=teams_for_user(request.user))
    if request.method == "POST" and form.is_valid():
        fields = dict(form.cleaned_data)
        try:
            if quote is None:
                saved = services.quote_create(created_by=signed_in(request.user), **fields)
            else:
                saved = services.quote_update(quote=quote, user=signed_in(request.user), **fields)
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            messages.success(
                request,
                f"Quote #{saved.pk} saved ({quote_words(saved)}); the candidate tables that "
                "use it are being recomputed.",
            )
            return redirect(reverse("quotes:list") + f"#quote-{saved.pk}")
    return render(request, "quotes/quote_form.html", {"form": form, "quote": quote})


@login_required
@require_POST
def quote_retire_page(request: HttpRequest, pk: int) -> HttpResponse:
    _require_procurement(request)
    quote = quote_get_for_user(request.user, pk)
    _require_quote_owner(request, quote)
    services.quote_retire(quote=quote)
    messages.success(
        request,
        f"Quote #{quote.pk} retired ({quote_words(quote)}). Decision records that cite it keep it.",
    )
    return redirect("quotes:list")


@login_required
@require_http_methods(["GET", "POST"])
def quote_import_page(request: HttpRequest) -> HttpResponse:
    _require_procurement(request)
    form = QuoteImportForm(request.POST or None, request.FILES or None)
    row_errors: list[services.RowError] = []
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            if upload.size > MAX_CSV_BYTES:
                raise ValueError("Larger than 2 MB: split the file.")
            text = upload.read().decode("utf-8-sig")
        except UnicodeDecodeError:
            form.add_error("file", "Not UTF-8 text.")
        except ValueError as exc:
            form.add_error("file", str(exc))
        else:
            try:
                imported = services.quotes_import_csv(
                    text=text, parse_row=QuoteRowParser(), created_by=signed_in(request.user)
                )
            except services.QuoteImportError as exc:
                row_errors = exc.errors
            else:
                messages.success(request, f"Imported {len(imported)} quotes.")
                return redirect("quotes:list")
    return render(
        request,
        "quotes/quote_import.html",
        {
            "form": form,
            "row_errors": row_errors,
            "columns": column_help(),
            "gpus": list(Gpu.objects.order_by("slug").values_list("slug", "name")),
            "systems": list(GpuSystem.objects.order_by("slug").values_list("slug", "name")),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def api_route_edit_page(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    _require_procurement(request)
    route = get_object_or_404(ApiRoute, pk=pk) if pk else None
    form = ApiRouteForm(request.POST or None, instance=route)
    if request.method == "POST" and form.is_valid():
        try:
            if route is None:
                saved_route = services.api_route_create(**form.cleaned_data)
            else:
                saved_route = services.api_route_update(route=route, **form.cleaned_data)
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            messages.success(
                request,
                f"API route saved ({saved_route.provider.name} · {saved_route.model}); the "
                "candidate tables that use it are being recomputed.",
            )
            return redirect(reverse("quotes:list") + f"#route-{saved_route.pk}")
    windows = sorted(route.price_windows if route else [], key=lambda w: str(w["start"]))
    return render(
        request,
        "quotes/api_route_form.html",
        {"form": form, "route": route, "windows": windows},
    )


@login_required
@require_POST
def api_route_retire_page(request: HttpRequest, pk: int) -> HttpResponse:
    _require_procurement(request)
    services.api_route_retire(route=get_object_or_404(ApiRoute, pk=pk))
    messages.success(request, "API route retired.")
    return redirect("quotes:list")


# --- Providers -------------------------------------------------------------------------------


@login_required
def provider_list_page(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "quotes/provider_list.html",
        {"providers": list(provider_list()), "can_edit": has_role(request.user, QUOTE_EDITORS)},
    )


@login_required
@require_http_methods(["GET", "POST"])
def provider_edit_page(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    if not has_role(request.user, QUOTE_EDITORS):
        raise PermissionDenied("Only procurement adds and edits providers.")
    provider = get_object_or_404(Provider, pk=pk) if pk else None
    form = ProviderForm(request.POST or None, instance=provider)
    if request.method == "POST" and form.is_valid():
        fields = {name: form.cleaned_data[name] for name in ("name", "website")}
        try:
            if provider is None:
                saved = services.provider_create(**fields)
            else:
                saved = services.provider_update(provider=provider, **fields)
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            messages.success(request, f"Provider {saved.name} saved.")
            return redirect("quotes:providers")
    return render(request, "quotes/provider_form.html", {"form": form, "provider": provider})


# --- Price comparison ------------------------------------------------------------------------


@login_required
@require_GET
def price_comparison_page(request: HttpRequest, gpu_slug: str) -> HttpResponse:
    gpu = get_object_or_404(Gpu, slug=gpu_slug)
    context = price_comparison(request.user, gpu, today=timezone.localdate())
    return render(request, "quotes/price_comparison.html", context)


# --- The CSV template ------------------------------------------------------------------------


@login_required
@require_GET
def quote_import_template(request: HttpRequest) -> HttpResponse:
    """The import's columns as a CSV file: the header row and one example row."""
    first_gpu = Gpu.objects.order_by("slug").values_list("slug", flat=True).first()
    response = HttpResponse(
        template_csv(gpu_slug=first_gpu), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = 'attachment; filename="quote-import-template.csv"'
    return response
