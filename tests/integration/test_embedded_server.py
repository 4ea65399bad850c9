"""``make run``'s server is a production WSGI server (issue 24, point 5): gunicorn with the
embedded default's settings (``server_command``, what the Makefile's SERVE runs), DEBUG off.
An unknown address answers the app's own 404 page, never Django's debug page; static files
come through WhiteNoise; CSRF is on and the demo users sign in; a refused body is answered
from its headers, without the server waiting for (or reading) the rest.

One server for the module (its setup migrates and loads the catalog and the demo data)."""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import socket
import urllib.error
import urllib.parse
import urllib.request
from urllib.parse import urlsplit

import pytest

from tests.integration.test_embedded_concurrency import embedded_server_running

# load_demo's DEFAULT_DEMO_PASSWORD (this process has the test settings, not the server's).
DEMO_PASSWORD = "gpuselect-demo"
# What Django's technical 404 and 500 pages (DEBUG on) say; none of it may ever be served.
DEBUG_PAGE_MARKS = ("Django tried these URL patterns", "URLconf", "Traceback", "DEBUG = True")
# How long the server may take to answer a refused body's headers (it reads nothing more).
REFUSAL_WAIT_S = 10.0
ONE_GIB = 1 << 30

pytestmark = [
    pytest.mark.skipif(
        "sqlite" not in os.environ.get("DATABASE_URL", "sqlite"),
        reason="the embedded default's server; run once, on the SQLite pass of the suite",
    ),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with embedded_server_running(tmp_path_factory.mktemp("embedded-server")) as running:
        yield running


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def browser():
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect)
    return opener, jar


def fetch(opener, url, data=None, headers=None):
    request = urllib.request.Request(url, data=data, headers=headers or {})  # noqa: S310
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def assert_no_debug_page(body):
    for mark in DEBUG_PAGE_MARKS:
        assert mark not in body, mark


def sign_in(server, username):
    opener, jar = browser()
    status, _, page = fetch(opener, server["base"] + "/accounts/login/")
    assert status == 200
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    form = urllib.parse.urlencode(
        {"username": username, "password": DEMO_PASSWORD, "csrfmiddlewaretoken": token}
    ).encode()
    login = server["base"] + "/accounts/login/"
    status, _, _ = fetch(opener, login, data=form, headers={"Referer": login})
    assert status == 302, "the demo user signs in"
    return opener, jar


def _read_answer(sock: socket.socket) -> str:
    """The server's answer: its headers, then its body to the end its headers announce (its
    Content-Length, or a chunked body's last chunk); the two may come in separate packets."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data.decode(errors="replace")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = [line.lower() for line in head.split(b"\r\n")]
    chunked = b"transfer-encoding: chunked" in lines
    length = next(
        (int(line.split(b":", 1)[1]) for line in lines if line.startswith(b"content-length:")), 0
    )

    def complete() -> bool:
        return body.endswith(b"0\r\n\r\n") if chunked else len(body) >= length

    while not complete():
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return (head + b"\r\n\r\n" + body).decode(errors="replace")


class TestTheServerMakeRunStarts:
    def test_an_unknown_page_is_the_apps_404_not_the_debug_page(self, server):
        opener, _ = browser()
        status, headers, body = fetch(opener, server["base"] + "/no-such-page/")
        assert status == 404
        assert headers["Content-Type"].startswith("text/html")
        assert "Page not found" in body and 'class="topbar"' in body
        assert_no_debug_page(body)

    def test_a_signed_in_404_is_the_apps_page_with_its_navigation(self, server):
        opener, _ = sign_in(server, "platform")
        status, _, body = fetch(opener, server["base"] + "/briefs/987654/")
        assert status == 404
        assert "Page not found" in body and 'aria-label="Main"' in body
        assert_no_debug_page(body)

    def test_an_unknown_api_address_is_a_json_404(self, server):
        opener, _ = browser()
        status, headers, body = fetch(opener, server["base"] + "/api/v1/no-such-thing/")
        assert status == 404
        assert headers["Content-Type"] == "application/json"
        assert "detail" in json.loads(body)

    def test_csrf_is_on(self, server):
        opener, _ = browser()
        form = urllib.parse.urlencode({"username": "platform", "password": DEMO_PASSWORD})
        status, _, body = fetch(opener, server["base"] + "/accounts/login/", data=form.encode())
        assert status == 403
        assert "The form was not accepted" in body
        assert_no_debug_page(body)

    def test_static_files_come_through_whitenoise(self, server):
        opener, _ = browser()
        status, headers, body = fetch(opener, server["base"] + "/static/css/site.css")
        assert status == 200 and ".topbar" in body
        assert "max-age" in headers.get("Cache-Control", "")  # WhiteNoise's, not Django's view

    def test_a_body_over_the_limit_is_answered_from_its_headers(self, server):
        # 1 GiB declared, a few bytes sent: the 413 comes without the server waiting for the rest.
        address = urlsplit(server["base"])
        with socket.create_connection((address.hostname, address.port), timeout=30) as sock:
            sock.sendall(
                b"POST /api/v1/briefs/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\n"
                + f"Content-Length: {ONE_GIB}\r\n\r\n".encode()
                + b"{" * 1024
            )
            sock.settimeout(REFUSAL_WAIT_S)
            answer = _read_answer(sock)
        assert answer.startswith("HTTP/1.1 413"), answer[:200]
        assert "Request body too large" in answer
