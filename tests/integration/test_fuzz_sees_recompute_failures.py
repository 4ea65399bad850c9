"""Issue 24 point 2: the live fuzz (scripts/fuzz-live) and its in-process twin
(tests/functional/test_api_fuzz.py) fail on what a user would see — a recompute that fails or a
table left pending — not only on a 5xx."""

import importlib.machinery
import importlib.util
import logging
from pathlib import Path

import pytest

from apps.finance import services
from apps.finance.models import CandidateTable
from apps.finance.selectors import tables_left_pending
from apps.finance.services import RECOMPUTE_FAILED, candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.functional.test_api_fuzz import FailureRecords, assert_tables_settle

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


def fuzz_live():
    """scripts/fuzz-live as a module (it has no .py suffix)."""
    loader = importlib.machinery.SourceFileLoader("fuzz_live", str(ROOT / "scripts" / "fuzz-live"))
    spec = importlib.util.spec_from_loader("fuzz_live", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class TestTheLiveFuzz:
    def test_a_logged_recompute_failure_is_found_in_the_server_log(self, tmp_path):
        script = fuzz_live()
        log = tmp_path / "server.log"
        failure = RECOMPUTE_FAILED % [7]
        log.write_text(
            f"Bad Request: /api/v1/quotes/\n{failure}\nTraceback (most recent call last):\n"
        )
        assert script.log_failures(log) == [failure, "Traceback (most recent call last):"]

    def test_a_clean_log_has_no_failure(self, tmp_path):
        log = tmp_path / "server.log"
        log.write_text("Bad Request: /api/v1/quotes/\nNot Found: /api/v1/briefs/99/\n")
        assert fuzz_live().log_failures(log) == []

    def test_a_run_with_a_failure_exits_non_zero_though_schemathesis_passed(
        self, tmp_path, monkeypatch
    ):
        script = fuzz_live()
        monkeypatch.setattr(script, "tables_settled", lambda timeout: [])
        log = tmp_path / "server.log"
        log.write_text(RECOMPUTE_FAILED % [3] + "\n")
        assert script.judged(0, log) == 1
        log.write_text("")
        assert script.judged(0, log) == 0
        assert script.judged(2, log) == 2

    def test_a_pending_table_is_seen(self, catalog, team):
        brief = BriefFactory(team=team)
        candidate_tables_request_recompute(brief_ids=[brief.pk])  # never committed: not run
        assert tables_left_pending() == [brief.pk]
        assert fuzz_live().tables_settled(0) == [brief.pk]


class TestTheInProcessTwin:
    def test_a_recompute_that_fails_fails_the_case(self, catalog, team, monkeypatch):
        brief = BriefFactory(team=team)
        candidate_tables_request_recompute(brief_ids=[brief.pk])

        def broken(**kwargs):
            raise RuntimeError("a bug in a recompute")

        monkeypatch.setattr(services, "candidate_table_build", broken)
        monkeypatch.setattr(services, "candidate_tables_reprice", lambda brief_ids: set())
        records = FailureRecords()
        logging.getLogger("apps.finance").addHandler(records)
        try:
            with pytest.raises((AssertionError, RuntimeError)):
                assert_tables_settle(records.records)
        finally:
            logging.getLogger("apps.finance").removeHandler(records)
        assert CandidateTable.objects.get(brief=brief).computed_version == 0

    def test_a_case_whose_recomputes_run_clean_passes(self, catalog, team):
        brief = BriefFactory(team=team)
        candidate_tables_request_recompute(brief_ids=[brief.pk])
        assert_tables_settle([])
        assert tables_left_pending() == []
