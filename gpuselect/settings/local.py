"""The embedded default used by ``make run``: SQLite, tasks in-process, served by gunicorn
(gpuselect/gunicorn_embedded.py) with DEBUG off, so every error page is the app's own
(templates/404.html, 500.html) and no debug page lists the URL patterns or settings.
``make dev`` runs Django's development server with DJANGO_DEBUG=true instead."""

from .base import *  # noqa: F403
from .base import env

DEBUG = env.bool("DJANGO_DEBUG", default=False)
# The demo dataset (apps/demo; users with a public password) may be loaded here only.
DEMO_DATA_ALLOWED = True

# Tasks run in-process (no broker): a bug in a recompute is logged and leaves its table stale,
# it does not turn the request that committed the change into a 500 (the tests keep base's
# True, so a bug shows where it happens there).
CELERY_TASK_EAGER_PROPAGATES = False
# Nothing runs celery beat here, so each server process sweeps stale candidate tables itself
# (apps.finance.tasks.in_process_sweeper_start). Every 10 s rather than beat's 60 s: a table a
# locked database left behind is recomputed within seconds, and a sweep with nothing to do is
# one indexed query.
IN_PROCESS_SWEEP_INTERVAL_S = env.float("IN_PROCESS_SWEEP_INTERVAL_S", default=10.0)
