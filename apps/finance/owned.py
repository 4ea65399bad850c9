"""The capex inputs of owned (bought) quotes as a decision record freezes them: each figure the
owned GPU-month was costed from (the quote's own, or the finance default it fell back to) and
the month's parts, in the reporting currency."""

from typing import Any

from apps.engine.costing import owned_gpu_month
from apps.quotes.models import Quote

from .fx import FxMissing
from .offers import quote_facts
from .state import Assumptions


def owned_hardware_inputs(quote_ids: list[int], assumptions: Assumptions) -> list[dict[str, Any]]:
    """One entry per owned quote with capex among ``quote_ids`` (costed with ``assumptions``,
    FX rates included). A quote whose currency has no rate is listed with its own figures only
    and the reason."""
    finance = assumptions.finance
    out: list[dict[str, Any]] = []
    owned = quote_facts(
        Quote.objects.filter(
            pk__in=quote_ids, pricing_term="OWNED", capex_per_gpu__isnull=False
        ).order_by("pk")
    )
    for facts in owned:
        entry: dict[str, Any] = {"quote_id": facts.pk, "quote_currency": facts.currency}
        try:
            month = owned_gpu_month(facts.terms(assumptions), finance)
        except FxMissing as exc:
            entry.update(
                capex_per_gpu=facts.capex_per_gpu,
                depreciation_months=facts.depreciation_months,
                not_costed=str(exc),
            )
            out.append(entry)
            continue
        entry.update(
            currency=finance.reporting_currency,
            capex_per_gpu=month.capex_per_gpu,
            depreciation_months=month.depreciation_months,
            power_kw_per_gpu=month.kw_per_gpu,
            pue=month.pue,
            electricity_per_kwh=month.electricity_per_kwh,
            hosting_per_kw_month=month.hosting_per_kw_month,
            ops_hours_per_month=month.ops_hours_per_month,
            labour_rate_per_hour=month.labour_rate_per_hour,
            from_finance_defaults=list(month.defaulted),
            depreciation_per_gpu_month=month.depreciation,
            power_per_gpu_month=month.power,
            hosting_per_gpu_month=month.hosting,
            operations_per_gpu_month=month.operations,
            total_per_gpu_month=month.total,
        )
        out.append(entry)
    return out
