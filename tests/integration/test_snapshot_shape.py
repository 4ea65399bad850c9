"""The frozen snapshot's type (apps.decisions.frozen) is the shape build_snapshot writes: every
key a fresh record freezes is declared, and every section a fresh record has is all there (the
types are total=False only for records frozen by older builds)."""

from decimal import Decimal

import pytest

from apps.core.roles import Role
from apps.decisions.checklist import QUESTIONS
from apps.decisions.frozen import (
    FrozenAnswer,
    FrozenAssumptions,
    FrozenBrief,
    FrozenChecklist,
    FrozenChosen,
    FrozenInputs,
    FrozenQuote,
    FrozenRoute,
    FrozenTable,
    Snapshot,
    snapshot_of,
)
from apps.decisions.selectors import RecordReport, decision_record_report
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from apps.finance.shown import ShownRow
from tests.factories.briefs import BriefFactory
from tests.factories.decisions import make_record
from tests.factories.quotes import ApiRouteFactory, QuoteFactory

pytestmark = pytest.mark.django_db


def declared(typed: type) -> set[str]:
    """Every key a TypedDict declares, required or not."""
    return set(typed.__required_keys__ | typed.__optional_keys__)  # type: ignore[attr-defined]


@pytest.fixture
def record(catalog, team, make_user):
    quote = QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
    brief = BriefFactory(team=team)
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    candidate_table_recompute(brief_id=brief.pk)
    return make_record(brief=brief, user=make_user(Role.PROCUREMENT), quote=quote)


class TestTheSnapshotTypeIsWhatIsFrozen:
    def test_every_section_is_declared_and_a_fresh_record_has_them_all(self, record):
        snap = snapshot_of(record)
        assert snap is record.snapshot  # read as it is stored, not copied
        assert set(snap) == declared(Snapshot)
        assert set(snap["chosen"]) == declared(FrozenChosen)
        assert set(snap["candidate_table"]) == declared(FrozenTable)
        assert set(snap["inputs"]) == declared(FrozenInputs)
        assert set(snap["assumptions"]) == declared(FrozenAssumptions)
        assert set(snap["checklist"]) == declared(FrozenChecklist)

    def test_the_brief_quotes_rows_and_answers_hold_only_declared_keys(self, record):
        snap = snapshot_of(record)
        # A brief's body has media or training only for those workloads.
        assert set(snap["brief"]) <= declared(FrozenBrief)
        assert {"id", "inputs_version", "name", "workload_type", "model"} <= set(snap["brief"])
        assert snap["quotes"] and all(set(q) == declared(FrozenQuote) for q in snap["quotes"])
        rows = snap["candidate_table"]["rows"]
        assert rows
        for row in rows:  # what the page or a chart adds to a row is never frozen
            assert ShownRow.__required_keys__ <= set(row) <= declared(ShownRow)  # type: ignore[attr-defined]
        answers = snap["checklist"]["answers"]
        assert len(answers) == len(QUESTIONS)
        assert all(set(a) == declared(FrozenAnswer) for a in answers)

    def test_a_chosen_api_route_is_frozen_in_the_route_shape(self, catalog, team, make_user):
        route = ApiRouteFactory()
        brief = BriefFactory(team=team)
        candidate_tables_request_recompute(brief_ids=[brief.pk])
        candidate_table_recompute(brief_id=brief.pk)
        record = make_record(brief=brief, user=make_user(Role.PROCUREMENT), route=route)
        routes = snapshot_of(record)["api_routes"]
        assert [r["id"] for r in routes if r["id"] == route.pk] == [route.pk]
        assert all(set(r) == declared(FrozenRoute) for r in routes)

    def test_the_pdfs_report_has_every_key_its_type_declares(self, record):
        report = decision_record_report(record)
        assert set(report) == declared(RecordReport)
