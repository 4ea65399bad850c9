"""signed_in: the request's user as the user model, or a 403 for anyone not signed in."""

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied

from apps.core.users import signed_in


def test_a_signed_in_user_is_returned_as_it_is():
    user = User(username="platform")

    assert signed_in(user) is user


def test_an_anonymous_visitor_is_refused():
    with pytest.raises(PermissionDenied):
        signed_in(AnonymousUser())
