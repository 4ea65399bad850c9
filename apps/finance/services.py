"""Candidate tables: asking for a recompute, and doing it.

A change to any input (brief, quote, API route, benchmark run, finance assumption) bumps the
affected tables' ``requested_version`` in the same transaction and enqueues one recompute per
table after it commits. While a recompute waits in the queue (``queued_at`` set) further
changes only bump the version, so a burst of edits causes one recompute per brief. The
recompute is safe to run twice and never writes an older result over a newer one: it records
the version it started from and writes only if nothing newer has been written since.
"""

import logging
import time
from collections.abc import Iterable
from datetime import date, timedelta
from decimal import Decimal
from functools import partial
from typing import Any

from celery import current_app
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone
from kombu.exceptions import OperationalError as KombuOperationalError

from apps.briefs.models import WorkloadBrief
from apps.core.currency import BASE_CURRENCY, Currency

from .candidates import candidate_table_build
from .capacity import capacity_model_for
from .models import CandidateRow, CandidateTable, FinanceAssumptions, FxRate
from .rows import rows_insert
from .sensitivity import sensitivity_update

logger = logging.getLogger(__name__)

# Briefs recomputed by one task: large enough that a quote edit touching every brief is a few
# tasks, small enough that several workers share a burst (measured with bench/recompute.py).
RECOMPUTE_BATCH = 25

# A queued recompute not started after this long is assumed lost (worker killed, broker
# restarted) and is enqueued again by the sweeper.
LOST_TASK_AFTER = timedelta(minutes=2)

# Transient database errors: the same statement can succeed later (SQLite's "database is locked"
# while another connection writes, a restarted PostgreSQL, a dropped connection).
TRANSIENT_DB_ERRORS = (OperationalError, InterfaceError)

# Without a broker a recompute that meets a transient error is tried this many times, waiting
# IN_PROCESS_BACKOFF_S, then twice that, ... between tries (0.25 + 0.5 + 1 s: each try already
# waits up to the database's busy timeout for the lock, so a locked database means real
# contention; the in-process sweeper gets what is left, within seconds).
IN_PROCESS_ATTEMPTS = 4
IN_PROCESS_BACKOFF_S = 0.25

# A recompute's write step replaces these and does not read them (the build read them once).
WRITE_ONLY_JSON = ("inputs", "estimates", "capacity_model")

# The recompute task's registered name (apps.finance.tasks), enqueued by name.
RECOMPUTE_TASK = "finance.candidate_tables_recompute"


def _send_all(brief_ids: list[int]) -> None:
    """After commit, hand the recomputes to the broker, RECOMPUTE_BATCH briefs a task (a task's
    own overhead is as large as an incremental recompute). A broker that is down must neither
    turn a committed change into an error nor make it wait once per batch: the first failure
    stops, and the unsent tables are taken off the queue so the next sweep sends them.
    Without a broker (``make run``, the tests) the recomputes run here and now instead."""
    # The Celery app's own setting (what apply_async would obey), which tests may switch.
    if current_app.conf.task_always_eager:
        _recompute_in_process(brief_ids)
        return
    for start in range(0, len(brief_ids), RECOMPUTE_BATCH):
        batch = brief_ids[start : start + RECOMPUTE_BATCH]
        try:
            # By name (apps.finance.tasks imports this module): RECOMPUTE_TASK.
            current_app.send_task(RECOMPUTE_TASK, kwargs={"brief_ids": batch}, retry=False)
        except KombuOperationalError:
            unsent = brief_ids[start:]
            CandidateTable.objects.filter(brief_id__in=unsent).update(queued_at=None)
            logger.warning("broker unavailable; %d recomputes left to the sweeper", len(unsent))
            return


def _recompute_in_process(brief_ids: list[int]) -> None:
    """The in-process stand-in for the worker, run after the change committed: nothing here may
    turn that committed change into an error. A transient database error (SQLite's "database
    is locked" while other requests write, a dropped connection) is retried with back-off, one
    table at a time; a table still failing is taken off the queue for the sweeper, which runs
    in-process too (apps.finance.tasks.in_process_sweeper_start)."""
    left = [brief_id for brief_id in brief_ids if not _recompute_with_retry(brief_id)]
    if left:
        _leave_for_sweeper(left)


def _recompute_with_retry(brief_id: int) -> bool:
    """True once the table is recomputed; False when every attempt met a transient error."""
    for attempt in range(IN_PROCESS_ATTEMPTS):
        try:
            candidate_tables_recompute(brief_ids=[brief_id])
        except TRANSIENT_DB_ERRORS as exc:
            _reset_if_broken()
            if attempt + 1 < IN_PROCESS_ATTEMPTS:
                time.sleep(IN_PROCESS_BACKOFF_S * 2**attempt)
            else:
                logger.warning(
                    "recompute of brief %s failed %d times (%s); left to the sweeper",
                    brief_id,
                    IN_PROCESS_ATTEMPTS,
                    exc,
                )
        else:
            return True
    return False


def _leave_for_sweeper(brief_ids: list[int]) -> None:
    """Take the tables off the queue so that the next sweep sends them again. If even that
    cannot be written now, they stay queued and the sweeper takes them as lost after
    LOST_TASK_AFTER: later, but never pending for good."""
    for attempt in range(IN_PROCESS_ATTEMPTS):
        try:
            CandidateTable.objects.filter(brief_id__in=brief_ids).update(queued_at=None)
        except TRANSIENT_DB_ERRORS:
            _reset_if_broken()
            if attempt + 1 < IN_PROCESS_ATTEMPTS:
                time.sleep(IN_PROCESS_BACKOFF_S * 2**attempt)
        else:
            return
    logger.warning("%d tables left queued; swept as lost after %s", len(brief_ids), LOST_TASK_AFTER)


def _reset_if_broken() -> None:
    """Drop a connection that a transient error left unusable (outside a transaction only:
    inside one, e.g. a test's, the caller owns it)."""
    if not connection.in_atomic_block:
        connection.close_if_unusable_or_obsolete()


def _enqueue(brief_ids: Iterable[int]) -> None:
    ids = list(brief_ids)
    if ids:
        transaction.on_commit(partial(_send_all, ids))


@transaction.atomic
def candidate_tables_request_recompute(*, brief_ids: Iterable[int] | None = None) -> list[int]:
    """Mark the tables of ``brief_ids`` (default: every brief) stale and enqueue their
    recompute after commit, once per table however many changes arrive meanwhile.
    Returns the brief ids whose recompute was enqueued now."""
    briefs = WorkloadBrief.objects.all()
    if brief_ids is not None:
        briefs = briefs.filter(pk__in=list(brief_ids))
    wanted = set(briefs.values_list("pk", flat=True))
    existing = set(
        CandidateTable.objects.filter(brief_id__in=wanted).values_list("brief_id", flat=True)
    )
    CandidateTable.objects.bulk_create(
        [CandidateTable(brief_id=pk) for pk in sorted(wanted - existing)],
        ignore_conflicts=True,
    )
    # Lock the tables in one order (brief id) so that concurrent requests cannot deadlock;
    # NO KEY UPDATE leaves the worker free to insert rows that reference them.
    locked = list(
        CandidateTable.objects.select_for_update(no_key=True)
        .filter(brief_id__in=wanted)
        .order_by("brief_id")
        .values_list("brief_id", "queued_at")
    )
    CandidateTable.objects.filter(brief_id__in=wanted).update(
        requested_version=F("requested_version") + 1, updated_at=timezone.now()
    )
    to_enqueue = [brief_id for brief_id, queued_at in locked if queued_at is None]
    CandidateTable.objects.filter(brief_id__in=to_enqueue).update(queued_at=timezone.now())
    _enqueue(to_enqueue)
    return to_enqueue


def candidate_tables_recompute(*, brief_ids: Iterable[int]) -> None:
    """Recompute several tables, one after the other; one failing does not stop the rest
    (its table stays stale for the sweeper), transient database errors are raised to retry."""
    for brief_id in brief_ids:
        try:
            candidate_table_recompute(brief_id=brief_id)
        except TRANSIENT_DB_ERRORS:
            raise
        except Exception:
            logger.exception("recompute of brief %s failed; left stale for the sweeper", brief_id)
            if settings.CELERY_TASK_ALWAYS_EAGER and settings.CELERY_TASK_EAGER_PROPAGATES:
                raise  # in-process in the tests: show the bug where it happened


def candidate_table_request_recompute(*, brief: WorkloadBrief) -> CandidateTable:
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    return CandidateTable.objects.get(brief=brief)


def candidate_table_recompute(*, brief_id: int) -> CandidateTable | None:
    """Recompute one brief's table from the database as it is now.

    Step 1 takes the table off the queue and notes the version asked for; step 2 computes
    outside any lock; step 3 writes only if no newer result was written meanwhile.
    """
    with transaction.atomic():
        table = (
            CandidateTable.objects.select_for_update(no_key=True).filter(brief_id=brief_id).first()
        )
        if table is None:
            return None
        table.queued_at = None
        table.save(update_fields=["queued_at", "updated_at"])
        version = table.requested_version
        base = table.computed_version
        if base >= version:
            return table  # already current: running twice is harmless
    brief = WorkloadBrief.objects.select_related("team").get(pk=brief_id)
    built = candidate_table_build(brief=brief, table=table)
    with transaction.atomic():
        # The large JSON fields are only written here, never read: not fetched again.
        table = (
            CandidateTable.objects.select_for_update(no_key=True)
            .defer(*WRITE_ONLY_JSON)
            .get(brief_id=brief_id)
        )
        if table.computed_version >= version:
            return table  # a newer result was written while we computed
        stale_base = table.computed_version != base
        if not (stale_base and not built.replace_all):
            _write(table, built, version)
            return table
    # An older recompute wrote while we computed: our incremental change is relative to
    # rows that are gone. Start again from what is there now.
    return candidate_table_recompute(brief_id=brief_id)


def _write(table: CandidateTable, built: Any, version: int) -> None:
    rows = CandidateRow.objects.filter(table=table)
    if not built.replace_all:
        rows = rows.filter(
            Q(quote_id__in=built.stale_quote_ids) | Q(api_route_id__in=built.stale_route_ids)
        )
    rows.delete()
    rows_insert(table, built.rows)
    for name, value in built.table_fields.items():
        setattr(table, name, value)
    fields = [*built.table_fields, "computed_version", "computed_at", "updated_at"]
    if built.context is not None and built.capacity_model_affected:
        table.capacity_model = capacity_model_for(built.context, table)
        fields.append("capacity_model")
    fields += sensitivity_update(table, built)  # apps.finance.sensitivity
    table.computed_version = version
    table.computed_at = timezone.now()
    table.save(update_fields=fields)


def candidate_tables_sweep() -> list[int]:
    """Re-enqueue stale tables whose recompute was never queued or looks lost."""
    lost_before = timezone.now() - LOST_TASK_AFTER
    with transaction.atomic():
        stale = CandidateTable.objects.select_for_update(skip_locked=True).filter(
            Q(queued_at__isnull=True) | Q(queued_at__lt=lost_before),
            computed_version__lt=F("requested_version"),
        )
        brief_ids = list(stale.values_list("brief_id", flat=True))
        CandidateTable.objects.filter(brief_id__in=brief_ids).update(queued_at=timezone.now())
        _enqueue(brief_ids)
    return brief_ids


@transaction.atomic
def finance_assumptions_update(*, brief: WorkloadBrief | None, **fields: Any) -> FinanceAssumptions:
    """Set organisation defaults (brief None) or one brief's overrides; blank = inherit.
    Every brief's table (defaults) or this brief's table (override) is recomputed."""
    if brief is None:
        row, _ = FinanceAssumptions.objects.select_for_update(no_key=True).get_or_create(
            is_default=True
        )
    else:
        row, _ = FinanceAssumptions.objects.select_for_update(no_key=True).get_or_create(
            brief=brief
        )
    changed = [name for name, value in fields.items() if getattr(row, name) != value]
    if not changed:
        return row
    for name in changed:
        setattr(row, name, fields[name])
    row.full_clean()
    row.version = F("version") + 1
    row.save(update_fields=[*changed, "version", "updated_at"])
    row.refresh_from_db()
    candidate_tables_request_recompute(brief_ids=None if brief is None else [brief.pk])
    return row


@transaction.atomic
def candidate_rows_drop_invisible(
    *, brief_ids: Iterable[int] | None = None, quote_ids: Iterable[int] | None = None
) -> int:
    """Delete now the candidate rows whose quote is confidential to a team other than the
    brief's, and the capacity comparison of their tables (it may quote those prices).

    Called in the transaction that makes a quote confidential or moves a brief to another
    team, after ``candidate_tables_request_recompute``: nobody sees the rows in between, and
    the recompute that follows rebuilds the comparison. Returns how many rows went."""
    rows = CandidateRow.objects.filter(quote__confidential_to__isnull=False).filter(
        ~Q(quote__confidential_to_id=F("table__brief__team_id"))
    )
    if brief_ids is not None:
        rows = rows.filter(table__brief_id__in=list(brief_ids))
    if quote_ids is not None:
        rows = rows.filter(quote_id__in=list(quote_ids))
    found = list(rows.values_list("pk", "table_id"))
    if not found:
        return 0
    CandidateRow.objects.filter(pk__in=[pk for pk, _ in found]).delete()
    CandidateTable.objects.filter(pk__in={table_id for _, table_id in found}).update(
        capacity_model={}, sensitivity={}, updated_at=timezone.now()
    )
    return len(found)


@transaction.atomic
def fx_rate_create(
    *, currency: str, rate: Decimal, as_of: date, source: str, created_by: Any = None
) -> FxRate:
    """Record a new FX rate (finance's table; rows are never edited) and recompute every
    brief's table: a rate moves the rows quoted in that currency and, through the cross rate,
    every row of a brief that reports in it. All briefs is the simple, always-right choice;
    rates change rarely (daily at most) and an unchanged table recomputes cheaply."""
    errors: dict[str, list[str]] = {}
    if currency not in Currency.values:
        errors["currency"] = [f"unknown currency {currency!r}"]
    elif currency == BASE_CURRENCY:
        errors["currency"] = [f"{BASE_CURRENCY} is the base currency: its rate is always 1"]
    if rate is None or not rate > 0:
        errors["rate"] = ["a rate must be greater than 0"]
    if errors:
        raise ValidationError(errors)
    row = FxRate(currency=currency, rate=rate, as_of=as_of, source=source, created_by=created_by)
    row.full_clean()
    row.save()
    candidate_tables_request_recompute()
    return row
