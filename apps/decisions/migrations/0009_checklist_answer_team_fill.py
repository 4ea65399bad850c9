"""Checklist answers become per team, step 2 of 3: each existing answer gets a team.

The team is the answerer's (their first by name), else the quote's: the team it is
confidential to, else its creator's first team. An answer none of these names (a system's, or
a quote nobody's team owns, answered by someone in no team) goes to a team made for them,
"Checklist answers before teams", which an administrator can rename or merge."""

from django.db import migrations

#: The team an answer goes to when nothing else names one (see the module docstring).
UNCLAIMED_TEAM = {
    "name": "Checklist answers before teams",
    "slug": "checklist-answers-before-teams",
}


def first_team_of(team_model, user_id):
    if user_id is None:
        return None
    return team_model.objects.filter(members=user_id).order_by("name").first()


def fill(apps, schema_editor):
    answer_model = apps.get_model("decisions", "ChecklistAnswer")
    team_model = apps.get_model("core", "Team")
    for answer in answer_model.objects.filter(team__isnull=True).select_related("quote"):
        quote = answer.quote
        team = first_team_of(team_model, answer.answered_by_id)
        if team is None and quote is not None:
            team = quote.confidential_to or first_team_of(team_model, quote.created_by_id)
        if team is None:
            team, _ = team_model.objects.get_or_create(
                slug=UNCLAIMED_TEAM["slug"], defaults={"name": UNCLAIMED_TEAM["name"]}
            )
        answer.team = team
        answer.save(update_fields=["team"])


class Migration(migrations.Migration):
    dependencies = [
        ("decisions", "0008_checklist_answer_team_add"),
        ("quotes", "0009_bounded_prices_and_dates_catalog_keys_per_team"),
    ]

    operations = [migrations.RunPython(fill, migrations.RunPython.noop)]
