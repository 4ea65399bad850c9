# ruff: noqa: S603, S607  (runs the machine's own redis/pg tools and this repo's venv)
"""Process-level plumbing for the fault tests: the throwaway database, a Redis db and queue of
their own, real Celery worker processes, the driver subprocess, and breaking / restoring the
shared PostgreSQL and Redis daemons.

Nothing here imports Django: the pytest process only runs subprocesses and reads the throwaway
database with psycopg, so a PostgreSQL restart cannot leave it with a broken Django connection.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import psycopg

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = ROOT / ".venv" / "bin"
PYTHON = VENV_BIN / "python"
DRIVER = Path(__file__).resolve().parent / "driver.py"
PG_ADMIN_URL = os.environ.get(
    "FAULTS_PG_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)
PG_BASE_URL = PG_ADMIN_URL.rsplit("/", 1)[0]
REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379

# Exactly how CI (and this machine) runs Redis: no persistence, so a restart loses the queue.
REDIS_START = [
    "redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "-::1", "--port", "6379",
    "--save", "", "--appendonly", "no", "--dir", "/var/lib/redis",
    "--logfile", "/var/log/redis/ci.log",
]  # fmt: skip


class FaultError(AssertionError):
    pass


# --- shared services ---------------------------------------------------------------------------


def redis_ping(timeout: float = 1.0) -> bool:
    try:
        out = subprocess.run(
            ["redis-cli", "-h", REDIS_HOST, "-p", str(REDIS_PORT), "ping"],
            capture_output=True, text=True, timeout=timeout + 2,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.stdout.strip() == "PONG"


def redis_stop() -> None:
    subprocess.run(
        ["redis-cli", "-h", REDIS_HOST, "-p", str(REDIS_PORT), "shutdown", "nosave"],
        capture_output=True, timeout=10,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while redis_ping() and time.monotonic() < deadline:
        time.sleep(0.1)
    if redis_ping():
        raise FaultError("redis did not shut down")


def redis_start(wait: float = 20.0) -> float:
    t0 = time.monotonic()
    if not redis_ping():
        subprocess.run(REDIS_START, check=True, timeout=20, capture_output=True)
    while time.monotonic() - t0 < wait:
        if redis_ping():
            return time.monotonic() - t0
        time.sleep(0.1)
    raise FaultError(f"redis not answering PONG {wait} s after start")


def _pg_version() -> str:
    versions = sorted(os.listdir("/etc/postgresql"))
    return versions[-1]


def pg_ready() -> bool:
    out = subprocess.run(
        ["pg_isready", "-h", "127.0.0.1", "-p", "5432", "-t", "2"],
        capture_output=True, timeout=10,
    )  # fmt: skip
    return out.returncode == 0


def pg_wait_ready(wait: float = 60.0) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < wait:
        if pg_ready():
            return time.monotonic() - t0
        time.sleep(0.2)
    raise FaultError(f"PostgreSQL not ready {wait} s after restart")


def pg_restart() -> float:
    t0 = time.monotonic()
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", _pg_version(), "main", "restart"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    pg_wait_ready()
    return time.monotonic() - t0


def pg_start_if_down() -> None:
    if pg_ready():
        return
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", _pg_version(), "main", "start"],
        capture_output=True, timeout=120,
    )  # fmt: skip
    pg_wait_ready()


def restore_services() -> list[str]:
    """Leave PostgreSQL and Redis running whatever happened; returns what had to be done."""
    done = []
    if not redis_ping():
        redis_start()
        done.append("redis started")
    if not pg_ready():
        pg_start_if_down()
        done.append("postgresql started")
    return done


# --- the throwaway database, a Redis db, a queue -------------------------------------------------


def pick_redis_db() -> int:
    """An empty Redis database from 9..14 (bench/recompute.py takes 15 downwards)."""
    import redis

    for db in range(9, 15):
        if redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=db).dbsize() == 0:
            return db
    return 14


class FaultEnv:
    """One throwaway database + Redis db + queue, the env for every subprocess, and cleanup."""

    def __init__(self, workdir: Path) -> None:
        tag = f"{os.getpid()}_{uuid.uuid4().hex[:6]}"
        self.db_name = f"gpuselect_faults_{tag}"
        self.db_url = f"{PG_BASE_URL}/{self.db_name}"
        self.redis_db = pick_redis_db()
        self.broker = f"redis://{REDIS_HOST}:{REDIS_PORT}/{self.redis_db}"
        self.queue = f"faults-{tag}"
        self.workdir = workdir
        self.workers: list[Worker] = []
        self.created = False
        self._conn: psycopg.Connection[Any] | None = None
        self.env = dict(os.environ)
        for key in ("REDIS_URL", "DJANGO_SETTINGS_MODULE", "PYTEST_ADDOPTS"):
            self.env.pop(key, None)
        self.env.update(
            DJANGO_SETTINGS_MODULE="gpuselect.settings.local",
            DJANGO_DEBUG="false",
            DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost,testserver",
            DATABASE_URL=self.db_url,
            CELERY_BROKER_URL=self.broker,
            CELERY_QUEUE=self.queue,
            LOG_LEVEL="WARNING",
            PYTHONPATH=str(ROOT),
            PYTHONDONTWRITEBYTECODE="1",
        )

    # database
    def create(self) -> None:
        with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{self.db_name}"')
        self.created = True

    def sql(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """A query on the throwaway database; reconnects after a PostgreSQL restart."""
        for attempt in range(30):
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = psycopg.connect(self.db_url, autocommit=True, connect_timeout=3)
                return self._conn.execute(query, params).fetchall()
            except psycopg.OperationalError:
                if self._conn is not None:
                    self._conn.close()
                self._conn = None
                if attempt == 29:
                    raise
                time.sleep(0.2)
        raise AssertionError("unreachable")

    def in_progress(self) -> list[int]:
        """Tables a worker has taken off the queue but not written yet."""
        rows = self.sql(
            "SELECT brief_id FROM finance_candidatetable "
            "WHERE queued_at IS NULL AND computed_version < requested_version"
        )
        return [r[0] for r in rows]

    @contextlib.contextmanager
    def recompute_held(self, timeout: float = 90.0) -> Iterator[int]:
        """Wait until a worker is in the middle of a recompute and keep it there: lock that
        table's row, which the worker's final write (step 3 of ``candidate_table_recompute``)
        must lock too. Yields the brief id; whatever the test does to the worker meanwhile
        happens before the write, so a kill cannot miss. The lock goes on leaving (or with
        the connection, if PostgreSQL is restarted under it)."""
        deadline = time.monotonic() + timeout
        conn = psycopg.connect(self.db_url, connect_timeout=3)  # a transaction: the lock lasts
        try:
            while time.monotonic() < deadline:
                for brief_id in self.in_progress():
                    # Blocks while the worker writes; then reads the row as that write left it.
                    held = conn.execute(
                        "SELECT queued_at IS NULL AND computed_version < requested_version "
                        "FROM finance_candidatetable WHERE brief_id = %s FOR NO KEY UPDATE",
                        (brief_id,),
                    ).fetchone()
                    if held and held[0]:
                        yield brief_id
                        return
                    conn.rollback()  # written before the lock: wait for the next one
                time.sleep(0.005)
            raise FaultError(f"no recompute started within {timeout} s")
        finally:
            with contextlib.suppress(psycopg.Error):
                conn.rollback()
            conn.close()

    def queue_length(self) -> int:
        import redis

        return int(redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=self.redis_db).llen(self.queue))

    def close(self) -> list[str]:
        notes = []
        for worker in self.workers:
            worker.stop()
        if self._conn is not None:
            self._conn.close()
        if self.created:
            try:
                with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as conn:
                    conn.execute(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)')
                notes.append(f"dropped {self.db_name}")
            except psycopg.Error as exc:
                notes.append(f"could not drop {self.db_name}: {exc!r}")
        try:
            sys.path.insert(0, str(ROOT / "bench"))
            from recompute import clean_redis  # the bench's key cleanup, same layout

            for worker in self.workers:
                clean_redis(self.redis_db, self.queue, worker.hostname)
            clean_redis(self.redis_db, self.queue, self.queue)
        except Exception as exc:
            notes.append(f"redis cleanup failed: {exc!r}")
        return notes

    # the driver
    def driver(self, command: str, *args: str, timeout: float = 300.0) -> dict[str, Any]:
        proc = subprocess.run(
            [str(PYTHON), str(DRIVER), command, *args],
            cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
        return _parse(command, proc.returncode, proc.stdout, proc.stderr)

    def driver_start(self, command: str, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(PYTHON), str(DRIVER), command, *args],
            cwd=ROOT, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    def driver_finish(self, proc: subprocess.Popen[str], timeout: float) -> dict[str, Any]:
        out, err = proc.communicate(timeout=timeout)
        return _parse("(background)", proc.returncode, out, err)

    # workers
    def start_worker(self) -> Worker:
        worker = Worker(self, len(self.workers))
        self.workers.append(worker)
        worker.wait_ready()
        return worker

    def converge(self, *, rounds: int = 6, wait_s: float = 30.0) -> list[dict[str, Any]]:
        """What the beat-run sweeper does over time: wait for the queue, and whenever tables
        stay stale, sweep (aging queued_at past LOST_TASK_AFTER, i.e. letting 2 minutes
        pass). Returns the log of rounds; the last one says whether everything is current."""
        log = []
        for _ in range(rounds):
            waited = self.driver("wait", "--timeout", str(wait_s))
            log.append({"wait": waited})
            if waited.get("done"):
                break
            log.append({"sweep": self.driver("sweep", "--age")})
        return log


def _parse(command: str, rc: int, out: str, err: str) -> dict[str, Any]:
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if not lines:
        raise FaultError(
            f"driver {command} exited {rc} without JSON:\n{out[-2000:]}\n{err[-3000:]}"
        )
    result: dict[str, Any] = json.loads(lines[-1])
    if rc != 0 or "error" in result:
        raise FaultError(
            f"driver {command} failed: {result.get('error')}\n{result.get('traceback', '')}"
            f"\nstderr:\n{err[-2000:]}"
        )
    return result


class Worker:
    """``celery -A gpuselect worker --pool=prefork --concurrency=1`` on the test's own queue."""

    def __init__(self, env: FaultEnv, n: int) -> None:
        self.hostname = f"{env.queue}-w{n}@localhost"
        self.log = env.workdir / f"worker-{n}.log"
        cmd = [
            str(VENV_BIN / "celery"), "-A", "gpuselect", "worker", "--pool=prefork",
            "--concurrency=1", "-Q", env.queue, "-n", self.hostname, "--loglevel=INFO",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
        ]  # fmt: skip
        env_vars = dict(env.env, LOG_LEVEL="INFO")
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env_vars, stdout=self.log.open("wb"), stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip

    def wait_ready(self, limit: float = 60.0) -> None:
        t0 = time.monotonic()
        while time.monotonic() - t0 < limit:
            if self.proc.poll() is not None:
                raise FaultError(f"worker exited {self.proc.returncode}:\n{self.tail()}")
            if " ready." in self.log.read_text(errors="replace"):
                return
            time.sleep(0.2)
        raise FaultError(f"worker not ready after {limit} s:\n{self.tail()}")

    def children(self) -> list[int]:
        try:
            return [c.pid for c in psutil.Process(self.proc.pid).children()]
        except psutil.NoSuchProcess:
            return []

    def kill_child(self) -> int:
        kids = self.children()
        if len(kids) != 1:
            raise FaultError(f"expected one pool child, found {kids}")
        os.kill(kids[0], signal.SIGKILL)
        return kids[0]

    def kill_all(self) -> None:
        """SIGKILL the main process and its pool child (the whole worker is lost)."""
        kids = self.children()
        self.proc.kill()
        for pid in kids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        """Warm shutdown, then SIGKILL; only this worker's own processes."""
        if self.proc.poll() is None:
            kids = self.children()
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
            for pid in kids:
                if psutil.pid_exists(pid):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)

    def tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""
