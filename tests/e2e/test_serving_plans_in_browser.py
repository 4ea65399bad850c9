"""A GPU mix by request size as finance reads it in a 1,440 px window: its row names the GPU
types it mixes, its details say which requests each serves and what it saves, the energy column
reads in kWh and joules, and nothing scrolls sideways. Screenshots go to tests/e2e/screenshots/."""

from decimal import Decimal

import pytest

from apps.core.roles import Role
from apps.finance.services import candidate_tables_request_recompute
from tests.factories.quotes import QuoteFactory
from tests.functional.test_candidate_table import CODE_NAMES, raw_floats
from tests.functional.test_serving_plans import gpu, rate_brief

from .test_briefs_in_browser import sign_in
from .test_candidate_table_in_browser import SHOTS, WINDOW, fits

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_mix_row_reads_in_words_and_fits(browser, live_server, catalog, make_user, team):
    user = make_user(Role.FINANCE, username="fin")
    brief = rate_brief(team, 2000, created_by=user)
    QuoteFactory(gpu=gpu("h100-sxm5-80gb"), hourly_price_per_gpu=Decimal("2.50"))
    QuoteFactory(gpu=gpu("l40s-48gb"), hourly_price_per_gpu=Decimal("0.45"))
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
        mix = page.locator("#candidate-table tbody.candidate-group").filter(
            has_text="GPU mix by request size"
        )
        row = mix.locator("tr.candidate").inner_text()
        assert "NVIDIA H100" in row and "L40S" in row and "Wh" in row
        mix.locator("summary").click()
        opened = mix.locator("tr.more").inner_text()
        assert "Against the best single quote" in opened and "% of requests" in opened
        assert raw_floats(opened) == [] and raw_floats(row) == []
        for code in CODE_NAMES:
            assert code not in row and code not in opened, code
        fits(page)
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / "finance-mix-row-1440.png"), full_page=True)
        assert errors == []
    finally:
        context.close()
