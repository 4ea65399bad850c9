from celery import shared_task
from django.db import InterfaceError, OperationalError

from .services import candidate_tables_recompute, candidate_tables_sweep

# Only transient database errors are retried (a restarted PostgreSQL, a dropped connection);
# anything else is a bug to see, and the sweeper re-enqueues the stale table later anyway.
TRANSIENT = (OperationalError, InterfaceError)


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


@shared_task(name="finance.candidate_tables_sweep", ignore_result=True)
def candidate_tables_sweep_task() -> None:
    candidate_tables_sweep()
