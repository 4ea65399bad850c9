"""Writing candidate rows fast.

PostgreSQL takes the rows through COPY (several times faster than INSERT for the ~2,000 rows a
table can hold); other databases through bulk_create."""

import json
import re
from collections.abc import Iterator
from typing import Any

from django.db import connection
from django.utils import timezone

from .models import CandidateRow, CandidateTable

COLUMNS = (
    "table_id", "candidate_kind", "quote_id", "api_route_id", "gpu_id", "gpu_count", "replicas",
    "pricing_term", "cost_lines", "monthly_cost", "accepted_outputs_per_month",
    "effective_unit_cost", "meets_constraints", "why_not", "basis", "p95_latency_ms",
    "memory_headroom_gb", "layout", "paid_gpu_hours_per_month", "energy_kwh_per_month",
    "energy_j_per_output", "co2e_kg_per_month", "notes", "plan", "created_at", "updated_at",
)  # fmt: skip


_NO_ENERGY = dict.fromkeys(("energy_kwh_per_month", "energy_j_per_output", "co2e_kg_per_month"))


def rows_insert(table: CandidateTable, rows: list[dict[str, Any]]) -> None:
    rows_insert_many([(table, rows)])


def rows_insert_many(tables: list[tuple[CandidateTable, list[dict[str, Any]]]]) -> None:
    """The rows of several tables in one statement (one COPY on PostgreSQL)."""
    now = timezone.now()
    if not any(rows for _, rows in tables):
        return
    if connection.vendor != "postgresql":
        records = [
            {"paid_gpu_hours_per_month": None, "layout": "", "plan": {}, **_NO_ENERGY, **row,
             "table_id": table.pk, "created_at": now, "updated_at": now}
            for table, rows in tables
            for row in rows
        ]  # fmt: skip
        CandidateRow.objects.bulk_create([CandidateRow(**r) for r in records], batch_size=500)
        return
    sql = f"COPY {CandidateRow._meta.db_table} ({', '.join(COLUMNS)}) FROM STDIN"
    with connection.cursor() as cursor, cursor.copy(sql) as copy:
        for chunk in _copy_text(tables, now):
            copy.write(chunk)


# COPY's text format (https://www.postgresql.org/docs/current/sql-copy.html, "Text Format"):
# columns separated by tabs, rows by newlines, NULL as \N, and a backslash, tab, newline or
# carriage return inside a value escaped with a backslash. Rows are formatted here, in one pass,
# rather than value by value through the driver's dumpers: the ~2,000 rows a table holds were
# a third of a full recompute's CPU time. Each value is written as psycopg would write it
# (str() of an int or Decimal, t/f, the JSON text), so the stored rows are the same.
_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})
_NEEDS_ESCAPE = re.compile(r"[\\\t\n\r]")
# What a JSON string cannot hold unescaped (besides the quote).
_JSON_UNSAFE = re.compile(r"[\\\x00-\x1f]")
COPY_CHUNK_ROWS = 2000  # rows sent to the server at a time


def _text(value: Any) -> str:
    """A text or character value in COPY's text format."""
    text = str(value)
    return text.translate(_ESCAPES) if _NEEDS_ESCAPE.search(text) else text


def _lines_json(lines: dict[str, Any], heads: dict[tuple[str, ...], list[str] | None]) -> str:
    """A row's cost lines ({line: amount as a string}) as JSON in COPY text: written by hand when
    every value is a string and nothing needs an escape (json.dumps's text otherwise). ``heads``
    keeps, per list of line names, each line's '"name": "' (None if a name needs escaping)."""
    names = tuple(lines)
    if names not in heads:
        plain = all(n.isascii() and not _JSON_UNSAFE.search(n) and '"' not in n for n in names)
        heads[names] = [f'"{n}": "' for n in names] if plain else None
    head = heads[names]
    amounts = list(lines.values())
    if head is not None and all(type(a) is str for a in amounts):
        joined = "".join(amounts)
        if joined.isascii() and '"' not in joined and not _JSON_UNSAFE.search(joined):
            return "{" + ", ".join([h + a + '"' for h, a in zip(head, amounts, strict=True)]) + "}"
    return _text(json.dumps(lines))


def _copy_text(
    tables: list[tuple[CandidateTable, list[dict[str, Any]]]], now: Any
) -> Iterator[str]:
    """The rows of ``tables`` as COPY text for ``COLUMNS``, COPY_CHUNK_ROWS rows a chunk. Numbers
    as str() writes them, None as \\N, booleans as t/f (the driver's text forms)."""
    stamp = _text(now.isoformat())
    # Rows of one configuration share their notes and most of their words: each distinct list
    # is encoded, and each distinct word escaped, once.
    encoded: dict[tuple[str, ...], str] = {}
    words: dict[Any, str] = {}
    heads: dict[tuple[str, ...], list[str] | None] = {}

    def json_list(value: Any) -> str:
        try:
            key = tuple(value)
            found = encoded.get(key)
        except TypeError:  # an unhashable item: encoded every time
            return _text(json.dumps(value))
        if found is None:
            found = encoded[key] = _text(json.dumps(value))
        return found

    def word(value: Any) -> str:
        found = words.get(value)
        if found is None:
            found = words[value] = _text(value)
        return found

    null = "\\N"
    out: list[str] = []
    for table, rows in tables:
        table_id = str(table.pk)
        for row in rows:
            get = row.get
            quote_id, route_id, gpu_id = row["quote_id"], row["api_route_id"], row["gpu_id"]
            gpu_count, replicas = row["gpu_count"], row["replicas"]
            unit_cost, latency = row["effective_unit_cost"], row["p95_latency_ms"]
            headroom, paid = row["memory_headroom_gb"], get("paid_gpu_hours_per_month")
            kwh, joules, co2e = (
                get("energy_kwh_per_month"),
                get("energy_j_per_output"),
                get("co2e_kg_per_month"),
            )
            out.append(
                "\t".join(
                    (
                        table_id,
                        word(row["candidate_kind"]),
                        null if quote_id is None else str(quote_id),
                        null if route_id is None else str(route_id),
                        null if gpu_id is None else str(gpu_id),
                        null if gpu_count is None else str(gpu_count),
                        null if replicas is None else str(replicas),
                        word(row["pricing_term"]),
                        _lines_json(row["cost_lines"], heads),
                        str(row["monthly_cost"]),
                        str(row["accepted_outputs_per_month"]),
                        null if unit_cost is None else str(unit_cost),
                        "t" if row["meets_constraints"] else "f",
                        json_list(row["why_not"]),
                        word(row["basis"]),
                        null if latency is None else str(latency),
                        null if headroom is None else str(headroom),
                        word(get("layout", "")),
                        null if paid is None else str(paid),
                        null if kwh is None else str(kwh),
                        null if joules is None else str(joules),
                        null if co2e is None else str(co2e),
                        json_list(row["notes"]),
                        _text(json.dumps(plan)) if (plan := get("plan")) else "{}",
                        stamp,
                        stamp,
                    )
                )
            )
            if len(out) >= COPY_CHUNK_ROWS:
                yield "\n".join(out) + "\n"
                out = []
    if out:
        yield "\n".join(out) + "\n"
