"""The record is evidence (issue 27): the chosen quote's checklist evidence (text, link, file
name, size and SHA-256) is frozen with the record; a "No" or "Partial" on a must-have question
is a warning that every approval acknowledges in words; approvals keep their comment."""

import hashlib
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.core.roles import Role
from apps.decisions.checklist import MUST_HAVE
from apps.decisions.models import Approval, DecisionRecord
from apps.decisions.selectors import checklist_warnings, decision_record_report, inputs_changed
from apps.decisions.services import (
    checklist_answer_set,
    decision_record_approve,
    decision_record_submit,
)
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.decisions import make_record
from tests.factories.quotes import QuoteFactory

pytestmark = pytest.mark.django_db

SOC2 = b"%PDF-1.4 SOC 2 type II report, excerpt\n"


@pytest.fixture
def people(make_user):
    return {
        "author": make_user(Role.PROCUREMENT, username="author"),
        "platform": make_user(Role.PLATFORM, username="plat"),
        "finance": make_user(Role.FINANCE, username="fin"),
        "procurement": make_user(Role.PROCUREMENT, username="proc"),
    }


@pytest.fixture
def quote(catalog):
    return QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))


@pytest.fixture
def brief(team, quote):
    brief = BriefFactory(team=team)
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    candidate_table_recompute(brief_id=brief.pk)
    return brief


def answer(quote, user, question, value, **evidence):
    team = user.teams.order_by("name").first()
    return checklist_answer_set(
        quote=quote, question=question, answer=value, user=user, team=team, **evidence
    )


def submitted(brief, quote, people):
    record = make_record(brief=brief, user=people["author"], quote=quote)
    return decision_record_submit(record=record, user=people["author"], role="procurement")


class TestEvidenceInTheSnapshot:
    def test_the_files_name_size_and_hash_are_frozen_with_text_and_link(self, brief, quote, people):
        answer(
            quote, people["author"], "se_compliance", "YES",
            evidence_text="SOC 2 type II, 2026", evidence_link="https://trust.example/soc2",
            evidence_file=SimpleUploadedFile("SOC2 report.pdf", SOC2),
        )  # fmt: skip
        record = make_record(brief=brief, user=people["author"], quote=quote)
        frozen = {a["question"]: a for a in record.snapshot["checklist"]["answers"]}
        soc2 = frozen["se_compliance"]
        assert soc2["evidence_text"] == "SOC 2 type II, 2026"
        assert soc2["evidence_link"] == "https://trust.example/soc2"
        assert soc2["evidence_file"] == {
            "name": "SOC2_report.pdf",
            "bytes": len(SOC2),
            "sha256": hashlib.sha256(SOC2).hexdigest(),
        }
        assert soc2["evidence"] == "SOC 2 type II, 2026"  # what records frozen before held
        assert frozen["hw_exact_sku"]["evidence_file"] is None

    def test_a_record_frozen_before_the_fields_existed_does_not_read_as_changed(
        self, brief, quote, people
    ):
        answer(quote, people["author"], "co_sla", "YES", evidence_text="SLA 99.9 %")
        record = make_record(brief=brief, user=people["author"], quote=quote)
        old = {
            k: v for k, v in record.snapshot["checklist"].items() if k != "answers"
        } | {
            "answers": [
                {k: a[k] for k in ("question", "section", "text", "answer", "evidence",
                                   "answered_by")}
                for a in record.snapshot["checklist"]["answers"]
            ]
        }  # fmt: skip
        DecisionRecord.objects.filter(pk=record.pk).update(
            snapshot={**record.snapshot, "checklist": old}
        )
        record.refresh_from_db()
        assert not any("checklist" in change for change in inputs_changed(record))
        answer(quote, people["author"], "co_sla", "PARTIAL", evidence_text="SLA 99.9 %")
        assert any("checklist" in change for change in inputs_changed(record))


class TestMustHaveWarnings:
    def test_the_must_have_questions_are_certifications_data_residency_and_the_sla(self):
        assert {"se_compliance", "se_data", "co_sla"} == MUST_HAVE

    @pytest.mark.parametrize("value", ["NO", "PARTIAL"])
    def test_a_short_answer_to_a_must_have_is_a_warning(self, brief, quote, people, value):
        answer(quote, people["author"], "se_compliance", value, evidence_text="ISO only")
        answer(quote, people["author"], "hw_network", "NO")  # not a must-have
        record = submitted(brief, quote, people)
        warnings = checklist_warnings(record)
        assert [(w["question"], w["answer"]) for w in warnings] == [("se_compliance", value)]
        assert decision_record_report(record)["checklist_warnings"] == warnings

    def test_yes_and_not_applicable_are_no_warning(self, brief, quote, people):
        answer(quote, people["author"], "se_compliance", "YES")
        answer(quote, people["author"], "se_data", "NOT_APPLICABLE")
        assert checklist_warnings(submitted(brief, quote, people)) == []

    def test_approval_is_refused_until_the_warning_is_acknowledged_with_a_reason(
        self, brief, quote, people
    ):
        answer(quote, people["author"], "se_data", "NO", evidence_text="US only")
        record = submitted(brief, quote, people)
        with pytest.raises(ValidationError) as refused:
            decision_record_approve(record=record, user=people["platform"], role="platform")
        assert "acknowledge_warnings" in refused.value.message_dict
        with pytest.raises(ValidationError) as refused:
            decision_record_approve(
                record=record, user=people["platform"], role="platform",
                acknowledge_warnings=True,
            )  # fmt: skip
        assert "comment" in refused.value.message_dict
        assert not Approval.objects.filter(record=record).exists()
        decision_record_approve(
            record=record, user=people["platform"], role="platform",
            acknowledge_warnings=True, comment="EU data stays in Frankfurt; US only for logs.",
        )  # fmt: skip
        approval = Approval.objects.get(record=record)
        assert approval.acknowledged_warnings == ["se_data"]
        assert approval.reason == "EU data stays in Frankfurt; US only for logs."


class TestApprovalComments:
    def test_an_approval_keeps_its_comment_for_the_record_and_the_pdf(self, brief, quote, people):
        record = submitted(brief, quote, people)
        decision_record_approve(
            record=record, user=people["finance"], role="finance",
            comment="Within the 2027 budget line.",
        )  # fmt: skip
        approvals = decision_record_report(record)["approvals"]
        assert [(a["role"], a["reason"]) for a in approvals] == [
            ("finance", "Within the 2027 budget line.")
        ]
        assert approvals[0]["acknowledged_warnings"] == []

    def test_a_comment_is_optional_without_warnings(self, brief, quote, people):
        record = submitted(brief, quote, people)
        decision_record_approve(record=record, user=people["finance"], role="finance")
        assert Approval.objects.get(record=record).reason == ""


def test_approvals_stay_append_only_in_the_database_after_gaining_their_warnings_column(
    brief, quote, people
):
    """Migration 0006 adds a column to the approvals table; its triggers must survive it (a
    SQLite table rebuilt for a column with a default would lose them)."""
    from django.db import DatabaseError, IntegrityError, connection, transaction

    record = submitted(brief, quote, people)
    decision_record_approve(record=record, user=people["finance"], role="finance")
    approval = Approval.objects.get(record=record)
    sql = "UPDATE decisions_approval SET reason = 'forged' WHERE id = %s"
    with (
        pytest.raises((IntegrityError, DatabaseError)),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql, [approval.pk])
