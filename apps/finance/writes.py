"""Writing what recomputes built (apps.finance.candidates.TableWrite): the rows they replace,
the new rows and each table's fields, for one table or a batch of them with a fixed number of
statements (a delete or two, one COPY, one executemany). Called by apps.finance.services in
its transaction, with the tables locked."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.db import connection
from django.db.models import Q
from django.utils import timezone

from .capacity import capacity_model_for
from .models import CandidateRow, CandidateTable
from .rows import UNCOSTABLE, rows_insert_many
from .sensitivity import sensitivity_update
from .shown import CapacityModel
from .state import ANSWERS, PLAN_KINDS
from .version_sets import version_sets_store

if TYPE_CHECKING:
    from .candidates import TableContext, TableWrite

logger = logging.getLogger(__name__)


def tables_write(items: list[tuple[CandidateTable, TableWrite, int]]) -> None:
    """Write built tables (apps.finance.candidates.TableWrite) at their versions, in the
    caller's transaction, with their rows locked: the rows they replace go in a delete or two
    for all of them, the new rows in one COPY, then each table's fields."""
    if not items:
        return
    # The version sets the tables will name (apps.finance.version_sets), stored first.
    version_sets_store(
        versions
        for _, built, _ in items
        if (inputs := built.fields.inputs) is not None
        for versions in (inputs.quotes, inputs.api_routes)
    )
    replaced = [table.pk for table, built, _ in items if built.replace_all]
    if replaced:
        CandidateRow.objects.filter(table_id__in=replaced).delete()
    partial = [(table, built) for table, built, _ in items if not built.replace_all]
    gone = Q()
    for ids, tables in stale_groups([(t.pk, b.stale_quote_ids) for t, b in partial]).items():
        gone |= Q(table_id__in=tables, quote_id__in=ids)
    for ids, tables in stale_groups([(t.pk, b.stale_route_ids) for t, b in partial]).items():
        gone |= Q(table_id__in=tables, api_route_id__in=ids)
    plans = [table.pk for table, built in partial if built.replace_plans]
    if plans:  # serving plans depend on every quote: rebuilt whole (apps.finance.plans)
        gone |= Q(table_id__in=plans, candidate_kind__in=[k.value for k in PLAN_KINDS])
    if gone:
        CandidateRow.objects.filter(gone).delete()
    rows_insert_many([(table, built.rows) for table, built, _ in items])
    now = timezone.now()
    by_fields: dict[tuple[str, ...], list[CandidateTable]] = defaultdict(list)
    for table, built, version in items:
        values = built.fields.values()
        for name, value in values.items():
            setattr(table, name, value)
        fields: list[str] = [*values, "computed_version", "computed_at", "updated_at"]
        if built.context is not None and built.capacity_model_affected:
            table.capacity_model = _derived(capacity_model_for, built.context, table)
            fields.append("capacity_model")
        try:
            fields += sensitivity_update(table, built)  # apps.finance.sensitivity
        except UNCOSTABLE as exc:
            _not_derived("sensitivity", table, exc)
            table.sensitivity = {}
            fields.append("sensitivity")
        table.computed_version = version
        table.computed_at = table.updated_at = now
        by_fields[tuple(fields)].append(table)
    for names, same in by_fields.items():
        _tables_update(same, names)
    if connection.vendor == "postgresql":  # the next price change decodes none of them
        ANSWERS.keep([a for _, built, _ in items if (a := built.fields.answer) is not None])


def _derived(
    build: Callable[[TableContext, CandidateTable], CapacityModel],
    ctx: TableContext,
    table: CandidateTable,
) -> CapacityModel:
    """The rent / reserve / buy comparison, or none when a figure is too large to compare (the
    rows are written all the same: one candidate's figures never fail a table)."""
    try:
        return build(ctx, table)
    except UNCOSTABLE as exc:
        _not_derived("capacity model", table, exc)
        return {}


def _not_derived(what: str, table: CandidateTable, exc: BaseException) -> None:
    logger.warning("table %s: %s left empty (%r)", table.pk, what, exc)


def _tables_update(tables: list[CandidateTable], names: tuple[str, ...]) -> None:
    """``save(update_fields=names)`` for each table, as one executemany (a single round trip
    in psycopg's pipeline mode) instead of a statement and a round trip each."""
    if len(tables) == 1:
        tables[0].save(update_fields=list(names))
        return
    meta = CandidateTable._meta
    # Concrete fields (get_field's type admits relations, which have no column).
    fields: list[Any] = [meta.get_field(name) for name in names]
    quote = connection.ops.quote_name
    sets = ", ".join(f"{quote(f.column)} = %s" for f in fields)
    sql = f"UPDATE {quote(meta.db_table)} SET {sets} WHERE {quote(str(meta.pk.column))} = %s"  # noqa: S608 (names from the model)
    params = [
        [f.get_db_prep_save(getattr(t, f.attname), connection) for f in fields] + [t.pk]
        for t in tables
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)


def stale_groups(items: list[tuple[int, list[int]]]) -> dict[tuple[int, ...], list[int]]:
    """Tables grouped by the same list of stale ids (one delete per group, usually one)."""
    groups: dict[tuple[int, ...], list[int]] = defaultdict(list)
    for table_id, ids in items:
        if ids:
            groups[tuple(sorted(ids))].append(table_id)
    return groups
