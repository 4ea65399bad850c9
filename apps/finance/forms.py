from decimal import Decimal
from typing import Any

from django import forms

from apps.core import bounds, formatting
from apps.core.currency import BASE_CURRENCY, Currency
from apps.core.forms import percent_field, trim_decimal_initials

from .assumptions import FALLBACKS, AssumptionValue, organisation_defaults
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
# Each field as the form labels it, with its unit (money is in the reporting currency; the
# shares are typed as percentages and get their "(%)" from apps.core.forms.percent_field).
FIELD_LABELS = {
    "reporting_currency": "Reporting currency",
    "labour_rate_per_hour": "Labour rate, per hour",
    "observability_share": "Observability, share of the monthly cost",
    "retry_rate": "Retry rate",
    "failure_rate": "Failure rate",
    "acceptance_rate": "Acceptance rate",
    "power_price_per_kwh": "Electricity price, per kWh",
    "pue": "Power usage effectiveness (PUE, ratio)",
    "hosting_per_kw_month": "Hosting, per kW a month",
    "ops_hours_per_gpu_month": "Operations hours per owned GPU (h a month)",
    "platform_hours_self_managed": "Platform hours per self-managed deployment (h a month)",
    "labour_allocation": "How platform labour is allocated",
    "platform_labour_pool_hours": "Platform team's hours (h a month)",
    "self_managed_gpu_hours_per_month": "Self-managed GPU-hours expected (a month)",
    "carbon_kg_per_kwh": "Carbon intensity (kg CO2e per kWh)",
    "serving_stack_share": "Serving stack, share of the GPU bill",
    "queue_overhead_share": "Media queue overhead, share of the GPU bill",
    "moderation_cost_per_image": "Moderation, per image",
    "moderation_cost_per_video_minute": "Moderation, per minute of video",
    "operator_review_share": "Operator review, share of renders",
    "operator_review_minutes_per_image": "Review time per image (minutes)",
    "operator_review_minutes_per_clip": "Review time per clip (minutes)",
    "operator_review_rate_per_hour": "Reviewer rate, per hour",
}
MONEY_FIELDS = frozenset(
    {
        "labour_rate_per_hour", "power_price_per_kwh", "hosting_per_kw_month",
        "moderation_cost_per_image", "moderation_cost_per_video_minute",
        "operator_review_rate_per_hour",
    }
)  # fmt: skip


def value_words(name: str, value: AssumptionValue) -> str:
    """An assumption's value as the form's help says it: 3 %, USD 115.00, 1.56, a choice."""
    if value in (None, ""):
        return "none"
    if name in SHARE_ASSUMPTIONS:
        return formatting.percent(value, 4)
    if name == "labour_allocation":
        return str(LabourAllocation(str(value)).label).lower()
    if name == "reporting_currency":
        return str(value)
    return formatting.number(value, 4)


class FinanceAssumptionsForm(forms.ModelForm):  # type: ignore[type-arg]
    """A brief's overrides; blank fields inherit (brief ← organisation ← built-in), and each
    field says what a blank gives it. Shares are typed and shown as percentages."""

    reporting_currency = forms.ChoiceField(choices=[INHERIT, *Currency.choices], required=False)
    #: Where a blank field's value comes from, in the help text.
    inherits_from = "the organisation default"

    class Meta:
        model = FinanceAssumptions
        fields = list(BRIEF_MOVES)
        help_texts = {name: f"Moves: {moves}." for name, moves in MOVES.items()}
        labels = FIELD_LABELS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in SHARE_ASSUMPTIONS & set(self.fields):
            self.fields[name] = percent_field(
                FinanceAssumptions, name, label=FIELD_LABELS[name], required=False,
                help_text=self.fields[name].help_text,
            )  # fmt: skip
        trim_decimal_initials(self)
        currency = self.blank_values().get("reporting_currency") or BASE_CURRENCY
        for name, field in self.fields.items():
            if name in MONEY_FIELDS:
                field.help_text = f"In the reporting currency ({currency}). {field.help_text}"
            blank = self.blank_values().get(name)
            field.help_text = f"{field.help_text} Blank: {value_words(name, blank)} " + (
                f"({self.inherits_from})."
            )
            if blank not in (None, "") and hasattr(field.widget, "input_type"):
                shown = value_words(name, blank).replace("\u00a0%", "")
                field.widget.attrs.setdefault("placeholder", shown)

    def blank_values(self) -> dict[str, AssumptionValue]:
        """What each field is when left blank: the organisation's default, else built-in."""
        if not hasattr(self, "_blank_values"):
            default = organisation_defaults()
            self._blank_values = {
                name: (getattr(default, name, None) if default is not None else None)
                if getattr(default, name, None) not in (None, "")
                else FALLBACKS.get(name)
                for name in FALLBACKS
            }
        return self._blank_values


class OrganisationAssumptionsForm(FinanceAssumptionsForm):
    """The organisation defaults, with how platform labour is allocated; each field shows the
    built-in value a blank keeps."""

    labour_allocation = forms.ChoiceField(
        choices=[("", "— built-in: per self-managed deployment —"), *LabourAllocation.choices],
        required=False,
        help_text=f"Moves: {MOVES['labour_allocation']}.",
        label=FIELD_LABELS["labour_allocation"],
    )
    inherits_from = "built in"

    class Meta(FinanceAssumptionsForm.Meta):
        fields = list(MOVES)

    def blank_values(self) -> dict[str, AssumptionValue]:
        return dict(FALLBACKS)


class FxRateForm(forms.Form):
    """One new FX rate (the page's form; the API checks the same through FxRateInputSerializer
    in apps.finance.api, and the service checks again)."""

    currency = forms.ChoiceField(choices=[c for c in Currency.choices if c[0] != BASE_CURRENCY])
    rate = forms.DecimalField(
        max_digits=FX_RATE_MAX_DIGITS,
        decimal_places=FX_RATE_DECIMAL_PLACES,
        label=f"Rate ({BASE_CURRENCY} per one unit of the currency)",
        help_text=f"Units of {BASE_CURRENCY} per one unit of the currency (JPY: 0.0067).",
    )
    as_of = forms.DateField(
        label="Valid from",
        help_text="The date the rate is valid from (YYYY-MM-DD), from 2000 to tomorrow.",
        validators=[bounds.plausible_date],
    )
    source = forms.CharField(
        max_length=FX_SOURCE_MAX_LENGTH, help_text="Where the rate comes from (e.g. ECB, 1 Dec)."
    )

    def clean_rate(self) -> Decimal:
        rate = self.cleaned_data["rate"]
        problem = bounds.fx_rate_problem(rate)
        if problem:
            raise forms.ValidationError(problem)
        return rate
