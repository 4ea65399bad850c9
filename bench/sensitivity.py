"""What the sensitivity ("what would change the winner") costs a table recompute (PostgreSQL).

Run: .venv/bin/python bench/sensitivity.py [--briefs 40] [--quotes 2000] [--limit 900]

Creates a throwaway database (gpuselect_bench_sensitivity_<pid>), migrates it, loads the catalog
(+ the synthetic GPUs), seeds ``--briefs`` briefs of every kind and ``--quotes`` quotes in bulk
(bench/_seed.py, the generator bench/recompute.py uses), computes every table in-process, then
prints per table:

  (a) the full recompute of the table (which includes the sensitivity);
  (b) the sensitivity computed afresh: reading the leading rows and their quotes, the engine's
      costings (apps.engine.sensitivity) and the JSON, and how many costings it took;
  (c) the check that keeps it on a price change of a quote outside the leading rows (the
      incremental recompute's case), and the queries it made (none);
  (d) the price change bench/recompute.py makes (its first H100 SXM5 on-demand USD quote
      x 1.5, through quote_update, recomputed in-process): how many tables computed their
      sensitivity again, and the time that took out of the whole change.

Prints figures only; nothing here asserts a time. The database is dropped at the end.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _seed


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    return (
        f"median {statistics.median(ordered) * 1000:6.2f} ms, "
        f"p95 {_seed.percentile(ordered, 95) * 1000:6.2f} ms, max {ordered[-1] * 1000:6.2f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--briefs", type=int, default=40)
    parser.add_argument("--quotes", type=int, default=2000)
    parser.add_argument("--limit", type=int, default=900, help="hard time limit, seconds")
    parser.add_argument("--profile", action="store_true", help="profile (b) on one table")
    args = parser.parse_args()
    try:
        with _seed.throwaway_database(
            "sensitivity",
            "gpuselect sensitivity cost per table (PostgreSQL, in-process)",
            args.limit,
        ):
            _seed.add_synthetic_gpus()
            seeded = _seed.seed_sized(n_briefs=args.briefs, n_quotes=args.quotes)
            _measure(seeded["brief_ids"], profile=args.profile)
        return 0
    except _seed.BenchTimeout as exc:
        print(f"ABORTED: {exc}")
        return 2


def _measure(brief_ids: list[int], *, profile: bool) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.briefs.models import WorkloadBrief
    from apps.finance.candidates import BuiltTable, table_context
    from apps.finance.models import CandidateTable
    from apps.finance.sensitivity import _leading_rows, sensitivity_for, sensitivity_update
    from apps.finance.services import candidate_table_recompute

    CandidateTable.objects.bulk_create([CandidateTable(brief_id=pk) for pk in brief_ids])
    full: list[float] = []
    for pk in brief_ids:
        t0 = time.perf_counter()
        candidate_table_recompute(brief_id=pk)
        full.append(time.perf_counter() - t0)
    fresh: list[float] = []
    kept: list[float] = []
    costings: list[int] = []
    rows_per_table: list[int] = []
    left_out = changes = 0
    kinds: dict[str, int] = {}
    for pk in brief_ids:
        brief = WorkloadBrief.objects.select_related("team").get(pk=pk)
        table = CandidateTable.objects.get(brief=brief)
        ctx = table_context(brief, table)
        if isinstance(ctx, str):
            continue
        rows_per_table.append(table.rows.count())
        t0 = time.perf_counter()
        rows = _leading_rows(table, brief.team_id)
        result = sensitivity_for(ctx, rows)
        fresh.append(time.perf_counter() - t0)
        costings.append(result.get("costings", 0))
        left_out += len(result.get("left_out", []))
        kinds[brief.workload_type] = kinds.get(brief.workload_type, 0) + 1
        changes += sum(1 for f in result.get("findings", []) if f["down"] or f["up"])
        leading = {r["quote_id"] for r in rows}
        other = table.rows.exclude(quote_id__in=leading).exclude(quote_id=None).first()
        built = BuiltTable(
            rows=[], replace_all=False, stale_quote_ids=[other.quote_id], context=ctx
        )
        with CaptureQueriesContext(connection) as queries:
            t0 = time.perf_counter()
            saved = sensitivity_update(table, built)
            kept.append(time.perf_counter() - t0)
        kept_queries = len(queries)
        assert saved == [], "the stored sensitivity should still hold"
    if profile:
        import cProfile
        import pstats

        brief = WorkloadBrief.objects.select_related("team").get(pk=brief_ids[0])
        table = CandidateTable.objects.get(brief=brief)
        ctx = table_context(brief, table)
        profiler = cProfile.Profile()
        profiler.runcall(lambda: sensitivity_for(ctx, _leading_rows(table, brief.team_id)))
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    print(f"tables:      {len(full)} ({len(fresh)} ranked), "
          f"{statistics.median(rows_per_table):.0f} rows a table (median)")  # fmt: skip
    print(f"kinds:       {', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}")
    print(f"check:       {left_out} leading rows left out (costed again, not the table's figure); "
          f"{changes} winner changes found")  # fmt: skip
    print(f"(a) full recompute of a table (sensitivity included): {_ms(full)}")
    print(f"(b) sensitivity computed afresh:                      {_ms(fresh)}")
    print(f"    costings a table: median {statistics.median(costings):.0f}, max {max(costings)}")
    print(f"(c) sensitivity kept (leading rows unchanged):         {_ms(kept)}, "
          f"{kept_queries} queries")  # fmt: skip
    _price_change()
    share = sum(fresh) / sum(full) * 100
    print(f"    (b) is {share:.1f} % of (a) over all tables; for 200 briefs "
          f"{statistics.median(fresh) * 200:.2f} s of a full recompute")  # fmt: skip


def _price_change() -> None:
    from decimal import Decimal

    from apps.finance import sensitivity as module
    from apps.quotes.models import Quote
    from apps.quotes.services import quote_update

    quote = (
        Quote.objects.filter(
            gpu__slug="h100-sxm5-80gb",
            pricing_term="ON_DEMAND",
            currency="USD",
            confidential_to__isnull=True,
            retired=False,
        )
        .order_by("id")
        .first()
    )
    if quote is None:
        print("(d) no H100 SXM5 on-demand quote seeded")
        return
    spent: list[float] = []
    original = module.sensitivity_for

    def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - t0)

    module.sensitivity_for = timed  # type: ignore[assignment]
    try:
        t0 = time.perf_counter()
        new_price = (quote.hourly_price_per_gpu * Decimal("1.5")).quantize(Decimal("0.0001"))
        quote_update(quote=quote, hourly_price_per_gpu=new_price)
        took = time.perf_counter() - t0
    finally:
        module.sensitivity_for = original  # type: ignore[assignment]
    print(f"(d) quote #{quote.pk} x 1.5: {took:.2f} s for every table in-process; {len(spent)} "
          f"tables computed their sensitivity again, {sum(spent):.3f} s of it")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
