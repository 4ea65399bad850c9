"""Codes a person types (a CSV's pricing terms) shown as code, not as words on the page."""

import re

from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

from apps.engine.costing import PricingTerm

register = template.Library()

# An UPPER_SNAKE code, or a one-word code a CSV column takes (SPOT, OWNED, MARKETPLACE).
_CODE = re.compile(
    r"\b(?:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|"
    + "|".join(sorted((t.value for t in PricingTerm), key=len, reverse=True))
    + r")\b"
)


@register.filter(needs_autoescape=True)
def mark_codes(text: object, autoescape: bool = True) -> SafeString:
    """The text, escaped, with each code in it inside <code> (so it reads as a value to type)."""
    escaped = str(conditional_escape(str(text)) if autoescape else text)
    return mark_safe(_CODE.sub(lambda m: f"<code>{m.group(0)}</code>", escaped))  # noqa: S308 - escaped above
