"""How long the bulk imports take: a 5,000-row quote CSV and a benchmark file at its run limit.

Run: .venv/bin/python bench/imports.py [--rows 5000] [--runs 200] [--limit 600]

Creates a throwaway PostgreSQL database (gpuselect_bench_imports_<pid>), migrates it, loads the
catalog and prints, for each import, the seconds it took and the queries it made:

  (a) ``quotes_import_csv`` of a ``--rows`` row CSV (every row valid), aim < 10 s for 5,000;
  (b) ``benchmark_runs_import`` of a vLLM ``--append-result`` JSONL with ``--runs`` lines
      (default: MAX_RUNS_PER_FILE), aim: well within a request.

The recompute each import asks for runs after commit and is not in the figure (in production
it is a background task). Prints figures only; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _seed

ROOT = Path(__file__).resolve().parents[1]
VLLM_LINE = ROOT / "tests" / "data" / "benchmarks" / "vllm_bench_serve_append.jsonl"
QUOTE_HEADER = (
    "provider,gpu,system,region,pricing_term,hourly_price_per_gpu,currency,source,quote_date"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=0, help="0: MAX_RUNS_PER_FILE")
    parser.add_argument("--limit", type=int, default=600, help="hard time limit, seconds")
    args = parser.parse_args()
    try:
        with _seed.throwaway_database(
            "imports", "gpuselect import benchmark (PostgreSQL)", args.limit
        ):
            _quote_import(args.rows)
            _benchmark_import(args.runs)
        return 0
    except _seed.BenchTimeout as exc:
        print(f"ABORTED: {exc}")
        return 2


def _timed(call):  # type: ignore[no-untyped-def]
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        t0 = time.perf_counter()
        result = call()
        seconds = time.perf_counter() - t0
    return result, seconds, len(queries)


def _quote_import(rows: int) -> None:
    from django.db import transaction

    from apps.catalog.models import Gpu
    from apps.quotes.csv_rows import QuoteRowParser
    from apps.quotes.models import Provider
    from apps.quotes.services import quotes_import_csv

    provider = Provider.objects.create(name="Bench import cloud")
    slugs = list(Gpu.objects.order_by("slug").values_list("slug", flat=True))
    lines = [QUOTE_HEADER] + [
        f"{provider.name},{slugs[i % len(slugs)]},,eu-{i % 7},ON_DEMAND,"
        f"{2 + (i % 300) / 100:.2f},USD,bench sheet row {i},2026-11-01"
        for i in range(rows)
    ]
    text = "\n".join(lines) + "\n"
    # The recompute asked for after commit is not part of the import's figure.
    with transaction.atomic():
        quotes, seconds, queries = _timed(
            lambda: quotes_import_csv(text=text, parse_row=QuoteRowParser())
        )
        transaction.set_rollback(True)
    print(f"quote CSV:   {len(quotes):,} rows ({len(text) / 1e6:.2f} MB) imported in "
          f"{seconds:.2f} s, {queries} queries")  # fmt: skip


def _benchmark_import(runs: int) -> None:
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from apps.benchmarks import services
    from apps.briefs.models import WorkloadBrief
    from apps.catalog.models import Gpu
    from apps.core.models import Team

    runs = runs or services.MAX_RUNS_PER_FILE
    team = Team.objects.create(name="Bench imports", slug="bench-imports")
    user = get_user_model().objects.create(username="bench-importer")
    fields = _seed.brief_fields("REALTIME_INFERENCE", _rng())
    brief = WorkloadBrief.objects.create(team=team, created_by=user, name="Bench", **fields)
    one = VLLM_LINE.read_bytes().splitlines()[0]
    raw = b"\n".join([one] * runs) + b"\n"
    gpu = Gpu.objects.get(slug="h100-sxm5-80gb")
    with transaction.atomic():
        outcome, seconds, queries = _timed(
            lambda: services.benchmark_runs_import(
                brief=brief, gpu=gpu, gpu_count=1, raw=raw, filename="bench.jsonl",
                created_by=user, proxy=True,  # the file's Qwen3-8B is not the seeded brief's model
            )
        )  # fmt: skip
        transaction.set_rollback(True)
    print(f"benchmark:   {len(outcome.runs)} vLLM runs ({len(raw) / 1e6:.2f} MB JSONL) imported "
          f"in {seconds:.2f} s, {queries} queries "
          f"(limit {services.MAX_RUNS_PER_FILE} runs a file)")  # fmt: skip


def _rng():  # type: ignore[no-untyped-def]
    import random

    return random.Random(_seed.SEED)


if __name__ == "__main__":
    sys.exit(main())
