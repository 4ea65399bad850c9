import datetime
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils import timezone

from . import api_prices


class DateInput(forms.DateInput):
    input_type = "date"


class ApiPricesForm(forms.Form):
    """Which prices to look up in genai-prices: a provider (or all) and a date."""

    provider = forms.ChoiceField(
        required=False,
        help_text="Leave empty for every provider the list has.",
        error_messages={"invalid_choice": "genai-prices lists no provider %(value)s."},
    )
    date = forms.DateField(
        widget=DateInput(),
        help_text="The prices in effect on this day (not after today).",
        error_messages={"invalid": "Enter a date as YYYY-MM-DD."},
    )
    all_models = forms.BooleanField(
        required=False,
        label="Every model",
        help_text="Also the models that serve no catalog preset (no candidate table costs "
        "them until a preset is set on the route).",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["provider"]
        field.choices = [("", "Every provider"), *api_prices.provider_choices()]  # type: ignore[attr-defined]
        self.fields["date"].initial = timezone.localdate

    def clean_date(self) -> datetime.date:
        day: datetime.date = self.cleaned_data["date"]
        try:
            api_prices.check_date(day, today=timezone.localdate())
        except ValidationError as exc:
            raise ValidationError(exc.message_dict["date"]) from None
        return day
