"""One GPU's prices across providers and terms, as a person compares them: every quote the
user may see for the GPU (or for a system built from it), its price per GPU-hour normalised to
the base currency with finance's FX table, sorted by that price (what ``sky show-gpus`` lists,
with our own quotes and their age). Each row carries its figures as the page shows them
(apps.core.formatting), and the order is the order of the figures shown: cheapest first, an
owned quote among the others at its amortised capex, and the rows that cannot be put in the
base currency last, marked "not costed" with why."""

from datetime import date
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q

from apps.catalog.models import Gpu
from apps.core import formatting
from apps.core.currency import BASE_CURRENCY
from apps.engine.constants import HOURS_PER_MONTH_ALWAYS_ON
from apps.engine.costing import PricingTerm
from apps.finance.fx import FxMissing, fx_convert, fx_rates_applied

from .selectors import quote_age_days, quote_is_stale, quote_list_for_user


def _commitment_words(months: int) -> str:
    if not months:
        return "no commitment"
    return f"{months}-month commitment"


def owned_hourly(quote: Any) -> Decimal | None:
    """An owned quote's capex spread over its depreciation months of always-on hours, per GPU
    per hour in the quote's currency (power, hosting and hands-on hours come on top: the
    finance page costs them); None without capex and depreciation."""
    if quote.capex_per_gpu is None or not quote.depreciation_months:
        return None
    hours = quote.depreciation_months * Decimal(str(HOURS_PER_MONTH_ALWAYS_ON))
    return Decimal(quote.capex_per_gpu) / hours


def price_comparison(
    user: AbstractBaseUser | AnonymousUser, gpu: Gpu, *, today: date
) -> dict[str, Any]:
    """Rows sorted by the normalised price per GPU-hour the page shows (an owned quote at its
    capex spread over its depreciation, said so beside it); the quotes that cannot be
    normalised (no FX rate for their currency, an owned quote without capex) come last, each
    with what is missing (``not_costed``)."""
    rates = fx_rates_applied()
    quotes = quote_list_for_user(user).filter(Q(gpu=gpu) | Q(system__gpu=gpu))
    costed: list[dict[str, Any]] = []
    not_costed: list[dict[str, Any]] = []
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
            "not_costed": "",
            "owned_note": "",
        }
        hourly: Decimal | None = quote.hourly_price_per_gpu
        row["as_quoted"] = formatting.rate(quote.hourly_price_per_gpu, quote.currency, "GPU-hour")
        if quote.pricing_term == PricingTerm.OWNED:
            hourly = owned_hourly(quote)
            if hourly is not None:
                row["price"] = hourly
                row["as_quoted"] = (
                    f"capex {formatting.money(quote.capex_per_gpu, quote.currency)} over "
                    f"{formatting.count(quote.depreciation_months, 'month')}"
                )
                row["owned_note"] = (
                    f"capex over {quote.depreciation_months} months only, before power, "
                    "hosting and hands-on hours"
                )
            else:
                row["not_costed"] = "an owned quote without its capex and depreciation"
        if hourly is not None:
            try:
                row["normalised"] = fx_convert(hourly, quote.currency, BASE_CURRENCY, rates)
            except FxMissing:  # shown, not dropped
                row["not_costed"] = f"no FX rate for {quote.currency}"
        row["shown"] = formatting.rate(row["normalised"], BASE_CURRENCY)
        (costed if row["normalised"] is not None else not_costed).append(row)
    # Rounding keeps order, so the exact price sorts the rows as their shown figures read.
    costed.sort(key=lambda r: (r["normalised"], r["quote"].pk))
    not_costed.sort(key=lambda r: (r["currency"], r["price"] or 0, r["quote"].pk))
    rows = [*costed, *not_costed]
    return {
        "gpu": gpu,
        "base_currency": BASE_CURRENCY,
        "rows": rows,
        "costed_count": len(costed),
        "rates": [
            {
                "currency": code,
                "text": f"1 {code} = {formatting.rate(r.rate, BASE_CURRENCY)}",
                "as_of": r.as_of,
            }
            for code, r in rates.items()
        ],
        "stale_count": len([r for r in rows if r["stale"]]),
    }


def base_equivalents(quotes: list[Any]) -> tuple[str, dict[int, dict[str, Any]]]:
    """(the base currency, {quote id: {"base_price", "not_costed"}}): each quote's hourly price
    per GPU in the base currency as the quote list shows it, or why it cannot be costed (no FX
    rate for its currency); an owned quote at its capex spread over its depreciation, as the
    price comparison shows it, with that said in ``note``."""
    rates = fx_rates_applied()
    out: dict[int, dict[str, Any]] = {}
    for quote in quotes:
        entry = {"base_price": "", "not_costed": "", "note": ""}
        hourly = quote.hourly_price_per_gpu
        if quote.pricing_term == PricingTerm.OWNED:
            # As the price comparison shows it: the capex spread over its depreciation.
            hourly = owned_hourly(quote)
            if hourly is None:
                entry["not_costed"] = "an owned quote without its capex and depreciation"
                out[quote.pk] = entry
                continue
            entry["note"] = f"capex over {formatting.count(quote.depreciation_months, 'month')}"
        try:
            converted = fx_convert(hourly, quote.currency, BASE_CURRENCY, rates)
        except FxMissing:
            entry["not_costed"] = f"no FX rate for {quote.currency}"
        else:
            entry["base_price"] = formatting.rate(converted, BASE_CURRENCY)
        out[quote.pk] = entry
    return BASE_CURRENCY, out
