"""Procurement opens a decision record from the candidate table, answers a checklist question,
submits it; a platform reviewer approves; the page renders its chart under the strict CSP."""

from decimal import Decimal

import pytest

from apps.core.roles import Role
from apps.decisions.models import DecisionRecord
from apps.finance.services import candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, QuoteFactory

from .test_briefs_in_browser import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def sign_out(page):
    page.click("button:has-text('Sign out')")


class TestDecisionsInTheBrowser:
    def test_open_from_the_table_submit_and_approve(
        self, page, live_server, catalog, make_user, team
    ):
        make_user(Role.PROCUREMENT, username="proc")
        make_user(Role.PLATFORM, username="plat")
        brief = BriefFactory(team=team)
        quote = QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
        QuoteFactory(pricing_term="RESERVED_1Y", hourly_price_per_gpu=Decimal("1.90"))
        ApiRouteFactory(model_preset="llama-3.1-8b")
        candidate_tables_request_recompute(brief_ids=[brief.pk])

        sign_in(page, live_server, "proc")
        page.wait_for_url("**/briefs/")
        page.goto(f"{live_server.url}/decisions/checklist/quotes/{quote.pk}/")
        page.select_option("#id_hw_exact_sku-answer", "YES")
        page.fill("#id_hw_exact_sku-evidence_text", "Order form, section 3")
        page.click("button:has-text('Save all answers') >> nth=0")
        page.wait_for_selector("text=1/17 answered")

        page.goto(f"{live_server.url}/briefs/{brief.pk}/finance/")
        page.click(f"a.open-decision[href*='quote={quote.pk}']")
        page.wait_for_selector("#record-form")
        page.fill("#id_rationale", "Cheapest on-demand option that meets the latency target.")
        page.click("button:has-text('Open decision record')")
        page.wait_for_selector("#frozen-table")
        record = DecisionRecord.objects.get()
        assert page.inner_text("#record-status") == "Draft"
        assert page.inner_text("#checklist-complete") == "1/17"
        assert record.content_hash in page.inner_text("#content-hash")
        page.wait_for_selector("#decision-unit-cost-chart .main-svg")
        page.select_option("#id_submit_role", "procurement")
        page.click("#submit-button")
        page.wait_for_selector("text=Submitted for review.")
        assert page.inner_text("#record-status") == "In review"
        sign_out(page)

        sign_in(page, live_server, "plat")
        page.wait_for_url("**/briefs/")
        page.goto(f"{live_server.url}/decisions/{record.pk}/")
        page.click("#approve-platform")
        page.wait_for_selector("text=Approved as platform.")
        assert "Platform" in page.inner_text("#approvals")
        page.click("#verify-link")
        page.wait_for_selector("#verify-result")
        assert page.inner_text("#verify-result").startswith("Intact")
        assert page.console_errors == []
