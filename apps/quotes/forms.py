from decimal import Decimal
from typing import Any

from django import forms

from apps.catalog.selectors import preset_choices
from apps.core.forms import percent_field, trim_decimal_initials
from apps.engine.costing import PricingTerm

from .models import OWNED_FIELDS, ApiRoute, Provider, Quote

# The words and units a person reads for each quote field (money is in the quote's currency,
# chosen beside the price). The model keeps its own names and validators.
QUOTE_LABELS = {
    "provider": "Provider",
    "gpu": "GPU (from the catalog)",
    "system": "System (instead of a GPU)",
    "gpus_per_node": "GPUs per node",
    "region": "Region",
    "pricing_term": "Pricing term",
    "hourly_price_per_gpu": "Price per GPU-hour",
    "currency": "Currency",
    "storage_price_per_tb_month": "Storage, per TB a month",
    "egress_price_per_gb": "Egress, per GB",
    "network_monthly": "Private network, a month",
    "monthly_extras": "Support and other fees, a month",
    "minimum_commitment_months": "Minimum commitment (months)",
    "quote_date": "Quote date",
    "valid_until": "Valid until",
    "source": "Source",
    "confidential_to": "Confidential to team",
    "capex_per_gpu": "Purchase price per GPU (capex)",
    "depreciation_months": "Depreciation (months)",
    "power_kw_per_gpu": "Power per GPU (kW)",
    "pue": "Power usage effectiveness (PUE, ratio)",
    "electricity_per_kwh": "Electricity, per kWh",
    "hosting_per_kw_month": "Hosting, per kW a month",
    "ops_hours_per_month": "Hands-on hours per GPU (h a month)",
}
IN_QUOTE_CURRENCY = " In the quote's currency."
QUOTE_HELP = {
    "provider": "Not listed? Add it on the providers page first.",
    "gpu": "The GPU quoted; or choose a system below for a whole node or rack.",
    "system": "A node or rack-scale system (HGX, DGX, NVL72) quoted as a whole.",
    "gpus_per_node": "The most GPUs one replica may span on this offer (8 for an HGX node).",
    "region": "As the provider names it (us-east, eu-west, Frankfurt DC).",
    "pricing_term": "On demand, spot, reserved, dedicated, marketplace or owned (bought).",
    "hourly_price_per_gpu": "Per GPU, per hour."
    + IN_QUOTE_CURRENCY
    + " Required unless the quote is owned (bought hardware).",
    "storage_price_per_tb_month": "0 when included." + IN_QUOTE_CURRENCY,
    "egress_price_per_gb": "Data out of the provider; 0 when free." + IN_QUOTE_CURRENCY,
    "network_monthly": "Private network or interconnect fees." + IN_QUOTE_CURRENCY,
    "monthly_extras": "Support, licences and other fixed monthly fees." + IN_QUOTE_CURRENCY,
    "minimum_commitment_months": "0 for no commitment; 12 for a one-year reservation.",
    "valid_until": "Blank: valid until it is older than the organisation's quote age limit.",
    "confidential_to": "Visible only to this team (quotes under NDA).",
    "capex_per_gpu": "Per GPU, its share of the server and network included." + IN_QUOTE_CURRENCY,
    "depreciation_months": "Months the purchase is written off over (36 to 60 is usual).",
    "power_kw_per_gpu": "Drawn per GPU with its host's share. Blank: the GPU's TDP plus "
    "the host's share.",
    "pue": "Facility power over IT power (1.56 is the industry average). Blank: the finance "
    "default.",
    "electricity_per_kwh": "Blank: the finance default." + IN_QUOTE_CURRENCY,
    "hosting_per_kw_month": "Colocation per kW of IT load. Blank: the finance default."
    + IN_QUOTE_CURRENCY,
    "ops_hours_per_month": "Datacentre hands-on hours. Blank: the finance default.",
}
API_ROUTE_LABELS = {
    "provider": "Provider",
    "model": "Model (as the provider names it)",
    "model_preset": "Serves the catalog model",
    "input_price_per_mtok": "Price per 1M input tokens",
    "output_price_per_mtok": "Price per 1M output tokens",
    "cached_input_price_per_mtok": "Price per 1M cached input tokens",
    "currency": "Currency",
    "batch_discount": "Batch discount",
    "rate_limit_rpm": "Rate limit (requests a minute)",
    "quote_date": "Price date",
    "source": "Source",
}
API_ROUTE_HELP = {
    "model": "The model id the provider's API takes (llama-3.1-70b-instruct).",
    "model_preset": "The catalog model the route serves: its briefs are costed on it.",
    "input_price_per_mtok": "In the route's currency.",
    "output_price_per_mtok": "In the route's currency.",
    "cached_input_price_per_mtok": "Prompt-cache reads, if priced apart. In the route's currency.",
    "batch_discount": "Off the price for batch jobs: 50 means half price.",
    "rate_limit_rpm": "Blank: no limit stated.",
    "source": "The price page or who quoted it.",
}


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
        labels = QUOTE_LABELS
        help_texts = QUOTE_HELP

    #: Shown in their own fieldset ("Owned hardware"), only for an owned quote (the page's
    #: script hides it for every other term); the model's ``clean`` says which apply.
    owned_names = OWNED_FIELDS

    def __init__(self, *args: Any, teams: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["confidential_to"].queryset = teams  # type: ignore[attr-defined]
        gpu = self.fields["gpu"]
        gpu.queryset = gpu.queryset.order_by("slug")  # type: ignore[attr-defined]
        # An owned quote is costed from its capex: its hourly price may be left empty (0).
        self.fields["hourly_price_per_gpu"].required = False
        trim_decimal_initials(self)

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
        labels = API_ROUTE_LABELS
        help_texts = API_ROUTE_HELP

    batch_discount = percent_field(
        ApiRoute, "batch_discount", label=API_ROUTE_LABELS["batch_discount"],
        help_text=API_ROUTE_HELP["batch_discount"], required=False,
    )  # fmt: skip

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The catalog's models by name (the preset's slug is what is stored).
        self.fields["model_preset"] = forms.ChoiceField(
            choices=[("", "— none —"), *preset_choices()],
            required=False,
            label=API_ROUTE_LABELS["model_preset"],
            help_text=API_ROUTE_HELP["model_preset"],
        )
        trim_decimal_initials(self)

    def clean_batch_discount(self) -> Decimal:
        return self.cleaned_data.get("batch_discount") or Decimal(0)


class QuoteImportForm(forms.Form):
    file = forms.FileField(help_text="CSV, one quote per row, with a header row.")


class ProviderForm(forms.ModelForm):  # type: ignore[type-arg]
    """A provider's name (unique, ignoring case) and website; saved by the service."""

    class Meta:
        model = Provider
        fields = ["name", "website"]
        labels = {"name": "Provider name", "website": "Website"}
        help_texts = {
            "name": "As it should appear in tables and on decision records.",
            "website": "The provider's price page or home page (optional).",
        }
