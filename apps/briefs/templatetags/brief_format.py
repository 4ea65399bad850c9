"""Numbers on the brief pages as a person reads them (apps.briefs.display.number)."""

from typing import Any

from django import template

from apps.briefs.display import number

register = template.Library()


@register.filter
def readable(value: Any) -> str:
    """3 significant figures, thousands separators: "1,234,568", "12.3", "—"."""
    if value in (None, ""):
        return "—"
    return number(value)
