"""Candidate tables: asking for a recompute, and doing it.

A change to any input marks the brief's table stale (``requested_version`` moves on) and
enqueues one recompute after the transaction commits. The recompute is safe to run twice and
never writes an older result over a newer one: it writes only if the version it computed is
still the one requested.
"""

from django.db import transaction
from django.utils import timezone

from apps.briefs.models import WorkloadBrief
from apps.engine import ENGINE_VERSION

from .models import CandidateTable


def inputs_fingerprint(brief: WorkloadBrief) -> str:
    """Which version of the inputs a table reflects (grows as quotes and runs join in)."""
    return f"brief:{brief.inputs_version}"


@transaction.atomic
def candidate_table_request_recompute(*, brief: WorkloadBrief) -> CandidateTable:
    from .tasks import candidate_table_recompute_task

    table, _ = CandidateTable.objects.select_for_update().get_or_create(brief=brief)
    table.requested_version = inputs_fingerprint(brief)
    table.recompute_requested_at = timezone.now()
    table.save(update_fields=["requested_version", "recompute_requested_at", "updated_at"])
    candidate_table_recompute_task.delay_on_commit(brief_id=brief.pk)
    return table


@transaction.atomic
def candidate_table_recompute(*, brief_id: int) -> CandidateTable | None:
    """Recompute one brief's table; a no-op when the table is already current."""
    brief = WorkloadBrief.objects.filter(pk=brief_id).first()
    if brief is None:
        return None
    version = inputs_fingerprint(brief)
    table, _ = CandidateTable.objects.select_for_update().get_or_create(brief=brief)
    if table.inputs_version == version and table.computed_at is not None:
        return table
    table.success_unit = brief.success_unit
    table.inputs_version = version
    table.requested_version = version
    table.engine_version = ENGINE_VERSION
    table.computed_at = timezone.now()
    table.save()
    return table
