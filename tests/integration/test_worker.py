"""A real Celery worker (not eager mode) picks up a task from Redis and writes to the database.

Runs when CELERY_BROKER_URL (or REDIS_URL) is set. CI sets GPUSELECT_REQUIRE_BROKER=1, which
turns a missing or unreachable broker into a failure instead of a skip.
"""

import os
import threading
import time
from collections import Counter

import pytest
from celery.contrib.testing.worker import start_worker
from celery.signals import before_task_publish, task_prerun
from django.db import connection

from apps.core.roles import Role
from apps.finance.models import CandidateRow, CandidateTable
from apps.finance.services import (
    candidate_table_request_recompute,
    candidate_tables_request_recompute,
)
from apps.finance.version_sets import table_versions
from gpuselect.celery import app
from tests.conftest import broker_url
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import QuoteFactory

pytestmark = [pytest.mark.broker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def real_worker():
    url = broker_url()
    required = os.environ.get("GPUSELECT_REQUIRE_BROKER") == "1"
    if not url:
        if required:
            pytest.fail("GPUSELECT_REQUIRE_BROKER=1 but CELERY_BROKER_URL is not set")
        pytest.skip("no broker configured (set CELERY_BROKER_URL to run against Redis)")
    if connection.vendor != "postgresql":
        message = "the real-worker tests need PostgreSQL (SQLite locks under a second writer)"
        if required:
            pytest.fail(message)
        pytest.skip(message)
    app.conf.broker_url = url
    app.conf.task_always_eager = False
    try:
        with app.connection_for_write(url) as conn:
            conn.ensure_connection(max_retries=1, timeout=3)
    except Exception as exc:
        pytest.fail(f"broker at {url} is not reachable: {exc!r}")
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
            yield
    finally:
        app.conf.task_always_eager = True


def wait_for(predicate, seconds=20.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


class TestRealWorker:
    def test_a_recompute_enqueued_after_commit_is_done_by_the_worker(self, catalog, real_worker):
        brief = BriefFactory()
        table = candidate_table_request_recompute(brief=brief)
        assert table.computed_at is None  # nothing ran in-process
        assert wait_for(
            lambda: CandidateTable.objects.filter(brief=brief, computed_at__isnull=False).exists()
        ), "the worker never wrote the table"
        table.refresh_from_db()
        assert table.computed_version == table.requested_version


class TestRecomputeThroughTheWorker:
    def test_a_quote_price_change_through_the_api_updates_every_affected_ranking(
        self, catalog, real_worker, token_client, team
    ):
        briefs = [BriefFactory(team=team), BriefFactory(team=team, concurrency=8)]
        quote = QuoteFactory()
        candidate_tables_request_recompute()
        assert wait_for(lambda: _all_current(briefs)), "initial recompute never finished"
        before = {b.pk: _row_cost(b, quote) for b in briefs}
        client = token_client(Role.PROCUREMENT)
        response = client.patch(
            f"/api/v1/quotes/{quote.pk}/", {"hourly_price_per_gpu": "9.99"}, format="json"
        )
        assert response.status_code == 200
        assert wait_for(lambda: _all_current(briefs)), "the worker never caught up"
        for brief in briefs:
            ranking = client.get(f"/api/v1/briefs/{brief.pk}/rankings").json()
            assert ranking["stale"] is False
            assert _row_cost(brief, quote) > before[brief.pk]

    def test_a_burst_of_100_edits_keeps_at_most_one_recompute_per_brief_queued(
        self, catalog, real_worker, token_client, team
    ):
        brief = BriefFactory(team=team)
        quote = QuoteFactory()
        queued: Counter[int] = Counter()
        most_queued = Counter()
        lock = threading.Lock()

        def published(sender=None, body=None, **kwargs):
            if sender == "finance.candidate_tables_recompute":
                with lock:
                    for brief_id in body[1]["brief_ids"]:
                        queued[brief_id] += 1
                        most_queued[brief_id] = max(most_queued[brief_id], queued[brief_id])

        def started(sender=None, kwargs=None, **extra):
            if sender.name == "finance.candidate_tables_recompute":
                with lock:
                    for brief_id in kwargs["brief_ids"]:
                        queued[brief_id] -= 1

        before_task_publish.connect(published)
        task_prerun.connect(started)
        try:
            client = token_client(Role.PROCUREMENT)
            for cents in range(100):
                price = f"{2 + cents / 100:.2f}"
                response = client.patch(
                    f"/api/v1/quotes/{quote.pk}/", {"hourly_price_per_gpu": price}, format="json"
                )
                assert response.status_code == 200
            assert wait_for(lambda: _all_current([brief])), "the worker never caught up"
        finally:
            before_task_publish.disconnect(published)
            task_prerun.disconnect(started)
        assert 1 <= most_queued[brief.pk] <= 1
        row = CandidateRow.objects.get(table__brief=brief, quote=quote)
        assert row.cost_lines  # the final table is costed at the final price
        quote.refresh_from_db()
        assert str(quote.hourly_price_per_gpu) == "2.9900"
        table = CandidateTable.objects.get(brief=brief)
        assert table_versions(table)[0][str(quote.pk)] == quote.version

    def test_a_request_for_many_tables_is_sent_on_by_a_worker_and_every_table_computed(
        self, catalog, real_worker
    ):
        from apps.finance.services import FAN_OUT_AFTER, FULL_RECOMPUTE_BATCH

        briefs = BriefFactory.create_batch(FULL_RECOMPUTE_BATCH * FAN_OUT_AFTER + 1)
        QuoteFactory()
        published: list[str] = []

        def record(sender=None, **kwargs):
            published.append(sender)

        before_task_publish.connect(record)
        try:
            candidate_tables_request_recompute()
            assert wait_for(lambda: _all_current(briefs), 60), "not every table was computed"
        finally:
            before_task_publish.disconnect(record)
        # The request sent one task; the worker sent the recomputes, two briefs a task.
        assert published[0] == "finance.candidate_tables_send"
        assert Counter(published[1:]) == {"finance.candidate_tables_recompute": FAN_OUT_AFTER + 1}


def _all_current(briefs):
    tables = CandidateTable.objects.filter(brief__in=briefs)
    return len(tables) == len(briefs) and all(
        t.computed_version == t.requested_version and t.computed_at for t in tables
    )


def _row_cost(brief, quote):
    return CandidateRow.objects.get(table__brief=brief, quote=quote).monthly_cost
