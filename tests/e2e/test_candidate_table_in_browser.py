"""Finance reads the candidate table in a 1,440 px window: no sideways scrolling (with a row's
details open too), no code names or raw floats in what is visible, and a row's cost lines one
click away. Screenshots go to tests/e2e/screenshots/ (ignored by git)."""

from decimal import Decimal
from pathlib import Path

import pytest

from apps.core.roles import Role
from apps.finance.services import candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, QuoteFactory
from tests.functional.test_candidate_table import CODE_NAMES, raw_floats

from .test_briefs_in_browser import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SHOTS = Path(__file__).resolve().parent / "screenshots"
WINDOW = {"width": 1440, "height": 900}


def fits(page) -> None:
    """Neither the page nor the table scrolls sideways."""
    assert page.evaluate("document.documentElement.scrollWidth") <= WINDOW["width"]
    table, room = page.evaluate(
        "(() => { const t = document.querySelector('#candidate-table');"
        " return [t.scrollWidth, t.parentElement.clientWidth]; })()"
    )
    assert table <= room


class TestTheCandidateTableInTheBrowser:
    def test_it_fits_a_1440_px_window_and_reads_in_words(
        self, browser, live_server, catalog, make_user, team
    ):
        user = make_user(Role.FINANCE, username="fin")
        brief = BriefFactory(team=team, created_by=user)
        QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
        QuoteFactory(pricing_term="RESERVED_1Y", hourly_price_per_gpu=Decimal("1.90"))
        QuoteFactory(
            pricing_term="RESERVED_3Y",
            hourly_price_per_gpu=Decimal("1.40"),
            minimum_commitment_months=36,
        )
        QuoteFactory(
            pricing_term="OWNED",
            hourly_price_per_gpu=Decimal("0"),
            capex_per_gpu=Decimal("30000"),
            depreciation_months=48,
        )
        ApiRouteFactory(model_preset="llama-3.1-8b")
        candidate_tables_request_recompute(brief_ids=[brief.pk])
        context = browser.new_context(viewport=WINDOW)
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        try:
            sign_in(page, live_server, "fin")
            page.wait_for_url("**/briefs/")
            page.goto(f"{live_server.url}/briefs/{brief.pk}/finance/")
            page.wait_for_selector("#candidate-table")
            fits(page)
            visible = page.inner_text("#candidate-table")
            for code in CODE_NAMES:
                assert code not in visible, code
            assert raw_floats(visible) == []
            assert "Cannot meet the brief" in visible
            assert "Brief runs in the public cloud" in visible
            # Closed, a row's details are not shown; one click opens them.
            first = page.locator("#candidate-table tr.more").first
            assert not first.locator("table.cost-lines").is_visible()
            first.locator("summary").click()
            assert first.locator("table.cost-lines").is_visible()
            opened = first.inner_text()
            assert "Platform labour" in opened and "All-in monthly cost" in opened
            assert raw_floats(opened) == []
            for code in CODE_NAMES:
                assert code not in opened, code
            fits(page)
            SHOTS.mkdir(exist_ok=True)
            page.locator("#candidate-table").screenshot(
                path=str(SHOTS / "finance-candidate-table-1440.png")
            )
            assert errors == []
        finally:
            context.close()
