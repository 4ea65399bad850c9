"""Decision records: frozen evidence, review by role, and a trail nobody can rewrite."""

import threading
from decimal import Decimal

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import DatabaseError, IntegrityError, close_old_connections, connection, transaction

from apps.core.roles import Role
from apps.decisions.models import AppendOnlyError, Approval, AuditEvent, DecisionRecord
from apps.decisions.services import (
    TransitionRefused,
    decision_record_approve,
    decision_record_reject,
    decision_record_submit,
    decision_record_supersede,
)
from apps.decisions.snapshot import content_hash
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from apps.quotes.services import quote_update
from tests.factories.briefs import BriefFactory
from tests.factories.decisions import make_record
from tests.factories.quotes import QuoteFactory

Status = DecisionRecord.Status


@pytest.fixture
def people(make_user):
    return {
        "author": make_user(Role.PROCUREMENT, username="author"),
        "platform": make_user(Role.PLATFORM, username="plat"),
        "finance": make_user(Role.FINANCE, username="fin"),
        "procurement": make_user(Role.PROCUREMENT, username="proc"),
    }


@pytest.fixture
def draft(db, catalog, team, people):
    brief = BriefFactory(team=team)
    quote = QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    candidate_table_recompute(brief_id=brief.pk)
    return make_record(brief=brief, user=people["author"], quote=quote)


def approve_all(record, people):
    record = decision_record_submit(record=record, user=people["author"])
    for role in (Role.PLATFORM, Role.FINANCE, Role.PROCUREMENT):
        record = decision_record_approve(record=record, user=people[role.value], role=role)
    return record


@pytest.mark.django_db
class TestFrozenEvidence:
    def test_a_new_record_freezes_the_candidate_table_with_a_hash(self, draft):
        assert draft.status == Status.DRAFT
        rows = draft.snapshot["candidate_table"]["rows"]
        assert rows and rows[0]["quote_id"] == draft.chosen_quote_id
        assert draft.content_hash == content_hash(draft.snapshot)
        assert len(draft.content_hash) == 64

    def test_the_hash_survives_a_round_trip_through_the_database(self, draft):
        stored = DecisionRecord.objects.get(pk=draft.pk)
        assert content_hash(stored.snapshot) == stored.content_hash

    def test_later_quote_changes_do_not_change_a_frozen_record(self, draft, people):
        record = approve_all(draft, people)
        price = record.snapshot["quotes"][0]["hourly_price_per_gpu"]
        quote_update(quote=record.chosen_quote, hourly_price_per_gpu=Decimal("9.00"))
        record.refresh_from_db()
        assert record.snapshot["quotes"][0]["hourly_price_per_gpu"] == price
        assert content_hash(record.snapshot) == record.content_hash


@pytest.mark.django_db
class TestReviewByRole:
    def test_approved_only_when_every_required_role_approves(self, draft, people):
        record = decision_record_submit(record=draft, user=people["author"])
        record = decision_record_approve(record=record, user=people["platform"], role="platform")
        record = decision_record_approve(record=record, user=people["finance"], role="finance")
        assert record.status == Status.IN_REVIEW
        record = decision_record_approve(
            record=record, user=people["procurement"], role="procurement"
        )
        assert record.status == Status.APPROVED

    def test_one_rejection_rejects_with_a_reason(self, draft, people):
        record = decision_record_submit(record=draft, user=people["author"])
        with pytest.raises(ValidationError):
            decision_record_reject(record=record, user=people["finance"], role="finance", reason="")
        record = decision_record_reject(
            record=record, user=people["finance"], role="finance", reason="too dear"
        )
        assert record.status == Status.REJECTED
        assert Approval.objects.get(record=record).reason == "too dear"

    def test_only_members_of_a_role_can_approve_for_it(self, draft, people):
        record = decision_record_submit(record=draft, user=people["author"])
        with pytest.raises(PermissionDenied):
            decision_record_approve(record=record, user=people["platform"], role="finance")

    def test_the_submitter_cannot_approve_for_the_role_they_submitted_under(self, draft, people):
        record = decision_record_submit(record=draft, user=people["author"], role="procurement")
        with pytest.raises(PermissionDenied, match="another person must approve for procurement"):
            decision_record_approve(record=record, user=people["author"], role="procurement")
        record = decision_record_approve(
            record=record, user=people["procurement"], role="procurement"
        )
        assert record.approvals.count() == 1

    def test_an_approval_of_a_record_that_changed_state_is_refused_clearly(self, draft, people):
        record = decision_record_submit(record=draft, user=people["author"])
        decision_record_reject(record=record, user=people["finance"], role="finance", reason="no")
        with pytest.raises(TransitionRefused, match="the record is REJECTED, not IN_REVIEW"):
            decision_record_approve(record=record, user=people["platform"], role="platform")

    def test_a_role_decides_once(self, draft, people, make_user):
        record = decision_record_submit(record=draft, user=people["author"])
        decision_record_approve(record=record, user=people["platform"], role="platform")
        other = make_user(Role.PLATFORM, username="plat2")
        with pytest.raises(TransitionRefused, match="already decided"):
            decision_record_approve(record=record, user=other, role="platform")

    def test_every_step_is_in_the_audit_trail(self, draft, people):
        record = approve_all(draft, people)
        trail = list(record.audit_events.order_by("id").values_list("action", "to_status"))
        assert trail == [
            ("CREATE", "DRAFT"),
            ("SUBMIT", "IN_REVIEW"),
            ("APPROVE", "IN_REVIEW"),
            ("APPROVE", "IN_REVIEW"),
            ("APPROVE", "IN_REVIEW"),
            ("APPROVED", "APPROVED"),
        ]

    def test_supersede_opens_a_draft_and_retires_the_old_record_once_it_is_approved(
        self, draft, people
    ):
        old = approve_all(draft, people)
        new = decision_record_supersede(record=old, user=people["author"])
        old.refresh_from_db()
        assert (new.status, old.status) == (Status.DRAFT, Status.APPROVED)
        approve_all(new, people)
        old.refresh_from_db()
        assert old.status == Status.SUPERSEDED
        assert old.superseded_by_id == new.pk


@pytest.mark.django_db
class TestImmutability:
    def test_the_snapshot_of_a_record_in_review_cannot_change(self, draft, people):
        record = decision_record_submit(record=draft, user=people["author"])
        with pytest.raises((IntegrityError, DatabaseError)), transaction.atomic():
            DecisionRecord.objects.filter(pk=record.pk).update(snapshot={"forged": True})

    def test_an_approved_record_cannot_change_except_by_supersede(self, draft, people):
        record = approve_all(draft, people)
        with pytest.raises((IntegrityError, DatabaseError)), transaction.atomic():
            DecisionRecord.objects.filter(pk=record.pk).update(rationale="rewritten")
        with pytest.raises((IntegrityError, DatabaseError)), transaction.atomic():
            DecisionRecord.objects.filter(pk=record.pk).update(status="DRAFT")

    def test_audit_events_cannot_be_updated_or_deleted(self, draft):
        event = AuditEvent.objects.filter(record=draft).first()
        with pytest.raises(AppendOnlyError):
            AuditEvent.objects.filter(pk=event.pk).update(reason="x")
        with pytest.raises(AppendOnlyError):
            event.delete()
        sql = "UPDATE decisions_auditevent SET reason = 'forged' WHERE id = %s"
        with (
            pytest.raises((IntegrityError, DatabaseError)),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(sql, [event.pk])

    def test_a_record_past_draft_cannot_be_deleted(self, draft, people):
        record = decision_record_submit(record=draft, user=people["author"])
        with pytest.raises(AppendOnlyError):
            record.delete()
        with pytest.raises(AppendOnlyError):
            DecisionRecord.objects.filter(pk=record.pk).delete()
        if connection.vendor == "postgresql":  # raw SQL too (SQLite: the ORM guard only)
            sql = "DELETE FROM decisions_decisionrecord WHERE id = %s"
            with (
                pytest.raises((IntegrityError, DatabaseError)),
                transaction.atomic(),
                connection.cursor() as cursor,
            ):
                cursor.execute(sql, [record.pk])


@pytest.mark.django_db(transaction=True)
class TestConcurrentApprovals:
    def test_two_approvals_at_the_same_moment_both_count_once(self, draft, people):
        if connection.vendor != "postgresql":
            pytest.skip("row locks need PostgreSQL; SQLite serialises writers anyway")
        record = decision_record_submit(record=draft, user=people["author"])
        decision_record_approve(record=record, user=people["procurement"], role="procurement")
        barrier = threading.Barrier(2)
        errors: list[Exception] = []

        def approve(role):
            try:
                barrier.wait()
                decision_record_approve(record=record, user=people[role], role=role)
            except Exception as exc:  # collected and asserted below
                errors.append(exc)
            finally:
                close_old_connections()

        threads = [threading.Thread(target=approve, args=(r,)) for r in ("platform", "finance")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        record.refresh_from_db()
        assert record.status == Status.APPROVED
        assert record.audit_events.filter(action="APPROVED").count() == 1
