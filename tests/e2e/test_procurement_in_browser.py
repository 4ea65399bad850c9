"""Procurement's pages in the system's Chromium at 1,440 px: the provider form, one GPU's price
comparison, the import page's template and slugs, the checklist as one form, a record's
pending roles with the warning before submit, and a 403 that says why. Screenshots go to
tests/e2e/screenshots/ (ignored by git); no page scrolls sideways or logs a CSP error."""

from decimal import Decimal
from pathlib import Path

import pytest

from apps.core.roles import Role
from apps.decisions.models import ChecklistAnswer
from apps.finance.models import FxRate
from apps.finance.services import candidate_tables_request_recompute
from apps.quotes.models import Provider
from tests.factories.briefs import BriefFactory
from tests.factories.decisions import make_record
from tests.factories.quotes import ProviderFactory, QuoteFactory

from .test_briefs_in_browser import sign_in
from .visible_text import check_page

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
SHOTS = Path(__file__).resolve().parent / "screenshots"
WIDTH = 1440


def shot(page, name):
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"procurement-{name}.png"), full_page=True)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= WIDTH, f"{name}: {width} px wide"
    check_page(page, f"procurement · {name}")  # words, formatted figures, units on labels
    assert not page.console_errors, page.console_errors


def test_procurement_pages(page, live_server, catalog, make_user, team):
    page.set_viewport_size({"width": WIDTH, "height": 900})
    proc = make_user(Role.PROCUREMENT, username="proc")
    make_user(Role.FINANCE, username="fin")
    FxRate.objects.create(currency="EUR", rate=Decimal("1.08"), as_of="2026-11-20", source="ECB")
    QuoteFactory(provider=ProviderFactory(name="Lambda-like"), hourly_price_per_gpu=Decimal("2.99"))
    QuoteFactory(
        provider=ProviderFactory(name="Euro GPU"), hourly_price_per_gpu=Decimal("2.10"),
        currency="EUR", pricing_term="RESERVED_1Y", region="eu-central",
        minimum_commitment_months=12,
    )  # fmt: skip
    QuoteFactory(
        provider=ProviderFactory(name="Tokyo GPU"), hourly_price_per_gpu=Decimal("380"),
        currency="JPY", region="ap-northeast-1",
    )  # fmt: skip
    quote = QuoteFactory(provider=ProviderFactory(name="Cheap Spot"), pricing_term="SPOT",
                         hourly_price_per_gpu=Decimal("1.25"))  # fmt: skip
    brief = BriefFactory(team=team)
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    record = make_record(brief=brief, user=proc, quote=quote)

    sign_in(page, live_server, "proc")
    page.wait_for_url("**/briefs/")
    page.goto(f"{live_server.url}/quotes/providers/new/")
    page.fill("#id_name", "Nebula GPU")
    page.fill("#id_website", "not a url")
    page.click("button:has-text('Save provider')")
    page.wait_for_selector(".has-error")
    assert page.input_value("#id_name") == "Nebula GPU"
    shot(page, "provider-form-error")
    page.fill("#id_website", "https://nebula.example")
    page.click("button:has-text('Save provider')")
    page.wait_for_selector("#provider-table")
    assert Provider.objects.filter(name="Nebula GPU").exists()

    page.goto(f"{live_server.url}/quotes/")
    page.click("#quote-table a[href='/quotes/compare/h100-sxm5-80gb/'] >> nth=0")
    page.wait_for_selector("#price-comparison")
    text = page.inner_text("#price-comparison")
    assert "no FX rate for JPY" in text
    assert text.index("Cheap Spot") < text.index("Euro GPU") < text.index("Lambda-like")
    assert text.index("Lambda-like") < text.index("Tokyo GPU")  # not costed: last
    shot(page, "price-comparison")

    page.goto(f"{live_server.url}/quotes/import/")
    assert "h100-sxm5-80gb" in page.inner_text("#gpu-slugs")
    shot(page, "import")

    page.goto(f"{live_server.url}/decisions/checklist/quotes/{quote.pk}/")
    page.select_option("#id_hw_exact_sku-answer", "YES")
    page.fill("#id_hw_exact_sku-evidence_text", "Order form, section 3")
    page.fill("#id_co_sla-evidence_link", "not a link")
    page.select_option("#id_co_sla-answer", "NO")
    page.click("button:has-text('Save all answers') >> nth=0")
    page.wait_for_selector("#checklist-errors")
    assert page.input_value("#id_hw_exact_sku-evidence_text") == "Order form, section 3"
    assert not ChecklistAnswer.objects.exists()
    shot(page, "checklist-error")
    page.fill("#id_co_sla-evidence_link", "https://example.com/sla")
    page.click("button:has-text('Save all answers') >> nth=0")
    page.wait_for_selector("text=2/17 answered")

    page.goto(f"{live_server.url}/decisions/{record.pk}/")
    assert "Still pending" in page.inner_text("#pending-roles")
    assert "Once you submit, nobody can approve for Platform and Procurement" in page.inner_text(
        "#submit-warning"
    )
    shot(page, "record-pending-roles")

    page.click("button:has-text('Sign out')")
    sign_in(page, live_server, "fin")
    page.wait_for_url("**/briefs/")
    page.goto(f"{live_server.url}/quotes/new/", referer=f"{live_server.url}/quotes/")
    assert "Only procurement writes quotes" in page.inner_text("#refusal-reason")
    assert page.get_attribute("#go-back", "href").endswith("/quotes/")
    page.console_errors.clear()  # the 403 response itself is logged as a failed resource
    shot(page, "403")
