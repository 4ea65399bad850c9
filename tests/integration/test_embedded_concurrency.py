"""The embedded default (``make run``: SQLite, tasks in-process) holds a team writing at once.

Starts the real server ``make run`` uses (gunicorn with ``gpuselect/gunicorn_embedded.py``,
local settings, DEBUG off) on a throwaway SQLite file with the catalog and demo data, then
drives WRITERS concurrent clients through the API for LOAD_SECONDS: briefs created and patched
(each recomputes its table) and quote prices changed (each recomputes every table).
Afterwards: no server error was answered, every acknowledged write is in the database, and
every candidate table is computed (the in-process sweeper picks up whatever a locked database
made the in-process recompute give up).

SQLite only: with DATABASE_URL pointing at PostgreSQL the production shape is what is tested
(tests/integration/test_worker.py, tests/faults, bench/load.py).
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
# The load: a team of 8 writing at once for ~20 s.
WRITERS = 8
LOAD_SECONDS = 20.0
# A client gives up on one request after this long (a hung server is a failure, not a wait).
REQUEST_TIMEOUT_S = 60.0
# How long the tables may take to be computed after the load stops: the in-process sweeper's
# interval plus a few recomputes of every brief (the sweeper is bounded, so is this).
SETTLE_S = 120.0
SERVER_START_S = 60.0
# How ``make run`` starts its server (the Makefile's SERVE; tests/integration/test_make_run.py
# checks that the two agree): gunicorn with the embedded default's settings module.
SERVER_CONFIG = "python:gpuselect.gunicorn_embedded"
# How long a stopping server may take: gunicorn's graceful_timeout (10 s) and a margin.
SERVER_STOP_S = 15.0


def server_command(host: str, port: int) -> list[str]:
    """``make run``'s server command, on this interpreter's gunicorn."""
    return [sys.executable, "-m", "gunicorn", "--config", SERVER_CONFIG, "--bind", f"{host}:{port}"]


pytestmark = [
    pytest.mark.skipif(
        "sqlite" not in os.environ.get("DATABASE_URL", "sqlite"),
        reason="embedded-default (SQLite) load test; with DATABASE_URL on PostgreSQL the "
        "production shape (broker + worker) is tested by test_worker.py and tests/faults",
    ),
]

BRIEF_BODY = {
    "workload_type": "REALTIME_INFERENCE",
    "model": {"preset": "llama-3.1-8b"},
    "weight_precision": "FP8",
    "kv_cache_precision": "FP8",
    "input_tokens": {"p50": 1000, "p95": 4000},
    "output_tokens": {"p50": 200, "p95": 800},
    "concurrency": 32,
    "latency_target": {"ttft_p95_ms": 500, "itl_p95_ms": 50},
    "success_unit": "TOKEN",
    "acceptance_rate": 0.95,
    "duty_cycle": "ALWAYS_ON",
    "hours_per_month": 730,
    "operating_boundary": "PUBLIC_CLOUD",
    "tooling": ["VLLM"],
}

SETUP = """
import json, django
django.setup()
from django.contrib.auth import get_user_model
from django.core.management import call_command
from apps.core.services import api_token_create
from apps.quotes.models import Provider
call_command("migrate", interactive=False, verbosity=0)
call_command("load_catalog", verbosity=0)
call_command("load_demo", verbosity=0)
users = get_user_model().objects
tokens = {name: api_token_create(user=users.get(username=name), days=1)[1]
          for name in ("platform", "procurement")}
provider = Provider.objects.order_by("pk").values_list("pk", flat=True).first()
print(json.dumps({"tokens": tokens, "provider": provider}))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def embedded_env(db_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "CELERY_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="gpuselect.settings.local",
        DATABASE_URL=f"sqlite:///{db_path}",
        CELERY_BROKER_URL="",
        REDIS_URL="",
        DJANGO_DEBUG="false",  # as ``make run`` serves
        # Eight clients on two tokens would meet the per-user API rate; that is not under test.
        API_THROTTLE_USER="1000000/min",
        API_THROTTLE_ANON="1000000/min",
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    return env


@dataclass
class Api:
    base: str
    token: str

    def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(  # noqa: S310 - a loopback URL we built
            self.base + path,
            data=data,
            method=method,
            headers={"Authorization": f"Token {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as response:  # noqa: S310
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            raw = error.read()
            try:
                return error.code, json.loads(raw or b"{}")
            except ValueError:
                return error.code, {"raw": raw[:300].decode(errors="replace")}


@dataclass
class Writer:
    """One client: writes only its own brief and quote, so its last acknowledged value of each
    is what the database must hold afterwards."""

    number: int
    briefs_api: Api
    quotes_api: Api
    provider: int
    created_briefs: list[int] = field(default_factory=list)
    brief_concurrency: dict[int, int] = field(default_factory=dict)
    quote_price: dict[int, str] = field(default_factory=dict)
    statuses: list[int] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    timings: list[float] = field(default_factory=list)

    def send(self, api: Api, method: str, path: str, body: dict, what: str) -> dict | None:
        """The answer's body if the write was acknowledged, else None (and a failure noted)."""
        started = time.perf_counter()
        status, answer = api.call(method, path, body)
        self.timings.append(time.perf_counter() - started)
        self.statuses.append(status)
        if status >= 300:
            self.failures.append(f"writer {self.number} {what}: {status} {str(answer)[:300]}")
            return None
        return answer

    def create_brief(self, n: int) -> None:
        body = {**BRIEF_BODY, "name": f"load w{self.number} #{n}", "concurrency": 8 + n}
        answer = self.send(self.briefs_api, "POST", "/api/v1/briefs/", body, "create brief")
        if answer is not None:
            self.created_briefs.append(answer["id"])
            self.brief_concurrency[answer["id"]] = body["concurrency"]

    def patch_brief(self, n: int) -> None:
        brief = self.created_briefs[-1]
        value = 8 + n
        path = f"/api/v1/briefs/{brief}/"
        if self.send(self.briefs_api, "PATCH", path, {"concurrency": value}, "patch brief"):
            self.brief_concurrency[brief] = value

    def create_quote(self, n: int) -> None:
        price = f"{2 + self.number / 10:.2f}"
        body = {
            "provider": self.provider,
            "gpu": "h100-sxm5-80gb",
            "gpus_per_node": 8,
            "region": f"load-{self.number}-{n}",
            "pricing_term": "ON_DEMAND",
            "hourly_price_per_gpu": price,
            "currency": "USD",
            "quote_date": time.strftime("%Y-%m-%d"),
            "source": "embedded concurrency test",
        }
        answer = self.send(self.quotes_api, "POST", "/api/v1/quotes/", body, "create quote")
        if answer is not None:
            self.quote_price[answer["id"]] = price

    def patch_quote(self, n: int) -> None:
        quote = max(self.quote_price)
        price = f"{2 + self.number / 10 + n / 1000:.3f}"
        path = f"/api/v1/quotes/{quote}/"
        body = {"hourly_price_per_gpu": price}
        if self.send(self.quotes_api, "PATCH", path, body, "patch quote"):
            self.quote_price[quote] = price

    def run(self, until: float) -> None:
        rng = random.Random(self.number)
        n = 0
        try:
            self.create_brief(n)
            self.create_quote(n)
            while time.monotonic() < until:
                n += 1
                action = rng.choices(
                    [self.create_brief, self.patch_brief, self.patch_quote, self.create_quote],
                    weights=[2, 5, 2, 1],
                )[0]
                if action in (self.patch_brief,) and not self.created_briefs:
                    action = self.create_brief
                if action == self.patch_quote and not self.quote_price:
                    action = self.create_quote
                action(n)
        except Exception as exc:  # a dropped connection or a timeout is a failure too
            self.failures.append(f"writer {self.number}: {exc!r}")


def pending_tables(db_path: Path) -> list[tuple[int, int, int]]:
    with sqlite3.connect(db_path, timeout=30) as db:
        return db.execute(
            "SELECT brief_id, requested_version, computed_version FROM finance_candidatetable"
            " WHERE computed_version < requested_version"
        ).fetchall()


def table_count(db_path: Path) -> tuple[int, int]:
    with sqlite3.connect(db_path, timeout=30) as db:
        briefs = db.execute("SELECT count(*) FROM briefs_workloadbrief").fetchone()[0]
        tables = db.execute("SELECT count(*) FROM finance_candidatetable").fetchone()[0]
    return briefs, tables


@contextmanager
def embedded_server_running(workdir: Path, *, runserver: bool = False) -> Iterator[dict]:
    """A fresh SQLite file with the catalog and demo data, served by gunicorn as ``make run``
    serves it (``server_command``) on a free port; stopped on the way out. Yields the base URL,
    the database and log paths, the server's process id and the demo tokens. ``runserver``:
    Django's development server instead (what ``make run`` served before issue 24), for a
    bench's before-and-after."""
    db_path = workdir / "embedded.sqlite3"
    env = embedded_env(db_path)
    setup = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, "-c", SETUP],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if setup.returncode != 0:
        raise RuntimeError(f"setup failed:\n{setup.stderr[-3000:]}")
    seeded = json.loads(setup.stdout.strip().splitlines()[-1])
    port = free_port()
    log_path = workdir / "server.log"
    log = log_path.open("w")
    server = subprocess.Popen(  # noqa: S603 - our own interpreter and gunicorn
        (
            [sys.executable, "manage.py", "runserver", "--noreload", f"{HOST}:{port}"]
            if runserver
            else server_command(HOST, port)
        ),
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its worker is stopped with it (killpg below)
    )
    base = f"http://{HOST}:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=5) as response:  # noqa: S310
                    if response.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.2)
        yield {"base": base, "db": db_path, "log": log_path, "pid": server.pid, **seeded}
    finally:
        server.terminate()
        try:
            server.wait(timeout=SERVER_STOP_S)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()


def drive(server: dict, writers: int = WRITERS, seconds: float = LOAD_SECONDS) -> list[Writer]:
    """``writers`` clients writing at once for ``seconds``; returns them with what they saw."""
    tokens = server["tokens"]
    clients = [
        Writer(
            number=i,
            briefs_api=Api(server["base"], tokens["platform"]),
            quotes_api=Api(server["base"], tokens["procurement"]),
            provider=server["provider"],
        )
        for i in range(writers)
    ]
    until = time.monotonic() + seconds
    threads = [threading.Thread(target=c.run, args=(until,)) for c in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=seconds + 3 * REQUEST_TIMEOUT_S)
        if thread.is_alive():
            raise RuntimeError("a writer hung")
    return clients


def settle(db_path: Path, seconds: float = SETTLE_S) -> list[tuple[int, int, int]]:
    """Wait up to ``seconds`` for every table to be computed; the tables still pending."""
    deadline = time.monotonic() + seconds
    pending = pending_tables(db_path)
    while pending and time.monotonic() < deadline:
        time.sleep(0.5)
        pending = pending_tables(db_path)
    return pending


@pytest.fixture
def embedded_server(tmp_path):
    with embedded_server_running(tmp_path) as server:
        yield server


def test_eight_concurrent_writers_get_no_server_error_and_lose_nothing(embedded_server):
    base = embedded_server["base"]
    tokens = embedded_server["tokens"]
    writers = drive(embedded_server)

    statuses = [s for w in writers for s in w.statuses]
    failures = [f for w in writers for f in w.failures]
    server_errors = [s for s in statuses if s >= 500]
    log_tail = embedded_server["log"].read_text()[-2000:]
    assert not server_errors and not failures, (
        f"{len(server_errors)} server errors, {len(failures)} failed of {len(statuses)} "
        f"writes: {failures[:5]}\nserver log tail:\n{log_tail}"
    )
    assert len(statuses) >= 2 * WRITERS  # the load did write

    # Every acknowledged write is there, as last acknowledged (each writer owns its objects).
    reader = Api(base, tokens["platform"])
    quotes_reader = Api(base, tokens["procurement"])
    for writer in writers:
        for brief, concurrency in writer.brief_concurrency.items():
            status, body = reader.call("GET", f"/api/v1/briefs/{brief}/")
            assert status == 200, (brief, status, body)
            assert body["concurrency"] == concurrency, (brief, body["concurrency"], concurrency)
        for quote, price in writer.quote_price.items():
            status, body = quotes_reader.call("GET", f"/api/v1/quotes/{quote}/")
            assert status == 200, (quote, status, body)
            assert float(body["hourly_price_per_gpu"]) == float(price), (quote, body, price)

    # Every table is computed once the in-process recomputes and the sweeper have caught up.
    pending = settle(embedded_server["db"])
    assert not pending, f"tables left pending (brief, requested, computed): {pending[:10]}"
    briefs, tables = table_count(embedded_server["db"])
    assert tables == briefs
    with sqlite3.connect(embedded_server["db"]) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
