from celery import shared_task

from .services import candidate_table_recompute, candidate_tables_sweep


@shared_task(name="finance.candidate_table_recompute", ignore_result=True)
def candidate_table_recompute_task(*, brief_id: int) -> None:
    candidate_table_recompute(brief_id=brief_id)


@shared_task(name="finance.candidate_tables_sweep", ignore_result=True)
def candidate_tables_sweep_task() -> None:
    candidate_tables_sweep()
