"""The signed-in user, typed as the user model (django.contrib.auth's User, AUTH_USER_MODEL)."""

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.core.exceptions import PermissionDenied


def signed_in(user: AbstractBaseUser | AnonymousUser) -> User:
    """``request.user`` of a view that requires a signed-in user (login_required, or an API
    permission class): the user model instance. Anyone else is refused (403), as the view's own
    check would have refused them."""
    if not isinstance(user, User) or not user.is_authenticated:
        raise PermissionDenied("Sign in first.")
    return user
