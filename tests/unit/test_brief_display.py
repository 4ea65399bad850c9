"""How the brief page writes a figure: 3 significant figures, thousands separated."""

import pytest

from apps.briefs.display import hours, number


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1202293857.4939, "1,202,293,857"),
        (131072, "131,072"),
        (1234.5, "1,234"),
        (705.3, "705"),
        (12.345, "12.3"),
        (0.000123456, "0.000123"),
        (46.4, "46.4"),
        (1.0, "1"),
        (0, "0"),
        (None, "—"),
        (float("nan"), "—"),
    ],
)
def test_number(value, text):
    assert number(value) == text


def test_a_long_time_to_train_also_reads_in_days():
    assert hours(237.4) == "237 h (9.89 days)"
    assert hours(1.556) == "1.56 h"
    assert hours(None) == "—"
