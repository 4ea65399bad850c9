"""Writing candidate rows fast.

PostgreSQL takes the rows through COPY (several times faster than INSERT for the ~2,000 rows a
table can hold); other databases through bulk_create."""

import json
from typing import Any

from django.db import connection
from django.utils import timezone

from .models import CandidateRow, CandidateTable

COLUMNS = (
    "table_id", "candidate_kind", "quote_id", "api_route_id", "gpu_id", "gpu_count", "replicas",
    "pricing_term", "cost_lines", "monthly_cost", "accepted_outputs_per_month",
    "effective_unit_cost", "meets_constraints", "why_not", "basis", "p95_latency_ms",
    "memory_headroom_gb", "layout", "paid_gpu_hours_per_month", "notes", "created_at",
    "updated_at",
)  # fmt: skip
JSON_COLUMNS = frozenset({"cost_lines", "why_not", "notes"})


def rows_insert(table: CandidateTable, rows: list[dict[str, Any]]) -> None:
    rows_insert_many([(table, rows)])


def rows_insert_many(tables: list[tuple[CandidateTable, list[dict[str, Any]]]]) -> None:
    """The rows of several tables in one statement (one COPY on PostgreSQL)."""
    now = timezone.now()
    records = [
        {"paid_gpu_hours_per_month": None, "layout": "", **row, "table_id": table.pk,
         "created_at": now, "updated_at": now}
        for table, rows in tables
        for row in rows
    ]  # fmt: skip
    if not records:
        return
    if connection.vendor != "postgresql":
        CandidateRow.objects.bulk_create([CandidateRow(**r) for r in records], batch_size=500)
        return
    # Rows of one configuration share their notes: each distinct list is encoded once.
    encoded: dict[str, dict[tuple[str, ...], str]] = {c: {} for c in ("why_not", "notes")}

    def as_json(column: str, value: Any) -> str:
        seen = encoded.get(column)
        if seen is None:
            return json.dumps(value)
        try:
            key = tuple(value)
            hash(key)
        except TypeError:
            return json.dumps(value)
        if key not in seen:
            seen[key] = json.dumps(value)
        return seen[key]

    sql = f"COPY {CandidateRow._meta.db_table} ({', '.join(COLUMNS)}) FROM STDIN"
    with connection.cursor() as cursor, cursor.copy(sql) as copy:
        for record in records:
            copy.write_row(
                [as_json(c, record[c]) if c in JSON_COLUMNS else record[c] for c in COLUMNS]
            )
