"""Health of the two things every request needs: the database and the task queue."""

from typing import Any

from celery import current_app
from django.conf import settings
from django.db import connection


def database_status() -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any driver error means "down"
        return {"ok": False, "vendor": connection.vendor, "error": exc.__class__.__name__}
    return {"ok": True, "vendor": connection.vendor}


def queue_status() -> dict[str, Any]:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return {"ok": True, "mode": "in-process"}
    try:
        with current_app.connection_for_write(settings.CELERY_BROKER_URL) as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, timeout=2)
    except Exception as exc:  # kombu raises OperationalError and friends when the broker is down
        return {"ok": False, "mode": "broker", "error": exc.__class__.__name__}
    return {"ok": True, "mode": "broker"}
