"""Checklist answers become per team, step 3 of 3: the team is required, and the one-answer
rules count it: one answer per (quote, question, team) and per (system, question, team)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("decisions", "0009_checklist_answer_team_fill"),
    ]

    operations = [
        migrations.AlterField(
            model_name="checklistanswer",
            name="team",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="checklist_answers",
                to="core.team",
                help_text="The team whose answer this is; only its members read or change it.",
            ),
        ),
        migrations.RemoveConstraint(
            model_name="checklistanswer",
            name="checklist_one_answer_per_quote_question",
        ),
        migrations.RemoveConstraint(
            model_name="checklistanswer",
            name="checklist_one_answer_per_system_question",
        ),
        migrations.AddConstraint(
            model_name="checklistanswer",
            constraint=models.UniqueConstraint(
                condition=models.Q(("quote__isnull", False)),
                fields=("quote", "question", "team"),
                name="checklist_one_answer_per_team_quote_question",
            ),
        ),
        migrations.AddConstraint(
            model_name="checklistanswer",
            constraint=models.UniqueConstraint(
                condition=models.Q(("system__isnull", False)),
                fields=("system", "question", "team"),
                name="checklist_one_answer_per_team_system_question",
            ),
        ),
    ]
