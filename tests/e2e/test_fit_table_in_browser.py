"""The brief page draws the fit table and the memory chart with no CSP violation."""

import pytest

from apps.core.roles import Role
from tests.factories.briefs import BriefFactory

from .test_briefs_in_browser import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


class TestFitTableInTheBrowser:
    def test_the_memory_chart_renders_under_the_content_security_policy(
        self, page, live_server, catalog, make_user, team
    ):
        user = make_user(Role.FINANCE, username="fin")
        brief = BriefFactory(team=team, created_by=user)
        sign_in(page, live_server, "fin")
        page.wait_for_url("**/briefs/")
        page.goto(f"{live_server.url}/briefs/{brief.pk}/")
        page.wait_for_selector("#memory-chart .main-svg")
        assert page.locator("#fit-table tbody tr").count() == 31
        bars = page.locator("#memory-chart g.trace.bars")
        assert bars.count() >= 3  # weights, KV cache, overhead at least
        assert page.console_errors == []
