from django.apps import AppConfig
from django.core.signals import request_started


class FinanceConfig(AppConfig):
    name = "apps.finance"
    label = "finance"

    def ready(self) -> None:
        # Without a broker, the first request a server process answers starts the in-process
        # sweeper (management commands answer none, so migrate and friends never start it).
        request_started.connect(_start_in_process_sweeper, dispatch_uid="gpuselect-sweeper")


def _start_in_process_sweeper(**kwargs: object) -> None:
    # Imported when the first request starts, not at app loading: tasks.py imports the models,
    # which the app registry may not have loaded when this module is imported (no cycle).
    from .tasks import in_process_sweeper_start

    if in_process_sweeper_start():
        request_started.disconnect(dispatch_uid="gpuselect-sweeper")
