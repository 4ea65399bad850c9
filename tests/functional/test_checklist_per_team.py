"""Checklist answers and evidence files are per team (issue 24 point 3): team B answers the
same public quote for itself, and neither reads nor changes team A's answers or files, on the
pages or the API; each team's decision record freezes its own answers."""

from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import IntegrityError, transaction

from apps.core.roles import Role
from apps.decisions import services
from apps.decisions.models import ChecklistAnswer
from apps.decisions.selectors import inputs_changed
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.decisions import make_record
from tests.factories.quotes import QuoteFactory

pytestmark = pytest.mark.django_db

SLA_FILE = b"team A's SLA terms"


@pytest.fixture
def world(catalog, team, other_team, make_user):
    buyer_a = make_user(Role.PROCUREMENT, teams=[team], username="buyer-a")
    buyer_b = make_user(Role.PROCUREMENT, teams=[other_team], username="buyer-b")
    quote = QuoteFactory(created_by=buyer_a, hourly_price_per_gpu=Decimal("2.50"))
    answer_a = services.checklist_answer_set(
        quote=quote,
        question="co_sla",
        answer="YES",
        user=buyer_a,
        team=team,
        evidence_text="99.9% with credits",
        evidence_file=SimpleUploadedFile("sla.txt", SLA_FILE),
    )
    return {"a": team, "b": other_team, "buyer_a": buyer_a, "buyer_b": buyer_b,
            "quote": quote, "answer_a": answer_a}  # fmt: skip


def api_url(quote, suffix=""):
    return f"/api/v1/checklist/quotes/{quote.pk}/{suffix}"


def co_sla(body):
    (item,) = [q for s in body["sections"] for q in s["questions"] if q["question"] == "co_sla"]
    return item


def a_is_untouched(world):
    fresh = ChecklistAnswer.objects.get(pk=world["answer_a"].pk)
    assert (fresh.answer, fresh.evidence_text, fresh.answered_by, fresh.team) == (
        "YES", "99.9% with credits", world["buyer_a"], world["a"],
    )  # fmt: skip
    assert fresh.evidence_file.read() == SLA_FILE


class TestOnTheApi:
    def test_team_b_sees_none_of_team_as_answers(self, world, token_client):
        body = token_client(user=world["buyer_b"]).get(api_url(world["quote"])).json()
        assert (body["team"], body["answered"]) == ("other-team", 0)
        assert (co_sla(body)["answer"], co_sla(body)["evidence_file_url"]) == (None, "")
        mine = token_client(user=world["buyer_a"]).get(api_url(world["quote"])).json()
        assert (mine["team"], mine["answered"], co_sla(mine)["answer"]) == ("ml-platform", 1, "YES")

    def test_team_b_answers_for_itself_and_team_as_answer_stays(self, world, token_client):
        api = token_client(user=world["buyer_b"])
        response = api.put(
            api_url(world["quote"]),
            {"question": "co_sla", "answer": "NO", "evidence_text": "no SLA offered to us"},
            format="json",
        )
        assert response.status_code == 200, response.json()
        assert co_sla(response.json())["answer"] == "NO"
        theirs = ChecklistAnswer.objects.get(quote=world["quote"], team=world["b"])
        assert (theirs.answer, theirs.answered_by) == ("NO", world["buyer_b"])
        a_is_untouched(world)

    def test_team_b_may_not_write_as_team_a(self, world, token_client):
        api = token_client(user=world["buyer_b"])
        response = api.put(
            api_url(world["quote"]) + "?team=ml-platform",
            {"question": "co_sla", "answer": "NO"},
            format="json",
        )
        assert response.status_code == 404
        assert not ChecklistAnswer.objects.filter(team=world["b"]).exists()
        a_is_untouched(world)

    def test_team_as_evidence_file_is_404_to_team_b(self, world, token_client):
        api = token_client(user=world["buyer_b"])
        for suffix in ("co_sla/evidence?team=ml-platform", "co_sla/evidence"):
            assert api.get(api_url(world["quote"], suffix)).status_code == 404
        mine = token_client(user=world["buyer_a"])
        response = mine.get(api_url(world["quote"], "co_sla/evidence?team=ml-platform"))
        assert response.status_code == 200
        assert b"".join(response.streaming_content) == SLA_FILE

    def test_a_user_in_no_team_is_told_why(self, world, token_client, make_user):
        loner = token_client(user=make_user(Role.PROCUREMENT, teams=[], username="loner"))
        response = loner.get(api_url(world["quote"]))
        assert response.status_code == 403
        assert "kept per team and you belong to none" in response.json()["detail"]


class TestOnThePages:
    def test_team_b_answers_on_the_page_and_sees_only_its_own(self, world, client):
        client.force_login(world["buyer_b"])
        url = f"/decisions/checklist/quotes/{world['quote'].pk}/"
        page = client.get(url).content.decode()
        assert "99.9% with credits" not in page and "sla.txt" not in page
        assert "Other Team" in page
        response = client.post(url, {"co_sla-answer": "PARTIAL"})
        assert response.status_code == 302
        assert ChecklistAnswer.objects.get(team=world["b"]).answer == "PARTIAL"
        a_is_untouched(world)
        evidence = f"{url}co_sla/evidence"
        assert client.get(evidence + "?team=ml-platform").status_code == 404
        assert client.get(evidence).status_code == 404


class TestDecisionRecords:
    def test_each_teams_record_freezes_its_own_answers(self, world, make_user):
        services.checklist_answer_set(
            quote=world["quote"], question="co_sla", answer="NO", user=world["buyer_b"],
            team=world["b"],
        )  # fmt: skip
        frozen = {}
        for key in ("a", "b"):
            brief = BriefFactory(team=world[key])
            candidate_tables_request_recompute(brief_ids=[brief.pk])
            candidate_table_recompute(brief_id=brief.pk)
            author = make_user(Role.PLATFORM, teams=[world[key]])
            record = make_record(brief=brief, user=author, quote=world["quote"])
            answers = record.snapshot["checklist"]["answers"]
            frozen[key] = next(a for a in answers if a["question"] == "co_sla")
        assert (frozen["a"]["answer"], frozen["a"]["evidence_file"]["name"]) == ("YES", "sla.txt")
        assert (frozen["b"]["answer"], frozen["b"]["evidence_file"]) == ("NO", None)


class TestTheDatabaseRule:
    def test_one_answer_per_quote_question_and_team(self, world):
        with pytest.raises(IntegrityError), transaction.atomic():
            ChecklistAnswer.objects.create(
                quote=world["quote"], question="co_sla", answer="NO",
                answered_by=world["buyer_a"], team=world["a"],
            )  # fmt: skip
        ChecklistAnswer.objects.create(
            quote=world["quote"], question="co_sla", answer="NO",
            answered_by=world["buyer_b"], team=world["b"],
        )  # fmt: skip
        assert ChecklistAnswer.objects.filter(quote=world["quote"]).count() == 2

    def test_another_teams_answer_does_not_change_a_records_inputs(self, world, make_user):
        brief = BriefFactory(team=world["a"])
        candidate_tables_request_recompute(brief_ids=[brief.pk])
        candidate_table_recompute(brief_id=brief.pk)
        author = make_user(Role.PLATFORM, teams=[world["a"]])
        record = make_record(brief=brief, user=author, quote=world["quote"])
        services.checklist_answer_set(
            quote=world["quote"], question="hw_network", answer="NO", user=world["buyer_b"],
            team=world["b"],
        )  # fmt: skip
        assert not [c for c in inputs_changed(record) if "checklist" in c]
        services.checklist_answer_set(
            quote=world["quote"], question="hw_network", answer="NO", user=world["buyer_a"],
            team=world["a"],
        )  # fmt: skip
        assert [c for c in inputs_changed(record) if "checklist" in c]
