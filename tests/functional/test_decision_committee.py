"""One person is not a committee, through the API and the pages: refusals say in words who
must act instead, and the page offers no verdict to someone who may not give one."""

from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.contrib.messages import get_messages

from apps.core.roles import Role
from apps.decisions.services import decision_record_approve, decision_record_submit
from apps.finance.services import candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.decisions import make_record
from tests.factories.quotes import QuoteFactory

pytestmark = pytest.mark.django_db
URL = "/api/v1/decision-records/"


@pytest.fixture
def in_review(catalog, team, make_user, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        brief = BriefFactory(team=team)
        quote = QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
        candidate_tables_request_recompute(brief_ids=[brief.pk])
    author = make_user(Role.PROCUREMENT, username="author")
    record = make_record(brief=brief, user=author, quote=quote)
    return decision_record_submit(record=record, user=author)


class TestTheApiSaysWhoMustApprove:
    def test_a_second_role_of_the_same_person_is_a_403_in_words(
        self, in_review, make_user, token_client
    ):
        both = token_client(user=make_user(Role.FINANCE, Role.PROCUREMENT, username="both"))
        first = both.post(f"{URL}{in_review.pk}/approve", {"role": "finance"}, format="json")
        assert first.status_code == 200
        second = both.post(f"{URL}{in_review.pk}/approve", {"role": "procurement"}, format="json")
        assert second.status_code == 403
        assert second.json() == {
            "detail": "You already approved this record as finance; "
            "another person must approve for procurement."
        }
        assert in_review.approvals.count() == 1

    def test_the_submitter_gets_a_403_for_any_role(self, in_review, token_client):
        in_review.submitted_by.groups.add(Group.objects.get_or_create(name=Role.PLATFORM)[0])
        submitter = token_client(user=in_review.submitted_by)
        response = submitter.post(
            f"{URL}{in_review.pk}/approve", {"role": "platform"}, format="json"
        )
        assert response.status_code == 403
        assert response.json() == {
            "detail": "You submitted this record as procurement; "
            "another person must approve for platform."
        }


class TestThePageSaysWhoMustApprove:
    def test_no_buttons_and_a_sentence_for_someone_who_already_approved(
        self, in_review, make_user, client
    ):
        both = make_user(Role.FINANCE, Role.PROCUREMENT, username="both")
        decision_record_approve(record=in_review, user=both, role="finance")
        client.force_login(both)
        response = client.get(f"/decisions/{in_review.pk}/")
        assert response.context["decide_roles"] == []
        assert response.context["why_not_deciding"] == (
            "You already approved this record as finance; "
            "other people approve for the remaining roles."
        )
        assert 'id="why-not-deciding"' in response.content.decode()

    def test_a_forged_post_is_a_message_and_nothing_changes(self, in_review, make_user, client):
        both = make_user(Role.FINANCE, Role.PROCUREMENT, username="both")
        decision_record_approve(record=in_review, user=both, role="finance")
        client.force_login(both)
        response = client.post(f"/decisions/{in_review.pk}/approve/", {"role": "procurement"})
        assert response.status_code == 302
        assert [str(m) for m in get_messages(response.wsgi_request)] == [
            "You already approved this record as finance; "
            "another person must approve for procurement."
        ]
        assert in_review.approvals.count() == 1
