"""The checklist as one form (one POST saves every answer, or none, and keeps what was typed),
a record's pending roles with who may approve, the warning before and at submit when a role
would have nobody to approve, and 403 pages that say why with a way back."""

from decimal import Decimal

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.core.roles import Role
from apps.decisions.checklist import QUESTIONS
from apps.decisions.models import ChecklistAnswer, DecisionRecord
from apps.decisions.services import decision_record_approve, decision_record_submit
from tests.factories.briefs import BriefFactory
from tests.factories.core import UserFactory
from tests.factories.decisions import make_record
from tests.factories.quotes import QuoteFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def quote(catalog):
    return QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))


def checklist_url(quote):
    return f"/decisions/checklist/quotes/{quote.pk}/"


class TestChecklistAsOneForm:
    def test_one_post_answers_every_question(self, client, make_user, quote):
        client.force_login(make_user(Role.PROCUREMENT))
        page = client.get(checklist_url(quote)).content.decode()
        assert page.count('name="csrfmiddlewaretoken"') == 2  # the checklist and sign-out
        assert page.count("<form") == 2
        data = {f"{q.key}-answer": "YES" for q in QUESTIONS}
        data["co_sla-evidence_text"] = "99.9% with credits"
        response = client.post(checklist_url(quote), data)
        assert response.status_code == 302
        assert ChecklistAnswer.objects.filter(quote=quote).count() == len(QUESTIONS)
        assert ChecklistAnswer.objects.get(question="co_sla").evidence_text == "99.9% with credits"
        assert (
            f"{len(QUESTIONS)}/{len(QUESTIONS)} answered"
            in client.get(checklist_url(quote)).content.decode()
        )

    def test_one_bad_field_saves_nothing_and_keeps_every_typed_value(
        self, client, make_user, quote
    ):
        client.force_login(make_user(Role.PROCUREMENT))
        data = {
            "hw_exact_sku-answer": "YES",
            "hw_exact_sku-evidence_text": "Order form, section 3",
            "co_pricing-answer": "PARTIAL",
            "co_pricing-evidence_text": "egress not quoted yet",
            "co_sla-answer": "NO",
            "co_sla-evidence_link": "not a link",
            "se_data-evidence_text": "EU only",  # evidence with no answer
        }
        response = client.post(checklist_url(quote), data)
        assert response.status_code == 200
        assert not ChecklistAnswer.objects.exists()
        forms = response.context["checklist"]["sections"]
        bound = {q["question"]: q["form"] for s in forms for q in s["questions"]}
        assert set(bound["co_sla"].errors) == {"evidence_link"}
        assert set(bound["se_data"].errors) == {"answer"}
        assert not bound["hw_exact_sku"].errors
        html = response.content.decode()
        assert "Order form, section 3" in html
        assert "egress not quoted yet" in html
        assert 'value="not a link"' in html
        assert "EU only" in html
        assert "Nothing was saved" in html
        assert 'href="#q-co_sla"' in html

    def test_unchanged_answers_keep_who_answered_them(self, client, make_user, quote):
        first = make_user(Role.PROCUREMENT, username="first")
        ChecklistAnswer.objects.create(
            quote=quote,
            question="co_sla",
            answer="YES",
            evidence_text="SLA",
            answered_by=first,
            team=first.teams.get(),
        )
        client.force_login(make_user(Role.PROCUREMENT, username="second"))
        data = {"co_sla-answer": "YES", "co_sla-evidence_text": "SLA", "hw_network-answer": "NO"}
        assert client.post(checklist_url(quote), data).status_code == 302
        assert ChecklistAnswer.objects.get(question="co_sla").answered_by == first
        assert ChecklistAnswer.objects.get(question="hw_network").answered_by.username == "second"

    def test_an_answer_cannot_be_blanked(self, client, make_user, quote):
        user = make_user(Role.PROCUREMENT)
        ChecklistAnswer.objects.create(
            quote=quote, question="co_sla", answer="YES", answered_by=user, team=user.teams.get()
        )
        client.force_login(user)
        response = client.post(
            checklist_url(quote), {"co_sla-answer": "", "hw_network-answer": "NO"}
        )
        assert response.status_code == 200
        assert ChecklistAnswer.objects.get(question="co_sla").answer == "YES"
        assert not ChecklistAnswer.objects.filter(question="hw_network").exists()

    def test_a_file_with_the_answers_is_saved(self, client, make_user, quote):
        client.force_login(make_user(Role.PROCUREMENT))
        data = {
            "co_sla-answer": "YES",
            "co_sla-evidence_file": SimpleUploadedFile("sla.txt", b"terms"),
            "se_access-answer": "PARTIAL",
        }
        assert client.post(checklist_url(quote), data).status_code == 302
        assert ChecklistAnswer.objects.get(question="co_sla").evidence_filename == "sla.txt"
        assert ChecklistAnswer.objects.count() == 2

    @pytest.mark.parametrize("role", [Role.PLATFORM, Role.FINANCE, Role.API_CLIENT])
    def test_others_read_it_and_may_not_post(self, client, make_user, quote, role):
        client.force_login(make_user(role))
        page = client.get(checklist_url(quote))
        assert page.status_code == 200
        assert "Save all answers" not in page.content.decode()
        refused = client.post(checklist_url(quote), {"co_sla-answer": "YES"})
        assert refused.status_code == 403
        assert "Only the procurement role answers the checklist." in refused.content.decode()
        assert not ChecklistAnswer.objects.exists()


@pytest.fixture
def brief(catalog, team, quote, django_capture_on_commit_callbacks):
    from apps.finance.services import candidate_tables_request_recompute

    with django_capture_on_commit_callbacks(execute=True):
        brief = BriefFactory(team=team)
        candidate_tables_request_recompute(brief_ids=[brief.pk])
    return brief


class TestPendingRoles:
    def test_in_review_shows_pending_roles_and_who_may_approve(
        self, client, make_user, brief, quote
    ):
        author = make_user(Role.PROCUREMENT, username="author")
        make_user(Role.FINANCE, username="fiona")
        make_user(Role.FINANCE, username="frank")
        platform = make_user(Role.PLATFORM, username="pat")
        make_user(Role.FINANCE, username="outsider", teams=[])  # not in the record's team
        record = make_record(brief=brief, user=author, quote=quote)
        record = decision_record_submit(record=record, user=author, role="procurement")
        decision_record_approve(record=record, user=platform, role="platform")
        client.force_login(author)
        response = client.get(f"/decisions/{record.pk}/")
        html = response.content.decode()
        progress = {r["role"]: r for r in response.context["progress"]["roles"]}
        assert progress["platform"]["verdict"] == "approved"
        assert progress["platform"]["by"] == "pat"
        assert progress["finance"]["eligible"] == ["fiona", "frank"]
        # procurement: the only procurement member submitted it; nobody else may approve
        assert progress["procurement"]["eligible"] == []
        assert response.context["progress"]["no_approver"] == ["procurement"]
        assert "Still pending: <strong>Finance</strong> and <strong>Procurement</strong>." in html
        assert "fiona, frank" in html
        assert "outsider" not in html
        assert "cannot be approved as it stands" in html

    def test_the_pending_roles_read_as_words_whichever_decided_first(
        self, make_user, brief, quote, client
    ):
        """Issue 27 saw "Still pending: Platform, ." once finance, the last role, approved."""
        author = make_user(Role.PROCUREMENT, username="buyer")
        make_user(Role.PROCUREMENT, username="buyer2")
        make_user(Role.PLATFORM, username="pat")
        finance = make_user(Role.FINANCE, username="fiona")
        record = make_record(brief=brief, user=author, quote=quote)
        record = decision_record_submit(record=record, user=author, role="procurement")
        decision_record_approve(record=record, user=finance, role="finance")
        client.force_login(author)
        html = client.get(f"/decisions/{record.pk}/").content.decode()
        assert "Still pending: <strong>Platform</strong> and <strong>Procurement</strong>." in html
        assert ", ." not in html

    def test_someone_who_decided_for_one_role_is_not_offered_for_another(
        self, make_user, brief, quote
    ):
        from apps.decisions.selectors import approval_progress

        author = make_user(Role.PLATFORM, username="author")
        both = make_user(Role.FINANCE, Role.PROCUREMENT, username="both")
        make_user(Role.PLATFORM, username="pat")
        record = make_record(brief=brief, user=author, quote=quote)
        record = decision_record_submit(record=record, user=author, role="platform")
        assert approval_progress(record)["roles"][2]["eligible"] == ["both"]
        decision_record_approve(record=record, user=both, role="finance")
        progress = approval_progress(DecisionRecord.objects.get(pk=record.pk))
        assert progress["no_approver"] == ["procurement"]
        assert progress["pending"] == ["platform", "procurement"]

    def test_the_draft_warns_before_submit_when_only_the_submitter_could_approve(
        self, client, make_user, brief, quote
    ):
        author = make_user(Role.PROCUREMENT, username="solo")
        make_user(Role.FINANCE, username="fiona")
        make_user(Role.PLATFORM, username="pat")
        record = make_record(brief=brief, user=author, quote=quote)
        client.force_login(author)
        html = client.get(f"/decisions/{record.pk}/").content.decode()
        assert 'id="submit-warning"' in html
        assert "Once you submit, nobody can approve for Procurement" in html
        response = client.post(f"/decisions/{record.pk}/submit/", {"role": "procurement"})
        assert response.status_code == 302
        said = [str(m) for m in get_messages(response.wsgi_request)]
        assert "Submitted for review." in said
        assert any(m.startswith("Nobody can approve for Procurement: team") for m in said)

    def test_no_warning_when_every_role_has_another_approver(self, client, make_user, brief, quote):
        author = make_user(Role.PROCUREMENT, username="author")
        make_user(Role.PROCUREMENT, username="colleague")
        make_user(Role.FINANCE, username="fiona")
        make_user(Role.PLATFORM, username="pat")
        record = make_record(brief=brief, user=author, quote=quote)
        client.force_login(author)
        html = client.get(f"/decisions/{record.pk}/").content.decode()
        assert 'id="submit-warning"' not in html
        response = client.post(f"/decisions/{record.pk}/submit/", {"role": "procurement"})
        said = [str(m) for m in get_messages(response.wsgi_request)]
        assert said == ["Submitted for review."]


class TestForbiddenPages:
    def test_the_403_page_says_why_and_links_back_to_the_referring_page(
        self, client, make_user, catalog
    ):
        client.force_login(make_user(Role.FINANCE, username="fin"))
        response = client.get(
            "/quotes/new/", HTTP_REFERER="http://testserver/quotes/", HTTP_HOST="testserver"
        )
        assert response.status_code == 403
        html = response.content.decode()
        assert "Only procurement writes quotes and API routes." in html
        assert 'id="go-back" href="http://testserver/quotes/"' in html
        assert "fin" in html
        assert 'name="csrfmiddlewaretoken"' in html  # the full site page (sign-out form)

    def test_an_outside_referer_is_not_linked(self, client, make_user, catalog):
        client.force_login(make_user(Role.FINANCE))
        response = client.get("/quotes/new/", HTTP_REFERER="https://evil.example/phish")
        html = response.content.decode()
        assert "evil.example" not in html
        assert 'id="go-back" href="/"' in html

    def test_a_post_refusal_says_why_too(self, client, make_user, catalog):
        client.force_login(make_user(Role.API_CLIENT))
        response = client.post("/quotes/providers/new/", {"name": "x"})
        assert response.status_code == 403
        assert "Only procurement adds and edits providers." in response.content.decode()
        assert "You may not do this" in response.content.decode()

    def test_the_403_page_sends_no_inline_script_or_style(self, client, make_user, catalog):
        client.force_login(make_user(Role.FINANCE))
        response = client.get("/quotes/new/")
        html = response.content.decode()
        assert "<script>" not in html and "style=" not in html
        assert "unsafe-inline" not in response.get("Content-Security-Policy", "")


def test_every_author_is_in_the_team_fixture(team):
    """Guard for the tests above: make_user puts users in ``team`` unless told otherwise."""
    user = UserFactory(roles=[Role.FINANCE], teams=[team])
    assert team.members.filter(pk=user.pk).exists()
