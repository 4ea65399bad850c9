"""Roles are Django groups; a user may hold several. Checks live here, not in views."""

from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import models

from .choices import register


class Role(models.TextChoices):
    PLATFORM = "platform", "Platform"
    FINANCE = "finance", "Finance"
    PROCUREMENT = "procurement", "Procurement"
    API_CLIENT = "api-client", "API client"


register(Role, name="Role")


# What each role may change. Reading is open to every signed-in role.
BRIEF_EDITORS = (Role.PLATFORM,)
QUOTE_EDITORS = (Role.PROCUREMENT,)
BENCHMARK_EDITORS = (Role.PLATFORM,)
FINANCE_EDITORS = (Role.FINANCE,)
DECISION_AUTHORS = (Role.PROCUREMENT, Role.PLATFORM, Role.FINANCE)


def roles_of(user: AbstractBaseUser | AnonymousUser) -> frozenset[str]:
    """The role names a user holds (cached on the user object for the request)."""
    if not user.is_authenticated:
        return frozenset()
    cached: frozenset[str] | None = getattr(user, "_gpuselect_roles", None)
    if cached is None:
        names = user.groups.values_list("name", flat=True)  # type: ignore[attr-defined]
        cached = frozenset(n for n in names if n in Role.values)
        user._gpuselect_roles = cached  # type: ignore[attr-defined]
    return cached


def has_role(user: AbstractBaseUser | AnonymousUser, roles: Iterable[str]) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    if getattr(user, "is_superuser", False):
        return True
    return bool(roles_of(user) & set(roles))
