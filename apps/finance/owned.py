"""The capex inputs of owned (bought) quotes as a decision record freezes them: each figure the
owned GPU-month was costed from (the quote's own, or the finance default it fell back to) and
the month's parts, in the reporting currency."""

from typing import Any

from apps.engine.costing import owned_gpu_month
from apps.quotes.models import Quote

from .assumptions import engine_finance
from .candidates import QUOTE_FACTS, FxMissing, quote_terms


def owned_hardware_inputs(quote_ids: list[int], values: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per owned quote with capex among ``quote_ids`` (``values``: the resolved
    assumptions, FX rates included). A quote whose currency has no rate is listed with its own
    figures only and the reason."""
    finance = engine_finance(values)
    out: list[dict[str, Any]] = []
    facts_list = (
        Quote.objects.filter(pk__in=quote_ids, pricing_term="OWNED", capex_per_gpu__isnull=False)
        .order_by("pk")
        .values(*QUOTE_FACTS)
    )
    for facts in facts_list:
        entry: dict[str, Any] = {"quote_id": facts["pk"], "quote_currency": facts["currency"]}
        try:
            owned = owned_gpu_month(quote_terms(facts, values), finance)
        except FxMissing as exc:
            entry.update(
                capex_per_gpu=facts["capex_per_gpu"],
                depreciation_months=facts["depreciation_months"],
                not_costed=str(exc),
            )
            out.append(entry)
            continue
        entry.update(
            currency=finance.reporting_currency,
            capex_per_gpu=owned.capex_per_gpu,
            depreciation_months=owned.depreciation_months,
            power_kw_per_gpu=owned.kw_per_gpu,
            pue=owned.pue,
            electricity_per_kwh=owned.electricity_per_kwh,
            hosting_per_kw_month=owned.hosting_per_kw_month,
            ops_hours_per_month=owned.ops_hours_per_month,
            labour_rate_per_hour=owned.labour_rate_per_hour,
            from_finance_defaults=list(owned.defaulted),
            depreciation_per_gpu_month=owned.depreciation,
            power_per_gpu_month=owned.power,
            hosting_per_gpu_month=owned.hosting,
            operations_per_gpu_month=owned.operations,
            total_per_gpu_month=owned.total,
        )
        out.append(entry)
    return out
