"""/quotes/import-catalog/: procurement imports a SkyPilot or gpuhunt catalog file."""

from decimal import Decimal

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from apps.catalog.models import Gpu
from apps.core import bounds
from apps.core.roles import QUOTE_EDITORS, has_role
from apps.core.users import signed_in

from . import catalog_import
from .catalog_names import FAMILIES
from .catalog_rows import FORMATS
from .models import TERM_LABELS, Provider
from .services import QuoteImportError, RowError

OUTCOME_WORDS = {"created": "Added", "updated": "New price", "refreshed": "Same price, re-dated",
                "unchanged": "Unchanged",
                "retired": "Retired: replaced by its instance sizes"}  # fmt: skip


class DateInput(forms.DateInput):
    input_type = "date"


class CatalogImportForm(forms.Form):
    file = forms.FileField(
        help_text="A SkyPilot vms.csv or a gpuhunt catalog CSV (up to "
        f"{catalog_import.MAX_CATALOG_BYTES / 2**20:g} MB)."
    )
    provider = forms.ModelChoiceField(
        queryset=Provider.objects.order_by("name"),
        help_text="The provider these prices are for (add it under Providers first).",
    )
    format = forms.ChoiceField(choices=list(FORMATS.items()), label="Catalog format")
    fetched_date = forms.DateField(
        required=False, widget=DateInput(), label="Fetched on",
        validators=[bounds.plausible_date],
        help_text="The day the catalog was fetched; each quote's date (empty: today; from "
        "2000 to tomorrow).",
    )  # fmt: skip


@login_required
@require_http_methods(["GET", "POST"])
def quote_catalog_import_page(request: HttpRequest) -> HttpResponse:
    if not has_role(request.user, QUOTE_EDITORS):
        raise PermissionDenied("Only procurement imports quotes.")
    form = CatalogImportForm(request.POST or None, request.FILES or None)
    row_errors: list[RowError] = []
    summary = None
    gpu_names = dict(Gpu.objects.values_list("slug", "name"))
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        upload = data["file"]
        try:
            text = catalog_import.catalog_upload_text(upload)
        except ValueError as exc:
            form.add_error("file", f"{str(exc)[0].upper()}{str(exc)[1:]}.")
        else:
            name = (upload.name or "")[:120]
            try:
                result = catalog_import.quotes_import_catalog(
                    text=text, fmt=data["format"], provider=data["provider"], filename=name,
                    fetched_date=data["fetched_date"], created_by=signed_in(request.user),
                )  # fmt: skip
            except QuoteImportError as exc:
                row_errors = exc.errors
            else:
                summary = catalog_import.catalog_import_summary(result)
                # Counts as words with thousands separators (no humanize app is installed).
                for name in ("rows", "created", "updated", "refreshed", "unchanged",
                             "retired", "skipped_rows", "briefs_queued"):  # fmt: skip
                    summary[name] = f"{summary[name]:,}" if summary[name] else summary[name]
                for skipped in summary["skipped"]:
                    skipped["rows"] = f"{skipped['rows']:,}"
                for row in summary["quotes"]:
                    row["gpu_name"] = gpu_names.get(row["gpu"], row["gpu"])
                    row["price"] = Decimal(row["hourly_price_per_gpu"])
                    row["term_words"] = TERM_LABELS.get(row["pricing_term"], row["pricing_term"])
                    row["outcome_words"] = OUTCOME_WORDS[row["outcome"]]
    return render(
        request,
        "quotes/catalog_import.html",
        {
            "form": form,
            "row_errors": row_errors,
            "summary": summary,
            "format_name": FORMATS.get(summary["format"], "") if summary else "",
            "families": [
                (family, "; ".join(f"{gpu_names.get(v.slug, v.slug)} ({v.slug})" for v in variants))
                for family, variants in FAMILIES.items()
            ],
        },
    )
