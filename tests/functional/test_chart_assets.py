"""A chart page loads plotly.js's small basic bundle once, deferred, and the bundle is served
compressed when the browser accepts it and cached for a year (issue #15, item 8)."""

import gzip
import re
from decimal import Decimal
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client, override_settings

from apps.core.roles import Role
from apps.finance.services import candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, QuoteFactory

pytestmark = pytest.mark.django_db

VENDOR = Path(settings.BASE_DIR) / "static" / "vendor" / "plotly"
SCRIPT_TAG = re.compile(r"<script\b[^>]*>", re.IGNORECASE)
ONE_YEAR_S = 365 * 24 * 3600


@pytest.fixture
def brief(catalog, team, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        brief = BriefFactory(team=team)
        QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
        QuoteFactory(pricing_term="RESERVED_1Y", hourly_price_per_gpu=Decimal("1.90"))
        ApiRouteFactory(model_preset="llama-3.1-8b")
        candidate_tables_request_recompute(brief_ids=[brief.pk])
    return brief


@pytest.fixture
def bundle_url(brief, client, make_user) -> str:
    client.force_login(make_user(Role.FINANCE))
    html = client.get(f"/briefs/{brief.pk}/finance/").content.decode()
    plotly_tags = [t for t in SCRIPT_TAG.findall(html) if "plotly" in t]
    assert len(plotly_tags) == 1, plotly_tags  # loaded once
    return re.search(r'src="([^"]+)"', plotly_tags[0]).group(1)


def fetch(url: str, accept_encoding: str | None):
    headers = {} if accept_encoding is None else {"HTTP_ACCEPT_ENCODING": accept_encoding}
    response = Client().get(url, **headers)
    assert response.status_code == 200
    return response, b"".join(response.streaming_content)


def max_age(response) -> int:
    return int(re.search(r"max-age=(\d+)", response["Cache-Control"]).group(1))


class TestTheChartPageScripts:
    def test_the_finance_page_loads_the_basic_bundle_once_deferred(self, brief, client, make_user):
        client.force_login(make_user(Role.FINANCE))
        html = client.get(f"/briefs/{brief.pk}/finance/").content.decode()
        tags = SCRIPT_TAG.findall(html)
        plotly = [t for t in tags if "plotly" in t]
        assert len(plotly) == 1
        assert "vendor/plotly/plotly-basic-" in plotly[0]
        assert "plotly.min.js" not in html  # not the 4.8 MB full bundle
        # Every external script deferred and carrying the request's nonce (CSP, no inline code).
        external = [t for t in tags if "src=" in t]
        assert external and all(" defer" in t and "nonce=" in t for t in external)

    def test_the_bundle_is_the_vendored_file(self, bundle_url):
        response, body = fetch(bundle_url, None)
        assert "Content-Encoding" not in response
        assert response["Content-Type"].startswith("text/javascript")
        assert body == (VENDOR / Path(bundle_url).name).read_bytes()
        assert body.startswith(b"/**\n* plotly.js (basic - minified)")
        assert len(body) < 1_500_000  # the script budget, decoded


class TestTheBundleIsServedCompressedAndCached:
    def test_gzip_when_the_browser_asks_for_it(self, bundle_url):
        response, body = fetch(bundle_url, "gzip, deflate")
        assert response["Content-Encoding"] == "gzip"
        assert "Accept-Encoding" in response["Vary"]
        plain = (VENDOR / Path(bundle_url).name).read_bytes()
        assert gzip.decompress(body) == plain
        assert len(body) < len(plain) / 2

    def test_brotli_when_the_browser_accepts_it(self, bundle_url):
        brotli = pytest.importorskip("brotli")
        response, body = fetch(bundle_url, "gzip, deflate, br, zstd")  # what Chromium sends
        assert response["Content-Encoding"] == "br"
        assert brotli.decompress(body) == (VENDOR / Path(bundle_url).name).read_bytes()

    def test_a_year_long_immutable_cache(self, bundle_url):
        response, _ = fetch(bundle_url, "gzip")
        assert max_age(response) >= ONE_YEAR_S
        assert "immutable" in response["Cache-Control"]

    def test_the_page_script_is_not_cached_forever(self, bundle_url):
        # charts.js has no version in its name: it must not be marked immutable.
        charts_js = bundle_url.replace(bundle_url.split("static/")[1], "js/charts.js")
        response, _ = fetch(charts_js, None)
        assert "immutable" not in response.get("Cache-Control", "")


class TestCollectstatic:
    def test_collects_the_bundle_and_its_licence_but_no_copies_and_no_full_plotly(self, tmp_path):
        root = tmp_path / "static"
        with override_settings(STATIC_ROOT=str(root)):
            call_command("collectstatic", interactive=False, verbosity=0)
        collected = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
        vendored = {p for p in collected if p.startswith("vendor/plotly/")}
        assert vendored == {
            "vendor/plotly/LICENSE",
            "vendor/plotly/README.md",
            f"vendor/plotly/{next(VENDOR.glob('plotly-basic-*.min.js')).name}",
        }
        assert not [p for p in collected if p.endswith(("plotly.min.js", "widgetbundle.js"))]
