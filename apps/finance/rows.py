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
    "memory_headroom_gb", "layout", "paid_gpu_hours_per_month", "notes", "created_at",
    "updated_at",
)  # fmt: skip
JSON_COLUMNS = frozenset({"cost_lines", "why_not", "notes"})


def rows_insert(table: CandidateTable, rows: list[dict[str, Any]]) -> None:
    rows_insert_many([(table, rows)])


def rows_insert_many(tables: list[tuple[CandidateTable, list[dict[str, Any]]]]) -> None:
    """The rows of several tables in one statement (one COPY on PostgreSQL)."""
    now = timezone.now()
    if not any(rows for _, rows in tables):
        return
    if connection.vendor != "postgresql":
        records = [
            {"paid_gpu_hours_per_month": None, "layout": "", **row, "table_id": table.pk,
             "created_at": now, "updated_at": now}
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


def _scalar(value: Any) -> str:
    """An int, Decimal, bool or None in COPY's text format (as psycopg writes them)."""
    if value is None:
        return "\\N"
    if value is True:
        return "t"
    if value is False:
        return "f"
    return str(value)


def _lines_json(lines: dict[str, Any]) -> str:
    """A row's cost lines ({line: amount as a string}) as JSON text: written by hand when every
    value is a string and nothing needs a JSON escape (json.dumps's text otherwise)."""
    text = "{" + ", ".join([f'"{name}": "{amount}"' for name, amount in lines.items()]) + "}"
    if (
        text.count('"') == 4 * len(lines)
        and text.isascii()
        and not _JSON_UNSAFE.search(text)
        and all(type(amount) is str for amount in lines.values())
    ):
        return text
    return json.dumps(lines)


def _copy_text(
    tables: list[tuple[CandidateTable, list[dict[str, Any]]]], now: Any
) -> Iterator[str]:
    """The rows of ``tables`` as COPY text for ``COLUMNS``, COPY_CHUNK_ROWS rows a chunk."""
    stamp = _text(now.isoformat())
    # Rows of one configuration share their notes: each distinct list is encoded once.
    encoded: dict[tuple[str, ...], str] = {}

    def json_list(value: Any) -> str:
        try:
            key = tuple(value)
            found = encoded.get(key)
        except TypeError:  # an unhashable item: encoded every time
            return _text(json.dumps(value))
        if found is None:
            found = encoded[key] = _text(json.dumps(value))
        return found

    out: list[str] = []
    for table, rows in tables:
        table_id = str(table.pk)
        for row in rows:
            get = row.get
            out.append(
                "\t".join(
                    (
                        table_id,
                        _text(row["candidate_kind"]),
                        _scalar(row["quote_id"]),
                        _scalar(row["api_route_id"]),
                        _scalar(row["gpu_id"]),
                        _scalar(row["gpu_count"]),
                        _scalar(row["replicas"]),
                        _text(row["pricing_term"]),
                        _text(_lines_json(row["cost_lines"])),
                        _scalar(row["monthly_cost"]),
                        _scalar(row["accepted_outputs_per_month"]),
                        _scalar(row["effective_unit_cost"]),
                        _scalar(row["meets_constraints"]),
                        json_list(row["why_not"]),
                        _text(row["basis"]),
                        _scalar(row["p95_latency_ms"]),
                        _scalar(row["memory_headroom_gb"]),
                        _text(get("layout", "")),
                        _scalar(get("paid_gpu_hours_per_month")),
                        json_list(row["notes"]),
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
