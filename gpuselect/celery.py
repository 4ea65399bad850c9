"""The Celery application. Tasks are discovered in each app's tasks.py."""

import gc
import os

from celery import Celery
from celery.signals import worker_init

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


# A recompute allocates ~1,850 row dicts and their Decimals a table, which sets off Python's
# cyclic garbage collector hundreds of times a table although the rows hold no cycles. In the
# worker, the objects loaded at start are frozen out of collection (gc.freeze:
# https://docs.python.org/3/library/gc.html#gc.freeze) and the youngest generation is collected
# every WORKER_GC_GEN0_THRESHOLD allocations instead of CPython's default 700 (the approach of
# "Dismissing Python Garbage Collection at Instagram", Instagram Engineering, 2017). Measured
# with bench/recompute.py (one worker, quiet machine): full recompute 79.9 s -> 69.6 s, price
# change 1.93 s -> 1.42 s.
WORKER_GC_GEN0_THRESHOLD = 50_000


@worker_init.connect  # in the worker's main process; a prefork pool's children inherit it
def _worker_gc_tuned(**_: object) -> None:
    gc.freeze()
    gc.set_threshold(WORKER_GC_GEN0_THRESHOLD, *gc.get_threshold()[1:])
