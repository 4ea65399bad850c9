"""Writes owned by the core app: API tokens."""

from datetime import timedelta

from django.contrib.auth.models import User
from django.db import transaction
from knox.models import AuthToken

MAX_TOKEN_DAYS = 365


@transaction.atomic
def api_token_create(*, user: User, days: int) -> tuple[AuthToken, str]:
    """A new token for ``user``; only its digest is stored, the key is returned once."""
    if not 1 <= days <= MAX_TOKEN_DAYS:
        raise ValueError(f"days must be between 1 and {MAX_TOKEN_DAYS}")
    instance, key = AuthToken.objects.create(user=user, expiry=timedelta(days=days))
    return instance, key


@transaction.atomic
def api_token_revoke(*, user: User, token_key: str) -> bool:
    deleted, _ = AuthToken.objects.filter(user=user, token_key=token_key).delete()
    return bool(deleted)
