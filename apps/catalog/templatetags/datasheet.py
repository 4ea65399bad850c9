"""Datasheet figures as a person reads them on the GPU catalog pages."""

from decimal import Decimal, InvalidOperation
from typing import Any

from django import template

register = template.Library()

# A datasheet figure keeps this many significant digits below 1,000 (1.792 TB/s, 503.8 TFLOPS,
# 0.864 TB/s): enough to tell two models apart (A100 80GB PCIe 1.935 vs SXM4 2.039 TB/s) and
# no padding the vendor did not write (8.000 -> 8). From 1,000 up a figure is a whole number
# with thousands separators (2,516 TFLOPS, 81,559 MiB), as vendors print them.
DATASHEET_DIGITS = 4
WHOLE_FROM = 1000


@register.filter
def figure(value: Any) -> str:
    """A figure to read: "2,516", "1.792", "8", "503.8"; "—" for none."""
    if value in (None, ""):
        return "—"
    try:
        d = Decimal(str(value))
    except InvalidOperation:
        return str(value)
    if not d.is_finite():
        return "—"
    if d == 0:
        return "0"
    if abs(d) >= WHOLE_FROM:
        return f"{d:,.0f}"
    d = d.quantize(Decimal(1).scaleb(d.adjusted() - DATASHEET_DIGITS + 1)).normalize()
    return f"{d:,f}"
