"""Prices as a person reads them on the quote pages."""

from decimal import Decimal, InvalidOperation
from typing import Any

from django import template

register = template.Library()


@register.filter
def price(value: Any) -> str:
    """A quoted price: thousands separated, to the cent, with more decimals only where the
    quote has them (2.19, 1,250.00, 0.0125); "—" for none."""
    if value in (None, ""):
        return "—"
    try:
        d = Decimal(str(value))
    except InvalidOperation:
        return str(value)
    exponent = d.normalize().as_tuple().exponent
    places = max(2, -exponent) if isinstance(exponent, int) else 2
    return f"{d:,.{places}f}"
