"""One person is not a committee: a decision record's verdicts come from distinct people, the
submitter decides for no role, and a record is submitted under one of its own roles."""

from decimal import Decimal

import pytest
from django.core.exceptions import PermissionDenied
from django.db import DatabaseError, IntegrityError, connection, transaction

from apps.core.roles import Role
from apps.decisions.models import Approval, DecisionRecord
from apps.decisions.services import (
    decision_record_approve,
    decision_record_reject,
    decision_record_submit,
)
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.decisions import make_record
from tests.factories.quotes import QuoteFactory

Status = DecisionRecord.Status


@pytest.fixture
def brief(catalog, team):
    brief = BriefFactory(team=team)
    QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    candidate_table_recompute(brief_id=brief.pk)
    return brief


@pytest.fixture
def author(make_user):
    return make_user(Role.PROCUREMENT, username="author")


def record_for(brief, author, roles=None):
    quote = brief.candidate_table.rows.first().quote
    return make_record(brief=brief, user=author, quote=quote, roles=roles)


@pytest.mark.django_db
class TestOnePersonActsOncePerRecord:
    def test_a_user_with_two_roles_cannot_approve_for_both(self, brief, author, make_user):
        both = make_user(Role.FINANCE, Role.PROCUREMENT, username="both")
        record = decision_record_submit(record=record_for(brief, author), user=author)
        decision_record_approve(record=record, user=both, role="finance")
        with pytest.raises(PermissionDenied) as refused:
            decision_record_approve(record=record, user=both, role="procurement")
        assert str(refused.value) == (
            "You already approved this record as finance; "
            "another person must approve for procurement."
        )
        assert list(record.approvals.values_list("role", flat=True)) == ["finance"]

    def test_nor_approve_for_one_and_reject_for_the_other(self, brief, author, make_user):
        both = make_user(Role.FINANCE, Role.PROCUREMENT, username="both")
        record = decision_record_submit(record=record_for(brief, author), user=author)
        decision_record_approve(record=record, user=both, role="finance")
        with pytest.raises(PermissionDenied, match="another person must reject for procurement"):
            decision_record_reject(record=record, user=both, role="procurement", reason="no")
        record.refresh_from_db()
        assert record.status == Status.IN_REVIEW

    def test_the_database_refuses_a_second_verdict_by_the_same_user(self, brief, author, make_user):
        both = make_user(Role.FINANCE, Role.PLATFORM, username="both")
        record = decision_record_submit(record=record_for(brief, author), user=author)
        Approval.objects.create(record=record, role="finance", user=both, verdict="APPROVE")
        with pytest.raises(IntegrityError), transaction.atomic():
            Approval.objects.create(record=record, role="platform", user=both, verdict="APPROVE")

    def test_approvals_stay_append_only_after_the_constraint_migration(
        self, brief, author, make_user
    ):
        """SQLite rebuilds a table to add a constraint, which drops its triggers; the
        migration puts the append-only trigger back."""
        record = decision_record_submit(record=record_for(brief, author), user=author)
        approval = Approval.objects.create(
            record=record, role="finance", user=make_user(Role.FINANCE), verdict="APPROVE"
        )
        sql = "UPDATE decisions_approval SET reason = 'forged' WHERE id = %s"
        with (
            pytest.raises((IntegrityError, DatabaseError)),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(sql, [approval.pk])


@pytest.mark.django_db
class TestTheSubmitterDecidesForNoRole:
    def test_the_submitter_cannot_approve_for_another_role_they_hold(self, brief, make_user):
        author = make_user(Role.PROCUREMENT, Role.FINANCE, username="author")
        record = decision_record_submit(
            record=record_for(brief, author), user=author, role="procurement"
        )
        with pytest.raises(PermissionDenied) as refused:
            decision_record_approve(record=record, user=author, role="finance")
        assert str(refused.value) == (
            "You submitted this record as procurement; another person must approve for finance."
        )
        assert not record.approvals.exists()

    def test_nor_reject_it(self, brief, make_user):
        author = make_user(Role.PROCUREMENT, Role.FINANCE, username="author")
        record = decision_record_submit(record=record_for(brief, author), user=author)
        with pytest.raises(PermissionDenied, match="another person must reject for finance"):
            decision_record_reject(record=record, user=author, role="finance", reason="no")

    def test_distinct_people_still_approve_it(self, brief, author, make_user):
        record = decision_record_submit(record=record_for(brief, author), user=author)
        for role in ("platform", "finance", "procurement"):
            record = decision_record_approve(record=record, user=make_user(role), role=role)
        assert record.status == Status.APPROVED
        assert record.approvals.values("user").distinct().count() == 3


@pytest.mark.django_db
class TestSubmitUnderOneOfTheRecordsRoles:
    def test_a_role_the_record_does_not_need_is_refused_to_someone_else(
        self, brief, author, make_user
    ):
        record = record_for(brief, author, roles=["platform", "finance"])
        outsider = make_user(Role.PROCUREMENT, username="outsider")
        with pytest.raises(PermissionDenied) as refused:
            decision_record_submit(record=record, user=outsider, role="procurement")
        assert str(refused.value) == (
            "procurement is not one of this record's roles (platform, finance); submit as "
            "one of them, or ask its author (author) to submit it."
        )
        with pytest.raises(PermissionDenied, match="not one of this record's roles"):
            decision_record_submit(record=record, user=outsider)
        record.refresh_from_db()
        assert record.status == Status.DRAFT

    def test_the_author_may_submit_under_their_own_role(self, brief, author):
        record = record_for(brief, author, roles=["platform", "finance"])
        record = decision_record_submit(record=record, user=author)
        assert (record.status, record.submitted_as) == (Status.IN_REVIEW, "procurement")

    def test_a_required_role_the_submitter_holds_is_taken_by_default(
        self, brief, author, make_user
    ):
        record = record_for(brief, author, roles=["platform", "finance"])
        record = decision_record_submit(record=record, user=make_user(Role.FINANCE))
        assert record.submitted_as == "finance"

    def test_a_role_not_held_is_refused_in_words(self, brief, author):
        with pytest.raises(PermissionDenied) as refused:
            decision_record_submit(record=record_for(brief, author), user=author, role="finance")
        assert str(refused.value) == (
            "You do not hold the finance role; submit under a role you hold (procurement)."
        )

    def test_an_api_client_role_is_never_a_submitting_role(self, brief, author, make_user):
        reader = make_user(Role.API_CLIENT, username="reader")
        with pytest.raises(PermissionDenied):
            decision_record_submit(record=record_for(brief, author), user=reader)
