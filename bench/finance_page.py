"""How long the finance page of a brief with thousands of quotes takes to render (PostgreSQL).

Run: .venv/bin/python bench/finance_page.py [--quotes 5000] [--limit 900]

Creates a throwaway database (gpuselect_bench_finance_<pid>), migrates it, loads the catalog,
seeds one of each brief kind and ``--quotes`` quotes in bulk (bench/_seed.py), computes the
candidate tables, and prints for the brief with the most rows the time of its finance page
(the default view, and ``?rows=all`` with every row) through Django's test client, with the
number of queries each made. Prints figures only; nothing here asserts a time. Aim: well
under 2 s for 5,000 quotes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _seed

REPEATS = 3  # timed requests per URL (after one warm-up request); the median is printed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quotes", type=int, default=5000)
    parser.add_argument("--briefs", type=int, default=12)
    parser.add_argument("--limit", type=int, default=900, help="hard time limit, seconds")
    parser.add_argument("--profile", action="store_true", help="profile the default page")
    args = parser.parse_args()
    try:
        with _seed.throwaway_database(
            "finance", "gpuselect finance page benchmark (PostgreSQL, test client)", args.limit
        ):
            t0 = time.perf_counter()
            seeded = _seed.seed_sized(n_briefs=args.briefs, n_quotes=args.quotes)
            print(f"seed:        {args.quotes} quotes, {args.briefs} briefs in "
                  f"{time.perf_counter() - t0:.1f} s")  # fmt: skip
            t_comp = _compute_tables(seeded["brief_ids"])
            print(f"tables:      computed in {t_comp:.1f} s")
            _time_pages(seeded, profile=args.profile)
        return 0
    except _seed.BenchTimeout as exc:
        print(f"ABORTED: {exc}")
        return 2


def _compute_tables(brief_ids: list[int]) -> float:
    from apps.finance.models import CandidateTable
    from apps.finance.services import candidate_table_recompute

    CandidateTable.objects.bulk_create([CandidateTable(brief_id=pk) for pk in brief_ids])
    t0 = time.perf_counter()
    for pk in brief_ids:
        candidate_table_recompute(brief_id=pk)
    return time.perf_counter() - t0


def _time_pages(seeded: dict, *, profile: bool) -> None:
    import cProfile
    import pstats

    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.db import connection
    from django.db.models import Count
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from apps.briefs.models import WorkloadBrief
    from apps.core.roles import Role

    brief = (
        WorkloadBrief.objects.filter(pk__in=seeded["brief_ids"])
        .annotate(n=Count("candidate_table__rows"))
        .order_by("-n")
        .first()
    )
    user = get_user_model().objects.create(username="bench-finance")
    user.groups.add(Group.objects.get(name=Role.FINANCE.value))
    brief.team.members.add(user)
    client = Client()
    client.force_login(user)
    print(f"brief:       #{brief.pk} ({brief.workload_type}) with {brief.n} candidate rows")
    for suffix in ("", "?rows=all", "?sort=unit_cost&rows=all"):
        path = f"/briefs/{brief.pk}/finance/{suffix}"
        client.get(path)  # warm-up: caches, template loading
        times = []
        for _ in range(REPEATS):
            with CaptureQueriesContext(connection) as queries:
                t0 = time.perf_counter()
                response = client.get(path)
                times.append(time.perf_counter() - t0)
        assert response.status_code == 200, response.status_code
        print(f"page:        {path:<44} median {statistics.median(times):.3f} s, "
              f"{len(queries)} queries, {len(response.content) / 1e6:.1f} MB of HTML")  # fmt: skip
    if profile:
        profiler = cProfile.Profile()
        profiler.runcall(client.get, f"/briefs/{brief.pk}/finance/")
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(45)


if __name__ == "__main__":
    sys.exit(main())
