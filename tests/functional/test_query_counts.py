"""List pages and list endpoints cost the same number of queries at 5 rows as at 50."""

import datetime
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.core.roles import Role
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, ProviderFactory, QuoteFactory

pytestmark = pytest.mark.django_db


def queries(call):
    with CaptureQueriesContext(connection) as captured:
        response = call()
    assert response.status_code == 200, response.content[:300]
    return len(captured)


def grow(make_rows, fetch):
    """Queries at 5 rows and at 50 rows of the same list."""
    make_rows(5)
    small = queries(fetch)
    make_rows(45)
    large = queries(fetch)
    return small, large


@pytest.fixture
def api(catalog, token_client, team, make_user):
    return token_client(user=make_user(Role.PROCUREMENT, Role.PLATFORM, Role.FINANCE))


@pytest.fixture
def page(client, make_user):
    client.force_login(make_user(Role.PROCUREMENT, Role.PLATFORM, Role.FINANCE))
    return client


def make_quotes(n):
    for _ in range(n):
        QuoteFactory(provider=ProviderFactory())


class TestConstantQueries:
    def test_brief_list_endpoint(self, api, team):
        small, large = grow(
            lambda n: BriefFactory.create_batch(n, team=team), lambda: api.get("/api/v1/briefs/")
        )
        assert small == large

    def test_quote_list_endpoint(self, api):
        small, large = grow(make_quotes, lambda: api.get("/api/v1/quotes/"))
        assert small == large

    def test_provider_and_route_list_endpoints(self, api):
        def routes(n):
            for _ in range(n):
                ApiRouteFactory(provider=ProviderFactory())

        small, large = grow(routes, lambda: api.get("/api/v1/api-routes/"))
        assert small == large
        assert queries(lambda: api.get("/api/v1/providers/")) <= small

    def test_rankings_endpoint(self, api, team):
        brief = BriefFactory(team=team)

        def rows(n):
            make_quotes(n)
            candidate_tables_request_recompute(brief_ids=[brief.pk])
            candidate_table_recompute(brief_id=brief.pk)

        small, large = grow(rows, lambda: api.get(f"/api/v1/briefs/{brief.pk}/rankings"))
        assert small == large

    def test_brief_list_page(self, catalog, page, team):
        small, large = grow(
            lambda n: BriefFactory.create_batch(n, team=team), lambda: page.get("/briefs/")
        )
        assert small == large

    def test_whatif_page(self, catalog, page, team):
        """The calculator's page is the same few queries however many briefs and teams exist
        (its figures come from the estimate API, its team choice from one query)."""
        page.get("/briefs/what-if/")  # the catalog's specs are read once, then cached
        small, large = grow(
            lambda n: BriefFactory.create_batch(n, team=team), lambda: page.get("/briefs/what-if/")
        )
        assert small == large

    def test_quote_list_page(self, catalog, page):
        small, large = grow(make_quotes, lambda: page.get("/quotes/"))
        assert small == large

    def test_finance_page(self, catalog, page, team):
        brief = BriefFactory(team=team, acceptance_rate=Decimal("0.9"))

        def rows(n):
            make_quotes(n)
            candidate_tables_request_recompute(brief_ids=[brief.pk])
            candidate_table_recompute(brief_id=brief.pk)

        small, large = grow(rows, lambda: page.get(f"/briefs/{brief.pk}/finance/"))
        assert small == large


def make_runs(brief, n):
    from apps.benchmarks.models import BenchmarkRun
    from apps.catalog.models import Gpu

    gpu = Gpu.objects.get(slug="h100-sxm5-80gb")
    BenchmarkRun.objects.bulk_create(
        [
            BenchmarkRun(
                brief=brief,
                team=brief.team,
                gpu=gpu,
                gpu_count=1,
                phase="MEMORY_FIT",
                results={"peak_memory_gb": 40},
                created_by=brief.created_by,
            )
            for _ in range(n)
        ]
    )


def make_records(brief, user, n):
    from tests.factories.decisions import make_record

    quote = QuoteFactory()
    for _ in range(n):
        make_record(brief=brief, user=user, quote=quote)


class TestConstantQueriesBenchmarksAndDecisions:
    def test_benchmark_run_list_endpoint_and_page(self, api, page, team):
        brief = BriefFactory(team=team)
        small, large = grow(
            lambda n: make_runs(brief, n), lambda: api.get("/api/v1/benchmark-runs/")
        )
        assert small == large
        make_runs(brief, 0)
        small_page = queries(lambda: page.get(f"/benchmarks/briefs/{brief.pk}/"))
        make_runs(brief, 45)
        assert queries(lambda: page.get(f"/benchmarks/briefs/{brief.pk}/")) == small_page

    def test_decision_record_list_endpoint_and_page(self, api, page, team):
        brief = BriefFactory(team=team)
        user = api.user
        small, large = grow(
            lambda n: make_records(brief, user, n), lambda: api.get("/api/v1/decision-records/")
        )
        assert small == large
        small_page = queries(lambda: page.get("/decisions/"))
        make_records(brief, user, 5)
        assert queries(lambda: page.get("/decisions/")) == small_page


class TestConstantQueriesProcurementPages:
    def test_price_comparison_page(self, catalog, page):
        from apps.finance.models import FxRate

        FxRate.objects.create(currency="EUR", rate=Decimal("1.1"), as_of="2026-11-01", source="t")

        def rows(n):
            for i in range(n):
                QuoteFactory(provider=ProviderFactory(), currency="EUR" if i % 2 else "JPY")

        small, large = grow(rows, lambda: page.get("/quotes/compare/h100-sxm5-80gb/"))
        assert small == large

    def test_provider_list_page(self, catalog, page):
        small, large = grow(
            lambda n: ProviderFactory.create_batch(n), lambda: page.get("/quotes/providers/")
        )
        assert small == large

    def test_checklist_page_with_every_question_answered(self, catalog, page):
        from apps.decisions.checklist import QUESTIONS
        from apps.decisions.models import ChecklistAnswer

        quote = QuoteFactory()
        user = page.get("/quotes/").wsgi_request.user
        url = f"/decisions/checklist/quotes/{quote.pk}/"
        none = queries(lambda: page.get(url))
        for q in QUESTIONS:
            ChecklistAnswer.objects.create(
                quote=quote,
                question=q.key,
                answer="YES",
                answered_by=user,
                team=user.teams.order_by("name").first(),
            )
        assert queries(lambda: page.get(url)) == none

    def test_decision_detail_page_with_more_approvers(self, catalog, page, team, make_user):
        from tests.factories.decisions import make_record

        brief = BriefFactory(team=team)
        user = page.get("/quotes/").wsgi_request.user
        record = make_record(brief=brief, user=user, quote=QuoteFactory())
        url = f"/decisions/{record.pk}/"
        make_user(Role.FINANCE)
        small = queries(lambda: page.get(url))
        for _ in range(10):
            make_user(Role.FINANCE, Role.PLATFORM)
        assert queries(lambda: page.get(url)) == small


class TestConstantQueriesImportPages:
    """The catalog import and the API-price diff cost the same queries at 5 rows as at 50."""

    def test_catalog_import_endpoint(self, api):
        header = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,"
        header += "Region,AvailabilityZone\n"

        def upload(n):
            provider = ProviderFactory()
            lines = [f"p5.48xlarge,H100,8.0,192.0,2048.0,98.32,40.1,r{i},r{i}a\n" for i in range(n)]
            body = {
                "file": SimpleUploadedFile("vms.csv", (header + "".join(lines)).encode()),
                "provider": provider.pk,
                "format": "skypilot",
            }
            return lambda: api.post("/api/v1/quotes/import-catalog", body, format="multipart")

        def imported(call):
            with CaptureQueriesContext(connection) as captured:
                response = call()
            assert response.status_code == 201, response.content[:300]
            return len(captured)

        assert imported(upload(5)) == imported(upload(50))

    def test_api_prices_diff_page(self, catalog, page):
        day = (datetime.date.today() - datetime.timedelta(days=1)).isoformat()
        small, large = grow(
            lambda n: ApiRouteFactory.create_batch(n),
            lambda: page.get(f"/quotes/api-prices/?date={day}"),
        )
        assert small == large
