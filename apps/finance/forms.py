from typing import Any

from django import forms

from apps.core.currency import Currency

from .models import FinanceAssumptions

# Which figures each assumption moves, shown beside it on the finance page.
MOVES = {
    "reporting_currency": "every figure (quotes in other currencies are converted)",
    "labour_rate_per_hour": "platform_labour, operator_review",
    "observability_share": "observability",
    "retry_rate": "retry_waste",
    "failure_rate": "accepted outputs, failed_renders, failed_run_waste",
    "acceptance_rate": "accepted outputs, so every unit cost",
    "fx_rates": "every row quoted in another currency",
    "amortisation_years": "owned capacity (buy), break-even with buying",
    "power_price_per_kwh": "owned capacity (buy)",
    "hosting_cost_per_gpu_month": "owned capacity (buy)",
}


class FinanceAssumptionsForm(forms.ModelForm):  # type: ignore[type-arg]
    """Blank fields inherit (brief ← organisation ← built-in)."""

    reporting_currency = forms.ChoiceField(
        choices=[("", "— inherit —"), *Currency.choices], required=False
    )

    class Meta:
        model = FinanceAssumptions
        fields = list(MOVES)
        help_texts = {name: f"Moves: {moves}" for name, moves in MOVES.items()}

    def clean_fx_rates(self) -> dict[str, Any]:
        rates = self.cleaned_data.get("fx_rates") or {}
        if not isinstance(rates, dict):
            raise forms.ValidationError('Give rates as {"EUR": "1.08"}.')
        for code, rate in rates.items():
            if code not in Currency.values:
                raise forms.ValidationError(f"Unknown currency {code!r}.")
            try:
                if float(rate) <= 0:
                    raise ValueError
            except (TypeError, ValueError):
                raise forms.ValidationError(f"Rate for {code} must be a positive number.") from None
        return {code: str(rate) for code, rate in rates.items()}
