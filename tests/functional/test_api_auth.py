"""The API answers only to valid, unexpired, unrevoked tokens (or a signed-in session)."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from knox.models import AuthToken
from rest_framework.test import APIClient

from apps.core.roles import Role

pytestmark = pytest.mark.django_db
URL = "/api/v1/gpus/"


class TestTokenAuthentication:
    def test_no_token_is_refused_with_401(self, catalog):
        response = APIClient().get(URL)
        assert response.status_code == 401
        assert response.json()["detail"]

    def test_a_wrong_token_is_refused(self, catalog, token_client):
        token_client()  # a real token exists, but we send another one
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION="Token " + "0" * 64)
        assert client.get(URL).status_code == 401

    def test_a_valid_token_is_accepted(self, catalog, token_client):
        response = token_client().get(URL)
        assert response.status_code == 200
        assert response.json()["count"] == 31

    def test_tokens_are_stored_only_as_digests(self, token_client):
        client = token_client()
        key = client._credentials["HTTP_AUTHORIZATION"].split()[1]
        token = AuthToken.objects.get(user=client.user)
        assert key not in {token.digest, token.token_key}
        assert token.digest != key and len(token.digest) == 128

    def test_an_expired_token_is_refused(self, catalog, token_client):
        client = token_client()
        AuthToken.objects.filter(user=client.user).update(
            expiry=timezone.now() - timedelta(seconds=1)
        )
        assert client.get(URL).status_code == 401

    def test_a_revoked_token_is_refused(self, catalog, token_client):
        client = token_client()
        AuthToken.objects.filter(user=client.user).delete()
        assert client.get(URL).status_code == 401

    def test_a_deactivated_users_token_stops_working(self, catalog, token_client):
        client = token_client()
        client.user.is_active = False
        client.user.save(update_fields=["is_active"])
        assert client.get(URL).status_code == 401


class TestCreateApiTokenCommand:
    def test_prints_a_working_token_alone_on_the_last_line(self, catalog, make_user):
        user = make_user(Role.API_CLIENT, username="robot")
        out = StringIO()
        call_command("create_api_token", "robot", "--days", "7", stdout=out, stderr=StringIO())
        key = out.getvalue().strip().splitlines()[-1]
        assert " " not in key and len(key) == 64
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        assert client.get(URL).status_code == 200
        token = AuthToken.objects.get(user=user)
        assert timedelta(days=6, hours=23) < token.expiry - timezone.now() <= timedelta(days=7)

    def test_refuses_an_unknown_user(self, db):
        with pytest.raises(CommandError, match="No user named 'ghost'"):
            call_command("create_api_token", "ghost", stdout=StringIO())

    def test_refuses_an_absurd_lifetime(self, make_user):
        make_user(username="robot2")
        with pytest.raises(CommandError, match="--days"):
            call_command("create_api_token", "robot2", "--days", "0", stdout=StringIO())


class TestTokenPage:
    def test_a_user_creates_and_revokes_their_own_token(self, client, make_user):
        user = make_user(Role.API_CLIENT)
        client.force_login(user)
        response = client.post("/account/tokens/", {"days": "30"})
        assert response.status_code == 200
        key = response.context["new_key"]
        assert AuthToken.objects.filter(user=user).count() == 1
        token = AuthToken.objects.get(user=user)
        client.post(f"/account/tokens/{token.token_key}/revoke/")
        assert not AuthToken.objects.filter(user=user).exists()
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        assert api.get(URL).status_code == 401

    def test_a_user_cannot_revoke_someone_elses_token(self, client, make_user, token_client):
        other = token_client()
        token = AuthToken.objects.get(user=other.user)
        client.force_login(make_user(Role.API_CLIENT))
        client.post(f"/account/tokens/{token.token_key}/revoke/")
        assert AuthToken.objects.filter(pk=token.pk).exists()

    def test_revoking_by_get_is_not_allowed(self, client, make_user):
        client.force_login(make_user())
        assert client.get("/account/tokens/abc/revoke/").status_code == 405
