"""Each role's journey in the system's Chromium at 1,440 px, as the person walks it.

Platform writes a QLoRA brief in the form and reads its time to train and fit table; finance
reads the candidate table, the rent / reserve / buy comparison, the not-costed list and the
charts, adds the missing FX rate and sees the quote costed; procurement creates a provider in
the provider form, adds a quote, compares one GPU's prices, downloads the CSV template, opens a
decision record, reads which roles are still pending and submits it; each approver approves and
the PDF carries the commercial summary.

Every page is screenshotted (full page) into the folder ``make test`` prints at the end
(tests/e2e/conftest.py) and checked for what a person must not see (tests/e2e/visible_text.py):
sideways scrolling, raw floats and figures, scientific notation, code names (``HOPPER``,
``REALTIME_INFERENCE``, ``ttft_p95_ms``), catalog slugs, number fields labelled without their
unit, console errors. Collapsed sections are checked once opened (``Journey.open_sections``).
"""

import csv
import io
import re
import shutil
import subprocess
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from apps.core.roles import Role
from apps.decisions.models import DecisionRecord
from apps.decisions.services import checklist_answer_set, decision_record_submit
from apps.finance.models import FxRate
from apps.finance.services import candidate_tables_request_recompute
from apps.quotes.models import Provider, Quote
from tests.factories.briefs import BriefFactory
from tests.factories.decisions import make_record
from tests.factories.quotes import ApiRouteFactory, ProviderFactory, QuoteFactory
from tests.functional.test_brief_read_as import LLAMA_8B_CONFIG

from .conftest import SCREENSHOTS
from .visible_text import catalog_slugs, check_page, text_findings

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

WIDTH = 1440
HEIGHT = 900

# An engine name title-cased, as Django labels a choice written without words ("Cdna4").
ENUM_LABEL = re.compile(r"\bCdna\s?\d|\bBlackwell_Ultra\b")


class Journey:
    """One person's walk: every page it looks at is screenshotted and checked."""

    def __init__(self, page, live_server, role: str):
        self.page = page
        self.url = live_server.url
        self.role = role
        self.step = 0
        page.set_viewport_size({"width": WIDTH, "height": HEIGHT})

    def go(self, path: str) -> None:
        self.page.goto(self.url + path)

    def sign_in(self, username: str) -> None:
        page = self.page
        if page.locator("button:has-text('Sign out')").count():
            page.click("button:has-text('Sign out')")
            page.wait_for_url("**/accounts/login/**")
        page.goto(f"{self.url}/accounts/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", "pw-for-tests")
        page.click("button[type=submit]")
        page.wait_for_url("**/briefs/")

    def open_sections(self) -> None:
        """Open every collapsed section and row detail of the page, as a reader clicking
        through them all."""
        self.page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")

    def look(self, name: str, *, allow: tuple[str, ...] = (), ids: bool = False) -> str:
        """Screenshot the whole page and check what a person sees (tests/e2e/visible_text.py);
        returns the visible text."""
        page = self.page
        page.wait_for_load_state("load")
        self.step += 1
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"journey-{self.role}-{self.step:02d}-{name}.png"
        page.screenshot(path=str(path), full_page=True)
        where = f"{self.role} · {name} ({page.url})"
        scroll, inner = page.evaluate(
            "[document.documentElement.scrollWidth, window.innerWidth]"
        )  # fmt: skip
        assert scroll <= inner, f"{where}: {scroll} px wide in a {inner} px window"
        text = check_page(page, where, allow=allow, ids=ids)
        assert not page.console_errors, f"{where}: {page.console_errors}"
        return text


def serving_offers(team):
    """A serving brief with quotes a finance reviewer compares: on demand, reserved, owned,
    a quote in EUR (not costed until an FX rate exists) and a model API route."""
    brief = BriefFactory(team=team, name="Support chat")
    neo = ProviderFactory(name="Neocloud B")
    QuoteFactory(provider=neo, hourly_price_per_gpu=Decimal("2.49"), region="us-east")
    QuoteFactory(
        provider=neo, pricing_term="RESERVED_1Y", hourly_price_per_gpu=Decimal("1.89"),
        minimum_commitment_months=12, region="us-east",
    )  # fmt: skip
    QuoteFactory(
        provider=ProviderFactory(name="Own racks"), pricing_term="OWNED",
        hourly_price_per_gpu=Decimal(0), capex_per_gpu=Decimal("30000"),
        depreciation_months=60, region="Frankfurt DC",
    )  # fmt: skip
    euro = QuoteFactory(
        provider=ProviderFactory(name="Euro GPU"), currency="EUR",
        hourly_price_per_gpu=Decimal("2.10"), region="eu-central",
    )  # fmt: skip
    ApiRouteFactory(provider=ProviderFactory(name="Token API"), model_preset="llama-3.1-8b")
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    return brief, euro


def test_platform_writes_a_training_brief_and_reads_its_time_to_train(
    page, live_server, catalog, make_user, team
):
    make_user(Role.PLATFORM, username="pat")
    j = Journey(page, live_server, "platform")
    j.sign_in("pat")
    j.look("briefs")

    page.click("text=New brief")
    page.wait_for_selector("#brief-form")
    page.select_option("#id_workload_type", "QLORA_FINETUNE")
    # The tooling choices are a row of aligned checkboxes, each beside its label.
    boxes = page.locator("[data-field='tooling'] input[type=checkbox]")
    assert boxes.count() >= 2
    first, label = boxes.first.bounding_box(), page.locator("[data-field='tooling'] label").nth(1)
    assert first["width"] < 40, "a checkbox stretched across the field"
    label_box = label.bounding_box()
    assert abs((first["y"] + first["height"] / 2) - (label_box["y"] + label_box["height"] / 2)) < 8
    j.look("brief-form-qlora")
    # An image brief: denoising steps, no language-model fields.
    page.select_option("#id_workload_type", "IMAGE_GENERATION")
    assert page.locator("#id_diffusion_steps").is_visible()
    for llm_field in (
        "input_tokens_p50", "output_tokens_p95", "ttft_target_ms", "itl_target_ms",
        "model_hf_config", "model_hf_quant_config",
    ):  # fmt: skip
        assert not page.locator(f"#id_{llm_field}").is_visible(), llm_field
    assert "Stable Diffusion XL 1.0" in page.locator("#id_model_preset").inner_text()  # by name
    j.look("brief-form-image")
    page.select_option("#id_workload_type", "QLORA_FINETUNE")

    page.fill("#id_name", "Guanaco-style QLoRA")
    page.select_option("#id_model_preset", "llama-3.1-70b")
    page.select_option("#id_success_unit", "TRAINING_RUN")
    page.fill("#id_acceptance_rate", "100")  # a percentage
    page.select_option("#id_duty_cycle", "EXPERIMENTAL")
    page.fill("#id_hours_per_month", "100")
    page.select_option("#id_operating_boundary", "PUBLIC_CLOUD")
    page.fill("#id_training_tokens", "10000000")
    page.fill("#id_sequence_length", "512")
    page.fill("#id_global_batch_tokens", "8192")
    page.select_option("#id_optimizer", "PAGED_ADAMW_8BIT")
    page.select_option("#id_sharding", "NONE")
    page.fill("#id_lora_rank", "64")
    page.fill("#id_checkpoint_interval_minutes", "60")
    page.click("button:has-text('Save brief')")
    page.wait_for_selector("#fit-table")
    j.open_sections()
    text = j.look("brief-qlora")
    assert "Time to train" in page.locator("#fit-table thead").inner_text()
    assert "time to train" in page.inner_text("#best-fit")
    first_time = page.locator("#fit-table tbody tr").first.locator(".time-to-train").inner_text()
    assert re.search(r"\d h", first_time), first_time
    assert "Max concurrency" not in text
    # The fit table is ordered by what decides: the rows that fit before those that do not.
    fits = page.locator("#fit-table tbody tr").evaluate_all("rows => rows.map(r => r.dataset.fit)")
    assert fits[0] != "NO" and "NO" in fits, fits  # a 70B model does not fit every GPU
    assert fits == sorted(fits, key=lambda f: f == "NO"), fits

    # A brief from a pasted config.json says what the engine read it as.
    pasted = BriefFactory(
        team=team, name="Pasted Llama", model_preset="",
        model_hf_config=LLAMA_8B_CONFIG, weight_precision="BF16",
    )  # fmt: skip
    j.go(f"/briefs/{pasted.pk}/")
    page.wait_for_selector("#read-as")
    assert "8.03\u00a0B in all" in page.inner_text("#read-as")
    assert not page.locator("#assumptions").is_visible()  # the notes collapsed
    j.look("brief-pasted-config")
    j.open_sections()
    j.look("brief-pasted-config-notes")

    page.click("text=GPU catalog")
    page.wait_for_selector("#gpu-table")
    text = j.look("gpu-catalog")
    # Architectures as vendors write them, figures with separators, each date on one line.
    assert "CDNA 4" in text and "Blackwell Ultra" in text and not ENUM_LABEL.findall(text)
    assert "2,516" in text and "8.000" not in text
    lines = page.locator("#gpu-table td.date").evaluate_all(
        "cells => cells.map(c => { const r = document.createRange(); r.selectNodeContents(c);"
        " return r.getClientRects().length; })"
    )  # fmt: skip
    assert lines and set(lines) == {1}, lines
    page.locator("#gpu-table tbody a").first.click()
    text = j.look("gpu-detail")
    assert "CDNA 4" in text and not ENUM_LABEL.findall(text)


def test_finance_reads_the_candidate_table_and_costs_the_missing_currency(
    page, live_server, catalog, make_user, team
):
    make_user(Role.FINANCE, username="fin")
    brief, euro = serving_offers(team)
    j = Journey(page, live_server, "finance")
    j.sign_in("fin")
    j.go(f"/briefs/{brief.pk}/finance/")
    page.wait_for_selector("#unit-cost-chart .main-svg")
    page.wait_for_selector("#latency-chart .main-svg")
    assert page.locator("#candidate-table tr.candidate").count() >= 4
    # Under three screens before the details: the long sections are collapsed.
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 3 * HEIGHT, f"the finance page is {height} px tall before its details"
    not_costed = page.inner_text("#not-costed")
    assert "Euro GPU" in not_costed and "H100" in not_costed and "eu-central" in not_costed
    assert f"#{euro.pk}" not in not_costed
    assert page.locator("#capacity-options tbody tr").count() >= 3
    j.look("candidate-table")

    page.locator("#candidate-table tr.more summary").first.click()
    j.look("candidate-details")
    # Every section open: what they hold is checked as the rest of the page.
    j.open_sections()
    page.wait_for_selector("#utilization-chart .main-svg")
    j.look("candidate-table-open")

    page.click("a:has-text('FX-rate page')")
    page.wait_for_selector("#fx-rate-form")
    page.select_option("#id_currency", "EUR")
    page.fill("#id_rate", "1.08")
    page.fill("#id_as_of", "2026-11-20")
    page.fill("#id_source", "ECB, 20 Nov")
    page.click("button:has-text('Add and recompute')")
    page.wait_for_selector("#fx-rate-table >> text=ECB, 20 Nov")
    j.look("fx-rates")

    j.go(f"/briefs/{brief.pk}/finance/")
    page.wait_for_selector("#unit-cost-chart .main-svg")
    assert page.locator("#not-costed").count() == 0
    assert "Euro GPU" in page.inner_text("#candidate-table")
    j.look("candidate-table-with-eur")

    j.go("/finance/assumptions/")
    j.look("assumptions")


def test_procurement_creates_a_provider_and_quote_and_submits_a_record(
    page, live_server, catalog, make_user, team
):
    make_user(Role.PROCUREMENT, username="proc")
    brief = BriefFactory(team=team, name="Support chat")
    QuoteFactory(provider=ProviderFactory(name="Neocloud B"), hourly_price_per_gpu=Decimal("2.99"))
    QuoteFactory(
        provider=ProviderFactory(name="Tokyo GPU"), currency="JPY",
        hourly_price_per_gpu=Decimal("380"), region="ap-northeast-1",
    )  # fmt: skip
    QuoteFactory(
        provider=ProviderFactory(name="Own racks"), pricing_term="OWNED",
        hourly_price_per_gpu=Decimal(0), capex_per_gpu=Decimal("34000"), depreciation_months=48,
    )  # fmt: skip
    j = Journey(page, live_server, "procurement")
    j.sign_in("proc")

    j.go("/quotes/providers/")
    j.look("providers")
    j.go("/quotes/providers/new/")
    assert page.locator("#provider-form #id_name").is_visible()
    assert page.locator("#provider-form #id_website").is_visible()
    j.look("provider-form")
    page.fill("#id_name", "Nebula GPU")
    page.fill("#id_website", "https://nebula.example/pricing")
    page.click("button:has-text('Save provider')")
    page.wait_for_selector("#provider-table >> text=Nebula GPU")
    j.look("providers-with-nebula")
    nebula = Provider.objects.get(name="Nebula GPU")

    j.go("/quotes/new/")
    page.select_option("#id_provider", str(nebula.pk))
    page.select_option("#id_gpu", label="NVIDIA H100 SXM5")
    assert not page.locator("#owned-hardware").is_visible()  # an owned quote's fields only
    page.select_option("#id_pricing_term", "OWNED")
    assert page.locator("#owned-hardware").is_visible()
    page.select_option("#id_pricing_term", "ON_DEMAND")
    page.fill("#id_region", "us-west")
    page.fill("#id_hourly_price_per_gpu", "2.19")
    page.fill("#id_quote_date", "2026-11-20")
    page.fill("#id_valid_until", "2027-02-20")
    page.fill("#id_source", "sales quote, 20 Nov")
    j.look("quote-form")
    page.click("button:has-text('Save quote')")
    page.wait_for_selector("#quote-table >> text=Nebula GPU")
    assert "saved (Nebula GPU · NVIDIA H100 SXM5 · On demand · us-west)" in page.inner_text(
        "#messages"
    )
    tokyo = page.locator("#quote-table tr", has_text="Tokyo GPU").inner_text()
    assert "not costed" in tokyo and "no FX rate for JPY" in tokyo
    j.look("quotes")
    quote = Quote.objects.get(provider=nebula)

    page.click("#quote-table a[href='/quotes/compare/h100-sxm5-80gb/'] >> nth=0")
    page.wait_for_selector("#price-comparison")
    comparison = page.inner_text("#price-comparison")
    # Cheapest first by the figure shown: owned capex (0.9703) before 2.19 before 2.99; the
    # JPY quote, which has no FX rate, last and marked.
    assert (
        comparison.index("Own racks") < comparison.index("Nebula GPU")
        < comparison.index("Neocloud B") < comparison.index("Tokyo GPU")
    )  # fmt: skip
    assert "USD\u00a00.9703" in comparison and "not costed: no FX rate for JPY" in comparison
    last = page.locator("#price-comparison tbody tr").last
    assert last.get_attribute("data-not-costed") == "true"
    j.look("price-comparison")

    j.go("/quotes/api-routes/new/")
    j.look("api-route-form")

    j.go("/quotes/import/")
    assert "h100-sxm5-80gb" in page.inner_text("#gpu-slugs")
    j.look("import")
    with page.expect_download() as download:
        page.click("a[href$='template.csv']")
    template = Path(download.value.path()).read_text()
    header = next(csv.reader(io.StringIO(template)))
    assert "hourly_price_per_gpu" in header and "provider" in header

    j.go(f"/decisions/checklist/quotes/{quote.pk}/")
    page.select_option("#id_hw_exact_sku-answer", "YES")
    page.fill("#id_hw_exact_sku-evidence_text", "Order form, section 3")
    page.select_option("#id_se_compliance-answer", "PARTIAL")
    page.fill("#id_se_compliance-evidence_link", "https://trust.example/soc2")
    page.click("button:has-text('Save all answers') >> nth=0")
    page.wait_for_selector("text=2/17 answered")
    # Answers in words, and each input keeps what was saved.
    assert "Answer: Yes" in page.inner_text("#q-hw_exact_sku")
    assert "Answer: Partial" in page.inner_text("#q-se_compliance")
    assert page.input_value("#id_hw_exact_sku-answer") == "YES"
    assert page.input_value("#id_se_compliance-answer") == "PARTIAL"
    assert page.input_value("#id_hw_exact_sku-evidence_text") == "Order form, section 3"
    j.look("checklist")

    j.go(f"/briefs/{brief.pk}/finance/")
    page.wait_for_selector("#candidate-table")
    j.look("candidate-table")
    page.click(f"a.open-decision[href*='quote={quote.pk}']")
    page.wait_for_selector("#record-form")
    page.fill("#id_rationale", "Cheapest on-demand H100 that meets the latency target.")
    j.look("record-form")
    page.click("button:has-text('Open decision record')")
    page.wait_for_selector("#frozen-table")
    pending = page.inner_text("#pending-roles")
    assert pending == "Still pending: Procurement, Platform and Finance.", pending
    # The Partial on a must-have question is a warning on the record.
    assert "Are the required certifications" in page.inner_text("#checklist-warnings")
    j.look("record-draft")
    page.select_option("#id_submit_role", "procurement")
    page.click("#submit-button")
    page.wait_for_selector("text=Submitted for review.")
    record = DecisionRecord.objects.get()
    assert record.status == DecisionRecord.Status.IN_REVIEW
    j.look("record-submitted")

    j.go("/decisions/")
    j.look("records")

    # A form whose security token is lost (a page left open across a sign-out, say) is refused
    # with the site's 403 page: why, in words, and a way back; nothing is saved.
    j.go("/quotes/providers/new/")
    page.fill("#id_name", "Tokenless GPU")
    page.evaluate("document.querySelector('#provider-form [name=csrfmiddlewaretoken]').remove()")
    page.click("button:has-text('Save provider')")
    page.wait_for_selector("#refusal-reason")
    assert "security token" in page.inner_text("#refusal-reason")
    assert page.get_attribute("#go-back", "href").endswith("/quotes/providers/new/")
    assert not Provider.objects.filter(name="Tokenless GPU").exists()
    page.console_errors.clear()  # the 403 response itself is logged as a failed resource
    j.look("csrf-refused")


def test_approvers_approve_and_the_pdf_carries_the_commercial_summary(
    page, live_server, catalog, make_user, team, tmp_path
):
    proc = make_user(Role.PROCUREMENT, username="proc")
    make_user(Role.PLATFORM, username="plat")
    make_user(Role.FINANCE, username="fin")
    make_user(Role.PROCUREMENT, username="proc2")
    brief = BriefFactory(team=team, name="Support chat")
    quote = QuoteFactory(
        provider=ProviderFactory(name="Neocloud B"), pricing_term="RESERVED_1Y",
        hourly_price_per_gpu=Decimal("1.89"), minimum_commitment_months=12,
        region="us-east", quote_date=date(2026, 11, 20), valid_until=date(2027, 2, 20),
    )  # fmt: skip
    QuoteFactory(provider=ProviderFactory(name="Lambda-like"), hourly_price_per_gpu=Decimal("2.99"))
    FxRate.objects.create(currency="EUR", rate=Decimal("1.08"), as_of="2026-11-20", source="ECB")
    checklist_answer_set(
        quote=quote, question="se_compliance", answer="NO", user=proc, team=brief.team,
        evidence_text="ISO 27001 only; SOC 2 due in March",
    )  # fmt: skip
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    record = make_record(
        brief=brief, user=proc, quote=quote, capacity_model="RESERVE_1Y",
        rationale="Reserved for a year: the cheapest that meets the target.",
    )  # fmt: skip
    decision_record_submit(record=record, user=proc, role=Role.PROCUREMENT)

    j = Journey(page, live_server, "approvers")
    for username, role in (("plat", "platform"), ("fin", "finance"), ("proc2", "procurement")):
        j.sign_in(username)
        j.go("/decisions/")
        j.look(f"records-{role}")
        j.go(f"/decisions/{record.pk}/")
        assert role.capitalize() in page.inner_text("#pending-roles")
        assert "SOC 2" in page.inner_text("#checklist-warnings")
        j.look(f"record-before-{role}", ids=True)  # candidates in words, not "quote #12"
        # Without the acknowledgement the browser keeps the form (the box is required); the
        # server refuses it too (tests/integration/test_decision_evidence.py).
        page.check(f"#acknowledge-{role}")
        page.fill(f"#comment-{role}", f"{role.capitalize()}: SOC 2 report promised by March.")
        page.click(f"#approve-{role}")
        page.wait_for_selector(f"text=Approved as {role}.")
    record.refresh_from_db()
    assert record.status == DecisionRecord.Status.APPROVED
    approvals = page.inner_text("#approvals")
    assert "Finance: SOC 2 report promised by March." in approvals
    assert "Acknowledged 1 checklist warning." in approvals
    j.look("record-approved", ids=True)
    j.open_sections()  # the audit trail and every other collapsed section, read too
    j.look("record-approved-open", ids=True)

    with page.expect_download() as download:
        page.click("#export-pdf")
    pdf = tmp_path / "decision.pdf"
    pdf.write_bytes(Path(download.value.path()).read_bytes())
    assert pdf.read_bytes().startswith(b"%PDF")
    text = pdf_text(pdf)
    summary = text[text.index("Commercial summary") :]
    for words in (
        "Neocloud B",
        "H100",
        "Price per GPU-hour",
        "1.89",
        "Quote date",
        "Valid until",
        "us-east",
        "Minimum commitment",
        "12 months",
        "Vendor bill a month",
        "Contract value",
        "All-in cost a month",
        "All-in cost, 12 months",
        "All-in cost, 36 months",
    ):
        assert words in summary, f"{words!r} not in the PDF's commercial summary"
    # The approvers' comments reach the PDF's approvals table.
    assert "SOC 2 report promised" in text
    # The PDF reads as the pages do: no raw float, scientific notation, code name or slug.
    findings = text_findings(text, "pdf", slugs=catalog_slugs(), ids=True)
    assert not findings.problems, findings.message()
    pdf_pages_to_png(pdf, "journey-approvers-pdf")


def pdf_text(pdf: Path) -> str:
    """The PDF's text as pdftotext lays it out (pypdf where poppler is missing)."""
    pdftotext = shutil.which("pdftotext")
    if pdftotext:
        done = subprocess.run(  # noqa: S603 - poppler on a PDF this test wrote
            [pdftotext, "-layout", str(pdf), "-"], capture_output=True, check=True, text=True
        )
        return done.stdout
    from pypdf import PdfReader

    return "\n".join(p.extract_text() for p in PdfReader(pdf).pages)


def pdf_pages_to_png(pdf: Path, prefix: str) -> None:
    """Each PDF page as a PNG beside the screenshots, to be looked at (skipped without poppler)."""
    pdftoppm = shutil.which("pdftoppm")
    if pdftoppm is None:
        return
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    subprocess.run(  # noqa: S603 - poppler on a PDF this test wrote
        [pdftoppm, "-r", "70", "-png", str(pdf), str(SCREENSHOTS / prefix)], check=True
    )
