import logging
import os
import threading
import time

from celery import shared_task
from django.conf import settings
from django.db import close_old_connections, connection

from .services import (
    TRANSIENT_DB_ERRORS,
    candidate_tables_recompute,
    candidate_tables_send,
    candidate_tables_sweep,
)

logger = logging.getLogger(__name__)

# Only transient database errors are retried (a restarted PostgreSQL, a dropped connection);
# anything else is a bug to see, and the sweeper re-enqueues the stale table later anyway.
TRANSIENT = TRANSIENT_DB_ERRORS


@shared_task(
    name="finance.candidate_tables_recompute",
    ignore_result=True,
    autoretry_for=TRANSIENT,
    retry_backoff=2,
    retry_backoff_max=60,
    max_retries=8,
)
def candidate_tables_recompute_task(*, brief_ids: list[int]) -> None:
    candidate_tables_recompute(brief_ids=brief_ids)


@shared_task(name="finance.candidate_tables_send", ignore_result=True)
def candidate_tables_send_task(*, brief_ids: list[int]) -> None:
    """The recompute tasks of a large request, sent from a worker (services._send_all)."""
    candidate_tables_send(brief_ids=brief_ids)


@shared_task(name="finance.candidate_tables_sweep", ignore_result=True)
def candidate_tables_sweep_task() -> None:
    candidate_tables_sweep()


# --- The sweeper without a broker -----------------------------------------------------------
# With a broker, celery beat runs the sweep (gpuselect/celery.py). Without one (``make run``)
# nothing would: a server process runs it itself, on a daemon thread, every
# IN_PROCESS_SWEEP_INTERVAL_S seconds (a setting only the embedded default's local.py sets).

_sweeper_lock = threading.Lock()
_sweeper_pid: int | None = None  # the process whose thread runs (a fork starts its own)


def in_process_sweeper_start() -> bool:
    """Start the in-process sweeper once per process when tasks run in-process and the
    settings ask for it; True if this call started it."""
    global _sweeper_pid
    interval = getattr(settings, "IN_PROCESS_SWEEP_INTERVAL_S", None)
    if not (settings.CELERY_TASK_ALWAYS_EAGER and interval):
        return False
    with _sweeper_lock:
        if _sweeper_pid == os.getpid():
            return False
        _sweeper_pid = os.getpid()
    thread = threading.Thread(
        target=_sweep_forever, args=(float(interval),), name="gpuselect-sweeper", daemon=True
    )
    thread.start()
    logger.info("in-process sweeper started (every %s s)", interval)
    return True


def _sweep_forever(interval: float) -> None:
    while True:
        time.sleep(interval)
        _sweep_once()


def _sweep_once() -> None:
    """One sweep; the recomputes it enqueues run on this thread (in-process, after commit).
    Nothing it meets stops the thread: a locked database is tried again next time."""
    _close_old_connections()
    try:
        swept = candidate_tables_sweep()
        if swept:
            logger.warning("in-process sweeper: recomputed %d stale tables", len(swept))
    except TRANSIENT_DB_ERRORS as exc:
        logger.info("in-process sweep skipped (%s); next in a moment", exc)
    except Exception:
        logger.exception("in-process sweep failed")
    finally:
        _close_old_connections()


def _close_old_connections() -> None:
    """What Django does around a request: drop a broken or expired connection (never one in
    the middle of a transaction, such as a test's)."""
    if not connection.in_atomic_block:
        close_old_connections()
