"""A user's API tokens stop working when their password changes or they are deactivated."""

import pytest
from django.contrib.auth.hashers import MD5PasswordHasher
from django.core.management import call_command
from django.test import override_settings
from knox.models import AuthToken

pytestmark = pytest.mark.django_db
URL = "/api/v1/gpus/"
PASSWORD = "pw-for-tests"  # tests/factories/core.py
NEW_PASSWORD = "a-new-long-passphrase-9"


class StrongerMD5PasswordHasher(MD5PasswordHasher):
    """Stands in for a hasher upgrade: the test settings' MD5 hashes become outdated."""

    algorithm = "md5_stronger"


class TestTokensRevoked:
    def test_a_token_works_until_the_password_changes(self, catalog, token_client):
        client = token_client()
        assert client.get(URL).status_code == 200
        client.user.set_password(NEW_PASSWORD)
        client.user.save()
        assert client.get(URL).status_code == 401
        assert not AuthToken.objects.filter(user=client.user).exists()

    def test_a_password_changed_in_the_admin_revokes_the_tokens(
        self, catalog, token_client, client, make_user
    ):
        api = token_client()
        client.force_login(make_user(is_staff=True, is_superuser=True))
        response = client.post(
            f"/admin/auth/user/{api.user.pk}/password/",
            {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
        )
        assert response.status_code == 302
        api.user.refresh_from_db()
        assert api.user.check_password(NEW_PASSWORD)
        assert api.get(URL).status_code == 401

    def test_changepassword_revokes_the_tokens(self, catalog, token_client, monkeypatch):
        api = token_client()
        monkeypatch.setattr("getpass.getpass", lambda prompt="": NEW_PASSWORD)
        call_command("changepassword", api.user.username, stdout=None)
        assert api.get(URL).status_code == 401

    def test_a_deactivated_user_stays_locked_out_of_the_api_when_reactivated(
        self, catalog, token_client
    ):
        client = token_client()
        client.user.is_active = False
        client.user.save(update_fields=["is_active"])
        assert client.get(URL).status_code == 401
        client.user.is_active = True
        client.user.save(update_fields=["is_active"])
        assert client.get(URL).status_code == 401

    def test_every_token_of_that_user_goes_and_only_theirs(self, catalog, token_client):
        first = token_client()
        second = token_client(user=first.user)
        someone_else = token_client()
        first.user.set_password(NEW_PASSWORD)
        first.user.save()
        assert first.get(URL).status_code == 401
        assert second.get(URL).status_code == 401
        assert someone_else.get(URL).status_code == 200


class TestTokensKept:
    def test_other_changes_to_the_user_keep_the_tokens(self, catalog, token_client):
        client = token_client()
        client.user.email = "new@example.com"
        client.user.first_name = "New"
        client.user.save()
        assert client.get(URL).status_code == 200

    def test_signing_in_keeps_the_tokens(self, catalog, token_client, client):
        api = token_client()
        response = client.post(
            "/accounts/login/", {"username": api.user.username, "password": PASSWORD}
        )
        assert response.status_code == 302
        assert api.get(URL).status_code == 200

    def test_django_upgrading_the_password_hash_keeps_the_tokens(self, catalog, token_client):
        api = token_client()
        old_hash = api.user.password
        hashers = [
            "tests.functional.test_token_revocation.StrongerMD5PasswordHasher",
            "django.contrib.auth.hashers.MD5PasswordHasher",
        ]
        with override_settings(PASSWORD_HASHERS=hashers):
            assert api.user.check_password(PASSWORD)  # re-hashes and saves, as a sign-in does
        api.user.refresh_from_db()
        assert api.user.password != old_hash
        assert api.user.password.startswith("md5_stronger$")
        assert api.get(URL).status_code == 200
