"""Hour-of-day prices of an API route: the windows of the day a price applies in, and the
prices a month of traffic pays across them (no Django, no database).

A route priced by the hour of day (genai-prices' ``TimeOfDateConstraint``: DeepSeek's
off-peak half price from 16:30 to 00:30 UTC) keeps each window and its prices in
``ApiRoute.price_windows``, a list of plain dicts that covers the whole day::

    {"start": "00:30", "end": "16:30", "hours": "16", "input_price_per_mtok": "0.55",
     "output_price_per_mtok": "2.19", "cached_input_price_per_mtok": "0.14"}

Times are UTC, ``end`` is exclusive and may be past midnight (``"16:30"`` to ``"00:30"``).
The route's own ``input_price_per_mtok`` / ``output_price_per_mtok`` are the windows'
hour-weighted figures (``weighted``): what traffic spread evenly over the day pays, as an
always-on brief's is. A brief whose hours can be placed (a scheduled batch) pays the cheapest
windows first for as many hours a day as it runs (``for_hours``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

HOURS_PER_DAY = Decimal(24)
PRICE_QUANTUM = Decimal("0.0001")  # route prices are stored to 4 decimals
PRICE_KEYS = ("input_price_per_mtok", "output_price_per_mtok", "cached_input_price_per_mtok")


@dataclass(frozen=True, kw_only=True)
class WindowPrices:
    """What traffic pays per million tokens across some windows of the day."""

    input_price_per_mtok: Decimal
    output_price_per_mtok: Decimal
    cached_input_price_per_mtok: Decimal | None
    hours: Decimal  # hours a day the figures are an average over
    note: str


def _d(value: Any) -> Decimal | None:
    return None if value is None or value == "" else Decimal(str(value))


def _q(value: Decimal) -> Decimal:
    return value.quantize(PRICE_QUANTUM, rounding=ROUND_HALF_UP).normalize()


def _average(windows: Sequence[Mapping[str, Any]], hours: Sequence[Decimal]) -> dict[str, Any]:
    total = sum(hours, Decimal(0))
    out: dict[str, Any] = {}
    for key in PRICE_KEYS:
        values = [_d(w.get(key)) for w in windows]
        if any(v is None for v in values):
            out[key] = None
            continue
        out[key] = _q(sum((v * h for v, h in zip(values, hours, strict=True) if v), Decimal(0))
                      / total)  # fmt: skip
    return out


def _words(windows: Sequence[Mapping[str, Any]], hours: Sequence[Decimal]) -> str:
    return "; ".join(
        f"{h.normalize():f} h from {w['start']} to {w['end']} UTC at "
        f"{_d(w['input_price_per_mtok'])} / {_d(w['output_price_per_mtok'])}"
        for w, h in zip(windows, hours, strict=True)
        if h > 0
    )


def weighted(windows: Sequence[Mapping[str, Any]]) -> WindowPrices:
    """The hour-weighted prices of a day of windows (traffic spread evenly over the day)."""
    hours = [Decimal(str(w["hours"])) for w in windows]
    avg = _average(windows, hours)
    return WindowPrices(
        **avg,
        hours=HOURS_PER_DAY,
        note=f"hour-of-day prices, weighted by the hours each applies: {_words(windows, hours)}",
    )


def for_hours(windows: Sequence[Mapping[str, Any]], hours_per_day: Decimal) -> WindowPrices:
    """What a brief running ``hours_per_day`` hours a day, placed in the cheapest windows
    first (by output price, then input), pays per million tokens."""
    if hours_per_day >= HOURS_PER_DAY:
        return weighted(windows)
    order = sorted(
        windows,
        key=lambda w: (_d(w["output_price_per_mtok"]), _d(w["input_price_per_mtok"])),
    )
    left = max(hours_per_day, Decimal("0.01"))
    used: list[Mapping[str, Any]] = []
    spent: list[Decimal] = []
    for window in order:
        take = min(Decimal(str(window["hours"])), left)
        if take <= 0:
            break
        used.append(window)
        spent.append(take)
        left -= take
    avg = _average(used, spent)
    return WindowPrices(
        **avg,
        hours=hours_per_day,
        note=(
            f"hour-of-day prices: {hours_per_day.normalize():f} h a day placed in the cheapest "
            f"windows: {_words(used, spent)}"
        ),
    )


def window_hours(start_minute: int, end_minute: int) -> Decimal:
    """Hours from ``start_minute`` to ``end_minute`` of the day (past midnight when end is
    before start)."""
    minutes = (end_minute - start_minute) % (24 * 60) or 24 * 60
    return (Decimal(minutes) / 60).normalize()


def windows_text(windows: Sequence[Mapping[str, Any]]) -> str:
    """The windows in words ("none" for one price all day)."""
    if not windows:
        return "none"
    return "; ".join(
        f"{w['start']}-{w['end']} UTC: {_d(w['input_price_per_mtok'])} / "
        f"{_d(w['output_price_per_mtok'])}"
        for w in windows
    )
