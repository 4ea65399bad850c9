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
from apps.catalog.selectors import one_catalog_version
from apps.core import bounds
from apps.core.currency import BASE_CURRENCY, Currency
from apps.quotes.models import Quote

from .candidates import candidate_table_build
from .models import CandidateRow, CandidateTable, FinanceAssumptions, FxRate
from .plans import PLAN_KINDS
from .repricing import tables_reprice
from .version_sets import version_sets_sweep
from .writes import tables_write

logger = logging.getLogger(__name__)

# Briefs recomputed by one task (measured with bench/recompute.py). A full recompute (the
# engine's answer, ~2,000 rows costed and written) takes a few hundred ms, so a task holds
# two and the workers share a burst evenly (with one a task, sending 200 tasks starts to
# cost). Re-costing only the quotes that changed takes a few ms a table when tables are done
# together (apps.finance.repricing), so those go many to a task: a price change touching
# every brief is two tasks, which two workers share.
FULL_RECOMPUTE_BATCH = 2
REPRICE_BATCH = 100
# A request that needs more tasks than this sends one task that sends them (from a worker).
FAN_OUT_AFTER = 8

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
SEND_TASK = "finance.candidate_tables_send"  # the fan-out task (apps.finance.tasks)


def _batches(brief_ids: list[int]) -> list[list[int]]:
    """The tasks to send: tables that only need changed quotes re-costed, REPRICE_BATCH to a
    task, the others FULL_RECOMPUTE_BATCH to a task (the task looks again when it runs)."""
    full_ids = set(
        CandidateTable.objects.filter(brief_id__in=brief_ids)
        .filter(Q(full_version__gt=F("computed_version")) | Q(computed_version=0))
        .values_list("brief_id", flat=True)
    )
    full = [pk for pk in brief_ids if pk in full_ids]
    reprice = [pk for pk in brief_ids if pk not in full_ids]
    return [
        *(reprice[i : i + REPRICE_BATCH] for i in range(0, len(reprice), REPRICE_BATCH)),
        *(full[i : i + FULL_RECOMPUTE_BATCH] for i in range(0, len(full), FULL_RECOMPUTE_BATCH)),
    ]


def _send_all(brief_ids: list[int]) -> None:
    """After commit, hand the recomputes to the broker (``_batches``); more than FAN_OUT_AFTER
    tasks go as one task that sends them from a worker (``candidate_tables_send``), so that
    the request that asked does not wait for a hundred broker round trips. Without a broker
    (``make run``, the tests) the recomputes run here and now instead."""
    # The Celery app's own setting (what apply_async would obey), which tests may switch.
    if current_app.conf.task_always_eager:
        _recompute_in_process(brief_ids)
        return
    batches = _batches(brief_ids)
    if len(batches) > FAN_OUT_AFTER:
        _send(SEND_TASK, [brief_ids])
    else:
        _send(RECOMPUTE_TASK, batches)


def candidate_tables_send(*, brief_ids: list[int]) -> None:
    """Send the recompute tasks of ``brief_ids`` (the fan-out task of a large request)."""
    _send(RECOMPUTE_TASK, _batches(brief_ids))


def _send(task_name: str, batches: list[list[int]]) -> None:
    """One task named ``task_name`` per batch (by name: apps.finance.tasks imports this
    module), over one producer (one broker connection). A broker that is down must neither
    turn a committed change into an error nor make it wait once per batch: the first failure
    stops, and the unsent tables are taken off the queue so that the next sweep sends them."""
    sent = 0
    try:
        with current_app.producer_or_acquire() as producer:
            for batch in batches:
                current_app.send_task(
                    task_name, kwargs={"brief_ids": batch}, retry=False, producer=producer
                )
                sent += 1
    except KombuOperationalError:
        unsent = [pk for left in batches[sent:] for pk in left]
        CandidateTable.objects.filter(brief_id__in=unsent).update(queued_at=None)
        logger.warning("broker unavailable; %d recomputes left to the sweeper", len(unsent))


def _recompute_in_process(brief_ids: list[int]) -> None:
    """The in-process stand-in for the worker, run after the change committed: nothing here may
    turn that committed change into an error. A transient database error (SQLite's "database
    is locked" while other requests write, a dropped connection) is retried with back-off, one
    table at a time; a table still failing is taken off the queue for the sweeper, which runs
    in-process too (apps.finance.tasks.in_process_sweeper_start)."""
    done: set[int] = set()
    for start in range(0, len(brief_ids), REPRICE_BATCH):
        batch = brief_ids[start : start + REPRICE_BATCH]
        try:  # the tables where only quotes changed, together (else one by one below)
            done |= candidate_tables_reprice(brief_ids=batch)
        except TRANSIENT_DB_ERRORS:
            _reset_if_broken()
        except Exception:
            _failed(batch)  # each table is tried again below, one at a time
    left = [pk for pk in brief_ids if pk not in done and not _recompute_with_retry(pk)]
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
def candidate_tables_request_recompute(
    *, brief_ids: Iterable[int] | None = None, quotes_only: bool = False
) -> list[int]:
    """Mark the tables of ``brief_ids`` (default: every brief) stale and enqueue their
    recompute after commit, once per table however many changes arrive meanwhile.
    ``quotes_only``: the change is to quotes or API routes alone (a price, a new, retired or
    re-scoped quote), so a table with nothing else pending re-costs only those
    (apps.finance.repricing); any other change asks for a full recompute.
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
    bump: dict[str, Any] = {"requested_version": F("requested_version") + 1}
    if not quotes_only:  # every right-hand side reads the row as it was (SQL semantics)
        bump["full_version"] = F("requested_version") + 1
    CandidateTable.objects.filter(brief_id__in=wanted).update(**bump, updated_at=timezone.now())
    to_enqueue = [brief_id for brief_id, queued_at in locked if queued_at is None]
    CandidateTable.objects.filter(brief_id__in=to_enqueue).update(queued_at=timezone.now())
    _enqueue(to_enqueue)
    return to_enqueue


#: How a failed recompute is logged (at ERROR, with its traceback): the live fuzz
#: (scripts/fuzz-live) fails a run whose server log holds it.
RECOMPUTE_FAILED = "recompute of briefs %s failed; left stale for the sweeper"


def _failed(brief_ids: Any) -> None:
    logger.exception(RECOMPUTE_FAILED, brief_ids)
    if settings.CELERY_TASK_ALWAYS_EAGER and settings.CELERY_TASK_EAGER_PROPAGATES:
        raise  # in-process in the tests: show the bug where it happened


def candidate_tables_recompute(*, brief_ids: Iterable[int]) -> None:
    """Recompute several tables: those where only quotes or routes changed are re-costed
    together (``candidate_tables_reprice``), the others one after the other. One failing does
    not stop the rest (its table stays stale for the sweeper); transient database errors are
    raised to retry."""
    ids = list(brief_ids)
    done: set[int] = set()
    recompute = candidate_table_recompute
    try:
        with one_catalog_version():  # one version for the batch
            done = candidate_tables_reprice(brief_ids=ids)
    except TRANSIENT_DB_ERRORS:
        raise
    except Exception:
        _failed(ids)
        recompute = _candidate_table_recompute_full  # each table in full, one at a time
    for brief_id in ids:
        if brief_id in done:
            continue
        try:
            with one_catalog_version():  # one version for each table's compute
                recompute(brief_id=brief_id)
        except TRANSIENT_DB_ERRORS:
            raise
        except Exception:
            _failed(brief_id)


def candidate_table_request_recompute(*, brief: WorkloadBrief) -> CandidateTable:
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    return CandidateTable.objects.get(brief=brief)


def _fast_commit() -> None:
    """Commit the current transaction without waiting for its WAL to reach disk (PostgreSQL's
    per-transaction ``synchronous_commit = off``). A candidate table is derived data: a server
    crash can lose such a commit, whole and never half (https://www.postgresql.org/docs/current/
    wal-async-commit.html), and the table is then stale again and recomputed by the sweeper.
    A recompute writes thousands of rows; waiting for their flush is most of its commit."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")


def candidate_tables_reprice(*, brief_ids: Iterable[int]) -> set[int]:
    """Re-cost together the tables of ``brief_ids`` where only quotes or API routes changed
    since their last compute (apps.finance.repricing), each as ``candidate_table_recompute``
    would: taken off the queue first, written only over the result it started from. Returns
    the brief ids that are now done (those already current included); the others need
    ``candidate_table_recompute``."""
    with transaction.atomic():
        states = list(
            CandidateTable.objects.select_for_update(no_key=True)
            .filter(brief_id__in=list(brief_ids))
            .order_by("brief_id")
            .values("pk", "brief_id", "requested_version", "computed_version", "full_version")
        )
        current = [s for s in states if s["computed_version"] >= s["requested_version"]]
        cheap = [
            s
            for s in states
            if 0 < s["computed_version"] < s["requested_version"]
            and s["full_version"] <= s["computed_version"]
        ]
        taken = [s["pk"] for s in current + cheap]
        if taken:
            CandidateTable.objects.filter(pk__in=taken).update(
                queued_at=None, updated_at=timezone.now()
            )
    done = {s["brief_id"] for s in current}
    if not cheap:
        return done
    plans, _ = tables_reprice([{k: int(str(v)) for k, v in s.items()} for s in cheap])
    with transaction.atomic():
        _fast_commit()
        locked = {
            t.pk: t
            for t in CandidateTable.objects.select_for_update(no_key=True)
            .defer(*WRITE_ONLY_JSON)
            .filter(pk__in=[p.table_id for p in plans])
            .order_by("brief_id")
        }
        writes = []
        for plan in plans:
            table = locked.get(plan.table_id)
            if table is None or table.computed_version >= plan.version:
                done.add(plan.brief_id)  # gone, or a newer result was written meanwhile
            elif table.computed_version == plan.base:
                writes.append((table, plan.built, plan.version))
                done.add(plan.brief_id)
            # else an older recompute wrote meanwhile: our change is relative to rows that
            # are gone; the caller starts that table again.
        tables_write(writes)
    return done


def candidate_table_recompute(*, brief_id: int) -> CandidateTable | None:
    """Recompute one brief's table from the database as it is now: only its changed quotes
    and routes when nothing else changed since its last compute, else in full."""
    with one_catalog_version():
        if brief_id in candidate_tables_reprice(brief_ids=[brief_id]):
            return CandidateTable.objects.filter(brief_id=brief_id).first()
        return _candidate_table_recompute_full(brief_id=brief_id)


def _candidate_table_recompute_full(*, brief_id: int) -> CandidateTable | None:
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
        _fast_commit()
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
    tables_write([(table, built, version)])


def candidate_tables_sweep() -> list[int]:
    """Re-enqueue stale tables whose recompute was never queued or looks lost, and delete the
    version sets no table names any more (apps.finance.version_sets): after the tables are
    sent, so that a locked database in that housekeeping never keeps them stale."""
    lost_before = timezone.now() - LOST_TASK_AFTER
    with transaction.atomic():
        stale = CandidateTable.objects.select_for_update(skip_locked=True).filter(
            Q(queued_at__isnull=True) | Q(queued_at__lt=lost_before),
            computed_version__lt=F("requested_version"),
        )
        brief_ids = list(stale.values_list("brief_id", flat=True))
        CandidateTable.objects.filter(brief_id__in=brief_ids).update(queued_at=timezone.now())
        _enqueue(brief_ids)
    version_sets_sweep()
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
    # A serving plan (MIX, DISAGG) may hold any quote its table's team saw: the plans of the
    # affected tables go too (the recompute already requested rebuilds them from what the team
    # sees now).
    plans = CandidateRow.objects.filter(candidate_kind__in=PLAN_KINDS)
    if brief_ids is not None:
        plans = plans.filter(table__brief_id__in=list(brief_ids))
    if quote_ids is not None:
        teams = Quote.objects.filter(pk__in=list(quote_ids), confidential_to__isnull=False)
        plans = plans.exclude(table__brief__team_id__in=teams.values("confidential_to_id"))
        if not teams.exists():
            plans = plans.none()
    found = list(dict([*found, *plans.values_list("pk", "table_id")]).items())
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
    problem = "A rate is required." if rate is None else bounds.fx_rate_problem(rate)
    if problem:
        errors["rate"] = [problem]
    if errors:
        raise ValidationError(errors)
    row = FxRate(currency=currency, rate=rate, as_of=as_of, source=source, created_by=created_by)
    row.full_clean()
    row.save()
    candidate_tables_request_recompute()
    return row
