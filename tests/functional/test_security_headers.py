"""Every page: strict CSP (no unsafe-inline / unsafe-eval), nosniff, no framing; CSRF on
every state-changing form; sign-out of deactivated users at their next request."""

import pytest
from django.test import Client

from apps.core.roles import Role
from tests.factories.briefs import BriefFactory

pytestmark = pytest.mark.django_db

PAGES = [
    "/briefs/",
    "/briefs/new/",
    "/briefs/what-if/",
    "/catalog/",
    "/catalog/h100-sxm5-80gb/",
    "/quotes/",
    "/quotes/new/",
    "/quotes/import/",
    "/finance/assumptions/",
    "/account/tokens/",
    "/api/docs/",
]


@pytest.fixture
def signed_in(client, make_user):
    user = make_user(Role.PLATFORM, Role.FINANCE, Role.PROCUREMENT)
    client.force_login(user)
    client.user = user
    return client


def csp(response):
    return {
        part.strip().split(" ", 1)[0]: part.strip()
        for part in response["Content-Security-Policy"].split(";")
        if part.strip()
    }


class TestHeaders:
    @pytest.mark.parametrize("url", PAGES)
    def test_every_page_carries_a_strict_policy(self, catalog, signed_in, url):
        response = signed_in.get(url)
        assert response.status_code == 200
        policy = response["Content-Security-Policy"]
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
        directives = csp(response)
        assert directives["frame-ancestors"] == "frame-ancestors 'none'"
        assert directives["script-src"].startswith("script-src 'self'")  # + a nonce if used
        assert directives["object-src"] == "object-src 'none'"
        assert response["X-Content-Type-Options"] == "nosniff"
        assert response["X-Frame-Options"] == "DENY"

    def test_brief_pages_with_charts_too(self, catalog, signed_in, team):
        brief = BriefFactory(team=team)
        for url in (f"/briefs/{brief.pk}/", f"/briefs/{brief.pk}/finance/"):
            response = signed_in.get(url)
            assert "unsafe-inline" not in response["Content-Security-Policy"]
            assert b"<script>" not in response.content  # every script carries the nonce

    def test_the_login_page_and_api_answers_too(self, client):
        for url in ("/accounts/login/", "/api/v1/gpus/"):
            response = client.get(url)
            assert "frame-ancestors 'none'" in response["Content-Security-Policy"]
            assert response["X-Content-Type-Options"] == "nosniff"


class TestCsrf:
    @pytest.mark.parametrize(
        "url",
        ["/briefs/new/", "/quotes/new/", "/account/tokens/", "/finance/assumptions/",
         "/accounts/logout/"],
    )  # fmt: skip
    def test_a_post_without_the_token_is_refused(self, catalog, make_user, url):
        client = Client(enforce_csrf_checks=True)
        client.force_login(make_user(Role.PLATFORM, Role.FINANCE, Role.PROCUREMENT))
        assert client.post(url, {"name": "x"}).status_code == 403

    def test_the_api_with_a_session_needs_the_token_too(self, catalog, make_user):
        client = Client(enforce_csrf_checks=True)
        client.force_login(make_user(Role.PROCUREMENT))
        response = client.post("/api/v1/providers/", {"name": "x"})
        assert response.status_code == 403
        assert "CSRF" in response.json()["detail"]


class TestDeactivatedUsers:
    def test_a_deactivated_users_session_stops_at_the_next_request(self, signed_in):
        assert signed_in.get("/briefs/").status_code == 200
        signed_in.user.is_active = False
        signed_in.user.save(update_fields=["is_active"])
        response = signed_in.get("/briefs/")
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")

    def test_and_their_api_session_too(self, signed_in):
        signed_in.user.is_active = False
        signed_in.user.save(update_fields=["is_active"])
        assert signed_in.get("/api/v1/gpus/").status_code in (401, 403)
