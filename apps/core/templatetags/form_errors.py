"""``{% page_form_errors %}``: the errors of a page's form (its ``form``, or a list the view made
as ``form_errors`` for a page of several forms) at the top of the page, each linked to its field
(apps.core.forms, templates/partials/form_errors.html)."""

from typing import Any

from django import template

from apps.core.forms import form_error_list

register = template.Library()


@register.inclusion_tag("partials/form_errors.html", takes_context=True)
def page_form_errors(context: template.Context) -> dict[str, Any]:
    errors = context.get("form_errors")
    if errors is None:
        form = context.get("form")
        errors = form_error_list(form) if hasattr(form, "is_bound") else []
    return {"errors": errors}
