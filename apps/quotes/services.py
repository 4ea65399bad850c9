"""Writes of providers, quotes and API routes. Every price change asks for a recompute of the
candidate tables after the transaction commits. Quotes and routes are retired, never deleted."""

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F

from apps.finance.services import candidate_tables_request_recompute

from .models import ApiRoute, Provider, Quote

QUOTE_FIELDS = (
    "provider", "gpu", "system", "gpus_per_node", "region", "pricing_term",
    "hourly_price_per_gpu", "currency", "storage_price_per_tb_month", "egress_price_per_gb",
    "network_monthly", "monthly_extras", "minimum_commitment_months", "quote_date",
    "valid_until", "source", "confidential_to",
)  # fmt: skip
ROUTE_FIELDS = (
    "provider", "model", "model_preset", "input_price_per_mtok", "output_price_per_mtok",
    "currency", "batch_discount", "rate_limit_rpm", "quote_date", "source",
)  # fmt: skip


@transaction.atomic
def provider_create(*, name: str, website: str = "") -> Provider:
    provider = Provider(name=name, website=website)
    provider.full_clean()
    provider.save()
    return provider


@transaction.atomic
def provider_update(*, provider: Provider, **fields: Any) -> Provider:
    for name, value in fields.items():
        setattr(provider, name, value)
    provider.full_clean()
    provider.save(update_fields=[*fields, "updated_at"])
    return provider


@transaction.atomic
def quote_create(**fields: Any) -> Quote:
    quote = Quote(**fields)
    quote.full_clean()
    quote.save()
    candidate_tables_request_recompute()
    return quote


def _priced_update[Priced: (Quote, ApiRoute)](
    obj: Priced, fields: dict[str, Any], *, check: Callable[[Priced], None] | None = None
) -> Priced:
    """Change a live quote or route: bump its version (candidate tables record which version
    they costed) and ask for the recompute. A retired one never changes: enter a new one."""
    obj = type(obj).objects.select_for_update(no_key=True).get(pk=obj.pk)
    if obj.retired:
        noun = type(obj)._meta.verbose_name
        raise ValidationError({"retired": f"A retired {noun} cannot change; enter a new {noun}."})
    changed = [name for name, value in fields.items() if getattr(obj, name) != value]
    if not changed:
        return obj
    for name in changed:
        setattr(obj, name, fields[name])
    if check is not None:
        check(obj)
    obj.full_clean()
    obj.version = F("version") + 1
    obj.save(update_fields=[*changed, "version", "updated_at"])
    obj.refresh_from_db()
    candidate_tables_request_recompute()
    return obj


def _priced_retire[Priced: (Quote, ApiRoute)](obj: Priced) -> Priced:
    obj = type(obj).objects.select_for_update(no_key=True).get(pk=obj.pk)
    if not obj.retired:
        obj.retired = True
        obj.version = F("version") + 1
        obj.save(update_fields=["retired", "version", "updated_at"])
        obj.refresh_from_db()
        candidate_tables_request_recompute()
    return obj


@transaction.atomic
def quote_update(*, quote: Quote, **fields: Any) -> Quote:
    return _priced_update(quote, fields)


@transaction.atomic
def quote_retire(*, quote: Quote) -> Quote:
    return _priced_retire(quote)


def _check_one_live_route(route: ApiRoute) -> None:
    clash = ApiRoute.objects.filter(
        provider=route.provider_id, model=route.model, retired=False
    ).exclude(pk=route.pk)
    if clash.exists():
        raise ValidationError({"model": "this provider already has a live route for this model"})


@transaction.atomic
def api_route_create(**fields: Any) -> ApiRoute:
    route = ApiRoute(**fields)
    _check_one_live_route(route)
    route.full_clean()
    route.save()
    candidate_tables_request_recompute()
    return route


@transaction.atomic
def api_route_update(*, route: ApiRoute, **fields: Any) -> ApiRoute:
    return _priced_update(route, fields, check=_check_one_live_route)


@transaction.atomic
def api_route_retire(*, route: ApiRoute) -> ApiRoute:
    return _priced_retire(route)


@dataclass(frozen=True, kw_only=True)
class RowError:
    row: int  # the line of the file where the row ends (the header is line 1)
    field: str
    message: str


class QuoteImportError(Exception):
    def __init__(self, errors: list[RowError]) -> None:
        super().__init__(f"{len(errors)} row error(s)")
        self.errors = errors


MAX_IMPORT_ROWS = 5000
# The foreign keys a parsed row points at. The row parser looked each one up in this request
# (one query per table for the whole file), so validating a row does not ask the database again
# whether they exist (Django's ForeignKey.validate costs a query per key per row).
IMPORT_LOOKED_UP_KEYS = ("provider", "gpu", "system", "confidential_to")
# Rows are written in batches of this many (one INSERT each; SQLite allows 32,766 bound
# parameters a statement, and a quote row binds ~20).
IMPORT_BATCH_SIZE = 500


def _import_row_clean(quote: Quote) -> None:
    """Validate one parsed row without a query: field validators (prices >= 0, 1..576 GPUs per
    node, lengths, choices) and ``clean()``. The model's CheckConstraints repeat rules that the
    field validators and the row parser already check (gpu xor system, valid_until after
    quote_date), and ``validate_constraints`` would cost one query per constraint per row; the
    database still enforces them when the batch is written (see ``quotes_import_csv``)."""
    looked_up = [name for name in IMPORT_LOOKED_UP_KEYS if getattr(quote, f"{name}_id")]
    # A quote has no unique field or constraint besides its id: nothing for validate_unique.
    quote.full_clean(exclude=looked_up, validate_unique=False, validate_constraints=False)


@transaction.atomic
def quotes_import_csv(*, text: str, parse_row: Any) -> list[Quote]:
    """Import a CSV of quotes as a whole: any bad row rejects the file and nothing is saved.

    ``parse_row(dict) -> dict`` turns one CSV row into Quote field values or raises
    ``ValidationError`` (the API and the page share one row parser).
    """
    errors: list[RowError] = []
    quotes: list[Quote] = []
    if "\x00" in text:
        raise QuoteImportError([RowError(row=1, field="", message="the file holds NUL bytes")])
    reader = csv.DictReader(io.StringIO(text))
    line = 1
    try:
        for count, raw in enumerate(reader, start=1):
            line = reader.line_num
            if count > MAX_IMPORT_ROWS:
                errors.append(RowError(row=line, field="", message="too many rows"))
                break
            try:
                quote = Quote(**parse_row(raw))
                _import_row_clean(quote)
            except ValidationError as exc:
                for field, messages in exc.message_dict.items():
                    errors.extend(RowError(row=line, field=field, message=m) for m in messages)
                continue
            quotes.append(quote)
    except csv.Error as exc:
        errors.append(RowError(row=line + 1, field="", message=f"not valid CSV: {exc}"))
    if not quotes and not errors:
        errors.append(RowError(row=1, field="", message="the file holds no quote rows"))
    if errors:
        raise QuoteImportError(errors)
    try:
        with transaction.atomic():
            Quote.objects.bulk_create(quotes, batch_size=IMPORT_BATCH_SIZE)
    except IntegrityError as exc:
        # A row the checks above let through but a database rule refuses (or a provider or GPU
        # deleted meanwhile): the file is refused as a whole, in words, not a 500.
        message = f"a row breaks a database rule ({exc.__class__.__name__}: {exc})"
        raise QuoteImportError([RowError(row=1, field="", message=message[:300])]) from exc
    candidate_tables_request_recompute()
    return quotes
