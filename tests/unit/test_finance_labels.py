"""The finance page's rewording of API texts (apps.finance.labels, lines.currency_first):
quotes by their words, amounts with their currency first, as every figure on the page is
written."""

from apps.finance.labels import GONE, offers_in_words, quote_ids_in
from apps.finance.lines import currency_first


def test_an_engine_sentence_puts_the_currency_first_and_keeps_the_digits():
    assert currency_first("Rent on demand: 6.828 USD per 1M accepted tokens (392.2% more).") == (
        "Rent on demand: USD\u00a06.828 per 1M accepted tokens (392.2% more)."
    )
    assert currency_first("between 1,234.5 EUR and 7 JPY") == (
        "between EUR\u00a01,234.5 and JPY\u00a07"
    )


def test_a_plan_reason_names_quotes_in_words_and_writes_money_as_money():
    reason = (
        "separate pools cost 7,635.34 USD a month, more than serving colocated on quote #2 "
        "(6,117.67 USD); quote #9 is gone"
    )
    assert quote_ids_in(reason) == [2, 9]
    words = offers_in_words(reason, {2: "Neocloud B · NVIDIA H100 SXM5 · On demand"})
    assert words == (
        "separate pools cost USD\u00a07,635.34 a month, more than serving colocated on "
        f"Neocloud B · NVIDIA H100 SXM5 · On demand (USD\u00a06,117.67); {GONE} is gone"
    )


def test_only_a_currency_is_moved_not_a_gpu_or_a_precision():
    text = "1 replica x 1 GPU capacity (TP1), 32 in flight at 8 FP8; 115 USD/h"
    assert currency_first(text) == (
        "1 replica x 1 GPU capacity (TP1), 32 in flight at 8 FP8; USD\u00a0115/h"
    )
