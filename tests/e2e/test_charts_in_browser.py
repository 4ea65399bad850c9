"""The finance page's charts at 1,440 px: the small plotly bundle, loaded once; every chart as
tall as its box, before and after the window is resized (none spills over the next or is
squashed), and no console or CSP error."""

from decimal import Decimal
from itertools import pairwise

import pytest

from apps.core.roles import Role
from apps.finance.services import candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, QuoteFactory

from .test_briefs_in_browser import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

BOXES = """() => [...document.querySelectorAll('.chart[data-figure]')].map(el => {
  const box = el.getBoundingClientRect();
  const svg = el.querySelector('.main-svg').getBoundingClientRect();
  const layout = JSON.parse(document.getElementById(el.dataset.figure).textContent).layout;
  return {id: el.id, top: box.top, bottom: box.bottom, svgBottom: svg.bottom, svgHeight: svg.height,
          height: box.height, figureHeight: layout.height || 450};
})"""


def assert_no_chart_spills(boxes):
    for box in boxes:
        assert box["svgBottom"] <= box["bottom"] + 1, box  # drawn inside its own box
    for upper, lower in pairwise(boxes):
        assert upper["svgBottom"] <= lower["top"] + 1, (upper, lower)


class TestChartsInTheBrowser:
    def test_charts_fit_their_boxes_before_and_after_a_resize(
        self, browser, live_server, catalog, make_user, team
    ):
        user = make_user(Role.FINANCE, username="fin")
        brief = BriefFactory(team=team, created_by=user)
        QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
        QuoteFactory(pricing_term="RESERVED_1Y", hourly_price_per_gpu=Decimal("1.90"))
        ApiRouteFactory(model_preset="llama-3.1-8b")
        candidate_tables_request_recompute(brief_ids=[brief.pk])
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        scripts: list[str] = []
        page.on("request", lambda r: scripts.append(r.url) if r.resource_type == "script" else None)
        try:
            sign_in(page, live_server, "fin")
            page.wait_for_url("**/briefs/")
            page.goto(f"{live_server.url}/briefs/{brief.pk}/finance/")
            # Every collapsed section opened: its charts refit to it (static/js/charts.js).
            page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
            count = page.locator(".chart[data-figure]").count()
            page.wait_for_function(
                f"document.querySelectorAll('.chart .main-svg').length >= {count}"
            )
            plotly = [u for u in scripts if "plotly" in u]
            assert len(plotly) == 1 and "/vendor/plotly/plotly-basic-" in plotly[0]
            assert_no_chart_spills(page.evaluate(BOXES))
            page.set_viewport_size({"width": 1200, "height": 900})
            page.wait_for_timeout(1500)  # plotly refits responsive charts after a debounce
            page.set_viewport_size({"width": 1440, "height": 900})
            page.wait_for_timeout(1500)
            boxes = page.evaluate(BOXES)
            assert_no_chart_spills(boxes)
            for box in boxes:
                assert box["svgHeight"] >= box["figureHeight"] - 2, box  # as tall as it asks
            assert errors == []
        finally:
            context.close()
