from typing import Any

from django.http import HttpRequest

from .roles import has_role

# (label, url name, roles that see it; None: every signed-in user)
NAV_ITEMS: tuple[tuple[str, str, tuple[str, ...] | None], ...] = (
    ("Briefs", "briefs:list", None),
    ("GPU catalog", "catalog:gpu-list", None),
    ("What-if", "briefs:whatif", None),
    ("Quotes", "quotes:list", None),
    ("Finance assumptions", "finance:assumptions", None),
    ("Decisions", "decisions:list", None),
    ("API tokens", "core:tokens", None),
    ("API docs", "api-docs", None),
)


def navigation(request: HttpRequest) -> dict[str, Any]:
    """The navigation bar shows each user the sections their roles use (none before the
    authentication middleware ran: the 400 page of a request refused before it)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"nav_items": []}
    items = [
        (label, name) for label, name, roles in NAV_ITEMS if roles is None or has_role(user, roles)
    ]
    if user.is_staff:
        items.append(("Admin", "admin:index"))
    return {"nav_items": items}
