"""Guessing passwords and hammering the API are slowed down."""

import pytest
from django.core.cache import cache
from django.test import override_settings
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


class TestLoginThrottle:
    @override_settings(LOGIN_FAILURE_LIMIT=3)
    def test_repeated_failed_logins_are_refused_even_with_the_right_password(
        self, client, make_user
    ):
        make_user(username="victim")
        for _ in range(3):
            response = client.post("/accounts/login/", {"username": "victim", "password": "no"})
            assert response.status_code == 200
        response = client.post(
            "/accounts/login/", {"username": "victim", "password": "pw-for-tests"}
        )
        assert response.status_code == 429
        assert b"Too many failed sign-ins" in response.content
        assert "_auth_user_id" not in client.session

    @override_settings(LOGIN_FAILURE_LIMIT=3)
    def test_a_correct_login_under_the_limit_works(self, client, make_user):
        make_user(username="ok")
        client.post("/accounts/login/", {"username": "ok", "password": "wrong"})
        response = client.post("/accounts/login/", {"username": "ok", "password": "pw-for-tests"})
        assert response.status_code == 302


class TestApiThrottle:
    def test_past_the_rate_the_api_answers_429(self, catalog, token_client):
        # DRF reads the rates once, at import; lower them for this test only.
        original = SimpleRateThrottle.THROTTLE_RATES
        SimpleRateThrottle.THROTTLE_RATES = {"anon": "2/min", "user": "3/min"}
        try:
            client = token_client()
            codes = [client.get("/api/v1/gpus/").status_code for _ in range(4)]
        finally:
            SimpleRateThrottle.THROTTLE_RATES = original
        assert codes == [200, 200, 200, 429]

    def test_the_configured_rates_are_in_force(self):
        assert set(api_settings.DEFAULT_THROTTLE_CLASSES) == {AnonRateThrottle, UserRateThrottle}
