"""Numbers and codes as people read them: the one home for how a page, a chart, a CSV header
or a PDF writes a figure or a vocabulary's value.

Every function takes what the code holds (``Decimal``, ``float``, ``int``, a numeric string or
None) and returns text: thousands separated, never in scientific notation, with its unit or
currency after a no-break space so that the two never wrap apart. None, "" and non-finite
values read "—".

- ``money``: currency, thousands, 2 decimals; whole units from ``WHOLE_MONEY_FROM`` up
  (USD 5,120.70; USD 12,346).
- ``rate``: a price per something (USD 2.19 / GPU-hour, USD 0.0125 / GB): cents, or 4
  significant figures where cents would hide the price.
- ``quoted``: a price as the provider wrote it (2.4937 stays 2.4937).
- ``unit_cost``: a cost per output, ``UNIT_COST_DIGITS`` significant figures (0.000002616,
  27.19, 5,521).
- ``figure`` / ``quantity``: a measured figure with its unit at 3 significant figures by
  default (2 req/s, 111 ms, 1,250 tokens/s).
- ``count``: whole things (6,000; 2 GPUs).
- ``percent``: a fraction as a percentage (0.03 -> 3 %).
- ``energy``: kWh in Wh / kWh / MWh / GWh, whichever keeps the figure readable.
- ``duration``: hours as min / h / days.
- ``latency``: milliseconds as ms below a second, s above.
- ``label``: a vocabulary's value in words, from its one home (apps.core.choices' registry of
  the Django choices derived from the engine's enums, and the apps' own vocabularies).

The template filters of the same names are in apps/core/templatetags/formatting.py.
"""

import math
import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from . import choices, vocabularies  # noqa: F401 - vocabularies registers its words
from .currency import DEFAULT_MINOR_UNITS, MINOR_UNITS

__all__ = [
    "NONE",
    "count",
    "duration",
    "energy",
    "figure",
    "label",
    "latency",
    "money",
    "number",
    "percent",
    "quantity",
    "quoted",
    "rate",
    "unit_cost",
]

#: What a figure that does not exist reads.
NONE = "—"
#: Between a figure and its unit or currency: they never wrap apart.
NBSP = "\u00a0"
#: The times sign of "2 \u00d7 H100" (a letter x reads as a letter).
TIMES = "\u00d7"
#: Money reads in whole units from here up: cents on 12,345.67 are noise to a buyer, and a
#: figure this size is an estimate anyway (issue 27: "whole units over 10,000").
WHOLE_MONEY_FROM = Decimal(10_000)
#: A unit cost keeps 4 significant figures: enough to tell two candidates 0.1 % apart, and no
#: more than an estimate carries (issue 27: "3-4 significant figures").
UNIT_COST_DIGITS = 4
#: A measured or estimated figure keeps 3 significant figures (the engine's estimates are
#: within ±20-35 % of published measurements: bench/accuracy.md).
FIGURE_DIGITS = 3
#: A duration reads in days from two days up (237 h is "9.9 days" to a person).
DAYS_FROM_HOURS = 48
#: Energy units, each used from its size up (kWh is the meter's unit).
ENERGY_UNITS = (
    (Decimal(1_000_000), "GWh"),
    (Decimal(1_000), "MWh"),
    (Decimal(1), "kWh"),
    (Decimal("0.001"), "Wh"),
)


def decimal_or_none(value: Any) -> Decimal | None:
    """The value as a finite Decimal, or None (None, "", a bool, text that is not a number,
    NaN and infinities all read as no figure)."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        d = Decimal(repr(value))  # the shortest text that reads back as this float
    else:
        try:
            d = Decimal(str(value).strip().replace(",", ""))
        except InvalidOperation:
            return None
    return d if d.is_finite() else None


def _plain(d: Decimal) -> str:
    """A Decimal in positional notation with thousands separators, trailing zeros kept as the
    Decimal holds them ("-0" reads "0")."""
    if d == 0:
        d = abs(d)
    return f"{d:,f}"


def _significant(d: Decimal, digits: int) -> Decimal:
    if d == 0:
        return Decimal(0)
    exponent = d.adjusted() - digits + 1
    return d.quantize(Decimal(1).scaleb(exponent), rounding=ROUND_HALF_UP)


def _trim(text: str) -> str:
    """'2.500' -> '2.5', '730.0' -> '730' (thousands separators kept)."""
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def number(value: Any, digits: int = FIGURE_DIGITS) -> str:
    """A figure to ``digits`` significant figures, thousands separated, no trailing zeros;
    whole from 10^digits up (1,234,568 rather than 1,235,000: no figure is invented, none
    hidden behind zeros): "0.000002616", "12.3", "2", "1,234,568"; "—" for none."""
    d = decimal_or_none(value)
    if d is None:
        return NONE
    if abs(d) >= Decimal(10) ** digits:
        return _plain(d.quantize(Decimal(1), rounding=ROUND_HALF_UP))
    return _trim(_plain(_significant(d, digits)))


def figure(value: Any, unit: str = "", digits: int = FIGURE_DIGITS) -> str:
    """``number`` with its unit after a no-break space ("2 req/s", "111 ms")."""
    text = number(value, digits)
    return f"{text}{NBSP}{unit}" if unit and text != NONE else text


quantity = figure


def _cents(currency: str) -> Decimal:
    """The currency's minor unit (0.01; 1 for the yen, which has none)."""
    return Decimal(1).scaleb(-MINOR_UNITS.get(currency, DEFAULT_MINOR_UNITS))


def money(value: Any, currency: str = "") -> str:
    """Money: the currency code first, thousands separated, to the cent below
    ``WHOLE_MONEY_FROM`` and in whole units from there ("USD 5,120.70", "USD 12,346",
    "JPY 380": a currency without a minor unit reads whole); "—" for none."""
    d = decimal_or_none(value)
    if d is None:
        return NONE
    places = Decimal(1) if abs(d) >= WHOLE_MONEY_FROM else _cents(currency)
    text = _plain(d.quantize(places, rounding=ROUND_HALF_UP))
    return f"{currency}{NBSP}{text}" if currency else text


def _price_text(d: Decimal, currency: str = "") -> str:
    if abs(d) >= WHOLE_MONEY_FROM or (_cents(currency) == 1 and abs(d) >= 1):
        return _plain(d.quantize(Decimal(1), rounding=ROUND_HALF_UP))
    cents = d.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    if d == 0 or abs(d) >= 1 or (cents != 0 and _significant(d, UNIT_COST_DIGITS) == cents):
        return _plain(cents)
    # Below one unit, cents would hide the price (0.0125 a GB; 0.9703 an hour of capex):
    # keep 4 significant figures, at least two decimals.
    text = _trim(_plain(_significant(d, UNIT_COST_DIGITS)))
    whole, _, fraction = text.partition(".")
    return f"{whole}.{fraction.ljust(2, '0')}"


def rate(value: Any, currency: str = "", per: str = "") -> str:
    """A price per something: cents from 1 up, 4 significant figures below one unit where
    cents would hide it ("USD 2.19 / GPU-hour", "USD 0.0125 / GB", "USD 0.9703 / GPU-hour");
    "—" for none."""
    d = decimal_or_none(value)
    if d is None:
        return NONE
    text = _price_text(d, currency)
    if currency:
        text = f"{currency}{NBSP}{text}"
    return f"{text} / {per}" if per else text


#: A price as quoted keeps the provider's own decimals up to this many (the quote fields hold 6).
QUOTED_MAX_PLACES = 6


def quoted(value: Any, currency: str = "") -> str:
    """A price as the provider wrote it: thousands separated, at least to the cent, with the
    decimals the quote has beyond that (2.19, 1,250.00, 2.4937, 0.0125); a figure worked out
    from a quote (an amortised capex) is a ``rate``, not this."""
    d = decimal_or_none(value)
    if d is None:
        return NONE
    exponent = d.normalize().as_tuple().exponent
    least = MINOR_UNITS.get(currency, DEFAULT_MINOR_UNITS)
    places = max(least, -exponent) if isinstance(exponent, int) else least
    places = min(places, QUOTED_MAX_PLACES)
    text = _plain(d.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))
    return f"{currency}{NBSP}{text}" if currency else text


def unit_cost(value: Any, currency: str = "", digits: int = UNIT_COST_DIGITS) -> str:
    """A cost per output at ``digits`` significant figures, never in scientific notation
    ("USD 0.000002616", "USD 27.19", "USD 5,521"); whole from 10^digits up."""
    text = number(value, digits)
    if text == NONE:
        return text
    return f"{currency}{NBSP}{text}" if currency else text


def count(value: Any, noun: str = "", plural: str = "") -> str:
    """Whole things, thousands separated ("6,000"; "2 GPUs", "1 replica"); a count that is not
    whole keeps up to two decimals below 1,000 (0.99 checkpoints)."""
    d = decimal_or_none(value)
    if d is None:
        return NONE
    if d == d.to_integral_value() or abs(d) >= 1000:
        d = d.quantize(Decimal(1), rounding=ROUND_HALF_UP)
        text = _plain(d)
    else:
        text = _trim(_plain(d.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)))
    if not noun:
        return text
    word = noun if d == 1 else (plural or f"{noun}s")
    return f"{text}{NBSP}{word}"


def gpus(paid: int, replicas: int | None = None, per_replica: int | None = None) -> str:
    """A candidate's configuration, the one wording of every page, CSV and PDF: the GPUs paid
    for, then how they serve ("18 GPUs (18 replicas x 1)", "8 GPUs (1 replica x 8)"); the GPUs
    alone where there is no single replica size (a serving plan: "7 GPUs")."""
    text = f"{paid:,} GPU{'' if paid == 1 else 's'}"
    if replicas and per_replica:
        text += f" ({replicas:,} replica{'' if replicas == 1 else 's'} {TIMES} {per_replica})"
    return text


def percent(fraction: Any, digits: int = FIGURE_DIGITS) -> str:
    """A fraction as a percentage, up to ``digits`` significant figures ("3 %", "97.5 %",
    "0.25 %"); "—" for none."""
    d = decimal_or_none(fraction)
    if d is None:
        return NONE
    return f"{number(d * 100, digits)}{NBSP}%"


def energy(kwh: Any, digits: int = FIGURE_DIGITS) -> str:
    """Energy given in kWh, in the unit that keeps it readable: "850 Wh", "12.4 kWh",
    "128 MWh", "3.1 GWh"."""
    d = decimal_or_none(kwh)
    if d is None:
        return NONE
    for size, unit in ENERGY_UNITS:
        if abs(d) >= size:
            return f"{number(d / size, digits)}{NBSP}{unit}"
    return f"{number(d * 1000, digits)}{NBSP}Wh"


def duration(hours: Any, digits: int = FIGURE_DIGITS) -> str:
    """Hours as a person says them: "45 min" below an hour, "3.5 h" below two days, "9.9 days"
    from there ("2,259 days")."""
    d = decimal_or_none(hours)
    if d is None:
        return NONE
    if abs(d) < 1:
        return f"{number(d * 60, digits)}{NBSP}min"
    if abs(d) < DAYS_FROM_HOURS:
        return f"{number(d, digits)}{NBSP}h"
    return f"{number(d / 24, digits)}{NBSP}days"


def latency(ms: Any, digits: int = FIGURE_DIGITS) -> str:
    """A latency given in milliseconds: "111 ms" below a second, "8.81 s" from there."""
    d = decimal_or_none(ms)
    if d is None:
        return NONE
    if abs(d) < 1000:
        return f"{number(d, digits)}{NBSP}ms"
    return f"{number(d / 1000, digits)}{NBSP}s"


_CODE_WORD = re.compile(r"[_\s]+")


def words_of_code(code: str) -> str:
    """A code nobody has written words for, made readable: "IN_REVIEW" -> "In review"."""
    text = _CODE_WORD.sub(" ", code).strip()
    return text[:1].upper() + text[1:].lower()


def label(value: Any, vocabulary: Any = None) -> str:
    """A vocabulary's value in the words its one home gives it ("HOPPER" -> "Hopper",
    "RESERVED_1Y" -> "Reserved 1 year", "PARTIAL" -> "Partial"). ``vocabulary`` (a choices
    class, an engine enum or its name) settles a value two vocabularies share; without it a
    value with one meaning everywhere reads that meaning. A value no vocabulary has reads as
    its code made readable; none as ""."""
    if value is None or value == "":
        return ""
    code = str(getattr(value, "value", value))
    found = choices.label_of(code, vocabulary)
    return found if found is not None else words_of_code(code)
