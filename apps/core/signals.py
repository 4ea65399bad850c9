"""A user's API tokens are revoked when their password changes or they are deactivated.

This is a signal, not a service, on purpose: passwords change in many places this project does
not own (the admin's change-password form, ``manage.py changepassword``, the password-reset views,
any ``user.set_password(...); user.save()``), and every one of them ends in ``User.save()``. A
service would be skipped by all of them. What a signal cannot see is a bulk
``User.objects.update(password=...)`` or ``update(is_active=False)``; do not change either that way.

Django re-hashing a password on sign-in (after a hasher or iteration-count upgrade) changes the
stored hash but not the password, so it does not revoke anything.

A deactivated user's tokens are refused already (knox checks ``is_active``), but they are deleted
too, so that reactivating the account does not bring old, possibly leaked, tokens back to life.
"""

from typing import Any

from django.conf import settings
from django.contrib.auth.hashers import get_hasher, identify_hasher
from django.contrib.auth.models import AbstractBaseUser, User
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver
from knox.models import AuthToken

# Set on the instance between pre_save and post_save of the same save().
_REVOKE_FLAG = "_api_tokens_to_revoke"


def _is_rehash(old_hash: str, user: AbstractBaseUser) -> bool:
    """Django's own upgrade of an outdated hash of the same password (see check_password)."""
    if getattr(user, "_password", None) is not None:
        return False  # set_password() was called: Django's marker of a new password
    try:
        old_hasher, new_hasher = identify_hasher(old_hash), identify_hasher(user.password)
    except ValueError:  # not a hash (e.g. an unusable password): not an upgrade
        return False
    preferred = get_hasher()
    outdated = old_hasher.algorithm != preferred.algorithm or preferred.must_update(old_hash)
    return outdated and new_hasher.algorithm == preferred.algorithm


@receiver(pre_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="core.tokens_revoke_check")
def _note_credential_change(sender: type[User], instance: User, **kwargs: Any) -> None:
    update_fields = kwargs.get("update_fields")
    if instance.pk is None or kwargs.get("raw"):
        return  # a new user has no tokens; fixtures being loaded are not changes
    if update_fields is not None and not {"password", "is_active"} & set(update_fields):
        return  # e.g. last_login on every sign-in: nothing to compare, no query
    before = sender._default_manager.filter(pk=instance.pk).values("password", "is_active").first()
    if before is None:
        return
    password_changed = before["password"] != instance.password and not _is_rehash(
        before["password"], instance
    )
    deactivated = before["is_active"] and not instance.is_active
    setattr(instance, _REVOKE_FLAG, password_changed or deactivated)


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="core.tokens_revoke")
def _revoke_api_tokens(instance: AbstractBaseUser, **kwargs: Any) -> None:
    if getattr(instance, _REVOKE_FLAG, False):
        # In the same transaction as the save: the password and the tokens change together.
        AuthToken.objects.filter(user=instance).delete()
        setattr(instance, _REVOKE_FLAG, False)
