import os

import pytest
from rest_framework.test import APIClient

from apps.catalog.services import catalog_load
from apps.core.roles import Role
from apps.core.services import api_token_create
from tests.factories.core import TeamFactory, UserFactory


@pytest.fixture
def catalog(db):
    """The shipped GPU catalog, systems and model presets."""
    catalog_load()


@pytest.fixture
def team(db):
    return TeamFactory(name="ML Platform", slug="ml-platform")


@pytest.fixture
def other_team(db):
    return TeamFactory(name="Other Team", slug="other-team")


@pytest.fixture
def make_user(db, team):
    def make(*roles: str, teams=None, **kwargs):
        return UserFactory(roles=roles, teams=[team] if teams is None else teams, **kwargs)

    return make


@pytest.fixture
def platform_user(make_user):
    return make_user(Role.PLATFORM)


@pytest.fixture
def finance_user(make_user):
    return make_user(Role.FINANCE)


@pytest.fixture
def token_client(db, make_user):
    """An API client authenticated with a real (hashed, expiring) token."""

    def make(*roles: str, user=None):
        user = user or make_user(*(roles or (Role.API_CLIENT,)))
        _, key = api_token_create(user=user, days=1)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        client.user = user
        return client

    return make


def broker_url() -> str:
    return os.environ.get("CELERY_BROKER_URL") or os.environ.get("REDIS_URL") or ""
