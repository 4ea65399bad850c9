"""One verdict per user per record (a user holding several roles is still one person).

Approvals are append-only (migration 0002), so duplicates already stored cannot be cleaned up
here: the migration stops and names them instead, for a person to decide what they mean.
SQLite adds a constraint by rebuilding the table, which drops the table's triggers: the
append-only trigger of 0002 is created again afterwards."""

from django.db import migrations, models
from django.db.models import Count

SQLITE_APPEND_ONLY = """CREATE TRIGGER IF NOT EXISTS approval_no_update
    BEFORE UPDATE ON decisions_approval
    BEGIN SELECT RAISE(ABORT, 'decisions_approval is append-only'); END;"""


def refuse_existing_duplicates(apps, schema_editor):
    Approval = apps.get_model("decisions", "Approval")
    twice = list(
        Approval.objects.values("record_id", "user_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .order_by("record_id", "user_id")[:20]
    )
    if twice:
        named = ", ".join(f"record #{d['record_id']} (user #{d['user_id']})" for d in twice)
        raise RuntimeError(
            "These decision records hold more than one verdict by the same person, which the "
            f"one_verdict_per_user constraint refuses: {named}. Review them before migrating."
        )


def restore_sqlite_trigger(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(SQLITE_APPEND_ONLY)


class Migration(migrations.Migration):
    dependencies = [("decisions", "0003_evidence_file_private_random_name")]

    operations = [
        # Backwards, removing the constraint rebuilds the table again: restore the trigger last.
        migrations.RunPython(refuse_existing_duplicates, restore_sqlite_trigger),
        migrations.AddConstraint(
            model_name="approval",
            constraint=models.UniqueConstraint(
                fields=("record", "user"), name="one_verdict_per_user"
            ),
        ),
        migrations.RunPython(restore_sqlite_trigger, migrations.RunPython.noop),
    ]
