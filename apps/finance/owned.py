"""The capex inputs of owned (bought) quotes as a decision record freezes them: each figure the
owned GPU-month was costed from (the quote's own, or the finance default it fell back to) and
the month's parts, in the reporting currency."""

from decimal import Decimal
from typing import NotRequired, TypedDict

from apps.engine.costing import owned_gpu_month
from apps.quotes.models import Quote

from .fx import FxMissing
from .offers import quote_facts
from .state import Assumptions


class OwnedHardware(TypedDict):
    """One owned quote's capex inputs. Costed: every key but ``not_costed``, amounts in the
    reporting ``currency``; not costed (no FX rate for its currency): the quote's own capex and
    depreciation months, and ``not_costed`` says why. A snapshot freezes the amounts as
    strings."""

    quote_id: int
    quote_currency: str
    capex_per_gpu: Decimal | None
    depreciation_months: int | None
    not_costed: NotRequired[str]
    currency: NotRequired[str]
    power_kw_per_gpu: NotRequired[Decimal]
    pue: NotRequired[Decimal]
    electricity_per_kwh: NotRequired[Decimal]
    hosting_per_kw_month: NotRequired[Decimal]
    ops_hours_per_month: NotRequired[Decimal]
    labour_rate_per_hour: NotRequired[Decimal]
    from_finance_defaults: NotRequired[list[str]]  # the figures the quote did not give
    depreciation_per_gpu_month: NotRequired[Decimal]
    power_per_gpu_month: NotRequired[Decimal]
    hosting_per_gpu_month: NotRequired[Decimal]
    operations_per_gpu_month: NotRequired[Decimal]
    total_per_gpu_month: NotRequired[Decimal]


def owned_hardware_inputs(quote_ids: list[int], assumptions: Assumptions) -> list[OwnedHardware]:
    """One entry per owned quote with capex among ``quote_ids`` (costed with ``assumptions``,
    FX rates included). A quote whose currency has no rate is listed with its own figures only
    and the reason."""
    finance = assumptions.finance
    out: list[OwnedHardware] = []
    owned = quote_facts(
        Quote.objects.filter(
            pk__in=quote_ids, pricing_term="OWNED", capex_per_gpu__isnull=False
        ).order_by("pk")
    )
    for facts in owned:
        try:
            month = owned_gpu_month(facts.terms(assumptions), finance)
        except FxMissing as exc:
            out.append(
                {
                    "quote_id": facts.pk,
                    "quote_currency": facts.currency,
                    "capex_per_gpu": facts.capex_per_gpu,
                    "depreciation_months": facts.depreciation_months,
                    "not_costed": str(exc),
                }
            )
            continue
        out.append(
            {
                "quote_id": facts.pk,
                "quote_currency": facts.currency,
                "currency": finance.reporting_currency,
                "capex_per_gpu": month.capex_per_gpu,
                "depreciation_months": month.depreciation_months,
                "power_kw_per_gpu": month.kw_per_gpu,
                "pue": month.pue,
                "electricity_per_kwh": month.electricity_per_kwh,
                "hosting_per_kw_month": month.hosting_per_kw_month,
                "ops_hours_per_month": month.ops_hours_per_month,
                "labour_rate_per_hour": month.labour_rate_per_hour,
                "from_finance_defaults": list(month.defaulted),
                "depreciation_per_gpu_month": month.depreciation,
                "power_per_gpu_month": month.power,
                "hosting_per_gpu_month": month.hosting,
                "operations_per_gpu_month": month.operations,
                "total_per_gpu_month": month.total,
            }
        )
    return out
