"""/api/v1/decision-records/ and /api/v1/checklist/quotes/<id>/: the review workflow with exact
JSON, refused transitions (409), roles (403), team scoping (404), integrity and exports."""

import csv
import io
from decimal import Decimal

import pytest
from django.db import connection
from pypdf import PdfReader

from apps.core.roles import Role
from apps.decisions.models import ChecklistAnswer, DecisionRecord
from apps.finance.services import candidate_tables_request_recompute
from apps.quotes.services import quote_update
from tests.factories.briefs import BriefFactory
from tests.factories.decisions import make_record
from tests.factories.quotes import ApiRouteFactory, QuoteFactory

pytestmark = pytest.mark.django_db

URL = "/api/v1/decision-records/"
RECORD_KEYS = {
    "id", "title", "status", "brief", "brief_name", "team", "chosen_quote", "chosen_api_route",
    "chosen_plan",
    "chosen", "capacity_model", "rationale", "alternatives", "acceptance_criteria",
    "required_roles", "content_hash", "engine_version", "frozen_at", "created_by",
    "submitted_by", "submitted_as", "replaces", "superseded_by", "created_at", "updated_at",
}  # fmt: skip
DETAIL_KEYS = RECORD_KEYS | {
    "alternatives_described", "snapshot_summary", "approvals", "audit_trail", "inputs_changed",
}  # fmt: skip


@pytest.fixture
def setup(catalog, team, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        brief = BriefFactory(team=team)
        quote = QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
        other = QuoteFactory(pricing_term="RESERVED_1Y", hourly_price_per_gpu=Decimal("1.90"))
        route = ApiRouteFactory(model_preset="llama-3.1-8b")
        candidate_tables_request_recompute(brief_ids=[brief.pk])
    return {"brief": brief, "quote": quote, "other": other, "route": route}


@pytest.fixture
def people(token_client):
    return {
        "author": token_client(Role.PROCUREMENT),
        "platform": token_client(Role.PLATFORM),
        "finance": token_client(Role.FINANCE),
        "procurement": token_client(Role.PROCUREMENT),
        "reader": token_client(Role.API_CLIENT),
    }


def create(client, setup, **overrides):
    body = {
        "brief": setup["brief"].pk,
        "chosen_quote": setup["quote"].pk,
        "capacity_model": "RENT_ON_DEMAND",
        "rationale": "Cheapest that meets the latency target.",
        "alternatives": [{"quote_id": setup["other"].pk}, {"api_route_id": setup["route"].pk}],
        **overrides,
    }
    return client.post(URL, body, format="json")


def approve_all(record_id, people):
    for role in ("platform", "finance", "procurement"):
        response = people[role].post(f"{URL}{record_id}/approve", {"role": role}, format="json")
        assert response.status_code == 200, response.json()
    return response


class TestTheWorkflow:
    def test_open_submit_and_approve_by_every_role(self, setup, people):
        response = create(people["author"], setup)
        assert response.status_code == 201, response.json()
        body = response.json()
        assert set(body) == DETAIL_KEYS
        assert body["status"] == "DRAFT"
        assert body["chosen_quote"] == setup["quote"].pk
        assert body["chosen_api_route"] is None
        assert body["chosen"]["kind"] == "quote"
        assert body["chosen"]["provider"] == setup["quote"].provider.name
        assert len(body["content_hash"]) == 64
        assert body["required_roles"] == ["platform", "finance", "procurement"]
        assert body["alternatives"] == [
            {"quote_id": setup["other"].pk, "api_route_id": None},
            {"quote_id": None, "api_route_id": setup["route"].pk},
        ]
        assert body["inputs_changed"] == []
        summary = body["snapshot_summary"]
        assert summary["candidates"] == 3
        assert summary["chosen_row"]["quote_id"] == setup["quote"].pk
        assert summary["checklist"] == {"answered": 0, "total": 17}
        assert [e["action"] for e in body["audit_trail"]] == ["CREATE"]
        assert set(body["audit_trail"][0]) == {
            "action", "from_status", "to_status", "role", "actor", "reason", "created_at",
        }  # fmt: skip
        record_id = body["id"]

        submitted = people["author"].post(f"{URL}{record_id}/submit", {}, format="json")
        assert submitted.status_code == 200
        assert (submitted.json()["status"], submitted.json()["submitted_as"]) == (
            "IN_REVIEW",
            "procurement",
        )
        approved = approve_all(record_id, people).json()
        assert approved["status"] == "APPROVED"
        assert [(a["role"], a["verdict"]) for a in approved["approvals"]] == [
            ("platform", "APPROVE"),
            ("finance", "APPROVE"),
            ("procurement", "APPROVE"),
        ]
        assert set(approved["approvals"][0]) == {
            "role", "verdict", "user", "reason", "acknowledged_warnings", "created_at",
        }  # fmt: skip
        assert [e["action"] for e in approved["audit_trail"]] == [
            "CREATE", "SUBMIT", "APPROVE", "APPROVE", "APPROVE", "APPROVED",
        ]  # fmt: skip

    def test_an_api_route_can_be_chosen(self, setup, people):
        response = create(
            people["author"],
            setup,
            chosen_quote=None,
            chosen_api_route=setup["route"].pk,
            capacity_model="API",
            alternatives=[],
        )
        assert response.status_code == 201, response.json()
        assert response.json()["chosen"]["kind"] == "api_route"
        assert response.json()["snapshot_summary"]["chosen_row"]["api_route_id"] == (
            setup["route"].pk
        )

    def test_the_list_is_paginated_and_team_scoped(self, setup, people, make_user, other_team):
        create(people["author"], setup)
        make_record(
            brief=BriefFactory(team=other_team),
            user=make_user(Role.PLATFORM, teams=[other_team]),
            quote=setup["quote"],
        )
        body = people["reader"].get(URL).json()
        assert body["count"] == 1
        assert set(body["results"][0]) == RECORD_KEYS

    def test_reject_then_approve_is_a_409_with_a_clear_detail(self, setup, people):
        record_id = create(people["author"], setup).json()["id"]
        people["author"].post(f"{URL}{record_id}/submit", {}, format="json")
        rejected = people["finance"].post(
            f"{URL}{record_id}/reject", {"role": "finance", "reason": "too dear"}, format="json"
        )
        assert rejected.json()["status"] == "REJECTED"
        response = people["platform"].post(
            f"{URL}{record_id}/approve", {"role": "platform"}, format="json"
        )
        assert response.status_code == 409
        assert response.json() == {
            "detail": "Cannot approve: the record is REJECTED, not IN_REVIEW. "
            "It may have changed since you loaded it; reload and check."
        }

    def test_a_rejection_needs_a_reason(self, setup, people):
        record_id = create(people["author"], setup).json()["id"]
        people["author"].post(f"{URL}{record_id}/submit", {}, format="json")
        response = people["finance"].post(
            f"{URL}{record_id}/reject", {"role": "finance", "reason": " "}, format="json"
        )
        assert response.status_code == 400
        assert "reason" in response.json()["errors"]

    def test_supersede_answers_201_with_the_new_draft(self, setup, people):
        record_id = create(people["author"], setup).json()["id"]
        people["author"].post(f"{URL}{record_id}/submit", {}, format="json")
        approve_all(record_id, people)
        response = people["author"].post(f"{URL}{record_id}/supersede", format="json")
        assert response.status_code == 201
        new = response.json()
        assert (new["status"], new["replaces"]) == ("DRAFT", record_id)
        again = people["author"].post(f"{URL}{record_id}/supersede", format="json")
        assert again.status_code == 409

    def test_refresh_refreezes_a_draft_only(self, setup, people):
        record_id = create(people["author"], setup).json()["id"]
        response = people["author"].post(f"{URL}{record_id}/refresh", format="json")
        assert response.status_code == 200
        assert response.json()["audit_trail"][-1]["action"] == "REFRESH"
        people["author"].post(f"{URL}{record_id}/submit", {}, format="json")
        assert people["author"].post(f"{URL}{record_id}/refresh").status_code == 409


class TestValidation:
    def test_exactly_one_candidate(self, setup, people):
        both = create(people["author"], setup, chosen_api_route=setup["route"].pk)
        neither = create(people["author"], setup, chosen_quote=None)
        for response in (both, neither):
            assert response.status_code == 400
            assert "chosen_quote" in response.json()["errors"]

    def test_unknown_capacity_model_and_role_are_field_errors(self, setup, people):
        response = create(people["author"], setup, capacity_model="LEASE")
        assert response.status_code == 400
        assert "capacity_model" in response.json()["errors"]
        response = create(people["author"], setup, required_roles=["api-client"])
        assert response.status_code == 400
        assert "required_roles" in response.json()["errors"]

    def test_a_quote_confidential_to_another_team_is_not_found(self, setup, people, other_team):
        secret = QuoteFactory(confidential_to=other_team)
        response = create(people["author"], setup, chosen_quote=secret.pk)
        assert response.status_code == 400
        assert response.json()["errors"] == {"chosen_quote": [f"no such quote #{secret.pk}"]}
        response = create(people["author"], setup, alternatives=[{"quote_id": secret.pk}])
        assert response.status_code == 400

    def test_a_brief_of_another_team_is_404(self, setup, people, other_team):
        response = create(people["author"], setup, brief=BriefFactory(team=other_team).pk)
        assert response.status_code == 404
        assert DecisionRecord.objects.count() == 0


class TestRoles:
    def test_an_api_client_reads_but_cannot_write(self, setup, people):
        record_id = create(people["author"], setup).json()["id"]
        reader = people["reader"]
        assert reader.get(f"{URL}{record_id}/").status_code == 200
        assert create(reader, setup).status_code == 403
        for action in ("submit", "refresh", "supersede"):
            assert reader.post(f"{URL}{record_id}/{action}", {}, format="json").status_code == 403
        assert reader.patch(f"{URL}{record_id}/", {"title": "x"}, format="json").status_code == 403
        assert (
            reader.post(f"{URL}{record_id}/approve", {"role": "finance"}, format="json").status_code
            == 403
        )

    def test_only_members_of_a_role_decide_for_it(self, setup, people):
        record_id = create(people["author"], setup).json()["id"]
        people["author"].post(f"{URL}{record_id}/submit", {}, format="json")
        response = people["platform"].post(
            f"{URL}{record_id}/approve", {"role": "finance"}, format="json"
        )
        assert response.status_code == 403
        assert response.json() == {"detail": "Only members of the finance group can decide for it."}

    def test_the_submitter_cannot_approve_for_the_role_they_submitted_as(self, setup, people):
        record_id = create(people["author"], setup).json()["id"]
        people["author"].post(f"{URL}{record_id}/submit", {"role": "procurement"}, format="json")
        response = people["author"].post(
            f"{URL}{record_id}/approve", {"role": "procurement"}, format="json"
        )
        assert response.status_code == 403
        assert response.json() == {
            "detail": "You submitted this record as procurement; "
            "another person must approve for procurement."
        }

    def test_another_team_gets_404_everywhere(
        self, setup, people, token_client, make_user, other_team
    ):
        record_id = create(people["author"], setup).json()["id"]
        stranger = token_client(user=make_user(Role.FINANCE, teams=[other_team]))
        for path in ("", "verify", "export.csv", "export.pdf"):
            assert stranger.get(f"{URL}{record_id}/{path}").status_code == 404
        for action in ("submit", "approve", "reject", "supersede", "refresh"):
            response = stranger.post(
                f"{URL}{record_id}/{action}", {"role": "finance"}, format="json"
            )
            assert response.status_code == 404
        assert (
            stranger.patch(f"{URL}{record_id}/", {"title": "x"}, format="json").status_code == 404
        )


class TestImmutability:
    def test_a_draft_can_be_edited(self, setup, people):
        record_id = create(people["author"], setup).json()["id"]
        response = people["author"].patch(
            f"{URL}{record_id}/",
            {"rationale": "Reworded.", "capacity_model": "RESERVE_1Y"},
            format="json",
        )
        assert response.status_code == 200
        assert (response.json()["rationale"], response.json()["capacity_model"]) == (
            "Reworded.",
            "RESERVE_1Y",
        )

    def test_a_record_in_review_cannot_be_edited_and_nothing_changes(self, setup, people):
        record_id = create(people["author"], setup).json()["id"]
        people["author"].post(f"{URL}{record_id}/submit", {}, format="json")
        before = DecisionRecord.objects.get(pk=record_id)
        response = people["author"].patch(
            f"{URL}{record_id}/", {"rationale": "Rewritten later."}, format="json"
        )
        assert response.status_code == 409
        assert response.json()["detail"].startswith("Cannot edit: the record is IN_REVIEW")
        after = DecisionRecord.objects.get(pk=record_id)
        assert (after.rationale, after.content_hash, after.updated_at) == (
            before.rationale,
            before.content_hash,
            before.updated_at,
        )
        assert after.audit_events.filter(action="EDIT").count() == 0


class TestIntegrity:
    def test_verify_is_intact_until_the_stored_snapshot_is_tampered_with(self, setup, people):
        body = create(people["author"], setup).json()
        url = f"{URL}{body['id']}/verify"
        assert people["reader"].get(url).json() == {
            "intact": True,
            "content_hash": body["content_hash"],
            "computed_hash": body["content_hash"],
        }
        with connection.cursor() as cursor:  # DRAFT snapshots are not trigger-protected
            cursor.execute(
                "UPDATE decisions_decisionrecord SET snapshot = %s WHERE id = %s",
                ['{"forged": true}', body["id"]],
            )
        result = people["reader"].get(url).json()
        assert result["intact"] is False
        assert result["content_hash"] == body["content_hash"]
        assert result["computed_hash"] != body["content_hash"]

    def test_inputs_changed_after_a_quote_edit(
        self, setup, people, django_capture_on_commit_callbacks
    ):
        record_id = create(people["author"], setup).json()["id"]
        with django_capture_on_commit_callbacks(execute=True):
            quote_update(quote=setup["quote"], hourly_price_per_gpu=Decimal("3.10"))
        changed = people["reader"].get(f"{URL}{record_id}/").json()["inputs_changed"]
        quote = setup["quote"]
        assert changed == [
            f"the quote {quote.provider.name} · {quote.gpu.name} · On demand · {quote.region} "
            "changed since freezing (version 1 → 2)"
        ]


class TestExports:
    def test_the_pdf_is_a_real_pdf_with_the_hash_and_the_chosen_provider(self, setup, people):
        body = create(people["author"], setup).json()
        response = people["reader"].get(f"{URL}{body['id']}/export.pdf")
        assert response.status_code == 200
        assert response["Content-Type"] == "application/pdf"
        data = response.content
        assert data.startswith(b"%PDF")
        text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(data)).pages)
        assert body["content_hash"] in text
        assert setup["quote"].provider.name in text

    def test_the_csv_is_the_frozen_table_with_exact_decimals(self, setup, people):
        body = create(people["author"], setup).json()
        response = people["reader"].get(f"{URL}{body['id']}/export.csv")
        assert response["Content-Type"] == "text/csv; charset=utf-8"
        rows = list(csv.DictReader(io.StringIO(response.content.decode())))
        frozen = DecisionRecord.objects.get(pk=body["id"]).snapshot["candidate_table"]["rows"]
        assert len(rows) == len(frozen) == 3
        for row, original in zip(rows, frozen, strict=True):
            assert Decimal(row["monthly_cost"]) == Decimal(original["monthly_cost"])
            assert Decimal(row["effective_unit_cost"]) == Decimal(original["effective_unit_cost"])


class TestChecklist:
    def test_lists_every_question_by_section_with_completeness(self, setup, people):
        body = people["reader"].get(f"/api/v1/checklist/quotes/{setup['quote'].pk}/").json()
        assert (body["answered"], body["total"], body["complete"]) == (0, 17, False)
        assert [s["section"] for s in body["sections"]] == [
            "HARDWARE", "SOFTWARE", "COMMERCIAL", "SECURITY",
        ]  # fmt: skip
        assert sum(len(s["questions"]) for s in body["sections"]) == 17

    def test_procurement_answers_a_question(self, setup, people):
        url = f"/api/v1/checklist/quotes/{setup['quote'].pk}/"
        answer = {
            "question": "hw_exact_sku",
            "answer": "YES",
            "evidence_text": "Order form, section 3",
            "evidence_link": "https://example.com/order.pdf",
        }
        response = people["procurement"].put(url, answer, format="json")
        assert response.status_code == 200
        assert response.json()["answered"] == 1
        first = response.json()["sections"][0]["questions"][0]
        assert (first["answer"], first["answered_by"]) == (
            "YES",
            people["procurement"].user.username,
        )
        again = people["procurement"].post(url, {**answer, "answer": "PARTIAL"}, format="json")
        assert again.json()["answered"] == 1
        assert ChecklistAnswer.objects.get().answer == "PARTIAL"

    def test_only_procurement_writes_and_bad_answers_are_field_errors(self, setup, people):
        url = f"/api/v1/checklist/quotes/{setup['quote'].pk}/"
        answer = {"question": "hw_exact_sku", "answer": "YES"}
        assert people["finance"].put(url, answer, format="json").status_code == 403
        bad = people["procurement"].put(url, {**answer, "answer": "MAYBE"}, format="json")
        assert bad.status_code == 400
        assert "answer" in bad.json()["errors"]
        unknown = people["procurement"].put(url, {**answer, "question": "nope"}, format="json")
        assert "question" in unknown.json()["errors"]
        for link in ("\t", " https://example.com/order.pdf"):  # the schema's format is of the text
            padded = people["procurement"].put(
                url, {**answer, "evidence_link": link}, format="json"
            )
            assert list(padded.json()["errors"]) == ["evidence_link"]
        assert not ChecklistAnswer.objects.exists()

    def test_a_confidential_quote_of_another_team_is_404(self, setup, people, other_team):
        secret = QuoteFactory(confidential_to=other_team)
        assert (
            people["procurement"].get(f"/api/v1/checklist/quotes/{secret.pk}/").status_code == 404
        )
