"""The migrations that make checklist answers per team (apps/decisions/migrations/0008-0010):
each existing answer gets the answerer's team, else the quote's, else a team made for them;
afterwards each team may answer the same question of the same quote once."""

from datetime import date
from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from apps.catalog.services import catalog_load

# The quotes app as the fill step (0009) reads it: creators and confidential teams recorded.
QUOTES = ("quotes", "0009_bounded_prices_and_dates_catalog_keys_per_team")
BEFORE = [("decisions", "0008_checklist_answer_team_add"), QUOTES]
AFTER = [("decisions", "0010_checklist_answer_team_required")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def migrate_to_latest():
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_existing_answers_get_a_team_and_the_rule_counts_it():
    catalog_load()  # the catalog's tables are as today: only the decisions app goes back
    try:
        old = migrate(BEFORE)
        team_model = old.get_model("core", "Team")
        user_model = old.get_model("auth", "User")
        answer_model = old.get_model("decisions", "ChecklistAnswer")
        gpu = old.get_model("catalog", "Gpu").objects.get(slug="h100-sxm5-80gb")
        a = team_model.objects.create(name="Team A", slug="team-a")
        b = team_model.objects.create(name="Team B", slug="team-b")
        in_a = user_model.objects.create(username="in-a")
        a.members.add(in_a)
        loner = user_model.objects.create(username="loner")
        provider = old.get_model("quotes", "Provider").objects.create(name="Acme")
        quotes = old.get_model("quotes", "Quote")
        fields = {"provider": provider, "gpu": gpu, "region": "us", "pricing_term": "ON_DEMAND",
                  "hourly_price_per_gpu": Decimal("2"), "quote_date": date(2026, 11, 1),
                  "source": "test"}  # fmt: skip
        public = quotes.objects.create(created_by=in_a, **fields)
        secret = quotes.objects.create(confidential_to=b, **fields)
        nobodys = quotes.objects.create(**fields)
        made = {
            "answerer's": answer_model.objects.create(
                quote=secret, question="co_sla", answer="YES", answered_by=in_a
            ),
            "confidential": answer_model.objects.create(
                quote=secret, question="hw_network", answer="NO", answered_by=loner
            ),
            "creator's": answer_model.objects.create(
                quote=public, question="co_sla", answer="YES", answered_by=loner
            ),
            "nobody's": answer_model.objects.create(
                quote=nobodys, question="co_sla", answer="YES", answered_by=loner
            ),
        }
        new = migrate(AFTER)
        answers = new.get_model("decisions", "ChecklistAnswer").objects
        team_of = {k: answers.get(pk=v.pk).team.slug for k, v in made.items()}
        assert team_of == {
            "answerer's": "team-a",
            "confidential": "team-b",
            "creator's": "team-a",
            "nobody's": "checklist-answers-before-teams",
        }
        answers.create(quote_id=public.pk, question="co_sla", answer="NO",
                       answered_by_id=loner.pk, team_id=b.pk)  # fmt: skip
        with pytest.raises(IntegrityError), transaction.atomic():
            answers.create(quote_id=public.pk, question="co_sla", answer="NO",
                           answered_by_id=loner.pk, team_id=a.pk)  # fmt: skip
    finally:
        migrate_to_latest()
