"""Checklist answers become per team (issue 24 point 3), step 1 of 3: the team, nullable."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0001_initial"),
        ("decisions", "0007_decision_chosen_plan"),
    ]

    operations = [
        migrations.AddField(
            model_name="checklistanswer",
            name="team",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="checklist_answers",
                to="core.team",
                help_text="The team whose answer this is; only its members read or change it.",
            ),
        ),
    ]
