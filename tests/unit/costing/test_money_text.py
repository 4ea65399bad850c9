"""The engine's notes write money as the pages do (apps.core.formatting)."""

from decimal import Decimal

import pytest

from apps.core import formatting
from apps.engine import money_text

AMOUNTS = ["0", "0.08", "0.0125", "0.9703196", "0.22", "2.5", "416.666667", "9999.994", "25000",
           "1234567.891", "-12.5"]  # fmt: skip


@pytest.mark.parametrize("amount", AMOUNTS)
@pytest.mark.parametrize("currency", ["USD", "EUR", "JPY"])
def test_money_reads_as_the_pages_write_it(amount, currency):
    assert money_text.money(Decimal(amount), currency) == formatting.money(amount, currency)


@pytest.mark.parametrize("amount", AMOUNTS)
@pytest.mark.parametrize("currency", ["USD", "JPY"])
def test_a_rate_reads_as_the_pages_write_it(amount, currency):
    assert money_text.rate(Decimal(amount), currency, "kWh") == formatting.rate(
        amount, currency, "kWh"
    )


def test_examples():
    assert money_text.money(Decimal("25000"), "USD") == "USD\u00a025,000"
    assert money_text.rate(Decimal("0.0800"), "USD", "kWh") == "USD\u00a00.08 / kWh"
