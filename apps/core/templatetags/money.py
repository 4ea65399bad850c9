"""Prices as quoted (apps.core.formatting.quoted; new templates load ``formatting`` and write
``|quoted``)."""

from typing import Any

from django import template

from apps.core import formatting

register = template.Library()


@register.filter
def price(value: Any) -> str:
    """A quoted price: thousands separated, to the cent, with more decimals only where the
    quote has them (2.19, 1,250.00, 0.0125); "—" for none."""
    return formatting.quoted(value)
