"""How long a 24,000-row GPU catalog import takes, and how many recomputes it asks for.

Run: .venv/bin/python bench/catalog_import.py [--rows 24000] [--briefs 40] [--limit 300]

Creates a throwaway PostgreSQL database (gpuselect_bench_catalog_<pid>), migrates it, loads the
catalog, seeds ``--briefs`` complete briefs, generates a SkyPilot AWS-shaped ``vms.csv`` of
``--rows`` rows (GPU instance types of the catalog and one it lacks, CPU VMs, zones with and
without spot prices, a zone without any price) and imports it three times through
``quotes_import_catalog`` (one quote per instance type x region x term):

  (a) the first import: every quote created;
  (b) the same catalog a week later with every price changed: every quote updated in place;
  (c) the same file again: nothing changes.

For each it prints the seconds, the queries, the quotes created / updated / unchanged, and the
recomputes asked for: how many times the recompute was sent after commit and how many briefs
each send named (one coalesced recompute per brief: every brief exactly once however many
quotes changed), and how far each candidate table's requested version moved (1 per import).
The worker is not run (its sends are recorded instead): its cost is bench/recompute.py's.
Prints figures only; nothing here asserts a time. Aim: (a) and (b) under 15 s each at 24,000
rows (issue 26).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _seed

HEADER = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,"
    "Region,AvailabilityZone"
)
# (instance type, accelerator, count, MiB per GPU, on-demand price of the instance): AWS list
# prices of 2025, for realistic magnitudes only. dl1 (Gaudi) is not in the GPU catalog; m6i has
# no GPU.
INSTANCES = (
    ("p5.48xlarge", "H100", 8, 81920, 55.04),
    ("p5.4xlarge", "H100", 1, 81920, 6.88),
    ("p4d.24xlarge", "A100", 8, 40960, 21.96),
    ("p4de.24xlarge", "A100-80GB", 8, 81920, 27.447),
    ("p5en.48xlarge", "H200", 8, 144384, 63.296),
    ("g6e.xlarge", "L40S", 1, 45776, 1.861),
    ("g6e.48xlarge", "L40S", 8, 45776, 30.131),
    ("g6.xlarge", "L4", 1, 22888, 0.805),
    ("g5.xlarge", "A10G", 1, 24576, 1.006),
    ("g4dn.xlarge", "T4", 1, 16384, 0.526),
    ("dl1.24xlarge", "Gaudi HL-205", 8, 32768, 13.109),
    ("m6i.large", "", 0, 0, 0.096),
)
ZONES_PER_REGION = 5


def catalog_text(rows: int, *, seed: int, scale: float = 1.0) -> str:
    rng = random.Random(seed)
    lines = [HEADER]
    per_region = len(INSTANCES) * ZONES_PER_REGION
    regions = -(-rows // per_region)
    for r in range(regions):
        region = f"bench-{r:03d}-1"
        for instance, name, count, mib, price in INSTANCES:
            for z in range(ZONES_PER_REGION):
                if len(lines) > rows:
                    break
                gpu_info = (
                    f"\"{{'Gpus': [{{'Name': '{name}', 'Count': {count}, 'MemoryInfo': "
                    f"{{'SizeInMiB': {mib}}}}}], 'TotalGpuMemoryInMiB': {mib * count}}}\""
                    if name
                    else ""
                )
                on_demand = price * scale * (1 + r % 7 / 100)
                spot = "" if z == 0 else f"{on_demand * rng.uniform(0.3, 0.6):.6f}"
                listed = "" if z == ZONES_PER_REGION - 1 and r % 3 == 0 else f"{on_demand:.5f}"
                if not listed:
                    spot = ""  # a zone without any price: skipped and counted
                lines.append(
                    f"{instance},{name},{count or ''},8.0,32.0,{gpu_info},{listed},"
                    f"{spot},{region},{region[:-2]}-az{z}"
                )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=24_000)
    parser.add_argument("--briefs", type=int, default=40)
    parser.add_argument("--limit", type=int, default=300, help="hard time limit, seconds")
    parser.add_argument("--profile", action="store_true", help="cProfile (b): the top 25")
    args = parser.parse_args()
    try:
        with _seed.throwaway_database(
            "catalog", "gpuselect catalog import benchmark (PostgreSQL)", args.limit
        ):
            _run(args.rows, args.briefs, profile=args.profile)
        return 0
    except _seed.BenchTimeout as exc:
        print(f"ABORTED: {exc}")
        return 2


def _run(rows: int, n_briefs: int, *, profile: bool = False) -> None:
    import cProfile
    import pstats
    from unittest import mock

    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from apps.briefs.models import WorkloadBrief
    from apps.core.models import Team
    from apps.finance import services as finance
    from apps.finance.models import CandidateTable
    from apps.quotes.catalog_import import quotes_import_catalog
    from apps.quotes.models import Provider, Quote

    team = Team.objects.create(name="Bench catalog", slug="bench-catalog")
    user = get_user_model().objects.create(username="bench-buyer")
    rng = random.Random(_seed.SEED)
    kinds = ("REALTIME_INFERENCE", "BATCH_INFERENCE", "LORA_FINETUNE")
    briefs = [
        WorkloadBrief.objects.create(
            team=team, created_by=user, name=f"Bench {i}", **_seed.brief_fields(kinds[i % 3], rng)
        )
        for i in range(n_briefs)
    ]
    brief_ids = {b.pk for b in briefs}
    provider = Provider.objects.create(name="Bench catalog cloud")
    first = catalog_text(rows, seed=1)
    later = catalog_text(rows, seed=2, scale=0.93)
    print(f"catalog:     {rows:,} rows ({len(first) / 1e6:.2f} MB), {n_briefs} briefs")

    # Every brief has its candidate table already (as after its first recompute).
    CandidateTable.objects.bulk_create([CandidateTable(brief_id=pk) for pk in sorted(brief_ids)])

    def versions() -> dict[int, int]:
        return dict(CandidateTable.objects.values_list("brief_id", "requested_version"))

    for label, text, day in (
        ("(a) first", first, date(2026, 11, 24)),
        ("(b) new prices", later, date(2026, 12, 1)),
        ("(c) same again", later, date(2026, 12, 1)),
    ):
        sends: list[list[int]] = []
        before = versions()
        record = mock.patch.object(finance, "_send_all", side_effect=sends.append)
        with record, CaptureQueriesContext(connection) as queries:
            profiler = cProfile.Profile() if profile and label.startswith("(b)") else None
            if profiler:
                profiler.enable()
            t0 = time.perf_counter()
            with transaction.atomic():
                result = quotes_import_catalog(
                    text=text, fmt="skypilot", provider=provider, filename="bench-vms.csv",
                    fetched_date=day, created_by=user,
                )  # fmt: skip
            seconds = time.perf_counter() - t0  # the commit (and its on_commit sends) included
            if profiler:
                profiler.disable()
                pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
        after = versions()
        named = Counter(pk for ids in sends for pk in ids)
        moved = Counter(after.get(pk, 0) - before.get(pk, 0) for pk in brief_ids)
        once = set(named) == brief_ids and set(named.values()) <= {1}
        how = "each brief once" if once else ("none" if not named else "NOT once each")
        print(f"{label:15s} {seconds:6.2f} s, {len(queries):3d} queries: "
              f"{len(result.created):,} created, {len(result.updated):,} updated, "
              f"{len(result.unchanged):,} unchanged; recompute sent {len(sends)}x naming "
              f"{sum(named.values())} briefs ({how}); "
              f"requested version moved by {dict(moved)}")  # fmt: skip
        stored = dict(
            Quote.objects.filter(provider=provider).values_list("pk", "hourly_price_per_gpu")
        )
        wrong = sum(stored[q.pk] != q.hourly_price_per_gpu for q in result.updated)
        if result.updated:
            versions_now = Counter(
                Quote.objects.filter(provider=provider).values_list("version", flat=True)
            )
            print(f"{'':15s} stored: {wrong} updated prices differ from the file's; "
                  f"quote versions now {dict(versions_now)}")  # fmt: skip
        # What the worker would do: finish the queued recomputes, so the next change enqueues.
        CandidateTable.objects.update(queued_at=None)
    live = Quote.objects.filter(provider=provider, retired=False).count()
    unknown = ", ".join(result.unknown_accelerators)
    skipped = sum(int(str(s["rows"])) for s in result.skipped)
    print(f"quotes:      {live:,} live for the provider after three imports "
          f"(one per instance type x region x term); {skipped:,} rows skipped; "
          f"accelerators not in the catalog: {unknown}")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
