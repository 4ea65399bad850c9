"""A platform engineer tries models in the what-if calculator: changing an input redraws the
fit table and both charts without a page load, the page fits a 1,440 px window and reads in
words and rounded figures, and the inputs are saved as a brief. Screenshots at 1,440 px go to
tests/e2e/screenshots/ (ignored by git)."""

import re
from pathlib import Path

import pytest

from apps.briefs.models import WorkloadBrief
from apps.core.roles import Role
from tests.functional.test_candidate_table import raw_floats

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SHOTS = Path(__file__).resolve().parent / "screenshots"
CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
WIDTH = 1440
CODE_NAMES = ("REALTIME_INFERENCE", "h100-sxm5-80gb", "llama-3.1-8b", "ESTIMATED", "FITS")
CHARTS = ("#throughput-chart", "#context-chart")


def sign_in(page, live_server, username):
    page.set_viewport_size({"width": WIDTH, "height": 900})
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", "pw-for-tests")
    page.click("button[type=submit]")
    page.wait_for_url("**/")


# Sixteen engine calls on a shared CI machine: generous, and never asserted as a timing.
WAIT_MS = 90_000


def waited(page, selector):
    try:
        page.wait_for_selector(selector, timeout=WAIT_MS)
    except Exception as exc:  # say what the page said, not only that it timed out
        said = page.inner_text("#wi-status"), page.inner_text("#wi-error")
        raise AssertionError(f"{selector} never came; the page said {said}") from exc


def drawn(page):
    """Wait until the table and both charts show the page's latest answer; their version."""
    waited(page, "#context-chart[data-version] .main-svg")
    version = page.get_attribute("#context-chart", "data-version")
    for selector in ("#fit-table", *CHARTS):
        waited(page, f"{selector}[data-version='{version}']")
    return version


def redrawn(page, before):
    waited(page, f"#context-chart[data-version]:not([data-version='{before}'])")
    return drawn(page)


def chart_values(page, selector):
    return page.evaluate(
        f"Array.from(document.querySelector('{selector}').data, t => [t.name, t.x, t.y])"
    )


def table_text(page):
    return page.inner_text("#fit-table tbody")


def no_sideways_scroll(page):
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    table, room = page.evaluate(
        "[document.querySelector('#fit-table').scrollWidth,"
        " document.querySelector('#fit-table').parentElement.clientWidth]"
    )
    assert table <= room


def reads_in_words(page):
    text = page.inner_text("#whatif")
    assert raw_floats(text) == []
    for code in CODE_NAMES:
        assert code not in text, code
    for selector in CHARTS:  # the charts' own labels too: ticks, legend, titles
        labels = page.evaluate(
            f"Array.from(document.querySelectorAll('{selector} text'), t => t.textContent)"
        )
        assert labels
        assert raw_floats(" ".join(labels)) == [], selector


def shot(page, name):
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


class TestTheWhatIfCalculator:
    def test_changing_an_input_redraws_the_table_and_both_charts_and_saves_a_brief(
        self, page, live_server, catalog, make_user, team
    ):
        make_user(Role.PLATFORM, username="pat")
        sign_in(page, live_server, "pat")
        page.click("nav >> text=What-if")
        page.wait_for_url("**/briefs/what-if/")
        first = drawn(page)
        assert page.locator("#fit-table tbody tr[data-gpu]").count() == 31
        assert "Best fit:" in page.inner_text("#wi-best")
        table_before = table_text(page)
        throughput_before = chart_values(page, "#throughput-chart")
        context_before = chart_values(page, "#context-chart")
        # A line per leading GPU (five), each with its points of the concurrency sweep.
        assert len({name for name, _, _ in throughput_before}) == len(context_before) == 5
        assert sum(len(x) for _, x, _ in throughput_before) >= 5 * 5
        no_sideways_scroll(page)
        reads_in_words(page)
        shot(page, "whatif-llama-3.1-8b")

        # A bad input is marked beside its field and asks nothing.
        page.fill("#wi-concurrency", "0")
        page.wait_for_selector("[data-error-for=concurrency]:not([hidden])")
        assert "at least 1" in page.inner_text("[data-error-for=concurrency]")
        assert page.get_attribute("#context-chart", "data-version") == first

        # A bigger model at twice the load: every figure moves, with no page load.
        url = page.url
        page.select_option("#wi-preset", "llama-3.1-70b")
        page.fill("#wi-concurrency", "64")
        redrawn(page, first)
        assert page.url == url
        assert page.is_hidden("[data-error-for=concurrency]")
        assert table_text(page) != table_before
        assert chart_values(page, "#throughput-chart") != throughput_before
        assert chart_values(page, "#context-chart") != context_before
        assert "at 64 concurrent" in page.text_content("#context-chart .gtitle")
        no_sideways_scroll(page)
        reads_in_words(page)
        shot(page, "whatif-llama-3.1-70b")

        page.fill("#wi-name", "Chat on Llama 3.1 70B")
        page.click("#wi-save-button")
        page.wait_for_url(re.compile(r".*/briefs/\d+/$"))
        brief = WorkloadBrief.objects.get()
        assert (brief.name, brief.team, brief.model_preset) == (
            "Chat on Llama 3.1 70B",
            team,
            "llama-3.1-70b",
        )
        assert (brief.concurrency, brief.input_tokens_p50, brief.output_tokens_p50) == (
            64,
            1000,
            200,
        )
        assert (brief.ttft_target_ms, brief.itl_target_ms) == (500, 50)
        assert page.url.endswith(f"/briefs/{brief.pk}/")
        assert page.console_errors == []

    def test_a_name_already_taken_is_said_beside_the_name(
        self, page, live_server, catalog, make_user, team
    ):
        user = make_user(Role.PLATFORM, username="pat")
        WorkloadBrief.objects.create(
            name="Taken", team=team, created_by=user, workload_type="REALTIME_INFERENCE"
        )
        sign_in(page, live_server, "pat")
        page.goto(f"{live_server.url}/briefs/what-if/")
        drawn(page)
        page.fill("#wi-name", "Taken")
        page.click("#wi-save-button")
        page.wait_for_selector("[data-error-for=name]:not([hidden])")
        assert "already exists" in page.inner_text("[data-error-for=name]")
        assert WorkloadBrief.objects.count() == 1
        # The refused save is the only error the browser logs (a 400 from the brief API).
        assert all("status of 400" in e for e in page.console_errors)

    def test_finance_tries_a_pasted_config_but_cannot_save(
        self, page, live_server, catalog, make_user
    ):
        make_user(Role.FINANCE, username="fin")
        sign_in(page, live_server, "fin")
        page.goto(f"{live_server.url}/briefs/what-if/")
        first = drawn(page)
        assert page.locator("#wi-save-button").count() == 0
        assert "Only the platform role saves briefs" in page.inner_text("#wi-save")
        page.check("#wi-source-config")
        assert page.is_hidden("#wi-preset") and page.is_visible("#wi-config")
        page.fill("#wi-config", CONFIGS.joinpath("gpt-oss-20b.json").read_text())
        page.select_option("#wi-weight-precision", "")  # as the checkpoint ships
        redrawn(page, first)
        # The checkpoint's own precision, inferred from its quantization_config and shown.
        assert "MXFP4" in page.inner_text("#wi-weights-note")
        assert page.locator("#fit-table tbody tr[data-gpu]").count() == 31
        no_sideways_scroll(page)
        reads_in_words(page)
        shot(page, "whatif-pasted-config")
        assert page.console_errors == []
