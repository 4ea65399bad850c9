"""Datasheet figures as a person reads them on the GPU catalog pages."""

from typing import Any

from django import template

from apps.core import formatting

register = template.Library()

# A datasheet figure keeps this many significant digits below 1,000 (1.792 TB/s, 503.8 TFLOPS,
# 0.864 TB/s): enough to tell two models apart (A100 80GB PCIe 1.935 vs SXM4 2.039 TB/s) and
# no padding the vendor did not write (8.000 -> 8). From 1,000 up a figure is a whole number
# with thousands separators (2,516 TFLOPS, 81,559 MiB), as vendors print them
# (apps.core.formatting.number: whole from 10^digits up, and 4 significant figures below
# 10,000 are whole already).
DATASHEET_DIGITS = 4


@register.filter
def figure(value: Any) -> str:
    """A figure to read: "2,516", "1.792", "8", "503.8"; "—" for none."""
    return formatting.number(value, DATASHEET_DIGITS)
