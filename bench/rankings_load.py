"""Latency of GET /api/v1/briefs/<id>/rankings under 20 concurrent keep-alive clients.

Run: .venv/bin/python bench/rankings_load.py [--clients 20] [--seconds 30] [--limit 900]

Creates a throwaway PostgreSQL database (gpuselect_bench_rankings_<pid>), seeds it like
bench/recompute.py (bench/_seed.py: 30 GPUs, 2,000 quotes, 200 complete briefs), computes every
candidate table (in two forked processes, no broker), starts gunicorn on a free loopback port
(gpuselect.settings.local, DJANGO_DEBUG=false, DJANGO_ALLOWED_HOSTS=127.0.0.1) and drives it with
keep-alive http.client threads for ``--seconds`` (or ``--requests``), each request a random brief.
Prints p50/p95/p99, requests/s and errors, then one request's breakdown in-process (queries,
selector / serializer / renderer time). gunicorn is stopped and the database dropped at the end,
also on error or on the hard time limit. Prints figures only; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _seed

AIM_P95_MS = 100.0
HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _recompute_chunk(brief_ids: list[int]) -> int:
    from apps.finance.services import candidate_table_recompute

    for brief_id in brief_ids:
        candidate_table_recompute(brief_id=brief_id)
    return len(brief_ids)


def compute_all_tables(brief_ids: list[int], processes: int) -> float:
    """Create every table (bulk) and compute them in ``processes`` forked processes."""
    from django.db import connections

    from apps.finance.models import CandidateTable

    CandidateTable.objects.bulk_create([CandidateTable(brief_id=pk) for pk in brief_ids])
    connections.close_all()  # no connection may cross the fork
    chunks = [brief_ids[i::processes] for i in range(processes)]
    t0 = time.perf_counter()
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=processes, mp_context=ctx) as pool:
        done = sum(pool.map(_recompute_chunk, chunks, timeout=600))
    assert done == len(brief_ids)
    return time.perf_counter() - t0


def start_gunicorn(env: dict[str, str], port: int, log: Path, workers: int, threads: int) -> Any:
    cmd = [
        str(_seed.VENV_BIN / "gunicorn"),
        "gpuselect.wsgi:application",
        "-b",
        f"{HOST}:{port}",
        "-w",
        str(workers),
        "--threads",
        str(threads),
        "--timeout",
        "60",
        "--graceful-timeout",
        "5",
        "--keep-alive",
        "30",
        "--log-level",
        "warning",
    ]
    handle = log.open("wb")
    return subprocess.Popen(
        cmd, cwd=_seed.ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT, close_fds=True
    )


def wait_http_ready(proc: Any, port: int, path: str, headers: dict[str, str], log: Path) -> float:
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 60:
        if proc.poll() is not None:
            raise RuntimeError(f"gunicorn exited ({proc.returncode}):\n{_seed.tail(log)}")
        try:
            conn = http.client.HTTPConnection(HOST, port, timeout=30)
            conn.request("GET", path, headers=headers)
            resp = conn.getresponse()
            body = resp.read()
            conn.close()
            if resp.status == 200:
                return time.perf_counter() - t0
            raise RuntimeError(f"warm-up request answered {resp.status}: {body[:300]!r}")
        except (ConnectionRefusedError, ConnectionResetError):
            time.sleep(0.2)
    raise RuntimeError(f"gunicorn not answering after 60 s:\n{_seed.tail(log)}")


class Client(threading.Thread):
    """One keep-alive client: GETs random briefs' rankings until the deadline."""

    def __init__(self, n: int, port: int, token: str, brief_ids: list[int], stop: Any) -> None:
        super().__init__(daemon=True, name=f"client-{n}")
        self.port, self.brief_ids, self.stop_at = port, brief_ids, stop
        self.headers = {"Authorization": f"Token {token}", "Host": HOST}
        self.rng = random.Random(n)
        self.latencies: list[float] = []
        self.errors: Counter[str] = Counter()
        self.bytes = 0
        self.conn: http.client.HTTPConnection | None = None

    def run(self) -> None:
        while not self.stop_at():
            path = f"/api/v1/briefs/{self.rng.choice(self.brief_ids)}/rankings"
            t0 = time.perf_counter()
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection(HOST, self.port, timeout=60)
                self.conn.request("GET", path, headers=self.headers)
                resp = self.conn.getresponse()
                body = resp.read()
                elapsed = time.perf_counter() - t0
                if resp.status == 200:
                    self.latencies.append(elapsed)
                    self.bytes += len(body)
                else:
                    self.errors[f"HTTP {resp.status}"] += 1
                if resp.will_close:
                    self.conn.close()
                    self.conn = None
            except (OSError, http.client.HTTPException) as exc:
                self.errors[type(exc).__name__] += 1
                if self.conn is not None:
                    self.conn.close()
                self.conn = None
        if self.conn is not None:
            self.conn.close()


def run_load(
    port: int, token: str, brief_ids: list[int], clients: int, seconds: float, requests: int
) -> None:
    started = time.perf_counter()

    def stop() -> bool:
        if requests and sum(len(c.latencies) for c in threads) >= requests:
            return True
        return time.perf_counter() - started >= seconds

    threads = [Client(n, port, token, brief_ids, stop) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + 90)
    wall = time.perf_counter() - started
    latencies = sorted(x * 1000 for t in threads for x in t.latencies)
    errors: Counter[str] = Counter()
    for t in threads:
        errors.update(t.errors)
    n = len(latencies)
    total_bytes = sum(t.bytes for t in threads)
    p = _seed.percentile
    print(
        f"load:        {clients} clients, keep-alive, {wall:.1f} s wall, {n} OK requests, "
        f"{sum(errors.values())} errors {dict(errors) if errors else ''}"
    )
    if n:
        print(
            f"latency ms:  p50 {p(latencies, 50):.1f}  p95 {p(latencies, 95):.1f}  "
            f"p99 {p(latencies, 99):.1f}  min {latencies[0]:.1f}  max {latencies[-1]:.1f}  "
            f"mean {statistics.fmean(latencies):.1f}"
        )
        p95 = p(latencies, 95)
        print(
            f"throughput:  {n / wall:.1f} requests/s, {total_bytes / wall / 1e6:.1f} MB/s; "
            f"mean response {total_bytes / n / 1e3:.0f} kB  "
            f"[aim p95 < {AIM_P95_MS:.0f} ms: {'met' if p95 < AIM_P95_MS else 'MISSED'}]"
        )


def breakdown(brief_id: int, token: str) -> None:
    """One request in-process: total, queries, and selector / serializer / renderer split."""
    import cProfile
    import io
    import pstats

    from django.core.cache import cache
    from django.db import connection
    from django.test import Client as DjangoClient
    from django.test.utils import CaptureQueriesContext
    from rest_framework.renderers import JSONRenderer

    from apps.briefs.models import WorkloadBrief
    from apps.finance.api import DEFAULT_LIMIT, RankingSerializer
    from apps.finance.selectors import ranking_for_brief

    client = DjangoClient(HTTP_AUTHORIZATION=f"Token {token}", HTTP_HOST=HOST)
    url = f"/api/v1/briefs/{brief_id}/rankings"
    client.get(url)  # warm
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        resp = client.get(url)
        runs.append(time.perf_counter() - t0)
    with CaptureQueriesContext(connection) as queries:
        resp = client.get(url)
    rows = len(json.loads(resp.content)["rows"])
    brief = WorkloadBrief.objects.get(pk=brief_id)
    cache.clear()  # the split is of a cold request: nothing of this table version cached
    t0 = time.perf_counter()
    ranking = ranking_for_brief(brief, limit=DEFAULT_LIMIT)
    t_sel = time.perf_counter() - t0
    t0 = time.perf_counter()
    data = RankingSerializer(ranking).data
    t_ser = time.perf_counter() - t0
    t0 = time.perf_counter()
    body = JSONRenderer().render(data)
    t_ren = time.perf_counter() - t0
    sql_ms = sum(float(q["time"]) for q in queries.captured_queries) * 1000
    size = f"{rows} rows, {len(body) / 1e3:.0f} kB"
    print(f"\n--- one request in-process (brief #{brief_id}, {size}) ---")
    print(
        f"whole request (test client, no network): median {statistics.median(runs) * 1000:.0f} ms"
        f" of 5; {len(queries)} queries, {sql_ms:.0f} ms in SQL (client-side)"
    )
    print(
        f"split, cold cache: ranking_for_brief(limit={DEFAULT_LIMIT}) {t_sel * 1000:.0f} ms; "
        f"RankingSerializer(...).data {t_ser * 1000:.0f} ms; JSONRenderer {t_ren * 1000:.0f} ms"
    )
    for q in queries.captured_queries:
        print(f"  {float(q['time']) * 1000:6.1f} ms  {q['sql'][:120]}")
    profiler = cProfile.Profile()
    profiler.enable()
    client.get(url)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).strip_dirs().sort_stats("tottime").print_stats(14)
    keep = [ln for ln in out.getvalue().splitlines() if ln.strip() and "Ordered by" not in ln]
    print("\n".join(keep[:22]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--requests", type=int, default=0, help="stop after N OK requests")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--threads", type=int, default=4, help="gunicorn threads per worker")
    parser.add_argument("--limit", type=int, default=900, help="hard time limit, seconds")
    args = parser.parse_args()

    db_name = _seed.db_name_for("rankings")
    workdir = Path(tempfile.mkdtemp(prefix="gpuselect-bench-"))
    log = workdir / "gunicorn.log"
    server: Any = None
    created = False
    try:
        with _seed.hard_limit(args.limit):
            url = _seed.create_database(db_name)
            created = True
            # Throttling would answer most of this load with 429s: keep it out of the figures.
            env = _seed.base_env(
                url, DJANGO_ALLOWED_HOSTS=HOST, API_THROTTLE_USER="10000000/min",
                API_THROTTLE_ANON="10000000/min",
            )  # fmt: skip
            _seed.django_setup(_seed.base_env(url))  # this process also uses "testserver"
            print("== gpuselect rankings API load benchmark (gunicorn, PostgreSQL) ==")
            for line in _seed.machine_lines():
                print(line)
            print(f"database:    {db_name} (throwaway)")
            t_mig = _seed.migrate_and_load_catalog()
            t0 = time.perf_counter()
            seeded = _seed.seed()
            t_seed = time.perf_counter() - t0
            processes = max(1, min(2, os.cpu_count() or 1))
            t_comp = compute_all_tables(seeded["brief_ids"], processes)
            print(
                f"setup:       migrate + load_catalog {t_mig:.1f} s; bulk seed {t_seed:.1f} s; "
                f"{len(seeded['brief_ids'])} tables computed in {t_comp:.1f} s "
                f"({processes} processes)"
            )
            print(f"rows:        {_seed.row_counts()}")
            print(f"tables:      {_seed.ranking_summary()}")

            from django.contrib.auth import get_user_model

            from apps.core.services import api_token_create

            user = get_user_model().objects.get(pk=seeded["api_user_id"])
            _, token = api_token_create(user=user, days=1)
            port = free_port()
            server = start_gunicorn(env, port, log, args.workers, args.threads)
            headers = {"Authorization": f"Token {token}", "Host": HOST}
            first = f"/api/v1/briefs/{seeded['brief_ids'][0]}/rankings"
            ready = wait_http_ready(server, port, first, headers, log)
            print(
                f"server:      gunicorn -w {args.workers} --threads {args.threads} on "
                f"{HOST}:{port}, first answer after {ready:.1f} s"
            )
            # Warm every worker thread's connection and imports before timing.
            run_quiet = Client(999, port, token, seeded["brief_ids"], lambda: False)
            for _ in range(args.workers * args.threads):
                run_quiet.stop_at = _once(run_quiet)
                run_quiet.run()
            print()
            run_load(port, token, seeded["brief_ids"], args.clients, args.seconds, args.requests)
            _seed.stop_process(server)
            print(f"server:      stopped (exit {server.returncode})")
            breakdown(seeded["brief_ids"][1], token)
        return 0
    except _seed.BenchTimeout as exc:
        print(f"ABORTED: {exc}")
        return 2
    finally:
        _seed.clean_up_server_run(server, log, db_name if created else None, workdir)


def _once(client: Client) -> Any:
    """A stop predicate that lets ``client.run`` make exactly one request."""
    state = {"n": len(client.latencies) + sum(client.errors.values())}
    return lambda: len(client.latencies) + sum(client.errors.values()) > state["n"]


if __name__ == "__main__":
    sys.exit(main())
