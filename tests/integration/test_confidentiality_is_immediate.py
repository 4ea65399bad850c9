"""Confidentiality is immediate: making a quote confidential, or moving a brief to another
team, removes the candidate rows the new audience must not see in the same transaction, not
at the next recompute; only a quote's owners may make it confidential; the rankings and the
decision-record snapshot never serve a row the team may not see."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from apps.briefs.services import brief_update
from apps.core.roles import Role
from apps.decisions.services import decision_record_refresh
from apps.finance.models import CandidateRow, CandidateTable
from apps.finance.selectors import ranking_for_brief
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from apps.quotes.models import Quote
from apps.quotes.services import quote_update
from tests.factories.briefs import BriefFactory
from tests.factories.decisions import make_record
from tests.factories.quotes import QuoteFactory

pytestmark = pytest.mark.django_db


def recompute(*briefs):
    candidate_tables_request_recompute(brief_ids=[b.pk for b in briefs])
    for brief in briefs:
        candidate_table_recompute(brief_id=brief.pk)


def quote_ids_in_table(brief):
    return set(
        CandidateRow.objects.filter(table__brief=brief)
        .exclude(quote=None)
        .values_list("quote_id", flat=True)
    )


@pytest.fixture
def two_teams(catalog, team, other_team, make_user):
    """Team A (``team``) and team B (``other_team``), a brief each, and a public quote entered
    by a procurement member of team A, costed in both tables."""
    buyer_a = make_user(Role.PROCUREMENT, teams=[team], username="buyer-a")
    buyer_b = make_user(Role.PROCUREMENT, teams=[other_team], username="buyer-b")
    brief_a, brief_b = BriefFactory(team=team), BriefFactory(team=other_team)
    quote = QuoteFactory(hourly_price_per_gpu=Decimal("2.50"), created_by=buyer_a)
    kept = QuoteFactory(hourly_price_per_gpu=Decimal("3.10"), created_by=buyer_a)
    recompute(brief_a, brief_b)
    assert quote_ids_in_table(brief_b) == {quote.pk, kept.pk}
    return {
        "a": team, "b": other_team, "buyer_a": buyer_a, "buyer_b": buyer_b,
        "brief_a": brief_a, "brief_b": brief_b, "quote": quote, "kept": kept,
    }  # fmt: skip


class TestMakingAQuoteConfidential:
    def test_other_teams_rows_go_in_the_same_transaction(self, two_teams):
        t = two_teams
        quote_update(quote=t["quote"], user=t["buyer_a"], confidential_to=t["a"])
        # No recompute has run: the rows are gone all the same, and the table says pending.
        assert quote_ids_in_table(t["brief_b"]) == {t["kept"].pk}
        assert quote_ids_in_table(t["brief_a"]) == {t["quote"].pk, t["kept"].pk}
        ranking = ranking_for_brief(t["brief_b"])
        assert t["quote"].pk not in {r["quote_id"] for r in ranking["rows"]}
        assert ranking["pending"] is True
        assert ranking["capacity_model"] == {}  # it may have quoted the hidden price

    def test_a_procurement_user_of_another_team_cannot_take_a_public_quote(self, two_teams):
        t = two_teams
        with pytest.raises(ValidationError) as refused:
            quote_update(quote=t["quote"], user=t["buyer_b"], confidential_to=t["b"])
        assert refused.value.message_dict == {
            "confidential_to": [
                f"Quote #{t['quote'].pk} was entered by buyer-a; only they or a member of "
                "their team (ML Platform) can make it confidential. Enter your own quote, "
                "confidential to Other Team, instead."
            ]
        }
        quote = Quote.objects.get(pk=t["quote"].pk)
        assert (quote.confidential_to, quote.version) == (None, 1)
        assert quote_ids_in_table(t["brief_a"]) == {t["quote"].pk, t["kept"].pk}

    def test_a_team_mate_of_the_creator_may(self, two_teams, make_user):
        t = two_teams
        mate = make_user(Role.PROCUREMENT, teams=[t["a"]], username="mate")
        quote = quote_update(quote=t["quote"], user=mate, confidential_to=t["a"])
        assert quote.confidential_to == t["a"]

    def test_a_quote_that_records_no_creator_cannot_be_made_confidential(self, two_teams):
        t = two_teams
        Quote.objects.filter(pk=t["quote"].pk).update(created_by=None)
        with pytest.raises(ValidationError, match="records no creator"):
            quote_update(quote=t["quote"], user=t["buyer_a"], confidential_to=t["a"])

    def test_only_to_a_team_one_belongs_to(self, two_teams):
        t = two_teams
        with pytest.raises(ValidationError, match="you are not a member of Other Team"):
            quote_update(quote=t["quote"], user=t["buyer_a"], confidential_to=t["b"])


class TestMovingABriefToAnotherTeam:
    def test_rows_of_quotes_confidential_to_the_old_team_go_at_once(self, two_teams):
        t = two_teams
        secret = QuoteFactory(hourly_price_per_gpu=Decimal("1.10"), confidential_to=t["a"])
        recompute(t["brief_a"])
        assert secret.pk in quote_ids_in_table(t["brief_a"])
        brief_update(brief=t["brief_a"], team=t["b"])
        assert secret.pk not in quote_ids_in_table(t["brief_a"])
        assert CandidateTable.objects.get(brief=t["brief_a"]).capacity_model == {}
        assert secret.pk not in {r["quote_id"] for r in ranking_for_brief(t["brief_a"])["rows"]}


class TestTheReadPathNeverServesAHiddenRow:
    """A recompute that started before the change may write its rows after it: the reads
    filter by the team as well, until the next recompute puts the table right."""

    def test_the_ranking_leaves_out_a_row_the_team_may_not_see(self, two_teams):
        t = two_teams
        before = ranking_for_brief(t["brief_b"])
        assert before["capacity_model"]
        Quote.objects.filter(pk=t["quote"].pk).update(confidential_to=t["a"])  # the race
        candidate_tables_request_recompute(brief_ids=[t["brief_b"].pk])
        ranking = ranking_for_brief(t["brief_b"])
        assert {r["quote_id"] for r in ranking["rows"]} == {t["kept"].pk}
        assert ranking["total_rows"] == 1
        assert ranking["capacity_model"] == {}

    def test_a_decision_record_freezes_only_rows_its_team_may_see(self, two_teams):
        t = two_teams
        record = make_record(brief=t["brief_b"], user=t["buyer_b"], quote=t["kept"])
        assert {r["quote_id"] for r in record.snapshot["candidate_table"]["rows"]} == {
            t["quote"].pk,
            t["kept"].pk,
        }
        Quote.objects.filter(pk=t["quote"].pk).update(confidential_to=t["a"])  # the race
        candidate_tables_request_recompute(brief_ids=[t["brief_b"].pk])
        record = decision_record_refresh(record=record, user=t["buyer_b"])
        assert {r["quote_id"] for r in record.snapshot["candidate_table"]["rows"]} == {t["kept"].pk}
        assert {q["id"] for q in record.snapshot["quotes"]} == {t["kept"].pk}

    def test_a_chosen_quote_now_confidential_to_another_team_cannot_be_frozen(self, two_teams):
        t = two_teams
        record = make_record(brief=t["brief_b"], user=t["buyer_b"], quote=t["quote"])
        Quote.objects.filter(pk=t["quote"].pk).update(confidential_to=t["a"])
        with pytest.raises(ValidationError) as refused:
            decision_record_refresh(record=record, user=t["buyer_b"])
        assert refused.value.message_dict == {
            "chosen_quote": [
                f"quote #{t['quote'].pk} is now confidential to another team; "
                "choose another candidate in a new record"
            ]
        }
