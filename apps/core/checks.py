"""System checks that keep production honest."""

from typing import Any

from django.conf import settings
from django.core.checks import Error, register


@register()
def production_needs_real_services(app_configs: Any, **kwargs: Any) -> list[Error]:
    """Production runs on PostgreSQL with a real broker: SQLite or in-process tasks lose work.

    Active under production settings (settings.PRODUCTION) on every command that runs the
    checks (migrate, runserver, check), so the web container refuses to start; and always
    under ``check --deploy``."""
    if not (getattr(settings, "PRODUCTION", False) or kwargs.get("include_deployment_checks")):
        return []
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
