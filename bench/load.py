"""API load test with locust: 20 users for 60 s against gunicorn on a seeded PostgreSQL.

Run: .venv/bin/python bench/load.py [--users 20] [--seconds 60] [--workers 2] [--threads 4]
                                    [--wait 0.1,0.5] [--limit 600]
(needs locust: .venv/bin/pip install locust==2.47.0)

Creates a throwaway database (gpuselect_bench_load_<pid>), seeds it like the other database
benchmarks (bench/_seed.py: 30 GPUs, 2,000 quotes, 200 complete briefs), computes every
candidate table (bench/rankings_load.py, two forked processes, no broker), starts gunicorn on a
free loopback port (``-w 2 --threads 4``; gpuselect.settings.local, DJANGO_DEBUG=false,
API_THROTTLE_USER=10000000/min so that throttling does not shape the figures) and runs locust
headless in a child process (locust's gevent monkey-patching stays out of this one): each user
signs requests with the same API token and waits ``--wait`` seconds (uniform) between tasks:

    GET  /api/v1/briefs/<random id>/rankings    weight 5
    POST /api/v1/estimate  (no GPU filter: every catalog GPU answered)   weight 2
    GET  /api/v1/briefs/                        weight 2

Prints p50/p95/p99, requests, failures and requests/s per endpoint and overall (aim: p95 <
150 ms), from locust's own stats. gunicorn is stopped and the database dropped at the end, also
on error or when the hard time limit fires. Prints figures only; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

AIM_P95_MS = 150.0
HOST = "127.0.0.1"
ESTIMATE_BODY = {
    "workload_type": "REALTIME_INFERENCE",
    "model": {"preset": "llama-3.1-8b"},
    "weight_precision": "FP8",
    "kv_cache_precision": "FP8",
    "input_tokens": {"p50": 1000, "p95": 4000},
    "output_tokens": {"p50": 200, "p95": 800},
    "concurrency": 32,
    "latency_target": {"ttft_p95_ms": 500, "itl_p95_ms": 50},
}
PERCENTILES = (0.5, 0.95, 0.99)


# --- the locust child process -------------------------------------------------------------------


def locust_child(config: dict[str, Any]) -> dict[str, Any]:
    """Run in a child process: locust (gevent) against ``config['base']``; returns the stats."""
    import random

    import gevent
    from locust import between, task
    from locust.contrib.fasthttp import FastHttpUser
    from locust.env import Environment

    brief_ids = config["brief_ids"]
    headers = {"Authorization": f"Token {config['token']}"}
    lo, hi = config["wait"]

    class ApiUser(FastHttpUser):
        host = config["base"]
        wait_time = between(lo, hi)

        @task(5)
        def rankings(self) -> None:
            brief = random.choice(brief_ids)
            self.client.get(
                f"/api/v1/briefs/{brief}/rankings", headers=headers,
                name="GET /api/v1/briefs/<id>/rankings",
            )  # fmt: skip

        @task(2)
        def estimate(self) -> None:
            self.client.post(
                "/api/v1/estimate", json=ESTIMATE_BODY, headers=headers,
                name="POST /api/v1/estimate",
            )  # fmt: skip

        @task(2)
        def briefs(self) -> None:
            self.client.get("/api/v1/briefs/", headers=headers, name="GET /api/v1/briefs/")

    env = Environment(user_classes=[ApiUser])
    runner = env.create_local_runner()
    started = time.perf_counter()
    runner.start(config["users"], spawn_rate=config["users"])
    gevent.sleep(config["seconds"])
    runner.quit()
    wall = time.perf_counter() - started

    def entry(stats: Any) -> dict[str, Any]:
        return {
            "requests": stats.num_requests,
            "failures": stats.num_failures,
            "rps": stats.num_requests / wall if wall else 0.0,
            "p50": stats.get_response_time_percentile(0.5),
            "p95": stats.get_response_time_percentile(0.95),
            "p99": stats.get_response_time_percentile(0.99),
            "mean": stats.avg_response_time,
            "max": stats.max_response_time,
        }

    out = {name: entry(s) for (name, _method), s in sorted(env.stats.entries.items())}
    out["TOTAL"] = entry(env.stats.total)
    errors = {
        f"{e.method} {e.name}: {e.error}"[:200]: e.occurrences for e in env.stats.errors.values()
    }
    return {"endpoints": out, "errors": errors, "wall_s": wall}


# --- the parent: database, gunicorn, report -----------------------------------------------------


def run_locust(config: dict[str, Any], workdir: Path, timeout: float) -> dict[str, Any]:
    cfg = workdir / "locust.json"
    cfg.write_text(json.dumps(config))
    proc = subprocess.run(
        [sys.executable, __file__, "--locust-child", str(cfg)],
        capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"locust child failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def report(result: dict[str, Any], users: int, seconds: float) -> None:
    print(
        f"load:        locust {users} users, {seconds:.0f} s ({result['wall_s']:.1f} s wall), "
        f"FastHttpUser, loopback"
    )
    print(f"{'endpoint':38} {'reqs':>6} {'fail':>5} {'req/s':>6} {'p50':>6} {'p95':>6} "
          f"{'p99':>6} {'max':>7}  ms")  # fmt: skip
    for name, s in result["endpoints"].items():
        print(
            f"{name:38} {s['requests']:6d} {s['failures']:5d} {s['rps']:6.1f} {s['p50']:6.0f} "
            f"{s['p95']:6.0f} {s['p99']:6.0f} {s['max']:7.0f}"
        )
    for name, s in result["endpoints"].items():
        verdict = "met" if s["p95"] < AIM_P95_MS else "MISSED"
        print(f"aim p95 < {AIM_P95_MS:.0f} ms: {name}: {verdict}")
    if result["errors"]:
        print(f"errors:      {result['errors']}")
    else:
        print("errors:      none")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--threads", type=int, default=4, help="gunicorn threads per worker")
    parser.add_argument("--wait", default="0.1,0.5", help="think time range per user, s")
    parser.add_argument("--limit", type=int, default=600, help="hard time limit, seconds")
    parser.add_argument("--locust-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.locust_child:
        config = json.loads(Path(args.locust_child).read_text())
        print(json.dumps(locust_child(config)))
        return 0

    import _seed
    import rankings_load

    db_name = _seed.db_name_for("load")
    workdir = Path(tempfile.mkdtemp(prefix="gpuselect-load-"))
    log = workdir / "gunicorn.log"
    server: Any = None
    created = False
    try:
        with _seed.hard_limit(args.limit):
            url = _seed.create_database(db_name)
            created = True
            env = _seed.base_env(
                url, DJANGO_ALLOWED_HOSTS=HOST, API_THROTTLE_USER="10000000/min",
                API_THROTTLE_ANON="10000000/min",
            )  # fmt: skip
            _seed.django_setup(_seed.base_env(url))
            print("== gpuselect API load test (locust, gunicorn, PostgreSQL) ==")
            for line in _seed.machine_lines():
                print(line)
            print(f"database:    {db_name} (throwaway)")
            t_mig = _seed.migrate_and_load_catalog()
            t0 = time.perf_counter()
            seeded = _seed.seed()
            t_seed = time.perf_counter() - t0
            processes = max(1, min(2, os.cpu_count() or 1))
            t_comp = rankings_load.compute_all_tables(seeded["brief_ids"], processes)
            print(
                f"setup:       migrate + load_catalog {t_mig:.1f} s; bulk seed {t_seed:.1f} s; "
                f"{len(seeded['brief_ids'])} tables computed in {t_comp:.1f} s"
            )
            print(f"rows:        {_seed.row_counts()}")

            from django.contrib.auth import get_user_model

            from apps.core.services import api_token_create

            user = get_user_model().objects.get(pk=seeded["api_user_id"])
            _, token = api_token_create(user=user, days=1)
            port = rankings_load.free_port()
            server = rankings_load.start_gunicorn(env, port, log, args.workers, args.threads)
            headers = {"Authorization": f"Token {token}", "Host": HOST}
            first = f"/api/v1/briefs/{seeded['brief_ids'][0]}/rankings"
            ready = rankings_load.wait_http_ready(server, port, first, headers, log)
            print(
                f"server:      gunicorn -w {args.workers} --threads {args.threads} on "
                f"{HOST}:{port}, first answer after {ready:.1f} s; API_THROTTLE_USER "
                f"10000000/min"
            )
            lo, hi = (float(x) for x in args.wait.split(","))
            config = {
                "base": f"http://{HOST}:{port}",
                "token": token,
                "brief_ids": seeded["brief_ids"],
                "users": args.users,
                "seconds": args.seconds,
                "wait": [lo, hi],
            }
            # A short warm-up (imports, connections, caches in both workers), not reported.
            run_locust({**config, "seconds": 5}, workdir, timeout=120)
            result = run_locust(config, workdir, timeout=args.seconds + 120)
            print(f"think time:  {lo}-{hi} s per user between requests (5 s warm-up first)")
            report(result, args.users, args.seconds)
            _seed.stop_process(server, grace=10)
            print(f"server:      stopped (exit {server.returncode})")
        return 0
    except _seed.BenchTimeout as exc:
        print(f"ABORTED: {exc}")
        return 2
    finally:
        _seed.clean_up_server_run(server, log, db_name if created else None, workdir)


if __name__ == "__main__":
    sys.exit(main())
