"""The COPY text apps.finance.rows writes candidate rows in: read back as PostgreSQL reads COPY's
text format, every value is the one the row held (text with backslashes, tabs and newlines,
JSON with quotes and non-ASCII words, NULLs, numbers as written)."""

import json
from datetime import UTC, datetime
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from apps.finance.rows import COLUMNS, _copy_text

NOW = datetime(2026, 12, 2, 6, 30, tzinfo=UTC)
_UNESCAPE = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}


def read_copy(text: str) -> list[list[str | None]]:
    """COPY's text format read as the server reads it (the escapes this writer uses)."""
    rows = []
    for line in text.split("\n")[:-1]:
        fields: list[str | None] = []
        for raw in line.split("\t"):
            if raw == "\\N":
                fields.append(None)
                continue
            out, i = [], 0
            while i < len(raw):
                if raw[i] == "\\":
                    out.append(_UNESCAPE[raw[i + 1]])
                    i += 2
                else:
                    out.append(raw[i])
                    i += 1
            fields.append("".join(out))
        rows.append(fields)
    return rows


def a_row(**changes: Any) -> dict[str, Any]:
    row = {
        "candidate_kind": "GPU",
        "quote_id": 7,
        "api_route_id": None,
        "gpu_id": 3,
        "gpu_count": 2,
        "replicas": 1,
        "pricing_term": "ON_DEMAND",
        "cost_lines": {"gpu_compute": "800.0000", "platform_labour": "4800.0000"},
        "monthly_cost": Decimal("5600.0000"),
        "accepted_outputs_per_month": Decimal("1.7820"),
        "effective_unit_cost": Decimal("3142.536476"),
        "meets_constraints": True,
        "why_not": [],
        "basis": "ESTIMATED",
        "p95_latency_ms": Decimal("812.50"),
        "memory_headroom_gb": Decimal("12.25"),
        "layout": "TP2",
        "paid_gpu_hours_per_month": None,
        "notes": ["ON_DEMAND: billed for the 320.00 GPU-h the work runs"],
    }
    row.update(changes)
    return row


def written(rows: list[dict[str, Any]]) -> list[dict[str, str | None]]:
    table = SimpleNamespace(pk=42)
    text = "".join(_copy_text([(table, rows)], NOW))
    return [dict(zip(COLUMNS, fields, strict=True)) for fields in read_copy(text)]


class TestCopyText:
    def test_a_plain_row_reads_back_as_it_was(self):
        (got,) = written([a_row()])
        assert got["table_id"] == "42"
        assert got["quote_id"] == "7"
        assert got["api_route_id"] is None
        assert got["paid_gpu_hours_per_month"] is None
        assert got["meets_constraints"] == "t"
        assert Decimal(got["effective_unit_cost"]) == Decimal("3142.536476")
        assert json.loads(got["cost_lines"]) == a_row()["cost_lines"]
        assert json.loads(got["notes"]) == a_row()["notes"]
        assert json.loads(got["why_not"]) == []
        assert datetime.fromisoformat(got["created_at"]) == NOW

    def test_escapes_in_text_and_json_survive(self):
        row = a_row(
            layout="TP2\tPP1\\x",
            why_not=['misses "TTFT <= 300 ms"\non 8 GPUs', "C:\\path\r"],
            notes=["price 1.08 \u00d7 EUR \u2014 ok", {"nested": "not a string"}],
            cost_lines={"gpu_compute": "1.0000", 'odd"name': "2.0000"},
            meets_constraints=False,
            effective_unit_cost=None,
        )
        (got,) = written([row])
        assert got["layout"] == "TP2\tPP1\\x"
        assert json.loads(got["why_not"]) == row["why_not"]
        assert json.loads(got["notes"]) == row["notes"]
        assert json.loads(got["cost_lines"]) == row["cost_lines"]  # a name that needs escaping
        assert got["meets_constraints"] == "f"
        assert got["effective_unit_cost"] is None

    def test_many_rows_come_in_chunks_and_all_arrive(self):
        rows = [a_row(quote_id=i) for i in range(4321)]
        got = written(rows)
        assert [r["quote_id"] for r in got] == [str(i) for i in range(4321)]

    @given(
        st.lists(st.text(), max_size=4),
        st.dictionaries(st.text(min_size=1), st.text(), max_size=4),
        st.text(max_size=40),
    )
    def test_any_text_reads_back(self, notes, lines, layout):
        (got,) = written([a_row(notes=notes, cost_lines=lines, layout=layout)])
        assert json.loads(got["notes"]) == notes
        assert json.loads(got["cost_lines"]) == lines
        assert got["layout"] == layout
