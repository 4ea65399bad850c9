"""A real Celery worker (not eager mode) picks up a task from Redis and writes to the database.

Runs when CELERY_BROKER_URL (or REDIS_URL) is set. CI sets GPUSELECT_REQUIRE_BROKER=1, which
turns a missing or unreachable broker into a failure instead of a skip.
"""

import os
import time

import pytest
from celery.contrib.testing.worker import start_worker

from apps.finance.models import CandidateTable
from apps.finance.services import candidate_table_request_recompute
from gpuselect.celery import app
from tests.conftest import broker_url
from tests.factories.briefs import BriefFactory

pytestmark = [pytest.mark.broker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def real_worker():
    url = broker_url()
    required = os.environ.get("GPUSELECT_REQUIRE_BROKER") == "1"
    if not url:
        if required:
            pytest.fail("GPUSELECT_REQUIRE_BROKER=1 but CELERY_BROKER_URL is not set")
        pytest.skip("no broker configured (set CELERY_BROKER_URL to run against Redis)")
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
        assert table.inputs_version == table.requested_version == f"brief:{brief.inputs_version}"
