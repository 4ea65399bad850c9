"""Writes of briefs. Every change bumps the brief's inputs version and asks for a recompute."""

from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F

from apps.core.models import Team
from apps.finance.services import candidate_rows_drop_invisible, candidate_table_request_recompute

from .models import WorkloadBrief


@transaction.atomic
def brief_create(*, team: Team, created_by: User, **fields: Any) -> WorkloadBrief:
    brief = WorkloadBrief(team=team, created_by=created_by, **fields)
    brief.full_clean()
    brief.save()
    candidate_table_request_recompute(brief=brief)
    return brief


@transaction.atomic
def brief_update(*, brief: WorkloadBrief, **fields: Any) -> WorkloadBrief:
    brief = WorkloadBrief.objects.select_for_update(no_key=True).get(pk=brief.pk)
    changed = [name for name, value in fields.items() if getattr(brief, name) != value]
    if not changed:
        return brief
    for name in changed:
        setattr(brief, name, fields[name])
    brief.full_clean()
    brief.inputs_version = F("inputs_version") + 1
    brief.save(update_fields=[*changed, "inputs_version", "updated_at"])
    brief.refresh_from_db()
    candidate_table_request_recompute(brief=brief)
    if {"team", "team_id"} & set(changed):
        # The new team must not see, even until the recompute, what was confidential to the
        # old one: those rows go in this transaction.
        candidate_rows_drop_invisible(brief_ids=[brief.pk])
    return brief
