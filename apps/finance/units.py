"""The unit a candidate table is shown in, and money as people read it.

Stored figures stay per one accepted output (``CandidateRow.effective_unit_cost``: exact, and
the order the ranking reads); every reader shows them in the table's unit, the brief's success
unit at a fixed readable scale (apps.engine.units): the rankings JSON and CSV, the finance page
and its charts, the capacity model, and the decision record's snapshot and PDF. The JSON says
``unit`` ("per 1M accepted tokens"), ``success_unit`` ("TOKEN") and ``unit_scale`` (1000000:
outputs per shown unit), so a client can always get back to one output.

Call ``unit_for(brief)`` / ``scale_for(success_unit)`` wherever a cost per output is shown.
"""

from decimal import Decimal
from typing import TypedDict

from apps.briefs.models import WorkloadBrief
from apps.core import formatting
from apps.engine.costing import SuccessUnit
from apps.engine.units import TableUnit, table_unit

__all__ = [
    "TableUnit",
    "count_text",
    "money_text",
    "scale_for",
    "scaled",
    "significant_text",
    "unit_cost_text",
    "unit_for",
    "unit_of_snapshot",
    "unit_text",
    "unit_words",
]


def unit_for(brief_or_unit: WorkloadBrief | str | None) -> TableUnit | None:
    """The table unit of a brief (or of a success unit's value); None when it has none."""
    value = (
        brief_or_unit.success_unit if isinstance(brief_or_unit, WorkloadBrief) else brief_or_unit
    )
    if not value or value not in SuccessUnit.__members__:
        return None
    return table_unit(value)


def scale_for(success_unit: str | None) -> int:
    """Outputs per shown unit cost (1 when the success unit is unknown)."""
    unit = unit_for(success_unit)
    return unit.scale if unit else 1


def scaled(per_output: Decimal | str | None, scale: int) -> Decimal | None:
    """A cost per one output in the table's unit."""
    if per_output is None:
        return None
    return Decimal(per_output) * scale


def unit_text(unit: TableUnit | None) -> str:
    return unit.label if unit else "per accepted output"


def unit_words(unit: str | None) -> str:
    """A table's ``unit`` as a reader sees it: the words as they are ("per 1M accepted
    tokens"); a success unit's code, as snapshots frozen before tables had a unit scale hold
    it (their costs are per one output), as "per accepted token"."""
    legacy = unit_for(unit)
    if legacy is not None:
        return f"per {legacy.output}"
    if unit and unit.startswith("per "):
        return unit
    return "per accepted output"


class TableUnitJson(TypedDict, total=False):
    """What a candidate table's JSON says of its unit (a snapshot frozen by an older build may
    say neither: a success unit's code as ``unit``, costs per one output)."""

    unit: str | None
    unit_scale: int | str | None  # read with int(): builds before aa2579b wrote some as strings


def unit_of_snapshot(table: TableUnitJson) -> tuple[str, int]:
    """(the unit in words, its scale) of a frozen or live candidate table dict."""
    unit = table.get("unit")
    scale = int(table.get("unit_scale") or 1) if unit_for(unit) is None else 1
    return unit_words(unit), scale


def money_text(value: Decimal | str | float | None) -> str:
    """An amount of money as a person reads it, without its currency (apps.core.formatting
    .money: thousands separated, to the cent, whole units from 10,000 up); "—" for none."""
    return formatting.money(value)


def unit_cost_text(value: Decimal | str | float | None) -> str:
    """A unit cost as a person reads it, without its currency (apps.core.formatting.unit_cost:
    4 significant digits, 0.004213 keeps its digits); "—" for none."""
    return formatting.unit_cost(value)


def count_text(value: Decimal | str | float | None) -> str:
    """A count of outputs as a person reads it (apps.core.formatting.count: 1,862,967,566
    tokens, 0.99 checkpoints); "—" for none."""
    return formatting.count(value)


def significant_text(value: Decimal | float | int | None, digits: int = 4) -> str:
    """A figure to ``digits`` significant digits as a person reads it (apps.core.formatting
    .number: thousands separated, never in exponent form: 76,060, 0.0000005, 3.5); "—" for
    none."""
    return formatting.number(value, digits)
