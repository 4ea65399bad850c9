"""Figures and codes as people read them (apps.core.formatting): worked examples from the pages
issue 27 walked, and properties that hold for any figure (hypothesis)."""

import re
from decimal import Decimal

import pytest
from django.template import Context, Template
from hypothesis import given
from hypothesis import strategies as st

from apps.core import choices, formatting
from apps.core.formatting import (
    count,
    duration,
    energy,
    figure,
    label,
    latency,
    money,
    number,
    percent,
    rate,
    unit_cost,
)
from apps.engine import costing
from apps.engine import types as engine

NB = "\u00a0"
SCIENTIFIC = re.compile(r"\d[eE][+-]?\d")
FIGURES = st.one_of(
    st.floats(min_value=-1e15, max_value=1e15, allow_nan=False, allow_infinity=False),
    st.decimals(min_value=Decimal("-1e15"), max_value=Decimal("1e15"), allow_nan=False, places=12),
    st.integers(min_value=-(10**15), max_value=10**15),
)
FORMATTERS = (
    money,
    rate,
    formatting.quoted,
    unit_cost,
    number,
    count,
    percent,
    energy,
    duration,
    latency,
)


def significant_digits(text: str) -> int:
    digits = re.sub(r"[^0-9]", "", text.split(NB)[-1] if text[:1].isalpha() else text.split(NB)[0])
    return len(digits.lstrip("0"))


class TestMoney:
    @pytest.mark.parametrize(
        ("value", "currency", "shown"),
        [
            (Decimal("5120.70"), "USD", f"USD{NB}5,120.70"),
            ("5120.7", "USD", f"USD{NB}5,120.70"),
            (12345.67, "USD", f"USD{NB}12,346"),
            (Decimal("10000"), "EUR", f"EUR{NB}10,000"),
            (Decimal("9999.994"), "EUR", f"EUR{NB}9,999.99"),
            (380, "JPY", f"JPY{NB}380"),  # the yen has no minor unit (ISO 4217)
            (Decimal("380.4"), "JPY", f"JPY{NB}380"),
            (0, "USD", f"USD{NB}0.00"),
            (Decimal("-0.001"), "", "0.00"),
            (Decimal("1234.5"), "", "1,234.50"),
        ],
    )
    def test_reads_with_its_currency_to_the_cent_below_ten_thousand(self, value, currency, shown):
        assert money(value, currency) == shown

    @pytest.mark.parametrize("value", [None, "", "n/a", float("nan"), float("inf"), True])
    def test_reads_a_dash_when_there_is_no_figure(self, value):
        assert money(value, "USD") == "—"


class TestRate:
    @pytest.mark.parametrize(
        ("value", "currency", "per", "shown"),
        [
            (Decimal("2.19"), "USD", "GPU-hour", f"USD{NB}2.19 / GPU-hour"),
            # The comparison page's amortised capex (34,000 over 48 months of 730 h).
            (
                Decimal("0.9703196347031963470319634703"),
                "USD",
                "GPU-hour",
                f"USD{NB}0.9703 / GPU-hour",
            ),
            (Decimal("0.0125"), "USD", "GB", f"USD{NB}0.0125 / GB"),
            (Decimal("0.50"), "", "", "0.50"),
            (Decimal("0.5"), "", "", "0.50"),
            (Decimal("0.004"), "", "", "0.004"),
            (Decimal("120"), "USD", "kW-month", f"USD{NB}120.00 / kW-month"),
            (Decimal("380.0000"), "JPY", "GPU-hour", f"JPY{NB}380 / GPU-hour"),
        ],
    )
    def test_reads_cents_or_four_figures_where_cents_hide_the_price(
        self, value, currency, per, shown
    ):
        assert rate(value, currency, per) == shown


class TestQuoted:
    @pytest.mark.parametrize(
        ("value", "shown"),
        [
            (Decimal("2.190000"), "2.19"),
            (Decimal("2.4937"), "2.4937"),
            (Decimal("1250"), "1,250.00"),
            (Decimal("0.0125"), "0.0125"),
            (Decimal("0.9703196347031963470319634703"), "0.970320"),
        ],
    )
    def test_keeps_the_providers_decimals_to_six_places(self, value, shown):
        assert formatting.quoted(value) == shown

    def test_a_yen_price_reads_whole(self):
        assert formatting.quoted(Decimal("380.0000"), "JPY") == f"JPY{NB}380"


class TestUnitCost:
    @pytest.mark.parametrize(
        ("value", "shown"),
        [
            (Decimal("0.000002616282601000"), "0.000002616"),
            (2.616282601e-06, "0.000002616"),
            (Decimal("27.1941"), "27.19"),
            (Decimal("5520.7"), "5,521"),
            (Decimal("1883000000.4"), "1,883,000,000"),
            (Decimal("0.5"), "0.5"),
            (0, "0"),
        ],
    )
    def test_keeps_four_significant_figures_never_scientific(self, value, shown):
        assert unit_cost(value) == shown

    def test_names_its_currency_first(self):
        assert unit_cost(Decimal("0.0421"), "EUR") == f"EUR{NB}0.0421"


class TestFiguresAndCounts:
    @pytest.mark.parametrize(
        ("value", "unit", "shown"),
        [
            (Decimal("2.000"), "req/s", f"2{NB}req/s"),
            (1250.4, "tokens/s", f"1,250{NB}tokens/s"),
            (0.04567, "s", f"0.0457{NB}s"),
            (123456.7, "", "123,457"),
        ],
    )
    def test_a_figure_keeps_three_significant_figures(self, value, unit, shown):
        assert figure(value, unit) == shown

    @pytest.mark.parametrize(
        ("value", "noun", "shown"),
        [
            (6000, "", "6,000"),
            ("6000", "", "6,000"),
            (Decimal("0.99"), "checkpoint", f"0.99{NB}checkpoints"),
            (1, "GPU", f"1{NB}GPU"),
            (18, "GPU", f"18{NB}GPUs"),
            (Decimal("1862967566.2"), "", "1,862,967,566"),
        ],
    )
    def test_a_count_is_whole_and_separated(self, value, noun, shown):
        assert count(value, noun) == shown

    def test_a_plural_may_be_irregular(self):
        assert count(2, "replica", "replicas") == f"2{NB}replicas"
        assert count(3, "person", "people") == f"3{NB}people"


class TestPercentEnergyDuration:
    @pytest.mark.parametrize(
        ("fraction", "shown"),
        [
            (Decimal("0.03"), f"3{NB}%"),
            (Decimal("0.0300"), f"3{NB}%"),
            (0.975, f"97.5{NB}%"),
            (Decimal("0.0025"), f"0.25{NB}%"),
            (1, f"100{NB}%"),
        ],
    )
    def test_a_fraction_reads_as_a_percentage(self, fraction, shown):
        assert percent(fraction) == shown

    @pytest.mark.parametrize(
        ("kwh", "shown"),
        [
            (128_100, f"128{NB}MWh"),  # issue 27: "128,100,000 Wh per completed training run"
            (Decimal("12.4"), f"12.4{NB}kWh"),
            (Decimal("0.85"), f"850{NB}Wh"),
            (3_100_000, f"3.1{NB}GWh"),
            (0, f"0{NB}Wh"),
        ],
    )
    def test_energy_picks_the_unit_that_keeps_it_readable(self, kwh, shown):
        assert energy(kwh) == shown

    @pytest.mark.parametrize(
        ("hours", "shown"),
        [
            (0.75, f"45{NB}min"),
            (3.5, f"3.5{NB}h"),
            (47.9, f"47.9{NB}h"),
            (237, f"9.88{NB}days"),
            (54221, f"2,259{NB}days"),
        ],
    )
    def test_a_duration_reads_in_minutes_hours_or_days(self, hours, shown):
        assert duration(hours) == shown

    @pytest.mark.parametrize(("ms", "shown"), [(111.2, f"111{NB}ms"), (8805, f"8.81{NB}s")])
    def test_a_latency_reads_in_ms_or_s(self, ms, shown):
        assert latency(ms) == shown


class TestProperties:
    @given(FIGURES)
    def test_no_formatter_writes_scientific_notation(self, value):
        for formatter in FORMATTERS:
            assert not SCIENTIFIC.search(formatter(value)), (formatter.__name__, value)

    @given(FIGURES)
    def test_unit_costs_keep_at_most_four_significant_figures_below_ten_thousand(self, value):
        text = unit_cost(value)
        if abs(Decimal(str(value))) < 10_000:
            assert significant_digits(text) <= 4, text

    @given(FIGURES)
    def test_money_has_two_decimals_below_ten_thousand_and_none_above(self, value):
        text = money(value, "USD")
        shown = Decimal(text.split(NB)[1].replace(",", ""))
        if abs(shown) >= 10_000:
            assert "." not in text
        else:
            assert re.fullmatch(r"USD\u00a0-?[\d,]+\.\d\d", text), text

    @given(FIGURES)
    def test_money_reads_back_within_half_a_unit_of_what_it_shows(self, value):
        shown = Decimal(money(value).replace(",", ""))
        exact = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        assert abs(shown - exact) <= Decimal("0.5")

    @given(FIGURES)
    def test_thousands_are_always_separated(self, value):
        for formatter in (money, unit_cost, number, count):
            whole = formatter(value).split(".")[0].lstrip("-")
            assert not re.search(r"\d{4}", whole), (formatter.__name__, value)


class TestLabels:
    @pytest.mark.parametrize(
        ("code", "vocabulary", "shown"),
        [
            ("HOPPER", None, "Hopper"),
            ("CDNA4", None, "CDNA 4"),
            ("RESERVED_1Y", None, "Reserved 1 year"),
            ("PARTIAL", None, "Partial"),
            ("NOT_APPLICABLE", None, "Not applicable"),
            ("IN_REVIEW", None, "In review"),
            ("REALTIME_INFERENCE", None, "Real-time inference"),
            ("TRAINING", "WorkloadType", "Pre-training"),
            ("TRAINING", costing.CostKind, "Training"),
            ("NO", "ChecklistAnswer.Answer", "No"),
            ("NO", engine.Fit, "Does not fit"),
            ("TIGHT", None, "Fits, tight"),
            ("TENSORRT_LLM", "Framework", "TensorRT-LLM"),
            ("procurement", None, "Procurement"),
            ("SUPERSEDE_OPENED", None, "Successor draft opened"),
            ("SOMETHING_NEW", None, "Something new"),
            ("", None, ""),
            (None, None, ""),
        ],
    )
    def test_a_code_reads_in_the_words_of_its_vocabulary(self, code, vocabulary, shown):
        assert label(code, vocabulary) == shown

    def test_an_engine_member_reads_as_its_value_would(self):
        assert label(engine.Architecture.AMPERE) == "Ampere"
        assert label(costing.PricingTerm.SPOT) == label("SPOT", "PricingTerm")

    def test_a_vocabulary_that_does_not_exist_is_an_error_not_a_guess(self):
        with pytest.raises(KeyError):
            label("YES", "NoSuchVocabulary")

    def test_every_engine_enum_a_page_may_show_has_words_for_every_value(self):
        """Each engine vocabulary is registered, and no value reads as its code."""
        for enum in (
            engine.WorkloadType, engine.Precision, engine.Optimizer, engine.Sharding,
            engine.DutyCycle, engine.Tooling, engine.ModelKind, engine.Architecture, engine.Fit,
            engine.Bound, engine.Framework, engine.SpeculativeMethod, costing.PricingTerm,
            costing.SuccessUnit, costing.OperatingBoundary, costing.OperatingModel,
            costing.LabourAllocation, costing.Basis, costing.CostKind,
        ):  # fmt: skip
            assert enum.__name__ in choices.VOCABULARIES, enum
            for member in enum:
                words = label(member, enum)
                assert words and "_" not in words, (enum.__name__, member, words)

    def test_values_two_vocabularies_word_differently_are_known(self):
        """A page names the vocabulary for these (a bare ``|label`` would read the code)."""
        assert set(choices.ambiguous_values()) <= {
            "TRAINING", "EVALUATION", "OFFLINE", "VLLM", "API", "APPROVED", "APPROVE", "NO",
        }  # fmt: skip


class TestTemplateFilters:
    def test_the_filters_read_as_the_functions(self):
        rendered = Template(
            "{% load formatting %}{{ m|money:'USD' }}|{{ r|rate:'USD / GPU-hour' }}|"
            "{{ u|unit_cost:'USD' }}|{{ c|count }}|{{ p|percent }}|{{ e|energy }}|"
            "{{ d|duration }}|{{ a|label }}|{{ n|label:'ChecklistAnswer.Answer' }}|"
            "{{ f|figure:'req/s' }}"
        ).render(
            Context(
                {
                    "m": Decimal("5120.7"),
                    "r": Decimal("2.19"),
                    "u": Decimal("0.000002616282601"),
                    "c": 6000,
                    "p": Decimal("0.03"),
                    "e": 128_100,
                    "d": 237,
                    "a": "HOPPER",
                    "n": "NO",
                    "f": Decimal("2.000"),
                }
            )
        )
        assert rendered.split("|") == [
            f"USD{NB}5,120.70",
            f"USD{NB}2.19 / GPU-hour",
            f"USD{NB}0.000002616",
            "6,000",
            f"3{NB}%",
            f"128{NB}MWh",
            f"9.88{NB}days",
            "Hopper",
            "No",
            f"2{NB}req/s",
        ]

    def test_no_figure_reads_a_dash(self):
        assert formatting.NONE == "—"
        rendered = Template("{% load formatting %}{{ x|money:'USD' }}{{ x|energy }}").render(
            Context({"x": None})
        )
        assert rendered == "——"
