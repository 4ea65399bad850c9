"""With DEBUG off (``make run``, production) every error page is the app's own: the 404 in the
site's frame, the 500 and 400 drawn without a request or a database (Django's server_error and
bad_request views give them none)."""

import pytest
from django.test import Client, RequestFactory
from django.views.defaults import bad_request, server_error

pytestmark = pytest.mark.django_db


def test_a_404_is_the_apps_page(client, settings):
    settings.DEBUG = False
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    body = response.content.decode()
    assert "Page not found" in body and "/no-such-page/" in body
    assert 'class="topbar"' in body


def test_a_500_is_the_apps_page_drawn_without_a_request_context(settings):
    settings.DEBUG = False
    response = server_error(RequestFactory().get("/"))
    assert response.status_code == 500
    body = response.content.decode()
    assert "Something went wrong" in body and "/static/css/site.css" in body


def test_a_400_is_the_apps_page(settings):
    settings.DEBUG = False
    response = bad_request(RequestFactory().get("/"), exception=None)
    assert response.status_code == 400
    assert "Bad request" in response.content.decode()


def test_a_host_not_allowed_is_the_apps_400(settings):
    settings.DEBUG = False
    response = Client(raise_request_exception=False).get("/healthz", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert "Bad request" in response.content.decode()
