"""One CSV row → Quote field values, shared by the import page and the import API."""

import re
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError

from apps.catalog.models import Gpu, GpuSystem
from apps.core.currency import Currency
from apps.engine.costing import PricingTerm

from .models import OWNED_FIELDS, Provider, Quote

CSV_COLUMNS = (
    "provider", "gpu", "system", "gpus_per_node", "region", "pricing_term",
    "hourly_price_per_gpu", "currency", "storage_price_per_tb_month", "egress_price_per_gb",
    "network_monthly", "monthly_extras", "minimum_commitment_months", "quote_date",
    "valid_until", "source", *OWNED_FIELDS,
)  # fmt: skip
# Owned-hardware columns: optional, empty on other terms (Quote.clean says which apply).
OWNED_DECIMALS = tuple(name for name in OWNED_FIELDS if name != "depreciation_months")
MAX_CSV_BYTES = settings.QUOTE_CSV_MAX_BYTES
MONEY = (
    "hourly_price_per_gpu", "storage_price_per_tb_month", "egress_price_per_gb",
    "network_monthly", "monthly_extras",
)  # fmt: skip

#: A UTF-16 surrogate code point: not Unicode text (a file decoded as UTF-8 cannot hold one,
#: but text handed to the import from elsewhere can), and SQLite fails to encode it only
#: after the insert has begun. Refused by column, before any other check.
SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_errors(raw: dict[str, Any]) -> dict[str, str]:
    errors = {}
    for key, value in raw.items():
        for text in (key, value):
            bad = SURROGATE.search(text) if isinstance(text, str) else None
            if bad:
                name = SURROGATE.sub("?", str(key or "")).strip()
                errors[name] = f"not Unicode text: a lone surrogate (U+{ord(bad.group()):X})"
                break
    return errors


class RowRefused(ValidationError):
    """A row's column problems, with the fields that did parse (``fields``): the import then
    checks those as the model would, so that every problem of the row is listed at once (a row
    with a bad currency and a negative price names both)."""

    def __init__(self, errors: dict[str, str], *, fields: dict[str, Any]) -> None:
        super().__init__(errors)
        self.fields = fields


class QuoteRowParser:
    """Looks up providers, GPUs and systems once per file, not once per row."""

    def __init__(self) -> None:
        self.providers = {p.name.casefold(): p for p in Provider.objects.all()}
        self.gpus = {g.slug: g for g in Gpu.objects.all()}
        self.systems = {s.slug: s for s in GpuSystem.objects.all()}

    def __call__(self, raw: dict[str, Any]) -> dict[str, Any]:
        errors = _surrogate_errors(raw)
        if errors:
            raise ValidationError(errors)
        row = {k.strip(): (v or "").strip() for k, v in raw.items() if k}
        fields: dict[str, Any] = {}
        provider = self.providers.get(row.get("provider", "").casefold())
        if provider is None:
            errors["provider"] = f"unknown provider {row.get('provider', '')!r}"
        fields["provider"] = provider
        gpu_slug, system_slug = row.get("gpu", ""), row.get("system", "")
        if gpu_slug and gpu_slug not in self.gpus:
            errors["gpu"] = f"no GPU {gpu_slug!r} in the catalog"
        if system_slug and system_slug not in self.systems:
            errors["system"] = f"no system {system_slug!r} in the catalog"
        if bool(gpu_slug) == bool(system_slug):
            errors.setdefault("gpu", "give a catalog GPU or a system, not both")
        fields["gpu"] = self.gpus.get(gpu_slug)
        fields["system"] = self.systems.get(system_slug)
        owned = row.get("pricing_term", "") == PricingTerm.OWNED
        for name in MONEY:
            # An owned quote is costed from its capex: its hourly price may be left empty (0).
            text = row.get(name, "") or (
                "" if name == "hourly_price_per_gpu" and not owned else "0"
            )
            try:
                value = Decimal(text)
                if not value.is_finite():
                    raise InvalidOperation
                fields[name] = value
            except InvalidOperation:
                errors[name] = f"not a number: {text!r}"
        currency = row.get("currency", "") or "USD"
        if currency not in Currency.values:
            errors["currency"] = f"unknown currency {currency!r}"
        fields["currency"] = currency
        term = row.get("pricing_term", "")
        if term not in Quote.PricingTerm.values:
            errors["pricing_term"] = f"unknown pricing term {term!r}"
        fields["pricing_term"] = term
        for name, default in (("gpus_per_node", "8"), ("minimum_commitment_months", "0")):
            text = row.get(name, "") or default
            if not text.isdigit():
                errors[name] = f"not a whole number: {text!r}"
            else:
                fields[name] = int(text)
        for name in OWNED_DECIMALS:
            text = row.get(name, "")
            fields[name] = None
            if text:
                try:
                    value = Decimal(text)
                    if not value.is_finite():
                        raise InvalidOperation
                    fields[name] = value
                except InvalidOperation:
                    errors[name] = f"not a number: {text!r}"
        text = row.get("depreciation_months", "")
        fields["depreciation_months"] = None
        if text and not text.isdigit():
            errors["depreciation_months"] = f"not a whole number: {text!r}"
        elif text:
            fields["depreciation_months"] = int(text)
        for name in ("quote_date", "valid_until"):
            text = row.get(name, "")
            if not text:
                fields[name] = None
                continue
            try:
                fields[name] = date.fromisoformat(text)
            except ValueError:
                errors[name] = f"not a date (YYYY-MM-DD): {text!r}"
        start, end = fields.get("quote_date"), fields.get("valid_until")
        if start and end and end < start:
            errors["valid_until"] = "must not be before quote_date"
        fields["region"] = row.get("region", "")
        fields["source"] = row.get("source", "")
        if errors:
            raise RowRefused(errors, fields={k: v for k, v in fields.items() if k not in errors})
        return fields
