"""The Django side of the fault tests, run in a subprocess against the throwaway database.

    python tests/faults/driver.py COMMAND [options]     (prints one JSON document on stdout)

The environment comes from tests/faults/harness.py: DATABASE_URL (the throwaway database),
CELERY_BROKER_URL / CELERY_QUEUE (the test's own Redis db and queue),
DJANGO_SETTINGS_MODULE=gpuselect.settings.local and DJANGO_DEBUG=false (settings.test forces
eager tasks; the point here is the real broker). Every step is its own process so that the
pytest process never holds a Django connection across a PostgreSQL restart, and so that these
tests run the same with or without pytest-django.

Commands:
  setup        migrate, load the catalog, seed briefs/quotes (bench/_seed.py), a procurement
               user with an API token, compute every table in-process, open decision records
  snapshot     quote ids/versions/prices/retired, decision record ids, audit events, counts
  request-all  candidate_tables_request_recompute() for every brief (enqueues to the broker)
  touch-assumptions  change the default retry rate: every table recomputed in full
  burst        quote edits through the REST API (PATCH price, retire, POST new quote), paced
  sweep        candidate_tables_sweep(); --age first moves the queued_at of stale tables back
               by LOST_TASK_AFTER (time passing, without waiting two minutes)
  wait         until no table is stale or queued (or --timeout)
  check        the convergence check: every table equals a fresh in-process recompute
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


def _setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gpuselect.settings.local")
    import django

    django.setup()


# --- setup ------------------------------------------------------------------------------------


def cmd_setup(args: argparse.Namespace) -> dict[str, Any]:
    import _seed
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from apps.core.models import Team
    from apps.core.roles import Role
    from apps.core.services import api_token_create
    from apps.decisions.services import decision_record_create
    from apps.finance.models import CandidateTable
    from apps.finance.services import candidate_table_recompute
    from apps.quotes.models import Quote

    t0 = time.perf_counter()
    _seed.migrate_and_load_catalog()
    seeded = _seed.seed_sized(n_briefs=args.briefs, n_quotes=args.quotes)
    user_model = get_user_model()
    buyer = user_model.objects.create(username="faults-procurement", email="buy@example.com")
    buyer.groups.add(Group.objects.get(name=Role.PROCUREMENT.value))
    for team in Team.objects.all():
        team.members.add(buyer)
    _, token = api_token_create(user=buyer, days=1)
    # Every table computed once, in-process (no broker involved yet).
    CandidateTable.objects.bulk_create([CandidateTable(brief_id=pk) for pk in seeded["brief_ids"]])
    for pk in seeded["brief_ids"]:
        candidate_table_recompute(brief_id=pk)
    # A few decision records, frozen from the computed tables.
    from apps.briefs.models import WorkloadBrief

    decisions = []
    for brief in WorkloadBrief.objects.order_by("pk")[: args.decisions]:
        quote = Quote.objects.filter(confidential_to__isnull=True, retired=False).order_by("pk")[0]
        record = decision_record_create(
            brief=brief, created_by=buyer, capacity_model="RENT_ON_DEMAND", chosen_quote=quote
        )
        decisions.append(record.pk)
    return {
        "brief_ids": seeded["brief_ids"],
        "token": token,
        "decision_ids": decisions,
        "setup_s": round(time.perf_counter() - t0, 1),
    }


# --- snapshot ---------------------------------------------------------------------------------


def cmd_snapshot(args: argparse.Namespace) -> dict[str, Any]:
    from apps.briefs.models import WorkloadBrief
    from apps.decisions.models import AuditEvent, DecisionRecord
    from apps.quotes.models import Quote

    quotes = {
        str(pk): [version, str(price), retired]
        for pk, version, price, retired in Quote.objects.values_list(
            "pk", "version", "hourly_price_per_gpu", "retired"
        )
    }
    return {
        "quotes": quotes,
        "decisions": sorted(
            [pk, h] for pk, h in DecisionRecord.objects.values_list("pk", "content_hash")
        ),
        "audit_events": AuditEvent.objects.count(),
        "briefs": sorted(WorkloadBrief.objects.values_list("pk", flat=True)),
    }


# --- recompute requests -------------------------------------------------------------------------


def cmd_request_all(args: argparse.Namespace) -> dict[str, Any]:
    from apps.finance.services import candidate_tables_request_recompute

    return {"enqueued": candidate_tables_request_recompute()}


def cmd_touch_assumptions(args: argparse.Namespace) -> dict[str, Any]:
    """Change the organisation's finance defaults: every table must be recomputed in full
    (slow enough, ~1 s a table with 2,000 quotes, to kill a worker in the middle)."""
    from decimal import Decimal

    from apps.finance.models import FinanceAssumptions
    from apps.finance.services import finance_assumptions_update

    current = FinanceAssumptions.objects.get(is_default=True).retry_rate or Decimal("0.03")
    new = Decimal("0.0300") if current != Decimal("0.0300") else Decimal("0.0400")
    finance_assumptions_update(brief=None, retry_rate=new)
    return {"retry_rate": str(new)}


def cmd_sweep(args: argparse.Namespace) -> dict[str, Any]:
    from datetime import timedelta

    from django.db.models import F

    from apps.finance.models import CandidateTable
    from apps.finance.services import LOST_TASK_AFTER, candidate_tables_sweep

    aged = 0
    if args.age:
        aged = CandidateTable.objects.filter(
            queued_at__isnull=False, computed_version__lt=F("requested_version")
        ).update(queued_at=F("queued_at") - LOST_TASK_AFTER - timedelta(seconds=1))
    return {"aged": aged, "enqueued": candidate_tables_sweep()}


def _pending() -> tuple[list[int], list[int]]:
    from django.db.models import F

    from apps.finance.models import CandidateTable

    stale = CandidateTable.objects.filter(computed_version__lt=F("requested_version"))
    queued = CandidateTable.objects.filter(queued_at__isnull=False)
    return (
        sorted(stale.values_list("brief_id", flat=True)),
        sorted(queued.values_list("brief_id", flat=True)),
    )


def cmd_wait(args: argparse.Namespace) -> dict[str, Any]:
    t0 = time.monotonic()
    while True:
        stale, queued = _pending()
        if not stale and not queued:
            return {"done": True, "waited_s": round(time.monotonic() - t0, 1)}
        if time.monotonic() - t0 > args.timeout:
            return {"done": False, "stale": stale, "queued": queued}
        time.sleep(0.2)


# --- the burst of quote edits through the API ---------------------------------------------------


def cmd_burst(args: argparse.Namespace) -> dict[str, Any]:
    """Quote edits through the REST API, one every ``--pace`` seconds, while the test breaks a
    service. Every call is recorded with its status; a 5xx is kept (not raised) so the test can
    check that the write committed anyway and report the status."""
    from celery.signals import before_task_publish
    from rest_framework.test import APIClient

    from apps.catalog.models import Gpu
    from apps.quotes.models import Provider, Quote

    # Each call records how many tasks it handed to the broker (or tried to: the signal is
    # sent before the connection is made), to see that a down broker is tried once per edit.
    published = [0]

    def count_publish(**_: Any) -> None:
        published[0] += 1

    before_task_publish.connect(count_publish, weak=False)
    rng = random.Random(args.seed)
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {args.token}")
    # An owned quote has no hourly price to edit (it is costed from its capex): left out.
    live = list(
        Quote.objects.filter(retired=False, confidential_to__isnull=True)
        .exclude(pricing_term="OWNED")
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    provider = Provider.objects.order_by("pk").first()
    gpu = Gpu.objects.get(slug="h100-sxm5-80gb")
    calls: list[dict[str, Any]] = []
    deadline = time.monotonic() + args.max_seconds
    for n in range(args.count):
        if time.monotonic() > deadline:
            break
        roll = rng.random()
        t0 = time.perf_counter()
        sent_before = published[0]
        entry: dict[str, Any] = {"n": n}
        try:
            if roll < 0.1 and len(live) > 10:
                pk = live.pop(rng.randrange(len(live)))
                entry.update(op="retire", quote=pk)
                resp = client.post(f"/api/v1/quotes/{pk}/retire")
            elif roll < 0.2:
                price = f"{rng.uniform(1, 9):.4f}"
                entry.update(op="create", price=price)
                resp = client.post(
                    "/api/v1/quotes/",
                    {
                        "provider": provider.pk,
                        "gpu": gpu.slug,
                        "region": "us-east",
                        "pricing_term": "ON_DEMAND",
                        "hourly_price_per_gpu": price,
                        "currency": "USD",
                        "quote_date": time.strftime("%Y-%m-%d"),
                        "source": f"fault burst {args.seed}-{n}",
                    },
                    format="json",
                )
            else:
                pk = rng.choice(live)
                price = f"{rng.uniform(1, 9):.4f}"
                entry.update(op="price", quote=pk, price=price)
                resp = client.patch(
                    f"/api/v1/quotes/{pk}/", {"hourly_price_per_gpu": price}, format="json"
                )
            entry["status"] = resp.status_code
            if resp.status_code >= 400:
                entry["body"] = resp.content[:300].decode(errors="replace")
            elif entry["op"] == "create":
                entry["quote"] = resp.json()["id"]
        except Exception as exc:  # a raise through the test client: record, go on
            entry["status"] = "exception"
            entry["error"] = f"{type(exc).__name__}: {exc}"[:300]
        entry["ms"] = round((time.perf_counter() - t0) * 1000)
        entry["sends"] = published[0] - sent_before
        calls.append(entry)
        time.sleep(args.pace)
    return {"calls": calls}


# --- the convergence check ----------------------------------------------------------------------

# Bookkeeping of the recompute itself (versions, timestamps) and the engine-estimate cache are
# not part of what a table says; everything else on the table and on every row is compared.
TABLE_SKIP = {
    "id", "created_at", "updated_at", "brief", "requested_version", "computed_version",
    "queued_at", "computed_at", "estimates", "estimates_key",
}  # fmt: skip
ROW_SKIP = {"id", "created_at", "updated_at", "table"}


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def table_image(brief_id: int) -> dict[str, Any]:
    """What a brief's stored table says: its fields, its rows keyed by candidate (kind, quote
    id, route id) with every column, and each candidate's rank as the API serves it."""
    from apps.briefs.models import WorkloadBrief
    from apps.finance.models import CandidateRow, CandidateTable
    from apps.finance.selectors import ranking_for_brief

    table = CandidateTable.objects.get(brief_id=brief_id)
    fields = {
        f.attname: _jsonable(getattr(table, f.attname))
        for f in CandidateTable._meta.concrete_fields
        if f.name not in TABLE_SKIP
    }
    row_fields = [f.attname for f in CandidateRow._meta.concrete_fields if f.name not in ROW_SKIP]
    rows: dict[str, Any] = {}
    for row in CandidateRow.objects.filter(table=table).values(*row_fields):
        key = f"{row['candidate_kind']}:{row['quote_id']}:{row['api_route_id']}"
        if key in rows:
            raise AssertionError(f"candidate {key} twice in the table of brief {brief_id}")
        rows[key] = _jsonable(row)
    ranking = ranking_for_brief(WorkloadBrief.objects.get(pk=brief_id))
    ranks = {
        f"{r['candidate_kind']}:{r['quote_id']}:{r['api_route_id']}": r["rank"]
        for r in ranking["rows"]
    }
    return {"fields": fields, "rows": rows, "ranks": ranks, "state": {
        "stale": table.computed_version < table.requested_version,
        "queued": table.queued_at is not None}}  # fmt: skip


class _Rollback(Exception):
    pass


def fresh_image(brief_id: int) -> dict[str, Any]:
    """A fresh recompute from the database as it is now, thrown away afterwards: inside a
    transaction that is rolled back, forget the table's rows, inputs and cached engine
    estimates, run the recompute service (what the Celery task runs), read the table."""
    from django.db import transaction
    from django.db.models import F

    from apps.finance.models import CandidateRow, CandidateTable
    from apps.finance.services import candidate_table_recompute

    image: dict[str, Any] = {}
    try:
        with transaction.atomic():
            CandidateRow.objects.filter(table__brief_id=brief_id).delete()
            CandidateTable.objects.filter(brief_id=brief_id).update(
                computed_version=0, requested_version=F("requested_version") + 1,
                queued_at=None, inputs={}, estimates=[], estimates_key="", capacity_model={},
                no_ranking_reason="",
            )  # fmt: skip
            candidate_table_recompute(brief_id=brief_id)
            image = table_image(brief_id)
            raise _Rollback
    except _Rollback:
        pass
    return image


def image_differences(have: dict[str, Any], want: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name, value in want["fields"].items():
        if have["fields"].get(name) != value:
            out.append({"table_field": name, "stored": str(have["fields"].get(name))[:300],
                        "fresh": str(value)[:300]})  # fmt: skip
    missing = sorted(set(want["rows"]) - set(have["rows"]))
    extra = sorted(set(have["rows"]) - set(want["rows"]))
    if missing or extra:
        out.append({"missing_rows": missing[:10], "extra_rows": extra[:10],
                    "n_missing": len(missing), "n_extra": len(extra)})  # fmt: skip
    for key in sorted(set(want["rows"]) & set(have["rows"])):
        a, b = have["rows"][key], want["rows"][key]
        diff = {k: [a.get(k), v] for k, v in b.items() if a.get(k) != v}
        if have["ranks"].get(key) != want["ranks"].get(key):
            diff["rank"] = [have["ranks"].get(key), want["ranks"].get(key)]
        if diff:
            out.append({"row": key, "stored_vs_fresh": diff})
    return out


def cmd_check(args: argparse.Namespace) -> dict[str, Any]:
    from apps.finance.models import CandidateTable

    stale, queued = _pending()
    mismatches: list[dict[str, Any]] = []
    n_rows = 0
    brief_ids = sorted(CandidateTable.objects.values_list("brief_id", flat=True))
    for brief_id in brief_ids:
        have = table_image(brief_id)
        n_rows += len(have["rows"])
        for diff in image_differences(have, fresh_image(brief_id)):
            mismatches.append({"brief": brief_id, **diff})
    return {
        "tables": len(brief_ids),
        "rows": n_rows,
        "stale": stale,
        "queued": queued,
        "mismatches": mismatches[:40],
        "n_mismatches": len(mismatches),
    }


COMMANDS = {
    "setup": cmd_setup,
    "snapshot": cmd_snapshot,
    "request-all": cmd_request_all,
    "touch-assumptions": cmd_touch_assumptions,
    "sweep": cmd_sweep,
    "wait": cmd_wait,
    "burst": cmd_burst,
    "check": cmd_check,
}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=sorted(COMMANDS))
    parser.add_argument("--briefs", type=int, default=20)
    parser.add_argument("--quotes", type=int, default=2000)
    parser.add_argument("--decisions", type=int, default=3)
    parser.add_argument("--age", action="store_true")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--token", default="")
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--pace", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-seconds", type=float, default=60.0)
    args = parser.parse_args()
    try:
        _setup_django()
        result = COMMANDS[args.command](args)
    except Exception as exc:
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}",
                          "traceback": traceback.format_exc()[-3000:]}))  # fmt: skip
        return 1
    print(json.dumps(result, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
