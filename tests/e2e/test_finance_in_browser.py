"""Finance opens a brief's candidate table: four charts, no CSP violation, and an assumption
changed on the page moves the table."""

from decimal import Decimal

import pytest

from apps.core.roles import Role
from apps.finance.services import candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, QuoteFactory

from .test_briefs_in_browser import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


class TestFinanceInTheBrowser:
    def test_charts_render_and_an_assumption_moves_the_table(
        self, page, live_server, catalog, make_user, team
    ):
        user = make_user(Role.FINANCE, username="fin")
        brief = BriefFactory(team=team, created_by=user)
        QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
        QuoteFactory(pricing_term="RESERVED_1Y", hourly_price_per_gpu=Decimal("1.90"))
        ApiRouteFactory(model_preset="llama-3.1-8b")
        candidate_tables_request_recompute(brief_ids=[brief.pk])
        sign_in(page, live_server, "fin")
        page.wait_for_url("**/briefs/")
        page.goto(f"{live_server.url}/briefs/{brief.pk}/finance/")
        for chart in ("unit-cost-chart", "latency-chart"):
            page.wait_for_selector(f"#{chart} .main-svg")
        # The other two charts sit in collapsed sections and are drawn at the section's width
        # when it opens (static/js/charts.js).
        for section, chart in (("cost-by-line", "breakdown-chart"),
                               ("capacity-model", "utilization-chart")):  # fmt: skip
            assert not page.locator(f"#{chart}").is_visible()
            page.click(f"#{section} > summary")
            page.wait_for_selector(f"#{chart} .main-svg")
            width = page.eval_on_selector(
                f"#{chart} .main-svg", "svg => svg.getBoundingClientRect().width"
            )
            section_width = page.eval_on_selector(
                f"#{section}", "d => d.getBoundingClientRect().width"
            )
            assert width > 0.8 * section_width, (chart, width, section_width)
        page.click("#assumptions > summary")
        first_cost = page.inner_text("#candidate-table tr.candidate td.monthly")
        page.fill("#id_observability_share", "50")  # a percentage: 50 %
        page.click("button:has-text('Save and recompute')")
        page.wait_for_selector("#candidate-table")
        new_cost = page.inner_text("#candidate-table tr.candidate td.monthly")
        # money as people read it: its currency, thousands separated ("USD 5,121")
        assert first_cost.startswith("USD")

        def amount(text):
            return Decimal(text.split()[-1].replace(",", ""))

        assert amount(new_cost) > amount(first_cost)
        # A refused override: the error at the top of the page, linked to its field, and the
        # collapsed assumptions section opened on the field (static/js/sections.js).
        assert not page.locator("#id_retry_rate").is_visible()
        page.click("#assumptions > summary")
        page.fill("#id_retry_rate", "150")
        page.click("button:has-text('Save and recompute')")
        page.wait_for_selector("#form-errors")
        assert "At most 99.99" in page.inner_text("#form-errors")
        assert page.locator("#id_retry_rate").is_visible()
        page.click("#form-errors a[href='#id_retry_rate']")
        assert page.locator("#id_retry_rate").is_visible()
        assert page.console_errors == []
