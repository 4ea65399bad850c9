"""Tasks enqueued by name (so the enqueuing module need not import the task's module) are
registered under that name."""

from celery import current_app

from apps.finance import tasks  # noqa: F401  (registers the finance tasks)
from apps.finance.services import RECOMPUTE_TASK


def test_the_recompute_is_enqueued_under_the_name_its_task_is_registered_with():

    assert current_app.tasks[RECOMPUTE_TASK].name == RECOMPUTE_TASK
