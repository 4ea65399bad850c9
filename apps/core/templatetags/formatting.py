"""Template filters for apps.core.formatting: ``{% load formatting %}``, then (value: shown)

- ``monthly_cost|money:currency``: USD 5,120.70
- ``hourly_price_per_gpu|rate:"USD / GPU-hour"``: USD 2.19 / GPU-hour
- ``hourly_price_per_gpu|quoted``: 2.4937 (the provider's own decimals)
- ``effective_unit_cost|unit_cost:"USD"``: USD 0.000002616
- ``requests_per_s|figure:"req/s"``: 2 req/s
- ``rate_limit_rpm|count``: 6,000
- ``retry_rate|percent``: 3 %
- ``energy_kwh_per_month|energy``: 128 MWh
- ``time_to_train_h|duration``: 9.9 days
- ``ttft_ms|latency``: 111 ms
- ``architecture|label``: Hopper; ``answer|label:"ChecklistAnswer.Answer"``: Partial
"""

from typing import Any

from django import template

from apps.core import formatting

register = template.Library()


@register.filter
def money(value: Any, currency: str = "") -> str:
    return formatting.money(value, currency or "")


@register.filter
def rate(value: Any, spec: str = "") -> str:
    """``spec``: "USD / GPU-hour" (currency and what the price is per), "USD" or "/ GB"."""
    currency, _, per = (spec or "").partition("/")
    return formatting.rate(value, currency.strip(), per.strip())


@register.filter
def quoted(value: Any, currency: str = "") -> str:
    return formatting.quoted(value, currency or "")


@register.filter
def unit_cost(value: Any, currency: str = "") -> str:
    return formatting.unit_cost(value, currency or "")


@register.filter
def figure(value: Any, unit: str = "") -> str:
    return formatting.figure(value, unit or "")


@register.filter
def number(value: Any, digits: Any = formatting.FIGURE_DIGITS) -> str:
    return formatting.number(value, int(digits))


@register.filter
def count(value: Any, noun: str = "") -> str:
    return formatting.count(value, noun or "")


@register.filter
def percent(value: Any) -> str:
    return formatting.percent(value)


@register.filter
def energy(value: Any) -> str:
    return formatting.energy(value)


@register.filter
def duration(value: Any) -> str:
    return formatting.duration(value)


@register.filter
def latency(value: Any) -> str:
    return formatting.latency(value)


@register.filter
def label(value: Any, vocabulary: str = "") -> str:
    return formatting.label(value, vocabulary or None)
