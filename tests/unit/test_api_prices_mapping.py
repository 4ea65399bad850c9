"""From genai-prices objects (built here with the package's own types) to route fields: which
period is in effect on a date, batch discounts, cached input, tiers, rounding, what is left
out, and which catalog preset a listed model id serves."""

from datetime import date, time
from decimal import Decimal

import pytest
from genai_prices import types as gp

from apps.quotes.api_prices import listed_price, listed_route, preset_for, price_history
from apps.quotes.api_prices_text import figure, share

D = Decimal
JUNE, SEPT = date(2026, 6, 1), date(2026, 9, 1)


def model(prices, variants=None, model_id="meta-llama/Llama-3.1-8B-Instruct"):
    return gp.ModelInfo(
        id=model_id, match=gp.ClauseEquals(equals=model_id.lower()), prices=prices,
        price_variants=variants,
    )  # fmt: skip


def period(start=None, **prices):
    constraint = gp.StartDateConstraint(start_date=start) if start else None
    return gp.ConditionalPrice(constraint=constraint, prices=gp.ModelPrice(**prices))


def batch(start=None, **prices):
    constraint = gp.StartDateConstraint(start_date=start) if start else None
    return gp.PriceVariant(
        when={"processing": "batch"}, prices=gp.ModelPrice(**prices), constraint=constraint
    )


CHANGING = model(
    [
        period(input_mtok=D("0.10"), output_mtok=D("0.30"), cache_read_mtok=D("0.05")),
        period(JUNE, input_mtok=D("0.08"), output_mtok=D("0.24"), cache_read_mtok=D("0.04")),
    ],
    [batch(SEPT, input_mtok=D("0.04"), output_mtok=D("0.12"))],
)


class TestThePriceOnADate:
    def test_one_price_for_all_time(self):
        price = listed_price(
            model(gp.ModelPrice(input_mtok=D("1.5"), output_mtok=D("6"))), date(2026, 1, 1)
        )
        assert price is not None
        assert (price.input_price_per_mtok, price.output_price_per_mtok) == (D("1.5"), D("6"))
        assert price.cached_input_price_per_mtok is None
        assert price.batch_discount == 0
        assert price.effective_from is None

    def test_before_a_price_change_the_first_period(self):
        price = listed_price(CHANGING, date(2026, 5, 31))
        assert price.figures() == (D("0.10"), D("0.30"), D("0.05"), D(0))
        assert price.effective_from is None

    def test_from_its_start_date_the_new_period(self):
        price = listed_price(CHANGING, JUNE)
        assert price.figures() == (D("0.08"), D("0.24"), D("0.04"), D(0))
        assert price.effective_from == JUNE

    def test_the_batch_price_as_a_discount_from_its_start_date(self):
        price = listed_price(CHANGING, SEPT)
        assert price.batch_discount == D("0.5")
        assert price.effective_from == SEPT  # the latest start among the prices used

    def test_a_date_before_the_models_first_price_has_no_price(self):
        launched = model([period(JUNE, input_mtok=D(1), output_mtok=D(2))])
        assert listed_price(launched, date(2026, 5, 31)) is None
        assert listed_price(launched, JUNE).effective_from == JUNE

    def test_time_of_day_prices_are_windows_and_the_route_price_their_hour_weighting(self):
        # DeepSeek's shape: the unconstrained price is the off-peak one (16:30-00:30 UTC, as
        # the package reads a request then: the last active price wins), the constrained one
        # the standard price for the other 16 hours.
        standard = gp.ConditionalPrice(
            constraint=gp.TimeOfDateConstraint(start_time=time(0, 30), end_time=time(16, 30)),
            prices=gp.ModelPrice(input_mtok=D("0.27"), output_mtok=D("1.10")),
        )
        price = listed_price(
            model([period(input_mtok=D("0.135"), output_mtok=D("0.55")), standard]), SEPT
        )
        assert [(w["start"], w["end"], w["hours"]) for w in price.windows] == [
            ("16:30", "00:30", "8"), ("00:30", "16:30", "16"),
        ]  # fmt: skip
        assert [w["output_price_per_mtok"] for w in price.windows] == ["0.55", "1.1"]
        # (0.135 x 8 + 0.27 x 16) / 24 = 0.225; (0.55 x 8 + 1.10 x 16) / 24 = 0.91667.
        assert (price.input_price_per_mtok, price.output_price_per_mtok) == (
            D("0.225"), D("0.9167"),
        )  # fmt: skip
        assert any(note.startswith("hour-of-day prices, weighted") for note in price.notes)

    def test_a_price_the_same_all_day_has_no_windows(self):
        assert listed_price(CHANGING, SEPT).windows == ()

    def test_unequal_batch_discounts_keep_the_smaller(self):
        price = listed_price(
            model(
                gp.ModelPrice(input_mtok=D(1), output_mtok=D(4)),
                [batch(input_mtok=D("0.5"), output_mtok=D("3"))],
            ),
            SEPT,
        )
        assert price.batch_discount == D("0.25")
        assert any("smaller" in note for note in price.notes)

    def test_other_request_contexts_are_not_batch(self):
        flex = gp.PriceVariant(
            when={"service_tier": "flex"}, prices=gp.ModelPrice(input_mtok=D("0.5"))
        )
        price = listed_price(model(gp.ModelPrice(input_mtok=D(1), output_mtok=D(4)), [flex]), SEPT)
        assert price.batch_discount == 0


class TestWhatARouteStores:
    def test_a_tiered_price_is_its_base_with_a_note(self):
        tiered = gp.TieredPrices(base=D(3), tiers=[gp.Tier(start=200_000, price=D(6))])
        price = listed_price(model(gp.ModelPrice(input_mtok=tiered, output_mtok=D(15))), SEPT)
        assert price.input_price_per_mtok == D(3)
        assert any("200,000" in note for note in price.notes)

    def test_float_noise_is_taken_off_and_more_than_4_decimals_rounded_with_a_note(self):
        price = listed_price(
            model(
                gp.ModelPrice(
                    input_mtok=D(0.18000000000000002),
                    output_mtok=D("0.68"),
                    cache_read_mtok=D("0.00255"),
                )
            ),
            SEPT,
        )
        assert price.input_price_per_mtok == D("0.18")
        assert price.cached_input_price_per_mtok == D("0.0026")
        assert price.notes == ("the cached-input price 0.00255 is rounded to 0.0026",)

    @pytest.mark.parametrize(
        "prices",
        [
            {"input_mtok": D(0), "output_mtok": D(0)},  # a free tier
            {"output_image_mtok": D(30)},  # not priced per input and output token
            {"input_mtok": D(1)},
        ],
    )
    def test_free_or_not_per_token_is_left_out(self, prices):
        assert listed_price(model(gp.ModelPrice(**prices)), SEPT) is None

    def test_a_listed_route_names_provider_model_preset_and_history(self):
        provider = gp.Provider(
            id="acme", name="Acme AI", api_pattern="acme", pricing_urls=["https://acme.example/p"],
            models=[CHANGING],
        )  # fmt: skip
        route = listed_route(provider, CHANGING, date(2026, 12, 1))
        assert (route.provider_name, route.provider_url) == ("Acme AI", "https://acme.example/p")
        assert (route.model, route.model_preset) == (CHANGING.id, "llama-3.1-8b")
        assert [p.effective_from for p in route.history] == [None, JUNE, SEPT]
        assert route.history[-1] == route.price


class TestHistory:
    def test_every_period_started_by_the_date_oldest_first(self):
        assert [p.effective_from for p in price_history(CHANGING, date(2026, 7, 1))] == [
            None,
            JUNE,
        ]

    def test_a_period_that_repeats_the_figures_before_it_is_no_change(self):
        same = model(
            [
                period(input_mtok=D(1), output_mtok=D(2)),
                period(JUNE, input_mtok=D(1), output_mtok=D(2)),
            ]
        )
        assert [p.effective_from for p in price_history(same, SEPT)] == [None]


class TestPresets:
    @pytest.mark.parametrize(
        ("model_id", "preset"),
        [
            ("openai/gpt-oss-120b", "gpt-oss-120b"),
            ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
            ("@cf/meta/llama-3.1-8b-instruct-fp8", "llama-3.1-8b"),
            ("meta-llama/Llama-2-13b-chat-hf", "llama-2-13b"),
            ("meta-llama/llama-4-maverick-17b-128e-instruct", "llama-4-maverick"),
            ("Meta-Llama-3.1-405B-Instruct", "llama-3.1-405b"),
            ("google/gemma-3-27b-it", "gemma-3-27b"),
            ("deepseek-reasoner", "deepseek-r1"),
            ("openai/gpt-oss-20b:free", "gpt-oss-20b"),
            ("llama-3.1-8b-instant", "llama-3.1-8b"),
            ("llama-3.1-70b-versatile", "llama-3.1-70b"),
            # Another model, not a serving variant of a preset's weights: no preset.
            ("deepseek/deepseek-r1-distill-llama-70b", ""),
            ("microsoft/phi-4-mini-instruct", ""),
            ("qwen/qwen3-235b-a22b-thinking-2507", ""),
            ("gpt-4o", ""),
            ("llama-3.2-90b-vision-preview", ""),
        ],
    )
    def test_only_exact_names_after_the_documented_qualifiers(self, model_id, preset):
        assert preset_for(model_id) == preset


class TestInWords:
    def test_prices_have_two_decimals_at_least_and_discounts_are_percentages(self):
        assert [figure(D(x)) for x in ("0.2", "0.0375", "1250", "0.10")] == [
            "0.20", "0.0375", "1,250.00", "0.10",
        ]  # fmt: skip
        assert [share(D(x)) for x in ("0.5000", "0.125", "0")] == ["50%", "12.5%", "0%"]
        assert figure(None) == share(None) == "—"


class TestThePublishedList:
    """genai-prices 0.2.3 as installed (its own price list, read through the package)."""

    def test_deepseek_reasoner_is_costed_at_its_hour_weighted_price(self):
        from genai_prices import data_snapshot

        deepseek = next(p for p in data_snapshot.get_snapshot().providers if p.id == "deepseek")
        reasoner = next(m for m in deepseek.models if m.id == "deepseek-reasoner")
        price = listed_price(reasoner, date(2026, 12, 1))
        # 16 h at 0.55 / 2.19 (00:30-16:30 UTC) and 8 h off-peak at 0.135 / 0.55.
        assert (price.input_price_per_mtok, price.output_price_per_mtok) == (
            D("0.4117"), D("1.6433"),
        )  # fmt: skip
        assert {(w["start"], w["end"], w["input_price_per_mtok"], w["output_price_per_mtok"])
                for w in price.windows} == {
            ("00:30", "16:30", "0.55", "2.19"), ("16:30", "00:30", "0.135", "0.55"),
        }  # fmt: skip
