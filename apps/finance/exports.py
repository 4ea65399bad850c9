"""The ranking as CSV: one row per candidate, every cost line a column. ``effective_unit_cost``
is in the table's unit, which the ``currency`` and ``unit`` columns repeat on every row (a flat
file keeps its meaning when rows are filtered or pasted elsewhere)."""

from decimal import Decimal

from apps.core.csv_export import to_csv

from .shown import CsvTable, ShownRow

COLUMNS = (
    "rank", "candidate_kind", "provider", "gpu", "system", "region", "api_model", "gpu_count",
    "replicas", "pricing_term", "quote_id", "api_route_id", "monthly_cost",
    "accepted_outputs_per_month",
    "effective_unit_cost", "currency", "unit", "meets_constraints", "why_not", "basis",
    "p95_latency_ms", "memory_headroom_gb", "layout", "paid_gpu_hours_per_month",
    "energy_kwh_per_month", "energy_j_per_output", "co2e_kg_per_month", "quote_age_days",
    "quote_stale", "notes",
)  # fmt: skip
DECIMAL_COLUMNS = frozenset(
    {"monthly_cost", "accepted_outputs_per_month", "effective_unit_cost", "p95_latency_ms",
     "memory_headroom_gb", "paid_gpu_hours_per_month", "energy_kwh_per_month",
     "energy_j_per_output", "co2e_kg_per_month"}
)  # fmt: skip
# The table's, repeated on each row.
TABLE_COLUMNS = frozenset({"currency", "unit"})


def ranking_csv(ranking: CsvTable) -> str:
    """A ranking's rows (a ``Ranking``, or a snapshot's frozen table) with the table's currency
    and unit on each."""
    line_names: list[str] = []
    for row in ranking["rows"]:
        line_names += [n for n in row["cost_lines"] if n not in line_names]
    header = [*COLUMNS, *(f"cost_line:{n}" for n in line_names)]

    def cells(row: ShownRow) -> list[object]:
        values: list[object] = []
        for column in COLUMNS:
            # Column by column; a snapshot written by an older build may lack one.
            value = ranking.get(column) if column in TABLE_COLUMNS else row.get(column)
            if column in DECIMAL_COLUMNS and value is not None:
                value = Decimal(str(value))  # decimals travel as strings
            elif isinstance(value, list):  # why_not, notes
                value = "; ".join(value)
            values.append(value)
        lines = row["cost_lines"]
        values += [Decimal(lines[n]) if n in lines else None for n in line_names]
        return values

    return to_csv(header, (cells(r) for r in ranking["rows"]))
