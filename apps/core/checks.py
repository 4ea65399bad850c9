"""System checks that keep production honest."""

from typing import Any

from django.conf import settings
from django.core.checks import Error, register


@register(deploy=True)
def production_needs_real_services(app_configs: Any, **kwargs: Any) -> list[Error]:
    """Production runs on PostgreSQL with a real broker: SQLite or in-process tasks lose work."""
    errors = []
    engine = settings.DATABASES["default"]["ENGINE"]
    if "sqlite" in engine:
        errors.append(
            Error(
                "Production settings are running on SQLite.",
                hint="Set DATABASE_URL to a PostgreSQL database.",
                id="gpuselect.E001",
            )
        )
    if getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
        errors.append(
            Error(
                "Production settings run background tasks in-process.",
                hint="Set CELERY_BROKER_URL to a Redis broker and run a worker.",
                id="gpuselect.E002",
            )
        )
    return errors
