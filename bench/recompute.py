"""Candidate-table recompute throughput with real Celery workers on PostgreSQL.

Run: python bench/recompute.py [--workers 1,2] [--profile] [--limit 1500] [--redis-db N]
     python bench/recompute.py --in-process N   (CPU per phase, no workers; see below)

Creates a throwaway database (gpuselect_bench_recompute_<pid>), migrates it, loads the catalog
(+13 synthetic ``bench-...`` GPUs: 30 in all), seeds 200 briefs / 2,000 quotes in bulk and, for
each worker count in ``--workers``, starts that many worker processes (each ``celery worker
--pool=solo --concurrency=1``, on a queue of their own) and prints:

  (a) a full recompute of every table from empty tables (the engine's answer computed, every
      row costed and written), from the request until every table is current, aim < 60 s
      with one worker; with more workers, how much of the one-worker time they cut (aim: a
      second worker cuts at least a third);
  (a') with the first worker count, the same request again (nothing changed: estimates and
      rows reused);
  (b) one quote price change through quote_update until every affected ranking is current
      and the changed quote's rows show the new cost, aim < 2 s with one worker.

Then, with the workers stopped, the same kind of price change recomputed in this process:
the queries it makes and the rows it touches. When an aim is missed (or with --profile) one
brief's full recompute is profiled in-process (cProfile + its queries). The workers are
stopped and the database dropped at the end, also on error or on the hard time limit. Prints
figures only (with the load average before each figure: the machine may be shared); nothing
here asserts a time.

With ``--in-process N`` no worker starts: the first N briefs' tables are recomputed in full in
this process (from empty tables, the engine's answer computed), after one table to warm the
process up, with the worker's garbage-collector settings, and the CPU time (process time, not
wall: less sensitive to other load on a shared machine) of each phase is printed per table.

Settings: gpuselect.settings.local with DJANGO_DEBUG=false. settings.test forces
CELERY_TASK_ALWAYS_EAGER (the recompute would run in this process, not in the worker); DEBUG
on would keep every query in memory. The worker imports gpuselect.celery, which uses local too.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _seed

AIM_FULL_S = 60.0
AIM_QUOTE_S = 2.0
AIM_SECOND_WORKER_CUT = 1 / 3  # a second worker cuts the full recompute by at least this share
# Give up waiting for a full recompute (a price change) after this long, at --scale 1; the
# wait grows with the work (briefs x quotes: scale squared).
WAIT_FULL_S = 400.0
WAIT_QUOTE_S = 400.0


def pick_redis_db() -> int:
    """An empty Redis database (8..15), so the bench's keys are easy to find and remove."""
    import redis

    for db in range(15, 7, -1):
        client = redis.Redis(host=_seed.REDIS_HOST, port=_seed.REDIS_PORT, db=db)
        if client.dbsize() == 0:
            return db
    return 15


def clean_redis(db: int, queue: str, hostname: str) -> int:
    """Delete the keys this run made (its queue, its bindings); returns keys left in the db."""
    import redis

    client = redis.Redis(host=_seed.REDIS_HOST, port=_seed.REDIS_PORT, db=db)
    for key in client.scan_iter(count=500):
        name = key.decode(errors="replace")
        if queue in name or hostname in name:
            client.delete(key)
        elif name.startswith("_kombu.binding."):
            for member in client.smembers(key):
                if queue.encode() in member or hostname.encode() in member:
                    client.srem(key, member)
            if client.scard(key) == 0:
                client.delete(key)
    # Binding deadlines of exchanges whose binding sets are gone (kombu's bookkeeping).
    deadlines = "_kombu.binding_deadlines"
    if client.type(deadlines) == b"zset":
        for member in client.zrange(deadlines, 0, -1):
            if not client.exists(b"_kombu.binding." + member):
                client.zrem(deadlines, member)
        if client.zcard(deadlines) == 0:
            client.delete(deadlines)
    return int(client.dbsize())


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


class Workers:
    """``n`` worker processes on one queue, each ``--pool=solo --concurrency=1``."""

    def __init__(self, env: dict[str, str], queue: str, workdir: Path, n: int) -> None:
        self.procs: list[tuple[subprocess.Popen, str, Path]] = []
        for i in range(n):
            hostname = f"{queue}-w{i}@localhost"
            log = workdir / f"worker{i}.log"
            self.procs.append((start_worker(env, queue, hostname, log), hostname, log))

    def wait_ready(self, limit: float) -> float:
        return max(wait_worker_ready(p, h, log, limit) for p, h, log in self.procs)

    def check(self) -> None:
        for proc, _, log in self.procs:
            if proc.poll() is not None:
                raise RuntimeError(f"worker exited ({proc.returncode}):\n{_seed.tail(log)}")

    def cpu_seconds(self) -> list[float]:
        """CPU time (user + system) each worker process has used so far (Linux /proc)."""
        tick = os.sysconf("SC_CLK_TCK")
        out = []
        for proc, _, _ in self.procs:
            try:
                fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
                out.append((int(fields[11]) + int(fields[12])) / tick)
            except (OSError, IndexError, ValueError):
                out.append(float("nan"))
        return out

    def stop(self) -> list[int | None]:
        for proc, _, _ in self.procs:
            _seed.stop_process(proc)
        return [proc.returncode for proc, _, _ in self.procs]

    def log_tails(self) -> str:
        return "\n".join(
            f"worker {h} (exit {p.returncode}):\n{_seed.tail(log)}"
            for p, h, log in self.procs
            if p.returncode not in (0, None)
        )


def start_worker(env: dict[str, str], queue: str, hostname: str, log: Path) -> subprocess.Popen:
    cmd = [
        str(_seed.VENV_BIN / "celery"),
        "-A",
        "gpuselect",
        "worker",
        "--pool=solo",
        "--concurrency=1",
        "-Q",
        queue,
        "-n",
        hostname,
        "--loglevel=WARNING",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    handle = log.open("wb")
    return subprocess.Popen(
        cmd, cwd=_seed.ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT, close_fds=True
    )


def wait_worker_ready(proc: subprocess.Popen, hostname: str, log: Path, limit: float) -> float:
    from gpuselect.celery import app

    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit:
        if proc.poll() is not None:
            raise RuntimeError(f"worker exited ({proc.returncode}):\n{_seed.tail(log)}")
        if app.control.ping(destination=[hostname], timeout=0.5):
            return time.perf_counter() - t0
    raise RuntimeError(f"worker not ready after {limit} s:\n{_seed.tail(log)}")


def wait_all_current(workers: Workers, t0: float, limit: float) -> float | None:
    """Seconds from ``t0`` until no table is stale (None if ``limit`` passed first)."""
    from django.db.models import F

    from apps.finance.models import CandidateTable

    last_report = time.perf_counter()
    while True:
        stale = CandidateTable.objects.filter(computed_version__lt=F("requested_version")).count()
        now = time.perf_counter()
        if stale == 0:
            return now - t0
        workers.check()
        if now - t0 > limit:
            print(f"    gave up after {limit:.0f} s with {stale} tables still stale")
            return None
        if now - last_report > 15:
            print(f"    ... {now - t0:5.1f} s: {stale} tables still stale ({load()})")
            last_report = now
        time.sleep(0.05)


def empty_tables() -> None:
    """Back to the state after seeding: no candidate table, no row (a cold full recompute)."""
    from django.db import connection

    from apps.finance.models import CandidateRow, CandidateTable

    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {CandidateRow._meta.db_table}, {CandidateTable._meta.db_table}")


def full_recompute(label: str, workers: Workers, wait_s: float = WAIT_FULL_S) -> float | None:
    from apps.finance.models import CandidateTable
    from apps.finance.services import candidate_tables_request_recompute

    print(f"    ({load()} before)")
    cpu0 = workers.cpu_seconds()
    t0 = time.perf_counter()
    enqueued = candidate_tables_request_recompute()
    t_req = time.perf_counter() - t0
    took = wait_all_current(workers, t0, wait_s)
    cpu = [b - a for a, b in zip(cpu0, workers.cpu_seconds(), strict=True)]
    print(
        f"    worker CPU during it: {', '.join(f'{c:.1f} s' for c in cpu)} (sum {sum(cpu):.1f} s"
        f"{f', {sum(cpu) / took:.2f} cores on average' if took else ''}; {load()} after)"
    )
    n = CandidateTable.objects.count()
    if took is None:
        print(f"(a) {label}: NOT DONE within {wait_s:.0f} s")
    else:
        print(
            f"(a) {label}: {took:7.2f} s for {n} tables ({len(enqueued)} enqueued, request "
            f"{t_req * 1000:.0f} ms) = {took / max(n, 1) * 1000:.0f} ms/table, "
            f"{n / took:.1f} tables/s  [aim < {AIM_FULL_S:.0f} s: "
            f"{'met' if took < AIM_FULL_S else 'MISSED'}]"
        )
    return took


def bench_quote(nth: int = 0) -> Any:
    """The ``nth`` live, shared, USD on-demand H100 SXM5 quote (every brief may cost it)."""
    from apps.quotes.models import Quote

    quotes = Quote.objects.filter(
        gpu__slug="h100-sxm5-80gb",
        pricing_term="ON_DEMAND",
        currency="USD",
        confidential_to__isnull=True,
        retired=False,
    ).order_by("id")
    return quotes[nth]


def quote_change(workers: Workers, nth: int = 0, wait_s: float = WAIT_QUOTE_S) -> float | None:
    from apps.finance.models import CandidateRow, CandidateTable, VersionSet
    from apps.quotes.services import quote_update

    quote = bench_quote(nth)
    before = dict(CandidateRow.objects.filter(quote=quote).values_list("table_id", "monthly_cost"))
    old_price = quote.hourly_price_per_gpu
    new_price = (old_price * Decimal("1.5")).quantize(Decimal("0.0001"))
    print(f"    ({load()} before)")
    t0 = time.perf_counter()
    quote = quote_update(quote=quote, hourly_price_per_gpu=new_price)
    t_call = time.perf_counter() - t0
    took = wait_all_current(workers, t0, wait_s)
    # Check that the rankings really moved: every table computed from the new quote version,
    # every row of the quote with a non-zero cost now costs more.
    # The version each table costed, from the version set it names (apps.finance.version_sets;
    # a few sets, one a team, read whole: a JSON key lookup would read "418" as an array index).
    sets = dict(
        VersionSet.objects.filter(
            digest__in=CandidateTable.objects.values("quote_set")
        ).values_list("digest", "versions")
    )
    tables = [
        (sets.get(digest) or {}).get(str(quote.pk))
        for digest in CandidateTable.objects.values_list("quote_set", flat=True)
    ]
    with_quote = [seen for seen in tables if seen is not None]
    on_new = sum(1 for seen in with_quote if int(seen) == quote.version)
    after = dict(CandidateRow.objects.filter(quote=quote).values_list("table_id", "monthly_cost"))
    raised = sum(1 for tid, cost in after.items() if before.get(tid) and cost > before[tid])
    nonzero = sum(1 for tid in after if before.get(tid))
    print(
        f"(b) quote #{quote.pk} {old_price} -> {new_price} USD/GPU-h via quote_update "
        f"(call {t_call * 1000:.0f} ms, {len(tables)} tables asked to recompute):"
    )
    if took is None:
        print(f"    NOT DONE within {wait_s:.0f} s")
    else:
        print(
            f"    {took:7.2f} s until every ranking is current  [aim < {AIM_QUOTE_S:.0f} s: "
            f"{'met' if took < AIM_QUOTE_S else 'MISSED'}]"
        )
    print(
        f"    check: {on_new}/{len(with_quote)} tables that cost the quote used its new "
        f"version {quote.version}; {raised}/{nonzero} of its non-zero rows cost more"
    )
    return took


def _sql_shape(sql: str) -> str:
    shape = re.sub(r"'[^']*'", "?", sql)
    shape = re.sub(r"\b\d+\b", "?", shape)
    shape = re.sub(r"\(\?(, \?)*\)", "(...)", shape)
    return shape[:110]


def _median_s(fn: Any, n: int = 3) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def quote_change_in_process(profile: bool = False, only: list[int] | None = None) -> None:
    """A price change recomputed in this process (the workers stopped): what the task of
    every table does, counted: queries by statement shape, rows deleted and inserted (with
    ``profile``, under cProfile, its top functions printed; ``only``: these briefs' tables, the
    rest left as they are)."""
    from django.db import connection
    from django.db.models import F, Max
    from django.test.utils import CaptureQueriesContext

    from apps.finance.models import CandidateRow, CandidateTable
    from apps.finance.services import REPRICE_BATCH, candidate_tables_recompute
    from apps.quotes.services import quote_update

    quote = bench_quote(1)
    new_price = (quote.hourly_price_per_gpu * Decimal("0.8")).quantize(Decimal("0.0001"))
    quote_update(quote=quote, hourly_price_per_gpu=new_price)  # its tasks wait: no worker
    brief_ids = list(CandidateTable.objects.order_by("brief_id").values_list("brief_id", flat=True))
    if only is not None:
        brief_ids = [pk for pk in brief_ids if pk in set(only)]
    rows_before = CandidateRow.objects.count()
    last_id = CandidateRow.objects.aggregate(m=Max("id"))["m"] or 0
    profiler = cProfile.Profile() if profile else None
    t0 = time.perf_counter()
    with CaptureQueriesContext(connection) as queries:
        if profiler is not None:
            profiler.enable()
        for start in range(0, len(brief_ids), REPRICE_BATCH):
            candidate_tables_recompute(brief_ids=brief_ids[start : start + REPRICE_BATCH])
        if profiler is not None:
            profiler.disable()
    took = time.perf_counter() - t0
    if profiler is not None:
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.dump_stats(Path(tempfile.gettempdir()) / "gpuselect-reprice.prof")
        stats.sort_stats("cumulative").print_stats(40)
        print("cProfile of the price change (times inflated by the profiler):")
        print("\n".join(ln for ln in out.getvalue().splitlines() if ln.strip()))
    inserted = CandidateRow.objects.filter(id__gt=last_id).count()
    deleted = rows_before - (CandidateRow.objects.count() - inserted)
    stale = CandidateTable.objects.filter(computed_version__lt=F("requested_version")).count()
    print(
        f"(b') quote #{quote.pk} -> {new_price} USD/GPU-h, recomputed in this process in "
        f"{-(-len(brief_ids) // REPRICE_BATCH)} batches of up to {REPRICE_BATCH} tables: "
        f"{took:.2f} s, "
        f"{len(queries)} queries for {len(brief_ids)} tables ({len(queries) / len(brief_ids):.2f} "
        f"a table); {deleted} rows deleted, {inserted} inserted, {stale} tables left stale"
    )
    shapes = Counter(_sql_shape(q["sql"]) for q in queries.captured_queries)
    for shape, n in shapes.most_common(14):
        print(f"  {n:4d} x  {shape}")


def profile_one(brief_id: int) -> None:
    """One brief's recompute in-process: phase times (no profiler), queries, then cProfile."""
    from django.db import connection
    from django.db.models import F
    from django.test.utils import CaptureQueriesContext

    from apps.briefs.contract import estimate_body_for_brief
    from apps.briefs.models import WorkloadBrief
    from apps.catalog.selectors import estimates_for_body
    from apps.finance.candidates import candidate_table_build
    from apps.finance.models import CandidateTable
    from apps.finance.services import candidate_table_recompute
    from apps.quotes.selectors import quotes_for_team

    def stale() -> None:  # a full recompute, the engine's answer reused
        CandidateTable.objects.filter(brief_id=brief_id).update(
            requested_version=F("requested_version") + 1,
            full_version=F("requested_version") + 1,
            inputs={},
        )

    def recompute() -> None:
        stale()
        candidate_table_recompute(brief_id=brief_id)

    brief = WorkloadBrief.objects.select_related("team").get(pk=brief_id)
    table = CandidateTable.objects.get(brief_id=brief_id)
    print(f"\n--- profile: brief #{brief_id} {brief.workload_type}, in-process ---")
    t_total = _median_s(recompute)
    t_build = _median_s(lambda: candidate_table_build(brief=brief, table=table))
    t_quotes = _median_s(lambda: list(quotes_for_team(brief.team_id)))
    body = estimate_body_for_brief(brief)
    t_engine = _median_s(lambda: estimates_for_body(body))
    print(
        f"phases (median of 3, no profiler): full recompute (engine answer reused) "
        f"{t_total * 1000:.0f} ms; build when nothing changed {t_build * 1000:.0f} ms; "
        f"quotes_for_team fetch {t_quotes * 1000:.0f} ms; engine estimates_for_body when not "
        f"cached {t_engine * 1000:.0f} ms"
    )
    stale()
    with CaptureQueriesContext(connection) as queries:
        candidate_table_recompute(brief_id=brief_id)
    sql_s = sum(float(q["time"]) for q in queries.captured_queries)
    rows = sum(1 for _ in CandidateTable.objects.get(brief_id=brief_id).rows.values("id"))
    print(
        f"queries: {len(queries)} per recompute, {sql_s * 1000:.0f} ms in SQL (client-side, "
        f"incl. parameter adaptation); {rows} rows written"
    )
    shapes = Counter(_sql_shape(q["sql"]) for q in queries.captured_queries)
    slow: dict[str, float] = {}
    for q in queries.captured_queries:
        shape = _sql_shape(q["sql"])
        slow[shape] = slow.get(shape, 0.0) + float(q["time"])
    for shape, n in shapes.most_common(12):
        print(f"  {n:3d} x {slow[shape] * 1000:6.1f} ms  {shape}")
    stale()
    profiler = cProfile.Profile()
    profiler.enable()
    candidate_table_recompute(brief_id=brief_id)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("cumulative").print_stats(24)
    stats.sort_stats("tottime").print_stats(12)
    keep = [ln for ln in out.getvalue().splitlines() if ln.strip() and "Ordered by" not in ln]
    print("cProfile (warm recompute; times inflated by the profiler):")
    print("\n".join(keep[:60]))


def cpu_in_process(brief_ids: list[int], profile: bool = False) -> None:
    """Full recomputes of ``brief_ids`` in this process: CPU (process time) and wall per table
    of each phase (``--in-process``); with ``profile``, the same loop under cProfile after it
    (the functions that take the most time of their own)."""
    import gc

    from apps.finance import candidates, services, writes
    from apps.finance.models import CandidateTable
    from gpuselect.celery import WORKER_GC_GEN0_THRESHOLD

    gc.freeze()  # as the worker does (gpuselect/celery.py)
    gc.set_threshold(WORKER_GC_GEN0_THRESHOLD, *gc.get_threshold()[1:])
    cpu: Counter[str] = Counter()
    wall: Counter[str] = Counter()
    phases = (
        (candidates, "table_context", "context: assumptions, engine answer"),
        (candidates, "cost_offers", "rows costed"),
        (candidates, "plan_rows", "serving plans (MIX, DISAGG)"),
        (writes, "rows_insert_many", "rows written (COPY)"),
        (writes, "capacity_model_for", "rent/reserve/buy/API model"),
        (writes, "sensitivity_update", "sensitivity"),
    )
    saved = []
    for module, name, label in phases:
        original = getattr(module, name)
        saved.append((module, name, original))

        def timed(*a: Any, _f: Any = original, _label: str = label, **k: Any) -> Any:
            c0, w0 = time.process_time(), time.perf_counter()
            try:
                return _f(*a, **k)
            finally:
                cpu[_label] += time.process_time() - c0
                wall[_label] += time.perf_counter() - w0

        setattr(module, name, timed)
    try:
        empty_tables()
        CandidateTable.objects.bulk_create(
            [CandidateTable(brief_id=pk, requested_version=1, full_version=1) for pk in brief_ids]
        )
        services.candidate_table_recompute(brief_id=brief_ids[0])  # warm-up, not counted
        empty_tables()  # the timed loop starts from empty tables, the warm-up's one included
        CandidateTable.objects.bulk_create(
            [CandidateTable(brief_id=pk, requested_version=1, full_version=1) for pk in brief_ids]
        )
        cpu.clear()
        wall.clear()
        print(f"    ({load()} before)")
        c0, w0 = time.process_time(), time.perf_counter()
        for pk in brief_ids:
            services.candidate_table_recompute(brief_id=pk)
        total_cpu, total_wall = time.process_time() - c0, time.perf_counter() - w0
    finally:
        for module, name, original in saved:
            setattr(module, name, original)
    if profile:  # from empty tables again, as the timed loop
        empty_tables()
        CandidateTable.objects.bulk_create(
            [CandidateTable(brief_id=pk, requested_version=1, full_version=1) for pk in brief_ids]
        )
        profiler = cProfile.Profile()
        profiler.enable()
        for pk in brief_ids:
            services.candidate_table_recompute(brief_id=pk)
        profiler.disable()
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        dump = Path(tempfile.gettempdir()) / "gpuselect-recompute.prof"
        stats.dump_stats(dump)
        print(f"cProfile stats kept in {dump} (python -m pstats)")
        stats.sort_stats("tottime").print_stats(30)
        stats.sort_stats("cumulative").print_stats(45)
        print("cProfile of the same loop (times inflated by the profiler):")
        print("\n".join(ln for ln in out.getvalue().splitlines() if ln.strip()))
    n = len(brief_ids)
    print(
        f"in-process full recompute of {n} tables: CPU {total_cpu / n * 1000:.1f} ms a table, "
        f"wall {total_wall / n * 1000:.1f} ms a table ({load()} after)"
    )
    for _, _, label in phases:
        per_cpu, per_wall = cpu[label] / n * 1000, wall[label] / n * 1000
        print(f"  {label:38s} CPU {per_cpu:6.1f} ms   wall {per_wall:6.1f} ms")
    rest_cpu = total_cpu - sum(cpu.values())
    print(f"  {'everything else (queries, transactions)':38s} CPU {rest_cpu / n * 1000:6.1f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true", help="profile even if aims are met")
    parser.add_argument("--limit", type=int, default=1500, help="hard time limit, seconds")
    parser.add_argument(
        "--redis-db", type=int, default=None, help="Redis db (default: an empty one)"
    )
    parser.add_argument(
        "--workers", default="1,2", help="worker counts to run, in order (default 1,2)"
    )
    parser.add_argument(
        "--scale",
        type=float,
        default=1,
        metavar="K",
        help="K x the briefs and K x the quotes (200 x 2,000 at 1; --scale 10 is 2,000 x 20,000)",
    )
    parser.add_argument(
        "--in-process",
        type=int,
        default=0,
        metavar="N",
        help="no workers: CPU per phase of N tables recomputed in this process",
    )
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",") if n.strip()]

    pid = os.getpid()
    db_name = _seed.db_name_for("recompute")
    queue = f"bench-recompute-{pid}"
    redis_db = pick_redis_db() if args.redis_db is None else args.redis_db
    broker = f"redis://{_seed.REDIS_HOST}:{_seed.REDIS_PORT}/{redis_db}"
    workdir = Path(tempfile.mkdtemp(prefix="gpuselect-bench-"))
    workers: Workers | None = None
    created = False
    full: dict[int, float | None] = {}
    price: dict[int, float | None] = {}
    try:
        with _seed.hard_limit(args.limit):
            url = _seed.create_database(db_name)
            created = True
            env = _seed.base_env(url, CELERY_BROKER_URL=broker, CELERY_QUEUE=queue)
            _seed.django_setup(env)
            from django.conf import settings

            assert not settings.CELERY_TASK_ALWAYS_EAGER, "tasks must go to the real workers"
            print("== gpuselect recompute benchmark (Celery workers, PostgreSQL) ==")
            for line in _seed.machine_lines():
                print(line)
            print(f"database:    {db_name} (throwaway); broker {broker}, queue {queue}")
            t_mig = _seed.migrate_and_load_catalog()
            t0 = time.perf_counter()
            n_briefs = round(_seed.N_BRIEFS * args.scale)
            n_quotes = round(_seed.N_QUOTES * args.scale)
            seeded = _seed.seed_sized(n_briefs=n_briefs, n_quotes=n_quotes)
            print(f"scale:       {args.scale:g}: {n_briefs:,} briefs x {n_quotes:,} quotes")
            t_seed = time.perf_counter() - t0
            kinds = Counter(seeded["kinds"])
            print(f"setup:       migrate + load_catalog {t_mig:.1f} s; bulk seed {t_seed:.1f} s")
            print(f"brief mix:   {dict(sorted(kinds.items()))}")
            if args.in_process:
                cpu_in_process(seeded["brief_ids"][: args.in_process], profile=args.profile)
                quote_change_in_process(
                    profile=args.profile, only=seeded["brief_ids"][: args.in_process]
                )
                return 0

            grow = max(1.0, args.scale) ** 2  # the waits grow with briefs x quotes
            for i, n in enumerate(counts):
                if i:
                    empty_tables()
                workers = Workers(env, queue, workdir, n)
                ready = workers.wait_ready(60)
                print()
                print(f"-- {n} worker process{'es' if n != 1 else ''} (solo pool, concurrency 1 "
                      f"each), ready after {ready:.1f} s --")  # fmt: skip
                full[n] = full_recompute(
                    f"full recompute, cold (first compute), {n}w", workers, WAIT_FULL_S * grow
                )
                if i == 0:
                    print(f"    rows:    {_seed.row_counts()}")
                    print(f"    tables:  {_seed.ranking_summary()}")
                    again = f"full recompute, repeat (nothing changed), {n}w"
                    full_recompute(again, workers, WAIT_FULL_S * grow)
                price[n] = quote_change(workers, nth=2 * i + 2, wait_s=WAIT_QUOTE_S * grow)
                print(f"workers:     stopped (exits {workers.stop()})")
                workers = None
            print()
            quote_change_in_process()

            print()
            print("== summary ==")
            for n in counts:
                aim = f"  [aim < {AIM_FULL_S:.0f} s: " + (
                    "met]" if full[n] is not None and full[n] < AIM_FULL_S else "MISSED]"
                )
                print(f"full recompute, {n} worker(s): " + _fmt(full[n]) + (aim if n == 1 else ""))
            if 1 in full and 2 in full and full[1] and full[2]:
                cut = 1 - full[2] / full[1]
                met = "met" if cut >= AIM_SECOND_WORKER_CUT else "MISSED"
                print(
                    f"second worker cuts the full recompute by {cut:.0%}  [aim >= "
                    f"{AIM_SECOND_WORKER_CUT:.0%}: {met}]"
                )
            for n in counts:
                aim = f"  [aim < {AIM_QUOTE_S:.0f} s: " + (
                    "met]" if price[n] is not None and price[n] < AIM_QUOTE_S else "MISSED]"
                )
                print(
                    f"price change to every affected ranking, {n} worker(s): "
                    + _fmt(price[n])
                    + (aim if n == 1 else "")
                )
            print(f"({load()} at the end)")

            missed = (
                full.get(1) is None
                or (full.get(1) or 0) >= AIM_FULL_S
                or price.get(1) is None
                or (price.get(1) or 0) >= AIM_QUOTE_S
            )
            if missed or args.profile:
                brief_id = next(
                    b
                    for b, k in zip(seeded["brief_ids"], seeded["kinds"], strict=True)
                    if k == "REALTIME_INFERENCE"
                )
                profile_one(brief_id)
        return 0
    except _seed.BenchTimeout as exc:
        print(f"ABORTED: {exc}")
        return 2
    finally:
        if workers is not None:
            workers.stop()
            tails = workers.log_tails()
            if tails:
                print(f"worker log tails:\n{tails}")
        if created:
            _seed.drop_database(db_name)
            print(f"cleanup:     dropped {db_name}")
        try:
            left = clean_redis(redis_db, queue, queue)
            print(f"cleanup:     redis db {redis_db}: removed this run's keys ({left} keys left)")
        except Exception as exc:
            print(f"cleanup:     redis cleanup failed: {exc!r}")
        for path in workdir.iterdir():
            path.unlink()
        workdir.rmdir()


def _fmt(seconds: float | None) -> str:
    return "not done" if seconds is None else f"{seconds:.2f} s"


if __name__ == "__main__":
    sys.exit(main())
