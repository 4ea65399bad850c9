"""Without a broker the recompute runs in-process after the change commits: a locked database
is retried, then left to the in-process sweeper, and never answered as a 500 for a committed
write. Bugs still show in the tests (base settings propagate them); the embedded default
(local.py) logs them instead."""

import json

import pytest
from django.db import OperationalError
from django.test import override_settings

from apps.briefs.models import WorkloadBrief
from apps.core.roles import Role
from apps.finance import services as finance_services
from apps.finance import tasks as finance_tasks
from apps.finance.models import CandidateTable
from tests.functional.test_brief_api import BRIEF_BODY

pytestmark = pytest.mark.django_db


@pytest.fixture
def platform_api(catalog, token_client):
    return token_client(Role.PLATFORM)


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch):
    monkeypatch.setattr(finance_services, "IN_PROCESS_BACKOFF_S", 0)


def locked_for(monkeypatch, times):
    """candidate_table_recompute meets "database is locked" ``times`` times, then runs."""
    real = finance_services.candidate_table_recompute
    calls = []

    def flaky(*, brief_id):
        calls.append(brief_id)
        if len(calls) <= times:
            raise OperationalError("database is locked")
        return real(brief_id=brief_id)

    monkeypatch.setattr(finance_services, "candidate_table_recompute", flaky)
    return calls


def create_brief(api, capture):
    with capture(execute=True):
        return api.post("/api/v1/briefs/", json.dumps(BRIEF_BODY), content_type="application/json")


def test_a_locked_database_is_retried_and_the_table_computed(
    platform_api, monkeypatch, django_capture_on_commit_callbacks
):
    calls = locked_for(monkeypatch, times=finance_services.IN_PROCESS_ATTEMPTS - 1)
    response = create_brief(platform_api, django_capture_on_commit_callbacks)
    assert response.status_code == 201
    assert len(calls) == finance_services.IN_PROCESS_ATTEMPTS
    table = CandidateTable.objects.get(brief_id=response.json()["id"])
    assert table.computed_version == table.requested_version


def test_a_database_locked_past_every_retry_answers_the_committed_write_and_the_sweeper_computes(
    platform_api, monkeypatch, django_capture_on_commit_callbacks
):
    calls = locked_for(monkeypatch, times=finance_services.IN_PROCESS_ATTEMPTS)
    response = create_brief(platform_api, django_capture_on_commit_callbacks)
    assert response.status_code == 201
    brief = WorkloadBrief.objects.get(pk=response.json()["id"])
    table = CandidateTable.objects.get(brief=brief)
    assert table.computed_version < table.requested_version
    assert table.queued_at is None  # off the queue: the next sweep sends it again
    assert len(calls) == finance_services.IN_PROCESS_ATTEMPTS

    with django_capture_on_commit_callbacks(execute=True):
        finance_tasks._sweep_once()  # what the in-process sweeper thread runs
    table.refresh_from_db()
    assert table.computed_version == table.requested_version


def test_a_sweep_that_meets_a_locked_database_waits_for_the_next_one(monkeypatch):
    def locked():
        raise OperationalError("database is locked")

    monkeypatch.setattr(finance_tasks, "candidate_tables_sweep", locked)
    finance_tasks._sweep_once()  # no exception: the thread lives on


def test_a_bug_in_a_recompute_still_shows_in_the_tests(
    platform_api, monkeypatch, django_capture_on_commit_callbacks
):
    def bug(*, brief_id):
        raise ZeroDivisionError

    monkeypatch.setattr(finance_services, "candidate_table_recompute", bug)
    with pytest.raises(ZeroDivisionError):
        create_brief(platform_api, django_capture_on_commit_callbacks)


@override_settings(CELERY_TASK_EAGER_PROPAGATES=False)
def test_on_the_embedded_default_a_bug_is_logged_and_the_write_answered(
    platform_api, monkeypatch, django_capture_on_commit_callbacks, caplog
):
    def bug(*, brief_id):
        raise ZeroDivisionError

    monkeypatch.setattr(finance_services, "candidate_table_recompute", bug)
    response = create_brief(platform_api, django_capture_on_commit_callbacks)
    assert response.status_code == 201
    assert WorkloadBrief.objects.filter(pk=response.json()["id"]).exists()
    assert "left stale for the sweeper" in caplog.text


class TestSweeperThread:
    @pytest.fixture(autouse=True)
    def fresh(self, monkeypatch):
        started = []

        class FakeThread:
            def __init__(self, target, args, name, daemon):
                started.append((name, args, daemon))

            def start(self):
                pass

        monkeypatch.setattr(finance_tasks.threading, "Thread", FakeThread)
        monkeypatch.setattr(finance_tasks, "_sweeper_pid", None)
        return started

    def test_the_tests_settings_start_none(self, fresh):
        assert finance_tasks.in_process_sweeper_start() is False
        assert fresh == []

    @override_settings(IN_PROCESS_SWEEP_INTERVAL_S=10.0)
    def test_in_process_it_starts_once_per_process(self, fresh):
        assert finance_tasks.in_process_sweeper_start() is True
        assert finance_tasks.in_process_sweeper_start() is False
        assert fresh == [("gpuselect-sweeper", (10.0,), True)]

    @override_settings(IN_PROCESS_SWEEP_INTERVAL_S=10.0, CELERY_TASK_ALWAYS_EAGER=False)
    def test_with_a_broker_beat_sweeps_instead(self, fresh):
        assert finance_tasks.in_process_sweeper_start() is False
        assert fresh == []
