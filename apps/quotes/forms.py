from decimal import Decimal
from typing import Any

from django import forms

from apps.engine.costing import PricingTerm

from .models import OWNED_FIELDS, ApiRoute, Provider, Quote


class DateInput(forms.DateInput):
    input_type = "date"


class QuoteForm(forms.ModelForm):  # type: ignore[type-arg]
    class Meta:
        model = Quote
        fields = [
            "provider", "gpu", "system", "gpus_per_node", "region", "pricing_term",
            "hourly_price_per_gpu", "currency", "storage_price_per_tb_month",
            "egress_price_per_gb", "network_monthly", "monthly_extras",
            "minimum_commitment_months", "quote_date", "valid_until", "source",
            "confidential_to", *OWNED_FIELDS,
        ]  # fmt: skip
        widgets = {"quote_date": DateInput(), "valid_until": DateInput()}

    #: Shown in their own fieldset ("Owned hardware"); the model's ``clean`` says which apply.
    owned_names = OWNED_FIELDS

    def __init__(self, *args: Any, teams: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["confidential_to"].queryset = teams  # type: ignore[attr-defined]
        gpu = self.fields["gpu"]
        gpu.queryset = gpu.queryset.order_by("slug")  # type: ignore[attr-defined]
        # An owned quote is costed from its capex: its hourly price may be left empty (0).
        price = self.fields["hourly_price_per_gpu"]
        price.required = False
        price.help_text = "Required unless the quote is owned (bought hardware)."

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("hourly_price_per_gpu") is None and "hourly_price_per_gpu" not in self.errors:
            if data.get("pricing_term") == PricingTerm.OWNED:
                data["hourly_price_per_gpu"] = Decimal(0)
            else:
                self.add_error("hourly_price_per_gpu", "This field is required.")
        if bool(data.get("gpu")) == bool(data.get("system")):
            self.add_error("gpu", "Give a catalog GPU or a system, not both.")
        start, end = data.get("quote_date"), data.get("valid_until")
        if start and end and end < start:
            self.add_error("valid_until", "Must not be before the quote date.")
        return data


class ApiRouteForm(forms.ModelForm):  # type: ignore[type-arg]
    class Meta:
        model = ApiRoute
        fields = [
            "provider", "model", "model_preset", "input_price_per_mtok",
            "output_price_per_mtok", "cached_input_price_per_mtok", "currency", "batch_discount",
            "rate_limit_rpm", "quote_date", "source",
        ]  # fmt: skip
        widgets = {"quote_date": DateInput()}


class QuoteImportForm(forms.Form):
    file = forms.FileField(help_text="CSV, one quote per row, with a header row.")


class ProviderForm(forms.ModelForm):  # type: ignore[type-arg]
    """A provider's name (unique, ignoring case) and website; saved by the service."""

    class Meta:
        model = Provider
        fields = ["name", "website"]
        help_texts = {
            "name": "As it should appear in tables and on decision records.",
            "website": "The provider's price page or home page (optional).",
        }
