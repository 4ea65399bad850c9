"""The candidate table's figures and words: significant digits, money with its currency,
configurations and layouts, engine notes without code names."""

import pytest

from apps.finance.lines import (
    amount_text,
    configuration_text,
    count_words,
    figure_text,
    layout_text,
    readable,
)


class TestFigures:
    @pytest.mark.parametrize(
        ("value", "shown"),
        [
            ("0.000006797506241", "0.000006798"),
            ("0.9381523478", "0.9382"),
            ("27.19484405", "27.19"),
            ("5520.028231", "5,520"),
            ("1202293857.4939", "1,202,293,857"),  # whole, as apps.core.formatting.number
            ("0", "0"),
            (None, "—"),
        ],
    )
    def test_four_significant_digits_thousands_separated(self, value, shown):
        assert figure_text(value) == shown

    def test_money_carries_its_currency_to_the_cent_below_10000(self):
        # One rule on every page (apps.core.formatting.money): a table's USD 6,118 beside a
        # total's USD 6,117.67 read as two figures (issue 27).
        assert amount_text("5120.7182", "USD") == "USD\u00a05,120.72"
        assert amount_text("12345.678", "USD") == "USD\u00a012,346"
        assert amount_text("48.655", "EUR") == "EUR\u00a048.66"
        assert amount_text(None, "USD") == "—"

    def test_large_counts_read_in_words(self):
        assert count_words("1882973915.911") == "1.883 billion"
        assert count_words("45600000") == "45.6 million"
        assert count_words("180320") == "180,320"


class TestConfiguration:
    def test_gpus_times_replicas_in_words(self):
        # The GPUs paid, then how they serve: the fit table's and the PDF's wording.
        assert configuration_text({"gpu_count": 1, "replicas": 1}) == "1 GPU (1 replica \u00d7 1)"
        assert (
            configuration_text({"gpu_count": 8, "replicas": 12}) == "96 GPUs (12 replicas \u00d7 8)"
        )
        assert (
            configuration_text({"gpu_count": 1, "replicas": 18, "configuration": {"paid_gpus": 20}})
            == "20 GPUs (18 replicas \u00d7 1)"
        )
        assert configuration_text({"gpu_count": None, "replicas": None}) == "—"

    def test_the_layout_shows_when_the_engine_gave_one(self):
        assert layout_text({"layout": "TP 4 \u00d7 PP 2"}) == "TP 4 \u00d7 PP 2"
        assert layout_text({"configuration": {"layout": "TP 8"}}) == "TP 8"
        assert layout_text({"gpu_count": 2}) is None


class TestReadable:
    @pytest.mark.parametrize(
        ("note", "shown"),
        [
            (
                "SPOT: billed for the 3776.29 GPU-h the work runs",
                "Spot / preemptible: billed for the 3,776 GPU-h the work runs",
            ),
            (
                "replicas serve 123.456789012 tok/s, demand needs 45.6 tok/s",
                "replicas serve 123.5 tok/s, demand needs 45.6 tok/s",
            ),
            (
                "an API route priced per token cannot serve LORA_FINETUNE",
                "an API route priced per token cannot serve LoRA fine-tune",
            ),
            ("GPU-hours: 60000000 / 527.9 per replica x 2 GPUs",
             "GPU-hours: 60,000,000 / 527.9 per replica \u00d7 2 GPUs"),
            ("quote #12345 on h100-sxm5-80gb, TTFT <= 200 ms",
             "quote #12345 on h100-sxm5-80gb, TTFT ≤ 200 ms"),
            ("labour 40 h x 120.00 USD/h", "labour 40 h \u00d7 USD\u00a0120.00/h"),
            ("the gpu_compute line", "the GPU compute line"),
        ],
    )  # fmt: skip
    def test_codes_in_words_and_long_figures_rounded(self, note, shown):
        assert readable(note) == shown


def test_a_whole_figure_has_no_trailing_decimal():
    assert figure_text("730.0000") == "730"
    assert figure_text("27.10") == "27.1"
