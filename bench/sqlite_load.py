"""Concurrent writers against the embedded default: ``make run``'s server on SQLite, no broker.

Run: .venv/bin/python bench/sqlite_load.py [--writers 8] [--seconds 20] [--settle 120]

Starts the server as ``make run`` does (gunicorn with gpuselect/gunicorn_embedded.py: one process
of 8 threads; gpuselect.settings.local, DEBUG off, tasks in-process) on a throwaway SQLite file
with the catalog and demo data, and drives it with ``--writers`` concurrent API clients for
``--seconds``: the same writers as
tests/integration/test_embedded_concurrency.py (briefs created and patched, quotes created and
their prices changed; every write recomputes one or every candidate table in-process). Prints
writes/s, error counts, p50/p95/max latency per write, the lock warnings the server logged and
how long the tables took to be all computed after the load. Prints figures only; nothing here
asserts a time.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.integration.test_embedded_concurrency import (  # noqa: E402
    LOAD_SECONDS,
    SETTLE_S,
    WRITERS,
    drive,
    embedded_server_running,
    settle,
    table_count,
)


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=WRITERS)
    parser.add_argument("--seconds", type=float, default=LOAD_SECONDS)
    parser.add_argument("--settle", type=float, default=SETTLE_S, help="wait for tables, s")
    parser.add_argument("--show-errors", action="store_true", help="print the server log tail")
    args = parser.parse_args()

    print("== gpuselect embedded default under concurrent writers (make run's gunicorn, SQLite) ==")
    print(
        f"machine:     {platform.platform()}; {os.cpu_count()} CPUs; "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    tmp = tempfile.TemporaryDirectory(prefix="gpuselect-sqlite-load-")
    with tmp, embedded_server_running(Path(tmp.name)) as server:
        started = time.perf_counter()
        writers = drive(server, writers=args.writers, seconds=args.seconds)
        wall = time.perf_counter() - started
        t0 = time.perf_counter()
        pending = settle(server["db"], args.settle)
        settled = time.perf_counter() - t0
        briefs, tables = table_count(server["db"])
        log = server["log"].read_text()
    statuses = Counter(s for w in writers for s in w.statuses)
    timings = [t * 1000 for w in writers for t in w.timings]
    writes = sum(statuses.values())
    errors = sum(n for s, n in statuses.items() if s >= 500)
    other = sum(n for s, n in statuses.items() if 300 <= s < 500)
    dropped = sum(len(w.failures) for w in writers) - errors - other  # timeouts, resets
    print(f"load:        {args.writers} writers, {args.seconds:.0f} s ({wall:.1f} s wall)")
    print(f"writes:      {writes} ({writes / wall:.1f} writes/s); statuses {dict(statuses)}")
    print(f"errors:      {errors} server errors, {other} other refusals, {dropped} dropped")
    print(
        f"latency:     p50 {percentile(timings, 0.5):.0f} ms, p95 {percentile(timings, 0.95):.0f}"
        f" ms, max {max(timings, default=float('nan')):.0f} ms (per write, recompute included)"
    )
    print(
        f"server log:  {log.count('database is locked')} 'database is locked', "
        f"{log.count('left to the sweeper')} recomputes left to the sweeper"
    )
    if errors and args.show_errors:
        print(log[-6000:])
    print(
        f"tables:      {tables} for {briefs} briefs; {len(pending)} still pending "
        f"{settled:.1f} s after the load"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
