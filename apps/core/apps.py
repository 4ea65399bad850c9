from django.apps import AppConfig
from django.core.signals import request_started


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        from . import (
            checks,  # noqa: F401  (registers the system checks)
            schema,  # noqa: F401  (registers the OpenAPI field extensions)
            signals,  # noqa: F401  (revokes API tokens on a password change or deactivation)
        )

        # Without a broker, the first request a server process answers starts the in-process
        # sweeper (management commands answer none, so migrate and friends never start it).
        request_started.connect(_start_in_process_sweeper, dispatch_uid="gpuselect-sweeper")


def _start_in_process_sweeper(**kwargs: object) -> None:
    from apps.finance.tasks import in_process_sweeper_start

    if in_process_sweeper_start():
        request_started.disconnect(dispatch_uid="gpuselect-sweeper")
