"""Money in the engine's own notes, written as apps.core.formatting writes it on every page
(the engine may not import Django apps, so this is its pure twin; a unit test holds the two to
the same text): the currency code first, a no-break space, thousands separated, to the cent
below ``WHOLE_MONEY_FROM`` and whole from there ("USD 25,000", "USD 416.67"); a price per
something keeps 4 significant figures where cents would hide it ("USD 0.08 / kWh",
"USD 0.0125 / GB").
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

#: Between a figure and its currency: they never wrap apart (apps.core.formatting.NBSP).
NBSP = "\u00a0"
#: Whole units from here up (apps.core.formatting.WHOLE_MONEY_FROM; issue 27: "whole units
#: over 10,000").
WHOLE_MONEY_FROM = Decimal(10_000)
#: A price below one unit keeps this many significant figures (apps.core.formatting
#: UNIT_COST_DIGITS).
PRICE_DIGITS = 4
#: Decimal places of a currency's minor unit where it is not 2 (ISO 4217: the yen has none;
#: apps.core.currency.MINOR_UNITS).
MINOR_UNITS: dict[str, int] = {"JPY": 0}
DEFAULT_MINOR_UNITS = 2


def _cents(currency: str) -> Decimal:
    return Decimal(1).scaleb(-MINOR_UNITS.get(currency, DEFAULT_MINOR_UNITS))


def _plain(d: Decimal) -> str:
    return f"{abs(d) if d == 0 else d:,f}"


def _significant(d: Decimal, digits: int) -> Decimal:
    if d == 0:
        return Decimal(0)
    return d.quantize(Decimal(1).scaleb(d.adjusted() - digits + 1), rounding=ROUND_HALF_UP)


def money(amount: Decimal, currency: str) -> str:
    """ "USD 416.67", "USD 25,000", "JPY 380"."""
    places = Decimal(1) if abs(amount) >= WHOLE_MONEY_FROM else _cents(currency)
    return f"{currency}{NBSP}{_plain(amount.quantize(places, rounding=ROUND_HALF_UP))}"


def rate(amount: Decimal, currency: str, per: str) -> str:
    """ "USD 0.08 / kWh", "USD 0.9703 / GPU-hour", "USD 12.50 / kW-month"."""
    if abs(amount) >= WHOLE_MONEY_FROM or (_cents(currency) == 1 and abs(amount) >= 1):
        text = _plain(amount.quantize(Decimal(1), rounding=ROUND_HALF_UP))
    else:
        cents = amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        exact = cents != 0 and _significant(amount, PRICE_DIGITS) == cents
        if amount == 0 or abs(amount) >= 1 or exact:
            text = _plain(cents)
        else:
            text = _plain(_significant(amount, PRICE_DIGITS))
            if "." in text:
                text = text.rstrip("0").rstrip(".")
            whole, _, fraction = text.partition(".")
            text = f"{whole}.{fraction.ljust(2, '0')}"
    return f"{currency}{NBSP}{text} / {per}"
