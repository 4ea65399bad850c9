"""Decision-record pages: open from the candidate table, review by role with POST-only
actions, immutability, the inputs-changed notice, exports, verify and the checklist."""

import io
import re
from decimal import Decimal

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from pypdf import PdfReader

from apps.core.roles import Role
from apps.decisions.models import ChecklistAnswer, DecisionRecord
from apps.decisions.services import (
    decision_record_approve,
    decision_record_submit,
)
from apps.finance.services import candidate_tables_request_recompute
from apps.quotes.services import quote_update
from tests.factories.briefs import BriefFactory
from tests.factories.decisions import make_record
from tests.factories.quotes import ApiRouteFactory, QuoteFactory

pytestmark = pytest.mark.django_db


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
def people(make_user):
    return {
        "author": make_user(Role.PROCUREMENT, username="author"),
        "platform": make_user(Role.PLATFORM, username="plat"),
        "finance": make_user(Role.FINANCE, username="fin"),
        "procurement": make_user(Role.PROCUREMENT, username="proc"),
        "reader": make_user(Role.API_CLIENT, username="reader"),
    }


@pytest.fixture
def draft(setup, people):
    return make_record(
        brief=setup["brief"],
        user=people["author"],
        quote=setup["quote"],
        rationale="Cheapest that meets the target.",
    )


def messages_of(response):
    return [str(m) for m in get_messages(response.wsgi_request)]


def approve_all(record, people):
    record = decision_record_submit(record=record, user=people["author"])
    for role in ("platform", "finance", "procurement"):
        record = decision_record_approve(record=record, user=people[role], role=role)
    return record


class TestTheCandidateTableLinksToDecisions:
    def test_each_row_links_to_open_a_record_and_shows_checklist_completeness(
        self, setup, client, people
    ):
        ChecklistAnswer.objects.create(
            quote=setup["quote"],
            question="hw_exact_sku",
            answer="YES",
            answered_by=people["author"],
            team=setup["brief"].team,
        )
        client.force_login(people["author"])
        response = client.get(f"/briefs/{setup['brief'].pk}/finance/")
        brief_id = setup["brief"].pk
        assert response.context["checklist_complete"] == {
            setup["quote"].pk: (1, 17),
            setup["other"].pk: (0, 17),
        }
        html = response.content.decode()
        assert f"/decisions/new/?brief={brief_id}&amp;quote={setup['quote'].pk}" in html
        assert f"/decisions/new/?brief={brief_id}&amp;route={setup['route'].pk}" in html
        assert "checklist 1/17" in html
        assert "checklist 0/17" in html


class TestOpenARecord:
    def test_the_form_opens_a_draft_with_frozen_evidence(self, setup, client, people):
        client.force_login(people["author"])
        url = f"/decisions/new/?brief={setup['brief'].pk}&quote={setup['quote'].pk}"
        page = client.get(url)
        assert page.status_code == 200
        assert page.context["form"]["capacity_model"].value() == "RENT_ON_DEMAND"
        assert len(page.context["form"].fields["alternatives"].choices) == 2
        response = client.post(
            url,
            {
                "title": "",
                "capacity_model": "RENT_ON_DEMAND",
                "rationale": "Cheapest.",
                "required_roles": ["platform", "finance"],
                "alternatives": [f"q{setup['other'].pk}"],
                "criteria_ttft_target_ms": "400",
                "criteria_acceptance_rate": "95",  # typed as a percentage
            },
        )
        record = DecisionRecord.objects.get()
        assert response.status_code == 302
        assert response["Location"] == f"/decisions/{record.pk}/"
        assert (record.status, record.chosen_quote_id) == ("DRAFT", setup["quote"].pk)
        assert record.required_roles == ["platform", "finance"]
        assert record.alternatives == [{"quote_id": setup["other"].pk, "api_route_id": None}]
        assert record.acceptance_criteria["ttft_target_ms"] == 400
        assert record.acceptance_criteria["acceptance_rate"] == "0.95"
        assert len(record.content_hash) == 64

    def test_an_api_route_is_chosen_with_the_api_capacity_model(self, setup, client, people):
        client.force_login(people["author"])
        page = client.get(f"/decisions/new/?brief={setup['brief'].pk}&route={setup['route'].pk}")
        assert page.context["form"]["capacity_model"].value() == "API"

    @pytest.mark.parametrize("odd", ["\u00b2", "\u0661", "9" * 30, "9" * 5000, "-1", ""])
    def test_an_odd_id_in_the_query_string_is_no_id_not_a_500(self, setup, client, people, odd):
        client.force_login(people["author"])
        assert client.get(f"/decisions/new/?brief={odd}").status_code == 302  # to the list
        page = client.get(f"/decisions/new/?brief={setup['brief'].pk}&quote={odd}")
        assert (page.status_code, page.url) == (302, f"/briefs/{setup['brief'].pk}/finance/")

    def test_no_required_role_is_a_field_error(self, setup, client, people):
        client.force_login(people["author"])
        url = f"/decisions/new/?brief={setup['brief'].pk}&quote={setup['quote'].pk}"
        response = client.post(url, {"capacity_model": "RENT_ON_DEMAND"})
        assert response.status_code == 200
        assert "required_roles" in response.context["form"].errors
        assert not DecisionRecord.objects.exists()

    def test_an_api_client_cannot_open_one_and_another_team_gets_404(
        self, setup, client, people, make_user, other_team
    ):
        url = f"/decisions/new/?brief={setup['brief'].pk}&quote={setup['quote'].pk}"
        client.force_login(people["reader"])
        assert client.get(url).status_code == 403
        client.force_login(make_user(Role.PROCUREMENT, teams=[other_team]))
        assert client.get(url).status_code == 404


class TestTheDetailPage:
    def test_shows_the_frozen_evidence_trail_hash_and_actions_by_role(self, draft, client, people):
        client.force_login(people["author"])
        response = client.get(f"/decisions/{draft.pk}/")
        assert response.status_code == 200
        html = response.content.decode()
        for fragment in (
            draft.content_hash,
            'id="frozen-table"',
            'id="audit-trail"',
            'id="approvals"',
            f"/decisions/{draft.pk}/verify/",
            f"/decisions/{draft.pk}/export.pdf",
            f"/decisions/{draft.pk}/export.csv",
            "Submit for review",
            "0/17",
        ):
            assert fragment in html
        assert [r["chosen"] for r in response.context["rows"]].count(True) == 1
        # Each frozen row says the GPUs it pays for (its term is in its label, not repeated).
        table = html[
            html.index('id="frozen-table"') : html.index(
                "</table>", html.index('id="frozen-table"')
            )
        ]
        assert "<th>GPUs paid</th>" in table and "<th>Term</th>" not in table
        paid_rows = [
            r for r in response.context["rows"] if (r.get("configuration") or {}).get("paid_gpus")
        ]
        assert paid_rows
        for row in paid_rows:
            paid = row["configuration"]["paid_gpus"]
            assert row["gpus_paid"].startswith(f"{paid} GPU"), row["gpus_paid"]
            assert f"<td>{row['gpus_paid']}</td>" in table
        assert response.context["figures"][0][0] == "decision-unit-cost-chart"
        assert 'style="' not in html
        assert "<script>" not in html

    def test_reviewers_see_approve_and_reject_only_for_roles_they_hold(self, draft, client, people):
        decision_record_submit(record=draft, user=people["author"], role="procurement")
        client.force_login(people["finance"])
        html = client.get(f"/decisions/{draft.pk}/").content.decode()
        assert "Approve as Finance" in html and "Reject as Finance" in html
        assert "Approve as Platform" not in html
        client.force_login(people["author"])  # the submitter, as procurement
        html = client.get(f"/decisions/{draft.pk}/").content.decode()
        assert "Approve as Procurement" not in html

    def test_the_whole_review_through_post_actions(self, draft, client, people):
        client.force_login(people["author"])
        response = client.post(f"/decisions/{draft.pk}/submit/", {"role": "procurement"})
        assert response.status_code == 302
        for role in ("platform", "finance", "procurement"):
            client.force_login(people[role])
            client.post(f"/decisions/{draft.pk}/approve/", {"role": role})
        draft.refresh_from_db()
        assert draft.status == "APPROVED"
        client.force_login(people["author"])
        response = client.post(f"/decisions/{draft.pk}/supersede/")
        new = DecisionRecord.objects.get(replaces=draft)
        assert response["Location"] == f"/decisions/{new.pk}/"

    def test_get_never_changes_state(self, draft, client, people):
        client.force_login(people["author"])
        for action in ("submit", "approve", "reject", "supersede", "refresh"):
            assert client.get(f"/decisions/{draft.pk}/{action}/").status_code == 405
        draft.refresh_from_db()
        assert draft.status == "DRAFT"
        assert draft.audit_events.count() == 1

    def test_approving_a_rejected_record_is_a_message_and_nothing_changes(
        self, draft, client, people
    ):
        decision_record_submit(record=draft, user=people["author"])
        client.force_login(people["finance"])
        client.post(f"/decisions/{draft.pk}/reject/", {"role": "finance", "reason": "too dear"})
        client.force_login(people["platform"])
        response = client.post(f"/decisions/{draft.pk}/approve/", {"role": "platform"})
        assert response.status_code == 302
        assert any("the record is REJECTED, not IN_REVIEW" in m for m in messages_of(response))
        draft.refresh_from_db()
        assert draft.status == "REJECTED"
        assert draft.approvals.count() == 1

    def test_approving_for_a_role_not_held_is_403(self, draft, client, people):
        decision_record_submit(record=draft, user=people["author"])
        client.force_login(people["platform"])
        assert (
            client.post(f"/decisions/{draft.pk}/approve/", {"role": "finance"}).status_code == 403
        )

    def test_an_api_client_reads_but_cannot_act(self, draft, client, people):
        client.force_login(people["reader"])
        html = client.get(f"/decisions/{draft.pk}/").content.decode()
        assert "Submit for review" not in html
        assert client.post(f"/decisions/{draft.pk}/submit/").status_code == 403

    def test_another_team_gets_404(self, draft, client, make_user, other_team):
        client.force_login(make_user(Role.PROCUREMENT, teams=[other_team]))
        for path in ("", "verify/", "export.pdf", "export.csv", "edit/"):
            assert client.get(f"/decisions/{draft.pk}/{path}").status_code == 404
        assert client.post(f"/decisions/{draft.pk}/submit/").status_code == 404
        assert client.get("/decisions/").context["records"] == []


class TestImmutabilityOnPages:
    def test_a_draft_can_be_edited(self, draft, client, people):
        client.force_login(people["author"])
        response = client.post(
            f"/decisions/{draft.pk}/edit/",
            {
                "title": "Renamed",
                "capacity_model": "RESERVE_1Y",
                "rationale": "Reworded.",
                "required_roles": ["platform", "finance", "procurement"],
            },
        )
        assert response.status_code == 302
        draft.refresh_from_db()
        assert (draft.title, draft.capacity_model, draft.rationale) == (
            "Renamed",
            "RESERVE_1Y",
            "Reworded.",
        )

    def test_a_record_in_review_cannot_be_edited_and_nothing_changes(self, draft, client, people):
        record = decision_record_submit(record=draft, user=people["author"])
        before = (record.rationale, record.content_hash, record.updated_at)
        client.force_login(people["author"])
        html = client.get(f"/decisions/{record.pk}/").content.decode()
        assert "Edit draft" not in html
        response = client.post(
            f"/decisions/{record.pk}/edit/",
            {"capacity_model": "BUY", "rationale": "Rewritten.", "required_roles": ["finance"]},
        )
        assert response.status_code == 302
        assert any("Only a DRAFT can be edited" in m for m in messages_of(response))
        assert client.post(f"/decisions/{record.pk}/refresh/").status_code == 302
        record.refresh_from_db()
        assert (record.rationale, record.content_hash, record.updated_at) == before


class TestInputsChanged:
    def test_an_approved_record_says_its_inputs_changed_and_offers_supersede(
        self, draft, client, people, django_capture_on_commit_callbacks
    ):
        record = approve_all(draft, people)
        with django_capture_on_commit_callbacks(execute=True):
            quote_update(quote=record.chosen_quote, hourly_price_per_gpu=Decimal("3.10"))
        client.force_login(people["author"])
        response = client.get(f"/decisions/{record.pk}/")
        quote = record.chosen_quote
        assert response.context["inputs_changed"] == [
            f"the quote {quote.provider.name} · {quote.gpu.name} · On demand · {quote.region} "
            "changed since freezing (version 1 → 2)"
        ]
        html = response.content.decode()
        assert "Inputs have changed since freezing" in html
        assert 'id="supersede-button"' in html

    def test_an_unchanged_record_shows_no_notice(self, draft, client, people):
        client.force_login(people["author"])
        response = client.get(f"/decisions/{draft.pk}/")
        assert response.context["inputs_changed"] == []
        assert "Inputs have changed" not in response.content.decode()


class TestExportsAndVerify:
    def test_pdf_and_csv_from_the_page(self, draft, client, people):
        client.force_login(people["reader"])
        pdf = client.get(f"/decisions/{draft.pk}/export.pdf")
        assert pdf["Content-Type"] == "application/pdf"
        text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.content)).pages)
        assert draft.content_hash in text
        assert draft.chosen_quote.provider.name in text
        csv_response = client.get(f"/decisions/{draft.pk}/export.csv")
        assert csv_response.content.decode().startswith("rank,candidate_kind,provider")

    def test_verify_page_says_intact(self, draft, client, people):
        client.force_login(people["reader"])
        response = client.get(f"/decisions/{draft.pk}/verify/")
        assert response.context["result"]["intact"] is True
        assert "Intact" in response.content.decode()


class TestChecklistPage:
    def test_procurement_answers_with_evidence_and_a_file(self, setup, client, people):
        client.force_login(people["procurement"])
        url = f"/decisions/checklist/quotes/{setup['quote'].pk}/"
        page = client.get(url)
        assert page.status_code == 200
        assert page.context["checklist"]["answered"] == 0
        quote = setup["quote"]
        heading = f"<h1>Procurement checklist · {quote.provider.name} · {quote.gpu.name}</h1>"
        assert heading in page.content.decode()
        assert f"quote #{quote.pk}" not in page.content.decode()
        response = client.post(
            url,
            {
                "question": "co_sla",
                "co_sla-answer": "PARTIAL",
                "co_sla-evidence_text": "99.5% with credits",
                "co_sla-evidence_link": "https://example.com/sla",
                "co_sla-evidence_file": SimpleUploadedFile("sla.txt", b"SLA terms"),
            },
        )
        assert response.status_code == 302
        answer = ChecklistAnswer.objects.get(quote=setup["quote"], question="co_sla")
        assert (answer.answer, answer.answered_by) == ("PARTIAL", people["procurement"])
        assert "sla" not in answer.evidence_file.name  # stored under a random name
        assert answer.evidence_filename == "sla.txt"  # offered under its own
        html = client.get(url).content.decode()
        assert "1/17 answered" in html
        assert "by proc" in html

    def test_a_bad_link_is_a_field_error_on_that_question(self, setup, client, people):
        client.force_login(people["procurement"])
        url = f"/decisions/checklist/quotes/{setup['quote'].pk}/"
        response = client.post(
            url, {"question": "co_sla", "co_sla-answer": "YES", "co_sla-evidence_link": "no url"}
        )
        assert response.status_code == 200
        assert not ChecklistAnswer.objects.exists()
        items = [q for s in response.context["checklist"]["sections"] for q in s["questions"]]
        bound = next(q["form"] for q in items if q["question"] == "co_sla")
        assert "evidence_link" in bound.errors

    def test_only_procurement_answers(self, setup, client, people):
        client.force_login(people["finance"])
        url = f"/decisions/checklist/quotes/{setup['quote'].pk}/"
        assert "Save all answers" not in client.get(url).content.decode()
        response = client.post(url, {"question": "co_sla", "co_sla-answer": "YES"})
        assert response.status_code == 403


class TestCandidatesInWords:
    @pytest.fixture
    def twins(self, catalog, team, people, django_capture_on_commit_callbacks):
        """Two on-demand H100 quotes of one provider, alike but for their region."""
        with django_capture_on_commit_callbacks(execute=True):
            brief = BriefFactory(team=team)
            east = QuoteFactory(hourly_price_per_gpu=Decimal("2.50"), region="us-east")
            west = QuoteFactory(
                provider=east.provider, hourly_price_per_gpu=Decimal("2.60"), region="us-west"
            )
            ApiRouteFactory(model_preset="llama-3.1-8b")
            candidate_tables_request_recompute(brief_ids=[brief.pk])
        record = make_record(brief=brief, user=people["author"], quote=east, rationale="East.")
        return record, east, west

    def test_the_record_names_candidates_by_provider_gpu_and_term_not_by_id(
        self, twins, client, people
    ):
        record, east, _ = twins
        client.force_login(people["author"])

        response = client.get(f"/decisions/{record.pk}/")

        chosen = response.context["chosen"]["label"]
        assert chosen == f"{east.provider.name} · {east.gpu.name} · On demand · us-east"
        html = response.content.decode()
        visible = re.sub(r"<[^>]+>", " ", html[html.index("<main") :])
        assert not re.search(r"quote #|API route #", visible), re.findall(
            r".{40}(?:quote #|API route #).{20}", visible
        )
        assert not re.search(r"\b\d+\u00d7 ", visible)  # "1x h100": a multiplier, not words

    def test_rows_alike_but_for_their_region_say_their_region(self, twins, client, people):
        record, east, west = twins
        client.force_login(people["author"])

        rows = client.get(f"/decisions/{record.pk}/").context["rows"]

        labels = {r["quote_id"]: r["label"] for r in rows if r.get("quote_id")}
        assert labels[east.pk].endswith(" · us-east") and labels[west.pk].endswith(" · us-west")
        assert len(set(r["label"] for r in rows)) == len(rows)  # no two rows read alike

    def test_the_record_form_offers_alternatives_in_words(self, twins, client, people):
        record, east, west = twins
        client.force_login(people["author"])

        page = client.get(f"/decisions/new/?brief={record.brief_id}&quote={west.pk}")

        offered = dict(page.context["form"].fields["alternatives"].choices)
        # the chosen west quote is not offered: east alone reads as it is, without its region
        assert f"{east.provider.name} · {east.gpu.name} · On demand" in offered.values(), offered
        assert not [label for label in offered.values() if "#" in label]
        html = page.content.decode()
        assert not re.search(r"quote #\d|API route #\d", html[html.index("<main") :])
