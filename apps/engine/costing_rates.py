"""Rates behind the cost lines: the effective GPU-hour price of a quote, owned-hardware
economics, commitment length and default egress volume."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import (
    ROUND_HALF_EVEN,
    Context,
    Decimal,
    DivisionByZero,
    InvalidOperation,
    Overflow,
)

from apps.engine import money_text
from apps.engine.costing_constants import (
    BYTES_PER_GB,
    EGRESS_BYTES_PER_CLIP,
    EGRESS_BYTES_PER_EMBEDDING,
    EGRESS_BYTES_PER_IMAGE,
    EGRESS_BYTES_PER_TOKEN,
    HOST_KW_PER_GPU,
    HOURS_PER_MONTH,
    MONEY_QUANTUM,
    SPOT_INTERRUPTION_OVERHEAD,
    UNIT_COST_SIGNIFICANT_DIGITS,
    WATTS_PER_KW,
)
from apps.engine.costing_types import (
    ONE,
    ZERO,
    CostKind,
    Demand,
    FinanceAssumptions,
    PricingTerm,
    QuoteTerms,
)
from apps.engine.costing_work import Volumes
from apps.engine.types import EngineInputError, WorkloadType

_TERM_MONTHS = {PricingTerm.RESERVED_1Y: 12, PricingTerm.RESERVED_3Y: 36}

# Costing arithmetic runs in its own context, so a caller's decimal context cannot change results.
COSTING_CONTEXT = Context(
    prec=28, rounding=ROUND_HALF_EVEN, traps=[InvalidOperation, DivisionByZero, Overflow]
)


def money(x: Decimal) -> Decimal:
    """Quantize an amount to 4 dp (half-even)."""
    return x.quantize(MONEY_QUANTUM)


def share_text(share: Decimal) -> str:
    """A share of a bill or of the work as people write it: 0.05 -> "5 %", 0.025 -> "2.5 %"."""
    return f"{(share * 100).normalize():f} %"


def significant(x: Decimal) -> Decimal:
    """Round to UNIT_COST_SIGNIFICANT_DIGITS significant digits (half-even)."""
    if not x:
        return ZERO
    return x.quantize(Decimal(1).scaleb(x.adjusted() - UNIT_COST_SIGNIFICANT_DIGITS + 1))


@dataclass(frozen=True, kw_only=True, slots=True)
class OwnedGpuMonth:
    """One bought GPU for a month, by part, and the inputs it was costed from (``defaulted``
    names the inputs taken from the finance assumptions rather than the quote)."""

    depreciation: Decimal  # capex / depreciation months
    power: Decimal  # average kW x PUE x 730 h x electricity price
    hosting: Decimal  # kW x hosting per kW-month
    operations: Decimal  # datacentre hands-on hours x labour rate
    capex_per_gpu: Decimal
    depreciation_months: int
    kw_per_gpu: Decimal  # provisioned (hosting is rented by it)
    average_kw_per_gpu: Decimal  # drawn on average over the month (the energy bill)
    pue: Decimal
    electricity_per_kwh: Decimal
    hosting_per_kw_month: Decimal
    ops_hours_per_month: Decimal
    labour_rate_per_hour: Decimal
    defaulted: tuple[str, ...]

    @property
    def total(self) -> Decimal:
        return self.depreciation + self.power + self.hosting + self.operations


def owned_gpu_month(
    quote: QuoteTerms, finance: FinanceAssumptions, average_kw: Decimal | None = None
) -> OwnedGpuMonth:
    """The monthly cost of one GPU of an owned quote with capex: depreciation + power + hosting
    + operations. Provisioned draw (what hosting is rented by): the quote's kW per GPU, else the
    GPU's TDP plus the host's share (`HOST_KW_PER_GPU`). Energy: the quote's kW per GPU when it
    gives one, else ``average_kw`` (the energy model's average over the month at the candidate's
    utilisation, apps.engine.energy) when the caller has it, else the provisioned draw all
    month. PUE, electricity, hosting per kW-month and hands-on hours: the quote's, else the
    finance assumptions'. Operations are per GPU (hands-on work scales with servers)."""
    if quote.capex_per_gpu is None or quote.depreciation_months is None:
        raise EngineInputError("capex_per_gpu", "an owned quote needs capex and depreciation")
    defaulted: list[str] = []

    def pick(name: str, own: Decimal | None, default: Decimal) -> Decimal:
        if own is None:
            defaulted.append(name)
            return default
        return own

    if quote.power_kw_per_gpu is not None:
        kw = quote.power_kw_per_gpu
    else:
        defaulted.append("power_kw_per_gpu")
        tdp = quote.gpu_tdp_w if quote.gpu_tdp_w is not None else ZERO
        kw = tdp / WATTS_PER_KW + HOST_KW_PER_GPU
    drawn = kw if quote.power_kw_per_gpu is not None or average_kw is None else average_kw
    pue = pick("pue", quote.pue, finance.pue)
    electricity = pick(
        "electricity_per_kwh", quote.electricity_per_kwh, finance.power_price_per_kwh
    )
    hosting = pick("hosting_per_kw_month", quote.hosting_per_kw_month, finance.hosting_per_kw_month)
    hours = pick("ops_hours_per_month", quote.ops_hours_per_month, finance.ops_hours_per_gpu_month)
    return OwnedGpuMonth(
        depreciation=quote.capex_per_gpu / Decimal(quote.depreciation_months),
        power=drawn * pue * HOURS_PER_MONTH * electricity,
        hosting=kw * hosting,
        operations=hours * finance.labour_rate_per_hour,
        capex_per_gpu=quote.capex_per_gpu,
        depreciation_months=quote.depreciation_months,
        kw_per_gpu=kw,
        average_kw_per_gpu=drawn,
        pue=pue,
        electricity_per_kwh=electricity,
        hosting_per_kw_month=hosting,
        ops_hours_per_month=hours,
        labour_rate_per_hour=finance.labour_rate_per_hour,
        defaulted=tuple(defaulted),
    )


#: How the owned GPU-month's note names an input the quote left to the finance defaults.
DEFAULTED_WORDS = {
    "power_kw_per_gpu": "power a GPU",
    "pue": "PUE",
    "electricity_per_kwh": "electricity price",
    "hosting_per_kw_month": "hosting price",
    "ops_hours_per_month": "operations hours",
}


def owned_note(owned: OwnedGpuMonth, currency: str) -> str:
    """The owned GPU-month in words, with every input (a row's notes, the decision record);
    every amount in ``currency`` as the pages write money (apps.engine.money_text)."""

    def cash(amount: Decimal) -> str:
        return money_text.money(amount, currency)

    def per(amount: Decimal, unit: str) -> str:
        return money_text.rate(amount, currency, unit)

    defaulted = [DEFAULTED_WORDS.get(name, name) for name in owned.defaulted]
    defaults = f"; finance defaults for {', '.join(defaulted)}" if defaulted else ""
    modelled = owned.average_kw_per_gpu != owned.kw_per_gpu
    drawn = " on average (energy model at this candidate's utilisation)" if modelled else ""
    return (
        f"owned GPU: capex {cash(owned.capex_per_gpu)} / "
        f"{owned.depreciation_months} months = {cash(owned.depreciation)}; "
        f"power {owned.average_kw_per_gpu:.3f} kW{drawn} x PUE {owned.pue} x "
        f"{HOURS_PER_MONTH} h x {per(owned.electricity_per_kwh, 'kWh')} = "
        f"{cash(owned.power)}; hosting {owned.kw_per_gpu:.3f} kW x "
        f"{per(owned.hosting_per_kw_month, 'kW-month')} = "
        f"{cash(owned.hosting)}; operations {owned.ops_hours_per_month} h x "
        f"{per(owned.labour_rate_per_hour, 'h')} = "
        f"{cash(owned.operations)}; {cash(owned.total)} per GPU-month "
        f"({per(owned.total / HOURS_PER_MONTH, 'GPU-hour')}){defaults}"
    )


def gpu_hourly_rate(
    quote: QuoteTerms, finance: FinanceAssumptions, average_kw: Decimal | None = None
) -> tuple[Decimal, list[str]]:
    """The effective price of one GPU-hour under the quote, and how it was reached
    (``average_kw``: a bought GPU's modelled average draw, see ``owned_gpu_month``)."""
    price = quote.hourly_price_per_gpu
    if quote.is_bought:
        owned = owned_gpu_month(quote, finance, average_kw)
        return owned.total / HOURS_PER_MONTH, [owned_note(owned, finance.reporting_currency)]
    if quote.pricing_term is PricingTerm.SPOT:
        rate = price * (ONE + SPOT_INTERRUPTION_OVERHEAD)
        return rate, [
            f"spot: {price}/GPU-h x (1 + {SPOT_INTERRUPTION_OVERHEAD} interruption overhead)"
        ]
    return price, []


def commitment_months(quote: QuoteTerms, finance: FinanceAssumptions) -> int:
    """Months the quote binds the buyer to: the quote's minimum, or the term's own length
    (12 / 36 for reservations, the depreciation period for bought hardware)."""
    implied = _TERM_MONTHS.get(quote.pricing_term, 0)
    if quote.is_bought and quote.depreciation_months is not None:
        implied = quote.depreciation_months
    return max(quote.minimum_commitment_months, implied)


def egress_gb(demand: Demand, volumes: Volumes, kind: CostKind) -> Decimal:
    """The brief's egress, or a default from the outputs (`EGRESS_BYTES_PER_*`)."""
    if demand.egress_gb_per_month is not None:
        return demand.egress_gb_per_month
    if kind is CostKind.TRAINING:
        return ZERO
    if demand.workload_type is WorkloadType.VIDEO_GENERATION:
        return volumes.items * EGRESS_BYTES_PER_CLIP / BYTES_PER_GB
    if demand.workload_type is WorkloadType.IMAGE_GENERATION:
        return volumes.items * EGRESS_BYTES_PER_IMAGE / BYTES_PER_GB
    if demand.workload_type is WorkloadType.EMBEDDINGS:
        return volumes.items * EGRESS_BYTES_PER_EMBEDDING / BYTES_PER_GB
    return volumes.output_tokens * EGRESS_BYTES_PER_TOKEN / BYTES_PER_GB
