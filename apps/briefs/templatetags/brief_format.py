"""Numbers on the brief pages as a person reads them (apps.briefs.display.number)."""

from typing import Any

from django import template

from apps.briefs.display import number
from apps.catalog.selectors import preset_name

register = template.Library()


@register.filter
def readable(value: Any) -> str:
    """3 significant figures, thousands separators: "1,234,568", "12.3", "—"."""
    if value in (None, ""):
        return "—"
    return number(value)


@register.filter
def model_name(preset: Any) -> str:
    """A catalog preset as its model card names it ("Llama 3.1 70B"); an unknown one as written."""
    return preset_name(preset)
