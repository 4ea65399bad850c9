"""DRF permissions built on the role groups."""

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from .roles import has_role


def role_permission(*roles: str, read_roles: tuple[str, ...] | None = None) -> type[BasePermission]:
    """A permission class: anyone signed in may read (or only ``read_roles``);
    only the given roles may write."""

    class _RolePermission(BasePermission):
        message = f"This needs one of the roles: {', '.join(roles)}."

        def has_permission(self, request: Request, view: Any) -> bool:
            user = request.user
            if not (user and user.is_authenticated):
                return False
            if request.method in SAFE_METHODS:
                return read_roles is None or has_role(user, read_roles)
            return has_role(user, roles)

    _RolePermission.__name__ = "Role_" + "_".join(r.replace("-", "_") for r in roles)
    return _RolePermission
