"""Writing candidate rows (apps.finance.state.Row) fast.

PostgreSQL takes the rows through COPY (several times faster than INSERT for the ~2,000 rows a
table can hold); other databases through bulk_create. Both write each row's columns as
``apps.finance.state.row_columns`` names them (the COPY text is that, formatted in one pass)."""

from __future__ import annotations

import functools
import json
import operator
import re
from collections.abc import Callable, Iterator
from datetime import datetime
from decimal import Decimal

from django.db import connection, models
from django.utils import timezone

from .models import CandidateRow, CandidateTable
from .state import (
    LAYOUT_CHARS,
    Configuration,
    Figures,
    Row,
    figures_json,
    row_columns,
)

ZERO = Decimal(0)

# COPY's columns: a row's own, then those of its configuration and figures (``_shown_text``:
# the same text for every row of one configuration), then the stamps; every one of
# apps.finance.state.ROW_COLUMNS once.
_OWN_COLUMNS = (
    "candidate_kind", "quote_id", "api_route_id", "gpu_id", "cost_lines", "monthly_cost",
    "accepted_outputs_per_month", "effective_unit_cost", "meets_constraints", "why_not", "basis",
    "paid_gpu_hours_per_month", "notes", "plan",
)  # fmt: skip
_SHOWN_COLUMNS = (
    "gpu_count", "replicas", "paid_gpus", "pricing_term", "layout", "p95_latency_ms",
    "memory_headroom_gb", "energy_kwh_per_month", "energy_j_per_output", "co2e_kg_per_month",
    "figures",
)  # fmt: skip
COLUMNS = ("table_id", *_OWN_COLUMNS, *_SHOWN_COLUMNS, "created_at", "updated_at")

# The largest value each integer column takes: PostgreSQL's smallint and integer (SQLite's
# columns are wider; the same bound keeps both databases alike).
_INTEGER_LIMITS = {"gpu_count": 32_767, "replicas": 2_147_483_647, "paid_gpus": 2_147_483_647}
# Each decimal column: (its name, where the row holds it, the words a reason names it by);
# first the row's own, then its figures' (the same for every row of one configuration).
_OWN_DECIMALS = (
    ("monthly_cost", "monthly_cost", "monthly cost"),
    ("accepted_outputs_per_month", "accepted_outputs_per_month", "accepted outputs a month"),
    ("effective_unit_cost", "effective_unit_cost", "unit cost"),
    ("paid_gpu_hours_per_month", "paid_gpu_hours_per_month", "paid GPU-hours a month"),
)
_FIGURE_DECIMALS = (
    ("p95_latency_ms", "latency_p95_ms", "p95 latency (ms)"),
    ("memory_headroom_gb", "memory_headroom_gb", "memory headroom (GB)"),
    ("energy_kwh_per_month", "energy_kwh_per_month", "energy a month (kWh)"),
    ("energy_j_per_output", "energy_j_per_output", "energy per output (J)"),
    ("co2e_kg_per_month", "co2e_kg_per_month", "CO2e a month (kg)"),
)
# Each integer column: (its name, the configuration's field it holds).
_INTEGER_COLUMNS = (
    ("gpu_count", "gpus_per_replica"),
    ("replicas", "replicas"),
    ("paid_gpus", "paid_gpus"),
)


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
    """10 ** (the column's digits before the point): a stored value is below it."""
    column = CandidateRow._meta.get_field(name)
    if not isinstance(column, models.DecimalField):
        raise TypeError(f"CandidateRow.{name} is not a decimal column")
    return Decimal(10) ** (column.max_digits - column.decimal_places)


# (column, getter, limit, words): the getter reads a decimal figure off a Row or its Figures.
_Limit = tuple[str, Callable[[object], object], Decimal, str]


@functools.cache
def _limits() -> tuple[tuple[_Limit, ...], tuple[_Limit, ...], Decimal]:
    """The row's own decimal columns and its figures' (name, getter, limit, words), and the
    cost lines' limit (read once: every row of every table is checked)."""

    def limits(columns: tuple[tuple[str, str, str], ...]) -> tuple[_Limit, ...]:
        return tuple(
            (name, operator.attrgetter(path), _decimal_limit(name), words)
            for name, path, words in columns
        )

    return limits(_OWN_DECIMALS), limits(_FIGURE_DECIMALS), _decimal_limit("monthly_cost")


_INTEGER_GETTERS = tuple((name, operator.attrgetter(path)) for name, path in _INTEGER_COLUMNS)


def _past(value: object, limit: Decimal) -> Decimal | None:
    """``value`` as a Decimal when it is not a finite number below ``limit``; else None."""
    number = value if type(value) is Decimal else Decimal(str(value))
    if number.is_finite() and -limit < number < limit:
        return None
    return number


def _decimal_overflow(holder: object, limits: tuple[_Limit, ...]) -> str | None:
    for _name, get, limit, words in limits:
        value = get(holder)
        if value is not None and (number := _past(value, limit)) is not None:
            return (
                f"its {words}, {number:.4g}, is past the largest figure a candidate table "
                f"stores ({limit:,.0f}): check its price, the FX rate of its currency, the labour "
                "figures and the brief's volumes"
            )
    return None


def row_overflow(row: Row) -> str | None:
    """Why ``row`` cannot be stored (a figure past its column, or not a number), in words; None
    when every figure fits. Such a candidate is listed as not costed, never written: on
    PostgreSQL its insert would fail the whole table ("numeric field overflow"), on SQLite its
    read would (decimal.InvalidOperation). Reads the row's fields, the columns
    ``row_columns`` writes them to: its own (``own_overflow``), then its configuration's and
    figures' (``shown_overflow``)."""
    return own_overflow(row) or shown_overflow(row.configuration, row.figures)


def own_overflow(row: Row) -> str | None:
    """``row_overflow`` of the row's own figures: its costs, outputs and cost lines."""
    own, _, line_limit = _limits()
    # Every row of every table comes here: the usual answer (all fit) is worked out inline.
    monthly = row.monthly_cost
    if (
        type(monthly) is Decimal
        and monthly.is_finite()
        and -line_limit < monthly < line_limit
        and all(
            v is None or (type(v) is Decimal and v.is_finite() and -limit < v < limit)
            for v, limit in (
                (row.accepted_outputs_per_month, own[1][2]),
                (row.effective_unit_cost, own[2][2]),
                (row.paid_gpu_hours_per_month, own[3][2]),
            )
        )
        # The monthly cost is the exact sum of the lines: none of them negative, none is
        # larger than it.
        and min(row.cost_lines.values(), default=ZERO) >= 0
    ):
        return None
    found = _decimal_overflow(row, own)
    if found is not None:
        return found
    for name, amount in row.cost_lines.items():
        if _past(amount, line_limit) is not None:
            return f"its cost line {name!r} is past the largest figure a candidate table stores"
    return None


def shown_overflow(configuration: Configuration, figures: Figures) -> str | None:
    """``row_overflow`` of a configuration and its figures (the same for every row that shows
    them: apps.finance.candidates asks once for each)."""
    _, shown, _ = _limits()
    found = _decimal_overflow(figures, shown)
    if found is not None:
        return found
    for name, get in _INTEGER_GETTERS:
        count = get(configuration)
        most = _INTEGER_LIMITS[name]
        if count is not None and count > most:
            return (
                f"it needs {count:,} GPUs or replicas ({name}), more than a candidate table "
                f"stores ({most:,}): check the brief's volumes"
            )
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


def _text(value: object) -> str:
    """A text or character value in COPY's text format."""
    text = str(value)
    return text.translate(_ESCAPES) if _NEEDS_ESCAPE.search(text) else text


def _value(value: object) -> str:
    return _NULL if value is None else str(value)


def _lines_text(lines: dict[str, Decimal], keys: dict[str, str]) -> str:
    """``apps.finance.state.cost_lines_json(lines)`` (each amount's ``str``) as JSON in COPY
    text: each name's JSON written once (``keys``); an amount's text (digits, sign, point,
    exponent, or a special's name) needs no escape."""
    for name in lines:
        if name not in keys:
            keys[name] = _text(json.dumps(name)) + ': "'
    return "{" + ", ".join([keys[name] + str(amount) + '"' for name, amount in lines.items()]) + "}"


def _shown_text(configuration: Configuration, figures: Figures) -> str:
    """The ``_SHOWN_COLUMNS`` of a row of this configuration and these figures, as COPY text."""
    rest = figures_json(figures, configuration.hours_billed_per_month)
    return "\t".join(
        (
            _value(configuration.gpus_per_replica),
            _value(configuration.replicas),
            _value(configuration.paid_gpus),
            _text(configuration.pricing_term),
            _text(configuration.layout[:LAYOUT_CHARS]),
            _value(figures.latency_p95_ms),
            _value(figures.memory_headroom_gb),
            _value(figures.energy_kwh_per_month),
            _value(figures.energy_j_per_output),
            _value(figures.co2e_kg_per_month),
            _text(json.dumps(rest)),
        )
    )


def _copy_text(tables: list[tuple[CandidateTable, list[Row]]], now: datetime) -> Iterator[str]:
    """The rows of ``tables`` as COPY text for ``COLUMNS``, COPY_CHUNK_ROWS rows a chunk: the
    columns ``row_columns`` names, read from the row's fields (with its helpers for the JSON
    columns; tests/unit/test_candidate_rows_copy.py holds the two alike).

    Rows of one configuration share their configuration, figures and notes (the same objects:
    apps.finance.candidates.RowParts): their text is written once, found again by identity
    (the objects are kept with it, so an id is never another object's) or, for notes and
    reasons, by value."""
    stamp = _text(now.isoformat())
    encoded: dict[tuple[str, ...], str] = {}
    shown: dict[tuple[int, int], tuple[Configuration, Figures, str]] = {}
    line_keys: dict[str, str] = {}
    out: list[str] = []
    for table, rows in tables:
        table_id = str(table.pk)
        for row in rows:
            config, figures = row.configuration, row.figures
            found = shown.get((id(config), id(figures)))
            if found is None or found[0] is not config or found[1] is not figures:
                found = (config, figures, _shown_text(config, figures))
                shown[(id(config), id(figures))] = found
            key_why = ("why", *row.why_not)
            if (why_text := encoded.get(key_why)) is None:
                why_text = encoded[key_why] = _text(json.dumps(list(row.why_not)))
            key_notes = ("notes", *row.notes)
            if (notes_text := encoded.get(key_notes)) is None:
                notes_text = encoded[key_notes] = _text(json.dumps(list(row.notes)))
            plan = row.plan_json()
            out.append(
                "\t".join(
                    (
                        table_id,
                        row.kind.value,
                        _value(row.quote_id),
                        _value(row.api_route_id),
                        _value(row.gpu_id),
                        _lines_text(row.cost_lines, line_keys),
                        str(row.monthly_cost),
                        str(row.accepted_outputs_per_month),
                        _value(row.effective_unit_cost),
                        "t" if row.meets_constraints else "f",
                        why_text,
                        _text(row.basis),
                        _value(row.paid_gpu_hours_per_month),
                        notes_text,
                        _text(json.dumps(plan)) if plan else "{}",
                        found[2],
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
