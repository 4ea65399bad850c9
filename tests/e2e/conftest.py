"""End-to-end tests drive the system's Chromium through Playwright.

Locally without a browser they skip and say why; CI installs Chromium and sets
GPUSELECT_REQUIRE_BROWSER=1, which turns a missing browser into a failure.
"""

import os
import shutil
import time
from pathlib import Path

import pytest

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs a loop

CHROMIUM_NAMES = ("chromium", "chromium-browser")

# The browser tests' screenshots (full pages at 1,440 px, and the decision PDF's pages): one
# folder, ignored by git, that the end of a run names when it took any. GPUSELECT_SCREENSHOTS
# moves it (a CI job that keeps the folder as an artifact, say).
SCREENSHOTS = Path(
    os.environ.get("GPUSELECT_SCREENSHOTS") or Path(__file__).resolve().parent / "screenshots"
)
_RUN_STARTED = time.time()


def chromium_path() -> str | None:
    explicit = os.environ.get("CHROMIUM_PATH")
    if explicit:
        return explicit
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def browser():
    path = chromium_path()
    required = os.environ.get("GPUSELECT_REQUIRE_BROWSER") == "1"
    if path is None:
        if required:
            pytest.fail("GPUSELECT_REQUIRE_BROWSER=1 but no chromium on the PATH")
        pytest.skip("no system Chromium found (apt-get install -y chromium); e2e tests skipped")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=path,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on(
        "console",
        lambda m: errors.append(f"{m.text} @ {m.location}") if m.type == "error" else None,
    )
    page.console_errors = errors
    yield page
    context.close()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Name the screenshot folder after a run that wrote screenshots into it."""
    if not SCREENSHOTS.is_dir():
        return
    taken = [p for p in SCREENSHOTS.glob("*.png") if p.stat().st_mtime >= _RUN_STARTED]
    if taken:
        terminalreporter.write_sep("-", "browser screenshots")
        terminalreporter.write_line(f"{len(taken)} screenshots taken this run in {SCREENSHOTS}")
