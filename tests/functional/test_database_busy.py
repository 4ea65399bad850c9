"""A write that waited past SQLite's busy timeout is a 503 with Retry-After, not a 500.

The lock is real: a second connection to a throwaway SQLite file holds the write lock while
this one tries to take it with no timeout, which is how the embedded default fails when more
writers queue than its busy timeout covers."""

import json
import sqlite3

import pytest
from django.db import OperationalError
from django.test import RequestFactory

from apps.core.middleware import BUSY_RETRY_AFTER_S, DatabaseBusyMiddleware, is_database_busy


@pytest.fixture
def locked_error(tmp_path) -> sqlite3.OperationalError:
    path = tmp_path / "busy.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN IMMEDIATE")
    waiter = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        with pytest.raises(sqlite3.OperationalError) as caught:
            waiter.execute("BEGIN IMMEDIATE")
    finally:
        waiter.close()
        holder.execute("ROLLBACK")
        holder.close()
    return caught.value


def _never_called(request):
    raise AssertionError("process_exception is called without the view")


def _middleware() -> DatabaseBusyMiddleware:
    return DatabaseBusyMiddleware(_never_called)


def test_a_locked_database_is_recognised_also_as_djangos_wrapped_error(locked_error) -> None:
    assert is_database_busy(locked_error)
    assert is_database_busy(OperationalError(*locked_error.args))
    assert not is_database_busy(OperationalError("no such table: t"))
    assert not is_database_busy(ValueError("database is locked"))


def test_an_api_request_gets_json_503_with_retry_after(locked_error) -> None:
    request = RequestFactory().post("/api/v1/briefs/")
    response = _middleware().process_exception(request, OperationalError(*locked_error.args))
    assert response is not None and response.status_code == 503
    assert response["Retry-After"] == str(BUSY_RETRY_AFTER_S)
    assert "Try again" in json.loads(response.content)["detail"]


def test_a_page_gets_a_503_page_and_other_errors_stay_500(locked_error) -> None:
    request = RequestFactory().post("/briefs/new/")
    response = _middleware().process_exception(request, OperationalError(*locked_error.args))
    assert response is not None and response.status_code == 503
    assert b"Try again" in response.content
    assert _middleware().process_exception(request, OperationalError("disk I/O error")) is None


def test_the_middleware_is_installed(settings) -> None:
    assert "apps.core.middleware.DatabaseBusyMiddleware" in settings.MIDDLEWARE
