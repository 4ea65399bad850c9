"""Fault tests: real worker processes, PostgreSQL and Redis restarted under them.

They restart the machine's shared PostgreSQL and Redis daemons, so they run only when
GPUSELECT_FAULTS=1 (otherwise every test here is skipped, saying why). Run them with:

    GPUSELECT_FAULTS=1 DJANGO_SETTINGS_MODULE=gpuselect.settings.test \
        .venv/bin/python -m pytest tests/faults -m faults -v -s

or, without pytest-django (a ``make test-faults`` target can use either line):

    GPUSELECT_FAULTS=1 .venv/bin/python -m pytest tests/faults -p no:django \
        --confcutdir=tests/faults -m faults -v -s

(``--confcutdir`` keeps tests/conftest.py, which imports Django models, from loading.) Nothing
in the pytest process imports Django: every Django step runs in tests/faults/driver.py
subprocesses against a throwaway PostgreSQL database (gpuselect_faults_<pid>_<hex>, created
and dropped here), the workers are ``celery worker --pool=prefork --concurrency=1`` processes
on a queue of their own in an empty Redis db (9..14), so pytest-django's test database is never
used. About 6 minutes. PostgreSQL and Redis are started again in ``finally`` whatever happens.
"""

import os
import shutil
import tempfile
from pathlib import Path

import pytest

ENABLED = os.environ.get("GPUSELECT_FAULTS") == "1"
SKIP_REASON = (
    "fault tests restart the shared PostgreSQL and Redis daemons; set GPUSELECT_FAULTS=1 to run "
    "them (needs PostgreSQL at 127.0.0.1:5432, user postgres, and Redis at 127.0.0.1:6379)"
)


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "faults: kills workers and restarts PostgreSQL/Redis (runs only with GPUSELECT_FAULTS=1)",
    )


def pytest_collection_modifyitems(config, items):
    if ENABLED:
        return
    skip = pytest.mark.skip(reason=SKIP_REASON)
    here = Path(__file__).resolve().parent
    for item in items:
        if Path(str(item.fspath)).resolve().parent == here:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def fault_env():
    """A throwaway database seeded with 20 briefs / 2,000 quotes, every table computed, three
    decision records; its own Redis db and queue. Dropped (and the services restored) at the end."""
    from .harness import FaultEnv, redis_ping, restore_services

    if not redis_ping():
        pytest.fail("Redis at 127.0.0.1:6379 does not answer PING")
    workdir = Path(tempfile.mkdtemp(prefix="gpuselect-faults-"))
    env = FaultEnv(workdir)
    try:
        env.create()
        env.setup = env.driver("setup", "--briefs", "20", "--quotes", "2000", timeout=600)
        yield env
    finally:
        notes = restore_services()
        notes += env.close()
        print(f"\nfault env cleanup: {notes}")
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture
def workers(fault_env):
    """Start workers with ``workers.start()``; every worker is stopped after the test, and the
    services are back up whatever the test did."""
    from .harness import restore_services

    started = []

    class Workers:
        def start(self):
            worker = fault_env.start_worker()
            started.append(worker)
            return worker

    try:
        yield Workers()
    finally:
        restore_services()
        for worker in started:
            worker.stop()
