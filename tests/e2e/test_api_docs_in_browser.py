"""The API docs (Swagger UI, served from our own origin) render under the strict CSP."""

import pytest

from apps.core.roles import Role

from .test_briefs_in_browser import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_api_docs_render_without_a_policy_violation(page, live_server, make_user):
    make_user(Role.API_CLIENT, username="robot")
    sign_in(page, live_server, "robot")
    page.wait_for_url("**/briefs/")
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".swagger-ui .opblock", timeout=15000)
    assert page.locator(".swagger-ui .opblock").count() > 20
    assert page.console_errors == []
