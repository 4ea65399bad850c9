"""Database triggers that keep the decision trail honest whatever path a write takes
(API, pages, admin, a service call, or raw SQL):

- audit events and approvals are append-only: no UPDATE, no DELETE;
- a record's snapshot and hash cannot change once it has left DRAFT;
- an APPROVED record can change only by being SUPERSEDED (status and the supersede link);
- REJECTED and SUPERSEDED records cannot change at all; only a DRAFT record can be deleted.

PostgreSQL and SQLite each get their own dialect. On SQLite the DELETE guards are left to the
ORM (models.AppendOnlyQuerySet, DecisionRecordQuerySet) because the test runner's flush empties
tables with DELETE there; PostgreSQL flushes with TRUNCATE, which row triggers do not see.
"""

from django.db import migrations

PG_FUNCTION = """
CREATE OR REPLACE FUNCTION gpuselect_append_only() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;

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
      OR NEW.chosen_api_route_id IS DISTINCT FROM OLD.chosen_api_route_id) THEN
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

CREATE TRIGGER auditevent_append_only BEFORE UPDATE OR DELETE ON decisions_auditevent
  FOR EACH ROW EXECUTE FUNCTION gpuselect_append_only();
CREATE TRIGGER approval_append_only BEFORE UPDATE OR DELETE ON decisions_approval
  FOR EACH ROW EXECUTE FUNCTION gpuselect_append_only();
CREATE TRIGGER decisionrecord_guard BEFORE UPDATE OR DELETE ON decisions_decisionrecord
  FOR EACH ROW EXECUTE FUNCTION gpuselect_decision_guard();
"""

PG_REVERSE = """
DROP TRIGGER IF EXISTS auditevent_append_only ON decisions_auditevent;
DROP TRIGGER IF EXISTS approval_append_only ON decisions_approval;
DROP TRIGGER IF EXISTS decisionrecord_guard ON decisions_decisionrecord;
DROP FUNCTION IF EXISTS gpuselect_decision_guard();
DROP FUNCTION IF EXISTS gpuselect_append_only();
"""

SQLITE = [
    """CREATE TRIGGER auditevent_no_update BEFORE UPDATE ON decisions_auditevent
       BEGIN SELECT RAISE(ABORT, 'decisions_auditevent is append-only'); END;""",
    """CREATE TRIGGER approval_no_update BEFORE UPDATE ON decisions_approval
       BEGIN SELECT RAISE(ABORT, 'decisions_approval is append-only'); END;""",
    """CREATE TRIGGER decisionrecord_closed BEFORE UPDATE ON decisions_decisionrecord
       WHEN OLD.status IN ('REJECTED', 'SUPERSEDED')
       BEGIN SELECT RAISE(ABORT, 'a REJECTED or SUPERSEDED decision record cannot change'); END;""",
    """CREATE TRIGGER decisionrecord_frozen BEFORE UPDATE ON decisions_decisionrecord
       WHEN OLD.status <> 'DRAFT' AND (NEW.snapshot IS NOT OLD.snapshot
         OR NEW.content_hash IS NOT OLD.content_hash OR NEW.brief_id IS NOT OLD.brief_id
         OR NEW.chosen_quote_id IS NOT OLD.chosen_quote_id
         OR NEW.chosen_api_route_id IS NOT OLD.chosen_api_route_id)
       BEGIN SELECT RAISE(ABORT, 'the frozen evidence of a decision record cannot change'); END;""",
    """CREATE TRIGGER decisionrecord_approved BEFORE UPDATE ON decisions_decisionrecord
       WHEN OLD.status = 'APPROVED' AND NOT (NEW.status = 'SUPERSEDED'
         AND NEW.title IS OLD.title AND NEW.rationale IS OLD.rationale
         AND NEW.capacity_model IS OLD.capacity_model
         AND NEW.acceptance_criteria IS OLD.acceptance_criteria
         AND NEW.required_roles IS OLD.required_roles AND NEW.alternatives IS OLD.alternatives)
       BEGIN SELECT RAISE(ABORT, 'an APPROVED decision record can only be superseded'); END;""",
]
SQLITE_REVERSE = [
    f"DROP TRIGGER IF EXISTS {name};"
    for name in (
        "auditevent_no_update", "approval_no_update", "decisionrecord_closed",
        "decisionrecord_frozen", "decisionrecord_approved",
    )
]  # fmt: skip


def forwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(PG_FUNCTION, params=None)
    elif vendor == "sqlite":
        for statement in SQLITE:
            schema_editor.execute(statement)


def backwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(PG_REVERSE, params=None)
    elif vendor == "sqlite":
        for statement in SQLITE_REVERSE:
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("decisions", "0001_initial")]

    operations = [migrations.RunPython(forwards, backwards)]
