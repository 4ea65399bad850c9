"""Finance reads "What would change the winner": the sentences, the tornado chart drawn
under the page's CSP, and the totals of the leading candidates."""

import os
import re
from decimal import Decimal

import pytest

from apps.core.roles import Role
from apps.finance.services import candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, ProviderFactory, QuoteFactory

from .test_briefs_in_browser import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


class TestSensitivityInTheBrowser:
    def test_the_section_and_its_tornado_chart_render(
        self, page, live_server, catalog, make_user, team
    ):
        user = make_user(Role.FINANCE, username="fin")
        brief = BriefFactory(team=team, created_by=user, name="Support chat (Llama 3.1 8B)")
        QuoteFactory(
            provider=ProviderFactory(name="Alpha Cloud"), hourly_price_per_gpu=Decimal("2.50")
        )
        QuoteFactory(
            provider=ProviderFactory(name="Beta Compute"),
            pricing_term="RESERVED_1Y",
            hourly_price_per_gpu=Decimal("1.90"),
        )
        # Priced near the GPUs (about 6 USD per 1M accepted tokens), so that an assumption
        # within the ranges searched changes the winner.
        ApiRouteFactory(
            provider=ProviderFactory(name="Gamma API"),
            model_preset="llama-3.1-8b",
            input_price_per_mtok=Decimal("0.45"),
            output_price_per_mtok=Decimal("1.35"),
        )
        candidate_tables_request_recompute(brief_ids=[brief.pk])
        page.set_viewport_size({"width": 1440, "height": 1000})
        sign_in(page, live_server, "fin")
        page.wait_for_url("**/briefs/")
        page.goto(f"{live_server.url}/briefs/{brief.pk}/finance/")
        # Collapsed, its one line says that an assumption changes the winner.
        gist = page.inner_text("#sensitivity > summary")
        assert re.search(r"\d+ assumptions? changes? the winner within the ranges searched", gist)
        page.click("#sensitivity > summary")
        page.wait_for_selector("#tornado-chart .main-svg")
        section = page.inner_text("#sensitivity")
        assert "What would change the winner" in section
        assert "becomes the cheapest" in section
        assert "USD per 1M accepted tokens" in section
        assert page.locator("#sensitivity-totals tbody tr").count() >= 2
        assert page.console_errors == []
        shots = os.environ.get("GPUSELECT_SCREENSHOTS")
        if shots:
            page.locator("#sensitivity").screenshot(path=f"{shots}/finance-sensitivity.png")
