"""The template filters that put codes and figures into words on the decision and quote pages."""

from datetime import UTC, datetime

import pytest

from apps.core.templatetags.code_words import mark_codes
from apps.core.templatetags.money import price
from apps.decisions.templatetags.decision_words import criterion, money, unit_cost, when, words


@pytest.mark.parametrize(
    ("code", "shown"),
    [
        ("IN_REVIEW", "In review"),
        ("APPROVED", "Approved"),
        ("APPROVE", "Approved"),
        ("RESERVED_1Y", "Reserved 1 year"),
        ("ESTIMATED", "Estimated"),
        ("procurement", "Procurement"),
        ("NOT_APPLICABLE", "Not applicable"),
        ("SOMETHING_NEW", "Something new"),
        ("", ""),
        (None, ""),
    ],
)
def test_words(code, shown):
    assert words(code) == shown


def test_figures():
    assert money("6117.6712") == "6,117.67"
    assert money(None) == "—"
    assert unit_cost("3.28412736") == "3.284"
    assert unit_cost(None) == "—"
    assert when("2026-12-02T06:52:14.686340+00:00") == "2026-12-02 06:52:14 UTC"
    assert when(datetime(2026, 12, 2, 6, 52, 14, tzinfo=UTC)) == "2026-12-02 06:52:14 UTC"
    assert criterion(("ttft_target_ms", 500)) == ("Time to first token target", "500 ms")


@pytest.mark.parametrize(
    ("value", "shown"),
    [("2.19", "2.19"), ("2.1900", "2.19"), ("2.4937", "2.4937"), ("1250", "1,250.00"),
     ("0.0125", "0.0125"), (None, "—")],
)  # fmt: skip
def test_price_as_quoted(value, shown):
    assert price(value) == shown


def test_codes_a_csv_takes_read_as_code_and_the_rest_is_escaped():
    html = mark_codes("ON_DEMAND, SPOT or OWNED <b>(USD)</b>")
    assert html == (
        "<code>ON_DEMAND</code>, <code>SPOT</code> or <code>OWNED</code> &lt;b&gt;(USD)&lt;/b&gt;"
    )
