"""Datasheet figures on the GPU catalog pages: thousands separators from 1,000, four
significant digits below, no padding zeros."""

from decimal import Decimal

import pytest

from apps.catalog.templatetags.datasheet import figure


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (Decimal("2516.00"), "2,516"),  # MI355X BF16 dense TFLOPS
        (Decimal("10066.00"), "10,066"),
        (81559, "81,559"),  # H100 device memory, MiB
        (Decimal("1007.6"), "1,008"),
        (Decimal("8.000"), "8"),  # TB/s, not "8.000"
        (Decimal("4.800"), "4.8"),
        (Decimal("1.792"), "1.792"),
        (Decimal("503.8"), "503.8"),
        (Decimal("0.864"), "0.864"),
        (Decimal("288.00"), "288"),
        (Decimal("12.345"), "12.35"),  # half up, as people round (apps.core.formatting)
        (Decimal("0"), "0"),
        (None, "—"),
        ("", "—"),
    ],
)
def test_a_datasheet_figure_reads_as_a_vendor_prints_it(value, shown):
    assert figure(value) == shown
