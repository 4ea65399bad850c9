"""Hour-of-day windows of an API route: the hour-weighted price, and a scheduled brief's hours
placed in the cheapest windows first."""

from decimal import Decimal

from apps.quotes.price_windows import for_hours, weighted, window_hours, windows_text

D = Decimal
REASONER = [
    {"start": "16:30", "end": "00:30", "hours": "8", "input_price_per_mtok": "0.135",
     "output_price_per_mtok": "0.55", "cached_input_price_per_mtok": "0.035"},
    {"start": "00:30", "end": "16:30", "hours": "16", "input_price_per_mtok": "0.55",
     "output_price_per_mtok": "2.19", "cached_input_price_per_mtok": "0.14"},
]  # fmt: skip


class TestWeighted:
    def test_is_each_windows_price_by_its_hours(self):
        day = weighted(REASONER)
        assert (day.input_price_per_mtok, day.output_price_per_mtok) == (D("0.4117"), D("1.6433"))
        assert day.cached_input_price_per_mtok == D("0.105")
        assert day.hours == 24
        assert "8 h from 16:30 to 00:30 UTC at 0.135 / 0.55" in day.note


class TestForHours:
    def test_a_brief_of_6_hours_a_day_runs_off_peak(self):
        night = for_hours(REASONER, D(6))
        assert (night.input_price_per_mtok, night.output_price_per_mtok) == (D("0.135"), D("0.55"))
        assert "6 h a day placed in the cheapest windows" in night.note

    def test_more_hours_than_the_cheap_window_spill_into_the_dear_one(self):
        twelve = for_hours(REASONER, D(12))
        # 8 h at 0.55 + 4 h at 2.19, over 12 h.
        assert twelve.output_price_per_mtok == D("1.0967")

    def test_a_whole_day_is_the_weighted_price(self):
        assert for_hours(REASONER, D(24)) == weighted(REASONER)


class TestHours:
    def test_a_window_past_midnight(self):
        assert (window_hours(16 * 60 + 30, 30), window_hours(30, 16 * 60 + 30)) == (D(8), D(16))
        assert window_hours(0, 24 * 60) == D(24)

    def test_in_words(self):
        assert windows_text([]) == "none"
        assert windows_text(REASONER).startswith("16:30-00:30 UTC: 0.135 / 0.55; ")
