"""One GPU's prices across providers and terms, as a person compares them: every quote the
user may see for the GPU (or for a system built from it), its price per GPU-hour normalised to
the base currency with finance's FX table, sorted by that price (what ``sky show-gpus`` lists,
with our own quotes and their age)."""

from datetime import date
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q

from apps.catalog.models import Gpu
from apps.core.currency import BASE_CURRENCY
from apps.engine.constants import HOURS_PER_MONTH_ALWAYS_ON
from apps.engine.costing import PricingTerm
from apps.finance.fx import FxMissing, fx_convert, fx_rates_applied

from .selectors import quote_age_days, quote_is_stale, quote_list_for_user


def _commitment_words(months: int) -> str:
    if not months:
        return "no commitment"
    return f"{months}-month commitment"


def price_comparison(
    user: AbstractBaseUser | AnonymousUser, gpu: Gpu, *, today: date
) -> dict[str, Any]:
    """Rows sorted by normalised price per GPU-hour; quotes with no FX rate for their currency
    come after (their price shown as quoted, with what is missing), then owned quotes, whose
    cost is capex and running costs rather than an hourly price (amortised capex shown)."""
    rates = fx_rates_applied()
    quotes = quote_list_for_user(user).filter(Q(gpu=gpu) | Q(system__gpu=gpu))
    priced: list[dict[str, Any]] = []
    unconverted: list[dict[str, Any]] = []
    owned: list[dict[str, Any]] = []
    for quote in quotes:
        row: dict[str, Any] = {
            "quote": quote,
            "what": quote.system.name if quote.system else gpu.name,
            "term": quote.get_pricing_term_display(),
            "commitment": _commitment_words(quote.minimum_commitment_months),
            "region": quote.region,
            "age_days": quote_age_days(quote, today=today),
            "stale": quote_is_stale(quote, today=today),
            "price": quote.hourly_price_per_gpu,
            "currency": quote.currency,
            "normalised": None,
            "fx_missing": "",
            "owned_note": "",
        }
        hourly = quote.hourly_price_per_gpu
        bucket = priced
        if quote.pricing_term == PricingTerm.OWNED:
            bucket = owned
            if quote.capex_per_gpu is not None and quote.depreciation_months:
                # Capex spread over its depreciation months of always-on hours; power, hosting
                # and hands-on hours come on top (the finance page costs them).
                hourly = quote.capex_per_gpu / (
                    quote.depreciation_months * Decimal(str(HOURS_PER_MONTH_ALWAYS_ON))
                )
                row["price"] = hourly
                row["owned_note"] = (
                    f"capex over {quote.depreciation_months} months only, before power, "
                    "hosting and hands-on hours"
                )
        try:
            row["normalised"] = fx_convert(hourly, quote.currency, BASE_CURRENCY, rates)
        except FxMissing:  # shown, not dropped
            row["fx_missing"] = f"no FX rate for {quote.currency}"
            if bucket is priced:
                bucket = unconverted
        bucket.append(row)
    priced.sort(key=lambda r: (r["normalised"], r["quote"].pk))
    unconverted.sort(key=lambda r: (r["currency"], r["price"], r["quote"].pk))
    owned.sort(key=lambda r: (r["normalised"] is None, r["normalised"] or 0, r["quote"].pk))
    rows = [*priced, *unconverted, *owned]
    return {
        "gpu": gpu,
        "base_currency": BASE_CURRENCY,
        "rows": rows,
        "rates": rates,
        "stale_count": len([r for r in rows if r["stale"]]),
    }
