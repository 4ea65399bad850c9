"""Writing candidate rows (apps.finance.state.Row) fast.

PostgreSQL takes the rows through COPY (several times faster than INSERT for the ~2,000 rows a
table can hold); other databases through bulk_create. Both write each row's columns as
``apps.finance.state.row_columns`` names them (the COPY text is that, formatted in one pass)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from django.db import connection, models
from django.utils import timezone

from .models import CandidateRow, CandidateTable
from .state import ROW_COLUMNS, Row, row_columns

COLUMNS = ("table_id", *ROW_COLUMNS, "created_at", "updated_at")

# The largest value each integer column takes: PostgreSQL's smallint and integer (SQLite's
# columns are wider; the same bound keeps both databases alike).
_INTEGER_LIMITS = {"gpu_count": 32_767, "replicas": 2_147_483_647, "paid_gpus": 2_147_483_647}
# Each decimal column's (field name, the words a reason names it by).
_DECIMAL_COLUMNS = {
    "monthly_cost": "monthly cost",
    "accepted_outputs_per_month": "accepted outputs a month",
    "effective_unit_cost": "unit cost",
    "paid_gpu_hours_per_month": "paid GPU-hours a month",
    "p95_latency_ms": "p95 latency (ms)",
    "memory_headroom_gb": "memory headroom (GB)",
    "energy_kwh_per_month": "energy a month (kWh)",
    "energy_j_per_output": "energy per output (J)",
    "co2e_kg_per_month": "CO2e a month (kg)",
}


#: What costing one candidate may raise on figures too large or too odd for decimal arithmetic
#: (decimal.InvalidOperation and Overflow are ArithmeticErrors; int() of a NaN is a
#: ValueError): that candidate is not costed, with why, and the rest of the table is.
UNCOSTABLE = (ArithmeticError, ValueError)


def uncostable_reason(exc: BaseException) -> str:
    """A candidate whose arithmetic failed, in words (the error's class names what failed)."""
    return (
        f"its costs could not be worked out ({type(exc).__name__}): a figure is too large; "
        "check its price, the FX rate of its currency and the labour figures"
    )


@functools.cache
def _decimal_limit(name: str) -> Decimal:
    """10 ** (the column's digits before the point): a stored value is below it (read once per
    column: every row of every table asks)."""
    column = CandidateRow._meta.get_field(name)
    if not isinstance(column, models.DecimalField):
        raise TypeError(f"CandidateRow.{name} is not a decimal column")
    return Decimal(10) ** (column.max_digits - column.decimal_places)


def row_overflow(row: Row) -> str | None:
    """Why ``row`` cannot be stored (a figure past its column, or not a number), in words; None
    when every figure fits. Such a candidate is listed as not costed, never written: on
    PostgreSQL its insert would fail the whole table ("numeric field overflow"), on SQLite its
    read would (decimal.InvalidOperation)."""
    values = row_columns(row)
    for name, words in _DECIMAL_COLUMNS.items():
        value = values[name]
        if value is None:
            continue
        number = value if isinstance(value, Decimal) else Decimal(str(value))
        limit = _decimal_limit(name)
        if not number.is_finite() or abs(number) >= limit:
            return (
                f"its {words}, {number:.4g}, is past the largest figure a candidate table "
                f"stores ({limit:,.0f}): check its price, the FX rate of its currency, the labour "
                "figures and the brief's volumes"
            )
    for name, most in _INTEGER_LIMITS.items():
        count = values[name]
        if count is not None and count > most:
            return (
                f"it needs {count:,} GPUs or replicas ({name}), more than a candidate table "
                f"stores ({most:,}): check the brief's volumes"
            )
    for name, amount in row.cost_lines.items():
        if not Decimal(str(amount)).is_finite() or abs(amount) >= _decimal_limit("monthly_cost"):
            return f"its cost line {name!r} is past the largest figure a candidate table stores"
    return None


def rows_insert(table: CandidateTable, rows: list[Row]) -> None:
    rows_insert_many([(table, rows)])


def rows_insert_many(tables: list[tuple[CandidateTable, list[Row]]]) -> None:
    """The rows of several tables in one statement (one COPY on PostgreSQL)."""
    now = timezone.now()
    if not any(rows for _, rows in tables):
        return
    if connection.vendor != "postgresql":
        records = [
            CandidateRow(**row_columns(row), table_id=table.pk, created_at=now, updated_at=now)
            for table, rows in tables
            for row in rows
        ]
        CandidateRow.objects.bulk_create(records, batch_size=500)
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
COPY_CHUNK_ROWS = 2000  # rows sent to the server at a time
_NULL = "\\N"


def _text(value: Any) -> str:
    """A text or character value in COPY's text format."""
    text = str(value)
    return text.translate(_ESCAPES) if _NEEDS_ESCAPE.search(text) else text


def _value(value: Any) -> str:
    return _NULL if value is None else str(value)


def _copy_text(tables: list[tuple[CandidateTable, list[Row]]], now: Any) -> Iterator[str]:
    """The rows of ``tables`` as COPY text for ``COLUMNS``, COPY_CHUNK_ROWS rows a chunk.

    Rows of one configuration share their notes, their figures and most of their words: each
    distinct list, mapping and word is encoded once (keyed by value, so the same text whichever
    row meets it first)."""
    stamp = _text(now.isoformat())
    encoded: dict[Any, str] = {}

    def json_text(key: Any, value: Any) -> str:
        found = encoded.get(key)
        if found is None:
            found = encoded[key] = _text(json.dumps(value))
        return found

    out: list[str] = []
    for table, rows in tables:
        table_id = str(table.pk)
        for row in rows:
            c = row_columns(row)
            lines = c["cost_lines"]
            figures = c["figures"]
            out.append(
                "\t".join(
                    (
                        table_id,
                        c["candidate_kind"],
                        _value(c["quote_id"]),
                        _value(c["api_route_id"]),
                        _value(c["gpu_id"]),
                        _value(c["gpu_count"]),
                        _value(c["replicas"]),
                        _value(c["paid_gpus"]),
                        _text(c["pricing_term"]),
                        json_text(("lines", *lines.items()), lines),
                        str(c["monthly_cost"]),
                        str(c["accepted_outputs_per_month"]),
                        _value(c["effective_unit_cost"]),
                        "t" if c["meets_constraints"] else "f",
                        json_text(("why", *row.why_not), c["why_not"]),
                        _text(c["basis"]),
                        _value(c["p95_latency_ms"]),
                        _value(c["memory_headroom_gb"]),
                        _text(c["layout"]),
                        _value(c["paid_gpu_hours_per_month"]),
                        _value(c["energy_kwh_per_month"]),
                        _value(c["energy_j_per_output"]),
                        _value(c["co2e_kg_per_month"]),
                        json_text(("notes", *row.notes), c["notes"]),
                        _text(json.dumps(c["plan"])) if c["plan"] else "{}",
                        json_text(("figures", *figures.items()), figures),
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
