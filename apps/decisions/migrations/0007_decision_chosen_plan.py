"""A decision record may choose a serving plan of several quotes (``chosen_plan``: MIX or DISAGG),
and the one-candidate constraint counts it.

SQLite adds a field and a constraint by rebuilding the table, which drops the table's triggers:
the decision record's triggers of 0002 are created again afterwards, now holding the chosen plan
frozen too; on PostgreSQL the guard function is replaced to do the same."""

from django.db import migrations, models

PG_GUARD = """
CREATE OR REPLACE FUNCTION gpuselect_decision_guard() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF OLD.status <> 'DRAFT' THEN
      RAISE EXCEPTION 'only a DRAFT decision record can be deleted'
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN OLD;
  END IF;
  IF OLD.status IN ('REJECTED', 'SUPERSEDED') THEN
    RAISE EXCEPTION 'a % decision record cannot change', OLD.status
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF OLD.status <> 'DRAFT' AND (NEW.snapshot IS DISTINCT FROM OLD.snapshot
      OR NEW.content_hash IS DISTINCT FROM OLD.content_hash
      OR NEW.brief_id IS DISTINCT FROM OLD.brief_id
      OR NEW.chosen_quote_id IS DISTINCT FROM OLD.chosen_quote_id
      OR NEW.chosen_api_route_id IS DISTINCT FROM OLD.chosen_api_route_id
      OR NEW.chosen_plan IS DISTINCT FROM OLD.chosen_plan) THEN
    RAISE EXCEPTION 'the frozen evidence of a % decision record cannot change', OLD.status
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF OLD.status = 'APPROVED' AND NOT (NEW.status = 'SUPERSEDED'
      AND NEW.title = OLD.title AND NEW.rationale = OLD.rationale
      AND NEW.capacity_model = OLD.capacity_model
      AND NEW.acceptance_criteria = OLD.acceptance_criteria
      AND NEW.required_roles = OLD.required_roles
      AND NEW.alternatives = OLD.alternatives) THEN
    RAISE EXCEPTION 'an APPROVED decision record can only be superseded'
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""

SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS decisionrecord_closed;",
    "DROP TRIGGER IF EXISTS decisionrecord_frozen;",
    "DROP TRIGGER IF EXISTS decisionrecord_approved;",
]
SQLITE = [
    """CREATE TRIGGER decisionrecord_closed BEFORE UPDATE ON decisions_decisionrecord
       WHEN OLD.status IN ('REJECTED', 'SUPERSEDED')
       BEGIN SELECT RAISE(ABORT, 'a REJECTED or SUPERSEDED decision record cannot change'); END;""",
    """CREATE TRIGGER decisionrecord_frozen BEFORE UPDATE ON decisions_decisionrecord
       WHEN OLD.status <> 'DRAFT' AND (NEW.snapshot IS NOT OLD.snapshot
         OR NEW.content_hash IS NOT OLD.content_hash OR NEW.brief_id IS NOT OLD.brief_id
         OR NEW.chosen_quote_id IS NOT OLD.chosen_quote_id
         OR NEW.chosen_api_route_id IS NOT OLD.chosen_api_route_id
         OR NEW.chosen_plan IS NOT OLD.chosen_plan)
       BEGIN SELECT RAISE(ABORT, 'the frozen evidence of a decision record cannot change'); END;""",
    """CREATE TRIGGER decisionrecord_approved BEFORE UPDATE ON decisions_decisionrecord
       WHEN OLD.status = 'APPROVED' AND NOT (NEW.status = 'SUPERSEDED'
         AND NEW.title IS OLD.title AND NEW.rationale IS OLD.rationale
         AND NEW.capacity_model IS OLD.capacity_model
         AND NEW.acceptance_criteria IS OLD.acceptance_criteria
         AND NEW.required_roles IS OLD.required_roles AND NEW.alternatives IS OLD.alternatives)
       BEGIN SELECT RAISE(ABORT, 'an APPROVED decision record can only be superseded'); END;""",
]


def restore_triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(PG_GUARD, params=None)
    elif vendor == "sqlite":
        for statement in [*SQLITE_DROP, *SQLITE]:
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [
        ("decisions", "0006_approval_acknowledged_warnings"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="decisionrecord",
            name="decision_one_chosen_candidate",
        ),
        migrations.AddField(
            model_name="decisionrecord",
            name="chosen_plan",
            field=models.CharField(
                blank=True,
                choices=[
                    ("MIX", "GPU mix by request size"),
                    ("DISAGG", "Disaggregated prefill / decode"),
                ],
                max_length=8,
            ),
        ),
        migrations.AddConstraint(
            model_name="decisionrecord",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(
                        ("chosen_quote__isnull", False),
                        ("chosen_api_route__isnull", False),
                        _negated=True,
                    ),
                    models.Q(
                        ("chosen_quote__isnull", False),
                        models.Q(("chosen_plan", ""), _negated=True),
                        _negated=True,
                    ),
                    models.Q(
                        ("chosen_api_route__isnull", False),
                        models.Q(("chosen_plan", ""), _negated=True),
                        _negated=True,
                    ),
                ),
                name="decision_one_chosen_candidate",
            ),
        ),
        migrations.RunPython(restore_triggers, migrations.RunPython.noop),
    ]
