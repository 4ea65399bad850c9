"""POST /api/v1/quotes/import-catalog: quotes from a SkyPilot or gpuhunt catalog file."""

from typing import Any

from django.core.files.uploadedfile import UploadedFile
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core import bounds
from apps.core.api import StrictJsonTypes
from apps.core.permissions import role_permission
from apps.core.roles import QUOTE_EDITORS
from apps.core.users import signed_in
from apps.quotes import catalog_import
from apps.quotes.catalog_rows import FORMATS
from apps.quotes.models import Provider
from apps.quotes.services import QuoteImportError, RowError

ProcurementWrites = role_permission(*QUOTE_EDITORS)


def provider_lookup(value: str) -> Provider | None:
    """A provider by id (digits) or by name, ignoring case, as the quote CSV import names it."""
    text = value.strip()
    if text.isdigit():
        return Provider.objects.filter(pk=int(text)).first()
    return Provider.objects.filter(name__iexact=text).first()


class CatalogImportInputSerializer(StrictJsonTypes, serializers.Serializer):  # type: ignore[type-arg]
    file = serializers.FileField(
        help_text="The catalog file: a SkyPilot vms.csv or a gpuhunt CSV, up to "
        f"{catalog_import.MAX_CATALOG_BYTES:,} bytes (20 MiB by default)."
    )
    provider = serializers.CharField(
        max_length=120, help_text="The provider the prices are for: its id, or its name."
    )
    format = serializers.ChoiceField(
        choices=list(FORMATS), help_text="skypilot (vms.csv) or gpuhunt (catalog CSV)."
    )
    fetched_date = serializers.DateField(
        required=False,
        validators=[bounds.plausible_date],
        help_text="The day the catalog was fetched (YYYY-MM-DD; default today): each quote's "
        "quote date. From 2000-01-01 to tomorrow (400 outside).",
    )

    def validate_provider(self, value: str) -> Provider:
        provider = provider_lookup(value)
        if provider is None:
            raise serializers.ValidationError(f"no provider {value!r} (give its id or name)")
        return provider

    def validate_file(self, value: UploadedFile) -> str:
        try:
            return catalog_import.catalog_upload_text(value)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from exc


class CatalogImportQuoteSerializer(serializers.Serializer):  # type: ignore[type-arg]
    id = serializers.IntegerField()
    gpu = serializers.CharField()
    instance = serializers.CharField(help_text="The instance type the quote is (one size each).")
    region = serializers.CharField()
    pricing_term = serializers.CharField()
    hourly_price_per_gpu = serializers.DecimalField(max_digits=14, decimal_places=4)
    gpus_per_node = serializers.IntegerField(help_text="The instance's GPU count.")
    outcome = serializers.ChoiceField(
        choices=["created", "updated", "refreshed", "unchanged", "retired"]
    )


class CatalogImportSkippedSerializer(serializers.Serializer):  # type: ignore[type-arg]
    name = serializers.CharField(help_text="The accelerator name as the file spells it.")
    reason = serializers.CharField()
    rows = serializers.IntegerField()
    first_row = serializers.IntegerField()


class CatalogImportResultSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """What the import did (the schema of the 201 body)."""

    format = serializers.CharField()
    provider = serializers.IntegerField()
    file_name = serializers.CharField()
    fetched_date = serializers.DateField()
    rows = serializers.IntegerField()
    created = serializers.IntegerField()
    updated = serializers.IntegerField(help_text="Quotes whose price or node size changed.")
    refreshed = serializers.IntegerField(help_text="Same price, a newer fetch date.")
    unchanged = serializers.IntegerField()
    retired = serializers.IntegerField(
        help_text="Live quotes of an earlier import's one-per-GPU keys this file's instance "
        "sizes replace."
    )
    quotes = CatalogImportQuoteSerializer(many=True)
    skipped = CatalogImportSkippedSerializer(many=True)
    skipped_rows = serializers.IntegerField(help_text="Rows not imported, in all (see skipped).")
    unknown_accelerators = serializers.ListField(child=serializers.CharField())
    briefs_queued = serializers.IntegerField(help_text="Candidate tables queued to recompute.")


def errors_body(errors: list[RowError]) -> dict[str, Any]:
    first = errors[0]
    where = f"row {first.row}: {first.field}: " if first.field else f"row {first.row}: "
    return {
        "detail": f"{where}{first.message} ({len(errors)} error(s); nothing was saved)",
        "errors": [{"row": e.row, "field": e.field, "message": e.message} for e in errors],
    }


class QuoteCatalogImportApi(APIView):
    """A published GPU catalog for one provider, imported as a whole: one quote per instance
    type x region x term (on demand, and spot where the catalog has a spot price), at the
    cheapest zone's per-GPU price, its GPUs per node the instance's GPU count (candidates rent
    whole instances). A re-import updates those quotes in place. Any bad row and nothing is
    saved; rows without a price and accelerators the GPU catalog lacks are listed with their row
    counts, not guessed, and the rest imports."""

    permission_classes = [ProcurementWrites]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": CatalogImportInputSerializer},
        responses={
            201: CatalogImportResultSerializer,
            400: OpenApiResponse(description="Fields or rows and what is wrong; nothing saved"),
        },
    )
    def post(self, request: Request) -> Response:
        payload = CatalogImportInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        upload = request.FILES["file"]
        file_name = (upload.name or "")[:120]
        try:
            result = catalog_import.quotes_import_catalog(
                text=data["file"], fmt=data["format"], provider=data["provider"],
                filename=file_name, fetched_date=data.get("fetched_date"),
                created_by=signed_in(request.user),
            )  # fmt: skip
        except QuoteImportError as exc:
            return Response(errors_body(exc.errors), status=status.HTTP_400_BAD_REQUEST)
        body = catalog_import.catalog_import_summary(result)
        return Response(body, status=status.HTTP_201_CREATED)
