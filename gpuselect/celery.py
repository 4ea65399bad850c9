"""The Celery application. Tasks are discovered in each app's tasks.py."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gpuselect.settings.local")

app = Celery("gpuselect")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The sweeper re-enqueues candidate tables whose recompute was lost (a worker killed, a broker
# restarted); run `celery -A gpuselect beat` beside the worker (docker-compose.yml does).
app.conf.beat_schedule = {
    "sweep-stale-candidate-tables": {
        "task": "finance.candidate_tables_sweep",
        "schedule": 60.0,
    }
}
