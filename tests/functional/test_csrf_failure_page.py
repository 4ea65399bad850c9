"""A form sent without its CSRF token is refused with the site's 403 page: the reason in words,
a way back, nothing saved; never Django's bare technical page."""

import pytest
from django.middleware import csrf
from django.test import Client
from django.utils.html import escape

from apps.core.roles import Role
from apps.core.views import CSRF_OTHER, CSRF_STALE, CSRF_WORDS, csrf_reason_words
from apps.quotes.models import Provider

pytestmark = pytest.mark.django_db


@pytest.fixture
def strict(make_user):
    """A signed-in procurement user whose client checks CSRF as a browser's would."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_user(Role.PROCUREMENT))
    return client


class TestCsrfFailurePage:
    def test_a_form_posted_without_a_token_says_why_and_links_back(self, strict):
        strict.get("/quotes/providers/new/")  # the page sets the CSRF cookie

        response = strict.post(
            "/quotes/providers/new/",
            {"name": "Nebula GPU", "website": ""},
            HTTP_REFERER="http://testserver/quotes/providers/new/",
        )

        assert response.status_code == 403
        html = response.content.decode()
        assert "The form was not accepted" in html
        assert escape(CSRF_WORDS[csrf.REASON_CSRF_TOKEN_MISSING]) in html
        assert 'id="go-back" href="http://testserver/quotes/providers/new/"' in html
        assert "CSRF verification failed" not in html  # Django's default page
        assert "Reason given for failure" not in html
        assert not Provider.objects.filter(name="Nebula GPU").exists()

    def test_a_post_without_the_cookie_says_so(self, make_user):
        client = Client(enforce_csrf_checks=True)
        client.force_login(make_user(Role.PROCUREMENT))

        response = client.post("/quotes/providers/new/", {"name": "No cookie"})

        assert response.status_code == 403
        assert escape(CSRF_WORDS[csrf.REASON_NO_CSRF_COOKIE]) in response.content.decode()
        assert not Provider.objects.filter(name="No cookie").exists()

    def test_a_wrong_token_reads_as_a_stale_page(self, strict):
        strict.get("/quotes/providers/new/")

        response = strict.post(
            "/quotes/providers/new/", {"name": "Stale", "csrfmiddlewaretoken": "x" * 64}
        )

        assert response.status_code == 403
        assert escape(CSRF_STALE) in response.content.decode()

    def test_the_page_keeps_the_strict_csp(self, strict):
        strict.get("/quotes/providers/new/")
        response = strict.post("/quotes/providers/new/", {"name": "CSP"})
        policy = response.headers.get("Content-Security-Policy", "")
        assert policy and "unsafe-inline" not in policy
        assert "<script>" not in response.content.decode()

    @pytest.mark.parametrize(
        ("reason", "words"),
        [
            ("CSRF token from POST incorrect.", CSRF_STALE),
            ("CSRF cookie has incorrect length.", CSRF_STALE),
            ("something new in a later Django", CSRF_OTHER),
        ],
    )
    def test_every_reason_reads_in_words(self, reason, words):
        assert csrf_reason_words(reason) == words
