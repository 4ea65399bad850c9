from typing import Any

from django import forms

from apps.core.currency import BASE_CURRENCY, Currency

from .models import (
    FX_RATE_DECIMAL_PLACES,
    FX_RATE_MAX_DIGITS,
    FX_SOURCE_MAX_LENGTH,
    ORGANISATION_ONLY,
    FinanceAssumptions,
    LabourAllocation,
)

# Which figures each assumption moves, shown beside it on the finance page.
MOVES = {
    "reporting_currency": "every figure (quotes in other currencies are converted)",
    "labour_rate_per_hour": "platform labour (and operator review without a reviewer rate)",
    "observability_share": "observability",
    "retry_rate": "retry waste",
    "failure_rate": "accepted outputs, failed renders, failed-run waste",
    "acceptance_rate": "accepted outputs, so every unit cost",
    # Owned hardware: the defaults of owned quotes that do not give their own figure.
    "power_price_per_kwh": "owned GPUs' power (buy)",
    "pue": "every GPU candidate's energy; owned GPUs' power (buy)",
    "hosting_per_kw_month": "owned GPUs' hosting (buy)",
    "ops_hours_per_gpu_month": "owned GPUs' operations (buy), at the labour rate",
    "platform_hours_self_managed": "each self-managed candidate's platform labour (per deployment)",
    "labour_allocation": "platform labour of every self-managed candidate",
    "platform_labour_pool_hours": "platform labour of self-managed candidates (shared)",
    "self_managed_gpu_hours_per_month": "each self-managed candidate's share of the pool (shared)",
    "carbon_kg_per_kwh": "every GPU candidate's kg CO2e a month",
    "serving_stack_share": "real-time candidates' serving stack",
    "queue_overhead_share": "media candidates' queue overhead",
    "moderation_cost_per_image": "image candidates' moderation",
    "moderation_cost_per_video_minute": "video candidates' moderation",
    "operator_review_share": "media candidates' operator review",
    "operator_review_minutes_per_image": "image candidates' operator review",
    "operator_review_minutes_per_clip": "video candidates' operator review",
    "operator_review_rate_per_hour": "media candidates' operator review",
}
# Each assumption's name in words (the model's verbose names read "Pue", "Hosting per kw month").
ASSUMPTION_LABELS = {
    "observability_share": "Observability, share of the monthly cost",
    "power_price_per_kwh": "Electricity price per kWh",
    "pue": "Power usage effectiveness (PUE)",
    "hosting_per_kw_month": "Hosting per kW a month",
    "ops_hours_per_gpu_month": "Operations hours per owned GPU a month",
    "carbon_kg_per_kwh": "Carbon intensity, kg CO2e per kWh",
}
# Assumptions that are a share (0.05): shown as a percentage.
SHARE_ASSUMPTIONS = frozenset(
    {
        "observability_share", "retry_rate", "failure_rate", "acceptance_rate",
        "serving_stack_share", "queue_overhead_share", "operator_review_share",
    }
)  # fmt: skip
# What a brief's override offers: the organisation-only fields are one decision for all briefs.
BRIEF_MOVES = {name: moves for name, moves in MOVES.items() if name not in ORGANISATION_ONLY}
INHERIT = ("", "— inherit —")


class FinanceAssumptionsForm(forms.ModelForm):  # type: ignore[type-arg]
    """A brief's overrides; blank fields inherit (brief ← organisation ← built-in)."""

    reporting_currency = forms.ChoiceField(choices=[INHERIT, *Currency.choices], required=False)

    class Meta:
        model = FinanceAssumptions
        fields = list(BRIEF_MOVES)
        help_texts = {name: f"Moves: {moves}" for name, moves in MOVES.items()}
        labels = ASSUMPTION_LABELS


class OrganisationAssumptionsForm(FinanceAssumptionsForm):
    """The organisation defaults, with how platform labour is allocated."""

    labour_allocation = forms.ChoiceField(
        choices=[("", "— built-in: per self-managed deployment —"), *LabourAllocation.choices],
        required=False,
        help_text=f"Moves: {MOVES['labour_allocation']}",
    )

    class Meta(FinanceAssumptionsForm.Meta):
        fields = list(MOVES)


class FxRateForm(forms.Form):
    """One new FX rate (the page's form; the API checks the same through FxRateInputSerializer
    in apps.finance.api, and the service checks again)."""

    currency = forms.ChoiceField(choices=[c for c in Currency.choices if c[0] != BASE_CURRENCY])
    rate = forms.DecimalField(
        max_digits=FX_RATE_MAX_DIGITS,
        decimal_places=FX_RATE_DECIMAL_PLACES,
        help_text=f"Units of {BASE_CURRENCY} per one unit of the currency (JPY: 0.0067)",
    )
    as_of = forms.DateField(help_text="The date the rate is valid from (YYYY-MM-DD)")
    source = forms.CharField(
        max_length=FX_SOURCE_MAX_LENGTH, help_text="Where the rate comes from (e.g. ECB, 1 Dec)"
    )

    def clean_rate(self) -> Any:
        rate = self.cleaned_data["rate"]
        if rate <= 0:
            raise forms.ValidationError("A rate must be greater than 0.")
        return rate
