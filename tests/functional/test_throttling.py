"""Guessing passwords and hammering the API are slowed down."""

import os
import threading
import time
import uuid

import pytest
from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache
from django.db import connections
from django.test import Client, override_settings
from django.urls import resolve
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle

from apps.core.roles import Role
from tests.conftest import broker_url

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"
ADMIN_LOGIN = "/admin/login/"
BOTH_SIGN_IN_PAGES = pytest.mark.parametrize("url", [LOGIN, ADMIN_LOGIN])
PASSWORD = "pw-for-tests"  # tests/factories/core.py
WRONG_PASSWORD = "no"
# Long enough for twenty threads to start their requests while the first checks are under way
# (it widens the race; nothing is timed).
SLOW_CHECK_S = 0.3
SIMULTANEOUS_ATTEMPTS = 20
# Two clients at documentation addresses (RFC 5737), and a reverse proxy on a private one.
ADDRESS_A = "192.0.2.10"
ADDRESS_B = "203.0.113.20"
PROXY_ADDRESS = "10.9.9.9"


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


class PasswordChecks(list):
    """The usernames whose password was checked; ``slow`` makes each check take a while."""

    slow = False


@pytest.fixture
def password_checks(monkeypatch):
    """Records every password check (each call to ModelBackend.authenticate)."""
    checked = PasswordChecks()  # list.append is atomic: threads may share it
    original = ModelBackend.authenticate

    def counting(self, request, username=None, password=None, **kwargs):
        checked.append(username)
        if checked.slow:
            time.sleep(SLOW_CHECK_S)
        return original(self, request, username=username, password=password, **kwargs)

    monkeypatch.setattr(ModelBackend, "authenticate", counting)
    return checked


def sign_in(client, url, username, password=WRONG_PASSWORD, address="10.0.0.1"):
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR=address)


def signed_in(client):
    return "_auth_user_id" in client.session


class TestLoginThrottle:
    @BOTH_SIGN_IN_PAGES
    @override_settings(LOGIN_FAILURE_LIMIT=3)
    def test_repeated_failed_logins_are_refused_even_with_the_right_password(
        self, client, make_user, url
    ):
        make_user(username="victim", is_staff=True)
        for _ in range(3):
            assert sign_in(client, url, "victim").status_code == 200
        response = sign_in(client, url, "victim", PASSWORD)
        assert response.status_code == 429
        assert b"Too many failed sign-ins. Wait a few minutes and try again." in response.content
        assert not signed_in(client)

    @BOTH_SIGN_IN_PAGES
    @override_settings(LOGIN_FAILURE_LIMIT=3)
    def test_a_correct_login_under_the_limit_works(self, client, make_user, url):
        make_user(username="ok", is_staff=True)
        sign_in(client, url, "ok")
        response = sign_in(client, url, "ok", PASSWORD)
        assert response.status_code == 302
        assert signed_in(client)

    @BOTH_SIGN_IN_PAGES
    @override_settings(LOGIN_FAILURE_LIMIT=3)
    def test_a_refused_attempt_does_not_check_the_password(
        self, client, make_user, password_checks, url
    ):
        make_user(username="victim", is_staff=True)
        for _ in range(3):
            sign_in(client, url, "victim")
        assert sign_in(client, url, "victim", PASSWORD).status_code == 429
        assert sign_in(client, url, "victim").status_code == 429
        assert password_checks == ["victim"] * 3

    @override_settings(LOGIN_FAILURE_LIMIT=3)
    def test_case_and_spaces_around_the_username_share_one_counter(self, client, make_user):
        make_user(username="alice")
        for spelling in ("Alice", "alice ", " ALICE"):
            assert sign_in(client, LOGIN, spelling).status_code == 200
        assert sign_in(client, LOGIN, "alice", PASSWORD).status_code == 429

    @override_settings(LOGIN_FAILURE_LIMIT=3)
    def test_a_full_width_spelling_of_the_username_shares_its_counter(self, client, make_user):
        # The sign-in form NFKC-normalises usernames, so the full-width spelling *is* "victim":
        # it must not come with a fresh allowance of guesses.
        make_user(username="victim")
        for _ in range(3):
            sign_in(client, LOGIN, "victim")
        full_width = "\uff56\uff49\uff43\uff54\uff49\uff4d"
        response = sign_in(client, LOGIN, full_width, PASSWORD)
        assert response.status_code == 429
        assert not signed_in(client)

    @BOTH_SIGN_IN_PAGES
    def test_failures_from_one_address_do_not_lock_the_user_out_from_another(
        self, make_user, cache_backend, url
    ):
        # The default limits: one more failure than the username is allowed, from address A.
        make_user(username="victim", is_staff=True)
        failures = settings.LOGIN_FAILURE_LIMIT + 1
        codes = [
            sign_in(Client(), url, "victim", address=ADDRESS_A).status_code for _ in range(failures)
        ]
        assert codes == [200] * settings.LOGIN_FAILURE_LIMIT + [429]
        assert sign_in(Client(), url, "victim", PASSWORD, address=ADDRESS_A).status_code == 429
        assert sign_in(Client(), url, "victim", PASSWORD, address=ADDRESS_B).status_code == 302

    @BOTH_SIGN_IN_PAGES
    def test_many_random_usernames_from_one_address_lock_out_only_that_address(
        self, make_user, cache_backend, url
    ):
        # The default limits: more failures from address A than an address is allowed, each for
        # a different (mostly unknown) username.
        make_user(Role.FINANCE, username="finance", is_staff=True)
        failures = settings.LOGIN_ADDRESS_FAILURE_LIMIT + 2
        codes = [
            sign_in(Client(), url, f"guess-{uuid.uuid4().hex}", address=ADDRESS_A).status_code
            for _ in range(failures)
        ]
        assert codes == [200] * settings.LOGIN_ADDRESS_FAILURE_LIMIT + [429, 429]
        # finance's right password from another address works...
        assert sign_in(Client(), url, "finance", PASSWORD, address=ADDRESS_B).status_code == 302
        # ...while the per-address limit still stops address A, for every username.
        assert sign_in(Client(), url, "finance", PASSWORD, address=ADDRESS_A).status_code == 429

    @override_settings(LOGIN_FAILURE_LIMIT=2, LOGIN_ADDRESS_FAILURE_LIMIT=4)
    def test_one_address_has_its_own_higher_limit(self, client, make_user):
        make_user(username="dora")
        for name in ("amy", "bob", "cat"):  # three failures from one address, for three people
            assert sign_in(client, LOGIN, name).status_code == 200
        # More failures than one username is allowed, yet someone else there can still sign in.
        assert sign_in(client, LOGIN, "dora", PASSWORD).status_code == 302
        Client().post(LOGIN, {"username": "eve", "password": "no"}, REMOTE_ADDR="10.0.0.1")
        # Four failures: the address is full, for everyone behind it...
        assert sign_in(Client(), LOGIN, "dora", PASSWORD).status_code == 429
        # ...and only for them.
        assert sign_in(Client(), LOGIN, "dora", PASSWORD, address="10.0.0.2").status_code == 302

    @override_settings(LOGIN_FAILURE_LIMIT=2, LOGIN_ADDRESS_FAILURE_LIMIT=2)
    def test_an_ipv6_network_shares_one_address_counter(self, make_user):
        make_user(username="dora")
        sign_in(Client(), LOGIN, "amy", address="2001:db8:1:2::1")
        sign_in(Client(), LOGIN, "bob", address="2001:db8:1:2:ffff::2")
        response = sign_in(Client(), LOGIN, "dora", PASSWORD, address="2001:db8:1:2::3")
        assert response.status_code == 429
        response = sign_in(Client(), LOGIN, "dora", PASSWORD, address="2001:db8:1:3::3")
        assert response.status_code == 302

    @override_settings(LOGIN_FAILURE_LIMIT=2, LOGIN_ADDRESS_FAILURE_LIMIT=2)
    def test_successful_sign_ins_do_not_count(self, make_user):
        make_user(username="dora")
        codes = [sign_in(Client(), LOGIN, "dora", PASSWORD).status_code for _ in range(5)]
        assert codes == [302] * 5

    def test_the_address_limit_is_far_above_the_username_limit(self):
        assert settings.LOGIN_ADDRESS_FAILURE_LIMIT >= 10 * settings.LOGIN_FAILURE_LIMIT


def behind_proxy(client, url, username, password=WRONG_PASSWORD, forwarded_for=""):
    """A sign-in that reached the app through a reverse proxy at PROXY_ADDRESS."""
    return client.post(
        url,
        {"username": username, "password": password},
        REMOTE_ADDR=PROXY_ADDRESS,
        HTTP_X_FORWARDED_FOR=forwarded_for,
    )


class TestBehindTrustedProxies:
    @override_settings(LOGIN_TRUSTED_PROXY_HOPS=1)
    def test_many_random_usernames_from_one_client_do_not_lock_out_another(
        self, make_user, cache_backend
    ):
        # Every request comes from the proxy; only X-Forwarded-For tells the clients apart.
        make_user(Role.FINANCE, username="finance")
        for _ in range(settings.LOGIN_ADDRESS_FAILURE_LIMIT + 2):
            behind_proxy(Client(), LOGIN, f"guess-{uuid.uuid4().hex}", forwarded_for=ADDRESS_A)
        response = behind_proxy(Client(), LOGIN, "finance", PASSWORD, forwarded_for=ADDRESS_B)
        assert response.status_code == 302
        response = behind_proxy(Client(), LOGIN, "finance", PASSWORD, forwarded_for=ADDRESS_A)
        assert response.status_code == 429

    @override_settings(LOGIN_TRUSTED_PROXY_HOPS=1, LOGIN_FAILURE_LIMIT=2)
    def test_the_address_is_the_last_entry_and_a_spoofed_first_entry_is_ignored(
        self, make_user, cache_backend
    ):
        make_user(username="victim")
        # The attacker at ADDRESS_A writes a fresh left-most entry each time; the proxy appends
        # the address it really saw.
        for n in range(2):
            response = behind_proxy(
                Client(), LOGIN, "victim", forwarded_for=f"198.51.100.{n}, {ADDRESS_A}"
            )
            assert response.status_code == 200
        response = behind_proxy(
            Client(), LOGIN, "victim", PASSWORD, forwarded_for=f"198.51.100.9, {ADDRESS_A}"
        )
        assert response.status_code == 429
        # The victim at ADDRESS_B, even when a client claims ADDRESS_A as the left-most entry.
        response = behind_proxy(
            Client(), LOGIN, "victim", PASSWORD, forwarded_for=f"{ADDRESS_A}, {ADDRESS_B}"
        )
        assert response.status_code == 302

    @override_settings(LOGIN_FAILURE_LIMIT=2)
    def test_with_no_trusted_proxy_the_header_is_ignored(self, make_user):
        # The default, 0 hops: REMOTE_ADDR alone, whatever X-Forwarded-For claims.
        assert settings.LOGIN_TRUSTED_PROXY_HOPS == 0
        make_user(username="victim")
        for n in range(2):
            behind_proxy(Client(), LOGIN, "victim", forwarded_for=f"198.51.100.{n}")
        response = behind_proxy(Client(), LOGIN, "victim", PASSWORD, forwarded_for=ADDRESS_B)
        assert response.status_code == 429

    @pytest.mark.parametrize(
        ("hops", "forwarded_for", "expected"),
        [
            (0, f"{ADDRESS_A}", PROXY_ADDRESS),
            (1, f"{ADDRESS_A}", ADDRESS_A),
            (1, f"198.51.100.7, {ADDRESS_A}", ADDRESS_A),
            (1, f"198.51.100.7,{ADDRESS_A} ", ADDRESS_A),
            (2, f"198.51.100.7, {ADDRESS_A}, 10.1.0.2", ADDRESS_A),
            # Fewer entries than trusted proxies: it did not come through them all.
            (2, f"{ADDRESS_A}", PROXY_ADDRESS),
            (1, "", PROXY_ADDRESS),
        ],
    )
    def test_client_address(self, rf, hops, forwarded_for, expected):
        from apps.core.login import client_address

        request = rf.post(LOGIN, REMOTE_ADDR=PROXY_ADDRESS, HTTP_X_FORWARDED_FOR=forwarded_for)
        with override_settings(LOGIN_TRUSTED_PROXY_HOPS=hops):
            assert client_address(request) == expected


class TestAdminSignInPage:
    def test_the_admin_sign_in_url_is_the_throttled_view(self):
        from apps.core.login import ThrottledAdminLoginView

        assert resolve(ADMIN_LOGIN).func.view_class is ThrottledAdminLoginView

    def test_the_admin_sends_visitors_to_it(self, client):
        response = client.get("/admin/")
        assert response.status_code == 302
        assert response["Location"] == "/admin/login/?next=/admin/"

    def test_it_shows_the_admin_sign_in_form(self, client):
        response = client.get(ADMIN_LOGIN, {"next": "/admin/auth/user/"})
        assert response.status_code == 200
        assert response.templates[0].name == "admin/login.html"
        assert b'id="login-form"' in response.content
        assert b'name="next" value="/admin/auth/user/"' in response.content

    def test_signed_in_staff_go_straight_on(self, client, make_user):
        client.force_login(make_user(is_staff=True))
        response = client.get(ADMIN_LOGIN)
        assert response.status_code == 302
        assert response["Location"] == "/admin/"

    def test_staff_are_sent_where_they_were_going(self, client, make_user):
        make_user(username="boss", is_staff=True)
        response = client.post(
            ADMIN_LOGIN, {"username": "boss", "password": PASSWORD, "next": "/admin/auth/user/"}
        )
        assert response.status_code == 302
        assert response["Location"] == "/admin/auth/user/"

    @override_settings(LOGIN_FAILURE_LIMIT=2)
    def test_the_right_password_of_someone_not_staff_is_a_failure(self, client, make_user):
        make_user(username="plain")
        for _ in range(2):
            response = sign_in(client, ADMIN_LOGIN, "plain", PASSWORD)
            assert response.status_code == 200
            assert not signed_in(client)
        assert sign_in(client, ADMIN_LOGIN, "plain", PASSWORD).status_code == 429


def redis_cache_settings():
    url = broker_url()
    if not url:
        if os.environ.get("GPUSELECT_REQUIRE_BROKER") == "1":
            pytest.fail("GPUSELECT_REQUIRE_BROKER=1 but CELERY_BROKER_URL is not set")
        pytest.skip("no Redis configured (set CELERY_BROKER_URL to run against Redis)")
    # A prefix of its own: the counters never meet another test's, and nothing is flushed.
    prefix = f"test-login-{uuid.uuid4().hex}"
    backend = "django.core.cache.backends.redis.RedisCache"
    return {"default": {"BACKEND": backend, "LOCATION": url, "KEY_PREFIX": prefix}}


@pytest.fixture(params=["locmem", "redis"])
def cache_backend(request):
    """The test's cache: LocMemCache (the default) or Redis (production)."""
    if request.param == "locmem":
        yield
        return
    with override_settings(CACHES=redis_cache_settings()):
        cache.get("ping")  # unreachable Redis fails here, not in a thread
        yield


@pytest.mark.django_db(transaction=True)  # the threads use their own database connections
class TestSimultaneousAttempts:
    @pytest.mark.parametrize("url", [LOGIN, ADMIN_LOGIN])
    @override_settings(LOGIN_FAILURE_LIMIT=5)
    def test_at_most_the_limit_of_passwords_is_checked(
        self, make_user, password_checks, cache_backend, url
    ):
        make_user(username="victim", is_staff=True)
        password_checks.slow = True
        start = threading.Barrier(SIMULTANEOUS_ATTEMPTS)
        codes: list[int] = []

        def attempt():
            try:
                start.wait()
                codes.append(sign_in(Client(), url, "victim").status_code)
            finally:
                connections.close_all()

        threads = [threading.Thread(target=attempt) for _ in range(SIMULTANEOUS_ATTEMPTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        assert len(password_checks) == 5
        assert sorted(codes) == [200] * 5 + [429] * (SIMULTANEOUS_ATTEMPTS - 5)


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

    # Every API endpoint needs a sign-in or a token (a 401 comes before any throttle), so the
    # anon rate guards nothing today; the address it would count by is still REMOTE_ADDR.
    @override_settings(REST_FRAMEWORK={**settings.REST_FRAMEWORK, "NUM_PROXIES": 1})
    def test_behind_one_trusted_proxy_the_address_it_saw_counts(self, rf):
        request = rf.get(
            "/api/v1/gpus/", REMOTE_ADDR=PROXY_ADDRESS, HTTP_X_FORWARDED_FOR=f"1.2.3.4, {ADDRESS_B}"
        )
        assert AnonRateThrottle().get_ident(request) == ADDRESS_B

    def test_without_trusted_proxies_the_header_is_never_read(self, rf):
        request = rf.get("/api/v1/gpus/", REMOTE_ADDR=ADDRESS_A, HTTP_X_FORWARDED_FOR=ADDRESS_B)
        assert AnonRateThrottle().get_ident(request) == ADDRESS_A
