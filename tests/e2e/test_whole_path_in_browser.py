"""The whole path, in the browser, as the people who walk it: platform writes a brief,
procurement enters quotes, finance reviews the candidate table, procurement opens a decision
record, each role approves, and the PDF downloads. Screenshots of every page go to
tests/e2e/screenshots/ (ignored by git)."""

from pathlib import Path

import pytest

from apps.core.roles import Role
from apps.decisions.models import DecisionRecord
from tests.factories.quotes import ProviderFactory

from .test_briefs_in_browser import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
SHOTS = Path(__file__).resolve().parent / "screenshots"


def shot(page, name):
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def as_user(page, live_server, username):
    if page.locator("button:has-text('Sign out')").count():
        page.click("button:has-text('Sign out')")
        page.wait_for_url("**/accounts/login/**")
    sign_in(page, live_server, username)
    page.wait_for_url("**/briefs/")


BRIEF = {
    "#id_name": "Support chat (browser)",
    "#id_input_tokens_p50": "1000",
    "#id_input_tokens_p95": "4000",
    "#id_output_tokens_p50": "200",
    "#id_output_tokens_p95": "800",
    "#id_concurrency": "32",
    "#id_acceptance_rate": "95",  # a percentage
    "#id_ttft_target_ms": "500",
    "#id_itl_target_ms": "50",
    "#id_hours_per_month": "730",
}
SELECTS = {
    "#id_workload_type": "REALTIME_INFERENCE",
    "#id_model_preset": "llama-3.1-8b",
    "#id_weight_precision": "FP8",
    "#id_kv_cache_precision": "FP8",
    "#id_success_unit": "TOKEN",
    "#id_latency_percentile": "P95",
    "#id_duty_cycle": "ALWAYS_ON",
    "#id_operating_boundary": "PUBLIC_CLOUD",
}


def test_brief_quotes_review_record_approvals_and_pdf(page, live_server, catalog, make_user):
    make_user(Role.PLATFORM, username="plat")
    make_user(Role.FINANCE, username="fin")
    make_user(Role.PROCUREMENT, username="proc")
    make_user(Role.PROCUREMENT, username="proc2")
    provider = ProviderFactory(name="Neocloud B")

    # Platform writes the brief.
    as_user(page, live_server, "plat")
    page.click("text=New brief")
    for selector, value in SELECTS.items():
        page.select_option(selector, value)
    for selector, value in BRIEF.items():
        page.fill(selector, value)
    page.click("button:has-text('Save brief')")
    page.wait_for_selector("#complete")
    shot(page, "01-brief")
    page.wait_for_selector("#memory-chart .main-svg")
    brief_url = page.url

    # Procurement enters two quotes.
    as_user(page, live_server, "proc")
    for term, price in (("ON_DEMAND", "2.99"), ("RESERVED_1Y", "1.95")):
        page.goto(f"{live_server.url}/quotes/new/")
        page.select_option("#id_provider", str(provider.pk))
        page.select_option("#id_gpu", label="NVIDIA H100 SXM5")
        page.select_option("#id_pricing_term", term)
        page.fill("#id_region", "us-east")
        page.fill("#id_hourly_price_per_gpu", price)
        page.fill("#id_quote_date", "2026-11-20")
        page.fill("#id_valid_until", "2027-02-20")
        page.fill("#id_source", "sales quote")
        page.click("button:has-text('Save quote')")
        page.wait_for_selector("#quote-table")
    shot(page, "02-quotes")
    assert page.locator("#quote-table tbody tr").count() == 2

    # Finance reviews the candidate table.
    as_user(page, live_server, "fin")
    page.goto(brief_url + "finance/")
    page.wait_for_selector("#unit-cost-chart .main-svg")
    assert page.locator("#candidate-table tr.candidate").count() == 2
    shot(page, "03-candidate-table")

    # Procurement opens a decision record from the table and submits it.
    as_user(page, live_server, "proc")
    page.goto(brief_url + "finance/")
    page.click("#candidate-table tr.candidate a.open-decision >> nth=0")
    page.wait_for_selector("#record-form")
    page.fill("#id_rationale", "Cheapest candidate that meets the latency target.")
    page.click("button:has-text('Open decision record')")
    page.wait_for_selector("#frozen-table")
    record = DecisionRecord.objects.get()
    page.select_option("#id_submit_role", "procurement")
    page.click("#submit-button")
    page.wait_for_selector("text=Submitted for review.")
    shot(page, "04-record-submitted")

    # Each role approves (procurement by another member than the submitter).
    for username, role in (("plat", "platform"), ("fin", "finance"), ("proc2", "procurement")):
        as_user(page, live_server, username)
        page.goto(f"{live_server.url}/decisions/{record.pk}/")
        page.click(f"#approve-{role}")
        page.wait_for_selector(f"text=Approved as {role}.")
    assert page.inner_text("#record-status") == "Approved"
    shot(page, "05-record-approved")

    # The PDF downloads and carries the record's hash.
    with page.expect_download() as download:
        page.click("#export-pdf")
    pdf = Path(download.value.path()).read_bytes()
    assert pdf.startswith(b"%PDF")
    record.refresh_from_db()
    from io import BytesIO

    from pypdf import PdfReader

    text = "".join(p.extract_text() for p in PdfReader(BytesIO(pdf)).pages)
    assert record.content_hash in text.replace("\n", "").replace(" ", "")
    assert page.console_errors == []
