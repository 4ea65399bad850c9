"""The COPY text apps.finance.rows writes candidate rows in: read back as PostgreSQL reads COPY's
text format, every value is the one the row held (text with backslashes, tabs and newlines,
JSON with quotes and non-ASCII words, NULLs, numbers as written)."""

import json
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from apps.finance.rows import COLUMNS, _copy_text
from apps.finance.state import (
    ROW_COLUMNS,
    CandidateKind,
    Configuration,
    Figures,
    Row,
    row_columns,
    row_from_columns,
)

JSON_COLUMNS = frozenset({"cost_lines", "why_not", "notes", "plan", "figures"})

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


def a_row(**changes: Any) -> Row:
    fields: dict[str, Any] = {
        "kind": CandidateKind.GPU,
        "quote_id": 7,
        "api_route_id": None,
        "gpu_id": 3,
        "configuration": Configuration(
            gpu="h100-sxm5-80gb",
            gpus_per_replica=2,
            replicas=1,
            paid_gpus=2,
            layout=changes.pop("layout", "TP2"),
            pricing_term="ON_DEMAND",
            hours_billed_per_month=Decimal("160"),
        ),
        "figures": Figures(
            fit="FITS",
            ttft_p95_ms=Decimal("210.5"),
            latency_p95_ms=Decimal("812.5"),
            memory_headroom_gb=Decimal("12.25"),
        ),
        "cost_lines": {"gpu_compute": Decimal("800.0000"), "platform_labour": Decimal("4800.0000")},
        "monthly_cost": Decimal("5600.0000"),
        "accepted_outputs_per_month": Decimal("1.7820"),
        "effective_unit_cost": Decimal("3142.536476"),
        "meets_constraints": True,
        "why_not": (),
        "notes": ("ON_DEMAND: billed for the 320.00 GPU-h the work runs",),
        "basis": "ESTIMATED",
        "paid_gpu_hours_per_month": None,
    }
    fields.update(changes)
    return Row(**fields)


def _lines(row: Row) -> dict[str, str]:
    return {k: str(v) for k, v in row.cost_lines.items()}


def written(rows: list[Row]) -> list[dict[str, str | None]]:
    table = SimpleNamespace(pk=42)
    text = "".join(_copy_text([(table, rows)], NOW))
    return [dict(zip(COLUMNS, fields, strict=True)) for fields in read_copy(text)]


class TestCopyText:
    def test_copy_writes_every_row_column_once(self):
        assert sorted(COLUMNS) == sorted(("table_id", *ROW_COLUMNS, "created_at", "updated_at"))

    def test_rows_sharing_a_configuration_each_read_back_their_own(self):
        """Rows of one configuration share its objects (and their text); a row with another
        configuration or other figures still reads back its own."""
        shared = a_row()
        other = a_row(
            configuration=replace(shared.configuration, replicas=9, pricing_term="SPOT"),
            figures=replace(shared.figures, latency_p95_ms=Decimal("99.5")),
        )
        rows = [shared, a_row(quote_id=8, configuration=shared.configuration), other, shared]
        got = written(rows)
        assert [r["replicas"] for r in got] == ["1", "1", "9", "1"]
        assert [r["pricing_term"] for r in got] == ["ON_DEMAND", "ON_DEMAND", "SPOT", "ON_DEMAND"]
        assert [r["p95_latency_ms"] for r in got] == ["812.5", "812.5", "99.5", "812.5"]
        assert [r["quote_id"] for r in got] == ["7", "8", "7", "7"]

    def test_a_plain_row_reads_back_as_it_was(self):
        (got,) = written([a_row()])
        assert got["table_id"] == "42"
        assert got["quote_id"] == "7"
        assert got["api_route_id"] is None
        assert got["paid_gpu_hours_per_month"] is None
        assert got["meets_constraints"] == "t"
        assert Decimal(got["effective_unit_cost"]) == Decimal("3142.536476")
        assert json.loads(got["cost_lines"]) == _lines(a_row())
        assert json.loads(got["notes"]) == list(a_row().notes)
        assert json.loads(got["why_not"]) == []
        assert datetime.fromisoformat(got["created_at"]) == NOW
        # The configuration and the figures, in their columns and the figures JSON.
        assert (got["gpu_count"], got["replicas"], got["paid_gpus"]) == ("2", "1", "2")
        assert Decimal(got["p95_latency_ms"]) == Decimal("812.5")
        figures = json.loads(got["figures"])
        assert (figures["fit"], figures["ttft_p95_ms"]) == ("FITS", "210.5")
        assert figures["hours_billed_per_month"] == "160"

    def test_a_row_reads_back_as_the_same_typed_row(self):
        row = a_row()
        (got,) = written([row])
        values: dict[str, Any] = {}
        for name in ROW_COLUMNS:
            text = got[name]
            values[name] = json.loads(text) if name in JSON_COLUMNS and text is not None else text
        for name in ("monthly_cost", "accepted_outputs_per_month", "effective_unit_cost",
                     "p95_latency_ms", "memory_headroom_gb"):  # fmt: skip
            values[name] = None if values[name] is None else Decimal(values[name])
        for name in ("quote_id", "gpu_id", "gpu_count", "replicas", "paid_gpus"):
            values[name] = None if values[name] is None else int(values[name])
        values["meets_constraints"] = values["meets_constraints"] == "t"
        values["gpu__slug"] = "h100-sxm5-80gb"
        assert row_from_columns(values) == row

    @given(
        st.sampled_from(["FITS", "TIGHT", "NO", None]),
        st.one_of(st.none(), st.decimals(allow_nan=False, allow_infinity=False, places=2)),
        st.one_of(st.none(), st.integers(min_value=0, max_value=4096)),
        st.booleans(),
    )
    def test_every_column_is_what_row_columns_says(self, fit, latency, replicas, meets):
        """The COPY writer reads the row's fields itself (it is the hot path): each column it
        writes is the value ``row_columns`` gives the other databases' bulk insert."""
        base = a_row()
        row = a_row(
            figures=Figures(
                fit=fit, latency_p95_ms=latency, energy_kwh_per_month=latency, throughput=latency
            ),
            configuration=replace(base.configuration, replicas=replicas),
            meets_constraints=meets,
        )
        (got,) = written([row])
        expected = row_columns(row)
        for name in ROW_COLUMNS:
            value = expected[name]
            if name in JSON_COLUMNS:
                assert json.loads(got[name]) == json.loads(json.dumps(value)), name
            elif value is None:
                assert got[name] is None, name
            elif isinstance(value, bool):
                assert got[name] == ("t" if value else "f"), name
            else:
                assert got[name] == str(value), name

    def test_escapes_in_text_and_json_survive(self):
        row = a_row(
            layout="TP2\tPP1\\x",
            why_not=('misses "TTFT <= 300 ms"\non 8 GPUs', "C:\\path\r"),
            notes=("price 1.08 \u00d7 EUR \u2014 ok",),
            cost_lines={"gpu_compute": Decimal("1.0000"), 'odd"name': Decimal("2.0000")},
            meets_constraints=False,
            effective_unit_cost=None,
        )
        (got,) = written([row])
        assert got["layout"] == "TP2\tPP1\\x"
        assert json.loads(got["why_not"]) == list(row.why_not)
        assert json.loads(got["notes"]) == list(row.notes)
        assert json.loads(got["cost_lines"]) == _lines(row)  # a name that needs escaping
        assert got["meets_constraints"] == "f"
        assert got["effective_unit_cost"] is None

    def test_many_rows_come_in_chunks_and_all_arrive(self):
        rows = [a_row(quote_id=i) for i in range(4321)]
        got = written(rows)
        assert [r["quote_id"] for r in got] == [str(i) for i in range(4321)]

    @given(
        st.lists(st.text(), max_size=4),
        st.dictionaries(
            st.text(min_size=1),
            st.decimals(allow_nan=False, allow_infinity=False, places=4),
            max_size=4,
        ),
        st.text(max_size=40),
    )
    def test_any_text_reads_back(self, notes, lines, layout):
        row = a_row(notes=tuple(notes), cost_lines=lines, layout=layout)
        (got,) = written([row])
        assert json.loads(got["notes"]) == notes
        assert json.loads(got["cost_lines"]) == _lines(row)
        assert got["layout"] == layout[:40]
