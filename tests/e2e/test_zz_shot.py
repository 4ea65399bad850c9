import json
from decimal import Decimal

import pytest

from apps.core.roles import Role
from apps.finance.services import candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, QuoteFactory
from tests.functional.test_units_and_labour import LORA_8B

from .test_briefs_in_browser import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_shot(page, live_server, catalog, make_user, team, token_client):
    user = make_user(Role.FINANCE, username="fin")
    api = token_client(Role.PLATFORM)
    QuoteFactory(hourly_price_per_gpu=Decimal("4.50"))
    QuoteFactory(pricing_term="RESERVED_1Y", hourly_price_per_gpu=Decimal("1.90"))
    ApiRouteFactory(model_preset="llama-3.1-8b")
    lora = api.post("/api/v1/briefs/", json.dumps(LORA_8B), content_type="application/json").json()
    chat = BriefFactory(team=team, created_by=user)
    candidate_tables_request_recompute()
    page.set_viewport_size({"width": 1440, "height": 1000})
    sign_in(page, live_server, "fin")
    page.wait_for_url("**/briefs/")
    for name, pk in (("lora", lora["id"]), ("chat", chat.pk)):
        page.goto(f"{live_server.url}/briefs/{pk}/finance/")
        page.wait_for_selector("#unit-cost-chart .main-svg")
        page.screenshot(path=f"/tmp/finance-{name}.png", full_page=False)
        page.evaluate("document.querySelector('.scroll').style.overflow='visible'")
        page.screenshot(path=f"/tmp/finance-{name}-full.png", full_page=True)
