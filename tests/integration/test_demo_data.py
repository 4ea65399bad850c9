"""`make run` loads the demo dataset: one user per role, a team, quotes, routes and briefs."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from apps.briefs.models import WorkloadBrief
from apps.finance.models import CandidateTable
from apps.quotes.models import ApiRoute, Quote

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def demo_allowed(settings):
    settings.DEMO_DATA_ALLOWED = True


class TestLoadDemo:
    def test_loads_users_quotes_and_briefs_and_ranks_the_complete_ones(
        self, catalog, django_capture_on_commit_callbacks
    ):
        out = StringIO()
        with django_capture_on_commit_callbacks(execute=True):
            call_command("load_demo", stdout=out)
        users = get_user_model().objects.filter(
            username__in=["platform", "finance", "procurement", "apiclient"]
        )
        assert {u.groups.get().name for u in users} == {
            "platform",
            "finance",
            "procurement",
            "api-client",
        }
        assert Quote.objects.count() == 9 and ApiRoute.objects.count() == 2
        assert WorkloadBrief.objects.count() == 4
        complete = [b for b in WorkloadBrief.objects.all() if b.is_complete]
        assert len(complete) == 3  # the image brief is a draft on purpose
        for brief in complete:
            table = CandidateTable.objects.get(brief=brief)
            assert table.rows.exists(), brief.name
        assert "gpuselect-demo" in out.getvalue()

    def test_running_it_twice_changes_nothing(self, catalog):
        call_command("load_demo", stdout=StringIO())
        counts = (WorkloadBrief.objects.count(), Quote.objects.count())
        call_command("load_demo", stdout=StringIO())
        assert (WorkloadBrief.objects.count(), Quote.objects.count()) == counts


def test_refuses_outside_the_embedded_default(catalog, settings):
    settings.DEMO_DATA_ALLOWED = False
    with pytest.raises(CommandError, match="embedded default"):
        call_command("load_demo", stdout=StringIO())


class TestTheDemoDecisionJourney:
    def test_a_record_procurement_submits_is_approved_by_distinct_demo_users(
        self, catalog, django_capture_on_commit_callbacks
    ):
        from apps.decisions.services import (
            decision_record_approve,
            decision_record_create,
            decision_record_submit,
        )

        with django_capture_on_commit_callbacks(execute=True):
            call_command("load_demo", stdout=StringIO())
        users = {u.username: u for u in get_user_model().objects.all()}
        brief = next(b for b in WorkloadBrief.objects.order_by("pk") if b.is_complete)
        row = CandidateTable.objects.get(brief=brief).rows.exclude(quote=None).first()
        record = decision_record_create(
            brief=brief,
            created_by=users["procurement"],
            capacity_model="RENT_ON_DEMAND",
            chosen_quote=row.quote,
        )
        record = decision_record_submit(record=record, user=users["procurement"])
        for username, role in (
            ("platform", "platform"),
            ("finance", "finance"),
            ("procurement2", "procurement"),
        ):
            record = decision_record_approve(record=record, user=users[username], role=role)
        assert record.status == "APPROVED"
