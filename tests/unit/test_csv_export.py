"""safe_cell / to_csv: text that a spreadsheet would run as a formula is neutralised, and numbers
(Decimals above all) come back exactly as they went in."""

import csv
import io
from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.core.csv_export import FORMULA_STARTS, safe_cell, to_csv


def parse(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


class TestSafeCellNeutralisesFormulas:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
            ("+1", "'+1"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tcmd", "'\tcmd"),
            ("\rcmd", "'\rcmd"),
            (";=1+1", "';=1+1"),
            ("=", "'="),
            ("-", "'-"),
        ],
    )
    def test_a_text_cell_starting_with_a_formula_character_gets_a_leading_apostrophe(
        self, value, expected
    ):
        assert safe_cell(value) == expected

    @pytest.mark.parametrize(
        "value", ["Acme Cloud", "a=b", "1+1", "x-2", "'quoted", " =1", "", "h100-sxm5-80gb"]
    )
    def test_text_that_does_not_start_with_a_formula_character_is_left_alone(self, value):
        assert safe_cell(value) == value

    def test_the_formula_characters_are_the_owasp_six_and_the_semicolon(self):
        assert set(FORMULA_STARTS) == {"=", "+", "-", "@", "\t", "\r", ";"}

    @given(st.text())
    def test_no_text_ever_comes_out_starting_with_a_formula_character(self, text):
        cell = safe_cell(text)
        assert not cell.startswith(FORMULA_STARTS)
        assert cell in (text, "'" + text)


class TestSafeCellKeepsValuesExact:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            (None, ""),
            (True, "true"),
            (False, "false"),
            (0, "0"),
            (-7, "-7"),
            (2.5, "2.5"),
            (-0.125, "-0.125"),
            (Decimal("2.5000"), "2.5000"),
            (Decimal("-2.5"), "-2.5"),
            (Decimal("1E+3"), "1000"),
            (Decimal("1.23E-7"), "0.000000123"),
            (date(2026, 11, 30), "2026-11-30"),
        ],
    )
    def test_non_text_values_are_written_plainly_and_never_prefixed(self, value, expected):
        assert safe_cell(value) == expected

    @given(st.decimals(allow_nan=False, allow_infinity=False))
    def test_a_decimal_round_trips_exactly_and_never_in_exponent_form(self, value):
        cell = safe_cell(value)
        assert Decimal(cell) == value
        assert "E" not in cell.upper()

    @given(st.floats(allow_nan=False, allow_infinity=False))
    def test_a_float_round_trips_exactly(self, value):
        assert float(safe_cell(value)) == value


class TestToCsv:
    def test_writes_a_header_and_rows_with_crlf_line_ends(self):
        text = to_csv(["provider", "price"], [["Acme", Decimal("1.50")], ["Beta", None]])
        assert text == "provider,price\r\nAcme,1.50\r\nBeta,\r\n"

    def test_a_cell_with_a_semicolon_comma_quote_or_line_break_is_quoted(self):
        text = to_csv(["a"], [["x;y"], ["x,y"], ['x"y'], ["x\ny"], [";=1"]])
        assert text == 'a\r\n"x;y"\r\n"x,y"\r\n"x""y"\r\n"x\ny"\r\n"\';=1"\r\n'

    @pytest.mark.parametrize("value", [";=1+1", "a;=1+1", 'a";=1+1', "x;\t=1"])
    def test_a_reader_that_splits_on_semicolons_keeps_a_cell_with_one_whole(self, value):
        text = to_csv(["name"], [[value]])
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=";"))
        assert rows[1] == [safe_cell(value)]
        assert not rows[1][0].startswith(FORMULA_STARTS)

    def test_header_cells_are_neutralised_too(self):
        text = to_csv(["=cmd", "ok"], [])
        assert parse(text) == [["'=cmd", "ok"]]

    @given(
        st.lists(
            st.tuples(st.text(), st.decimals(allow_nan=False, allow_infinity=False)), max_size=5
        )
    )
    def test_parsing_the_output_gives_back_safe_text_and_exact_decimals(self, rows):
        parsed = parse(to_csv(["name", "amount"], rows))
        assert parsed[0] == ["name", "amount"]
        assert len(parsed) == len(rows) + 1
        for (name, amount), (name_cell, amount_cell) in zip(rows, parsed[1:], strict=True):
            assert name_cell == safe_cell(name)
            assert Decimal(amount_cell) == amount
