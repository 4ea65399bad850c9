"""A share typed and shown as a percentage (apps.core.forms.PercentField): 3 means 3 %, the
service gets 0.03, and a refusal speaks in percent."""

from decimal import Decimal

import pytest
from django import forms

from apps.core.forms import PercentField, form_error_list


class ShareForm(forms.Form):
    retry_rate = PercentField(
        min_share=Decimal(0), max_share=Decimal("0.9999"), required=False, label="Retry rate (%)"
    )


@pytest.mark.parametrize(
    ("typed", "share"),
    [("3", Decimal("0.03")), ("3 %", Decimal("0.03")), ("12.5", Decimal("0.125")), ("", None)],
)
def test_a_percentage_typed_is_kept_as_its_share(typed, share):
    form = ShareForm({"retry_rate": typed})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["retry_rate"] == share


def test_a_stored_share_is_shown_as_a_percentage():
    form = ShareForm(initial={"retry_rate": Decimal("0.0300")})
    assert 'value="3"' in str(form["retry_rate"])


def test_a_refusal_reads_in_percent_not_as_a_share():
    form = ShareForm({"retry_rate": "100"})
    assert not form.is_valid()
    assert form.errors["retry_rate"] == ["At most 99.99\u00a0%."]


def test_errors_are_listed_for_the_top_of_the_page_with_their_field():
    form = ShareForm({"retry_rate": "-1"})
    form.is_valid()
    assert form_error_list(form) == [
        {"label": "Retry rate (%)", "message": "At least 0\u00a0%.", "anchor": "id_retry_rate"}
    ]


def test_a_stored_decimal_shows_as_it_was_typed_not_padded():
    from apps.core.forms import plain_decimal

    assert plain_decimal(Decimal("6.9800")) == "6.98"
    assert plain_decimal(Decimal("0.0000")) == "0"
    assert plain_decimal(Decimal("1E+1")) == "10"
    assert plain_decimal(Decimal("34000.00")) == "34000"
