"""How fast a finance page (four or five charts) loads in a real browser on the embedded default.

Run: .venv/bin/python bench/page_load.py [--visits 5] [--screenshot DIR]

Starts the server ``make run`` starts (gunicorn, gpuselect.settings.local, DEBUG off, static
files through WhiteNoise) on a throwaway SQLite file with the catalog and demo
data (tests/integration/test_embedded_concurrency.py's ``embedded_server_running``), signs in as
the demo's finance user in the system's headless Chromium (Playwright, never a downloaded
browser) and opens the finance page of the demo brief with the most candidates: once cold (empty
cache), then ``--visits`` times warm (same browser context, so its HTTP cache). Prints, for the
cold visit and the median warm visit, the time to the ``load`` event, the time until every chart
has drawn, and the script bytes transferred (over the wire: compressed, nothing when served from
the cache) and decoded. Prints figures only; nothing here asserts a time. Aim (issue #15, item 8):
a warm visit reaches ``load`` in under 1.5 s and pulls under 1.5 MB of script.

``--screenshot DIR`` also saves the warm page, full length, at 1,440 px wide (DIR/finance.png),
and each chart on its own (DIR/<chart id>.png).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.integration.test_embedded_concurrency import embedded_server_running  # noqa: E402

# load_demo's DEFAULT_DEMO_PASSWORD (apps/demo/management/commands/load_demo.py); not imported
# from there, which would need Django set up in this process.
DEFAULT_DEMO_PASSWORD = "gpuselect-demo"  # noqa: S105 - the public demo credential
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
WIDTH, HEIGHT = 1440, 900  # the window
AIM_LOAD_S = 1.5
AIM_SCRIPT_BYTES = 1_500_000

# Per visit: navigation timing and every script's transfer/decoded size (Resource Timing).
MEASURE = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const scripts = performance.getEntriesByType("resource")
    .filter(r => r.initiatorType === "script");
  return {
    load_ms: nav.loadEventStart,
    ttfb_ms: nav.responseStart,
    dcl_ms: nav.domContentLoadedEventEnd,
    page_bytes: nav.transferSize,
    script_transfer: scripts.reduce((n, r) => n + r.transferSize, 0),
    script_decoded: scripts.reduce((n, r) => n + r.decodedBodySize, 0),
    scripts: scripts.map(r => [r.name.split("/").pop(), r.transferSize, r.decodedBodySize]),
  };
}"""


def busiest_brief(db: Path) -> int:
    """The demo brief with the most candidates among those with a capacity model (whose page
    has the most charts)."""
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT t.brief_id FROM finance_candidatetable t JOIN finance_candidaterow r"
            " ON r.table_id = t.id GROUP BY t.brief_id"
            " ORDER BY t.capacity_model != '{}' DESC, COUNT(*) DESC"
        ).fetchall()
        if rows:
            return int(rows[0][0])
        return int(connection.execute("SELECT MIN(id) FROM briefs_workloadbrief").fetchone()[0])


def visit(page, url: str, charts_expected: int) -> dict:
    page.goto(url, wait_until="load")
    page.wait_for_function(
        f"document.querySelectorAll('.chart .main-svg').length >= {charts_expected}"
    )
    figures = page.evaluate(MEASURE)
    figures["charts_ms"] = page.evaluate("performance.now()")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--visits", type=int, default=5, help="warm visits (median printed)")
    parser.add_argument("--screenshot", type=Path, default=None, help="folder for finance.png")
    parser.add_argument("--json", action="store_true", help="also print the raw figures")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    print(
        "== gpuselect finance page in headless Chromium (make run's gunicorn, SQLite, demo data) =="
    )
    print(
        f"machine:     {platform.platform()}; {os.cpu_count()} CPUs; "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    tmp = tempfile.TemporaryDirectory(prefix="gpuselect-page-load-")
    with tmp, embedded_server_running(Path(tmp.name)) as server, sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"],
        )
        context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(server["base"] + "/accounts/login/")
        page.fill("#id_username", "finance")
        page.fill("#id_password", DEFAULT_DEMO_PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_load_state("load")
        brief = busiest_brief(server["db"])
        url = f"{server['base']}/briefs/{brief}/finance/"
        page.goto(url)
        charts = page.locator(".chart[data-figure]").count()
        # Cold: a fresh context (empty cache, same session cookie).
        cold_context = browser.new_context(
            viewport={"width": WIDTH, "height": HEIGHT}, storage_state=context.storage_state()
        )
        cold = visit(cold_context.new_page(), url, charts)
        cold_context.close()
        warm = [visit(page, url, charts) for _ in range(args.visits)]
        if args.screenshot:
            args.screenshot.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.screenshot / "finance.png"), full_page=True)
            for chart in page.locator(".chart[data-figure]").all():
                chart.screenshot(path=str(args.screenshot / f"{chart.get_attribute('id')}.png"))
        browser.close()

    def median(key: str) -> float:
        return statistics.median(v[key] for v in warm)

    print(f"page:        /briefs/{brief}/finance/ ({charts} charts), {WIDTH} px wide")
    print(
        f"cold:        load {cold['load_ms'] / 1000:.2f} s, charts drawn "
        f"{cold['charts_ms'] / 1000:.2f} s; script {cold['script_transfer'] / 1e6:.2f} MB "
        f"transferred, {cold['script_decoded'] / 1e6:.2f} MB decoded"
    )
    print(
        f"warm:        first byte {median('ttfb_ms') / 1000:.2f} s (the server's render), "
        f"load {median('load_ms') / 1000:.2f} s (median of {len(warm)}; aim < "
        f"{AIM_LOAD_S} s), charts drawn {median('charts_ms') / 1000:.2f} s; script "
        f"{median('script_transfer') / 1e6:.2f} MB transferred, "
        f"{median('script_decoded') / 1e6:.2f} MB decoded (aim < {AIM_SCRIPT_BYTES / 1e6} MB)"
    )
    for name, transferred, decoded in cold["scripts"]:
        print(f"  script     {name}: {transferred / 1e3:.0f} kB over the wire cold, "
              f"{decoded / 1e3:.0f} kB decoded")  # fmt: skip
    print(f"console:     {len(errors)} errors{': ' + '; '.join(errors[:3]) if errors else ''}")
    if args.json:
        print(json.dumps({"cold": cold, "warm": warm}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
