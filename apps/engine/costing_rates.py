"""Rates behind the cost lines: the effective GPU-hour price of a quote, owned-hardware
economics, commitment length and default egress volume."""

from __future__ import annotations

from decimal import (
    ROUND_CEILING,
    ROUND_HALF_EVEN,
    Context,
    Decimal,
    DivisionByZero,
    InvalidOperation,
    Overflow,
)

from apps.engine.costing_constants import (
    BYTES_PER_GB,
    EGRESS_BYTES_PER_CLIP,
    EGRESS_BYTES_PER_EMBEDDING,
    EGRESS_BYTES_PER_IMAGE,
    EGRESS_BYTES_PER_TOKEN,
    HOURS_PER_MONTH,
    MONEY_QUANTUM,
    MONTHS_PER_YEAR,
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
from apps.engine.types import WorkloadType

_TERM_MONTHS = {PricingTerm.RESERVED_1Y: 12, PricingTerm.RESERVED_3Y: 36}

# Costing arithmetic runs in its own context, so a caller's decimal context cannot change results.
COSTING_CONTEXT = Context(
    prec=28, rounding=ROUND_HALF_EVEN, traps=[InvalidOperation, DivisionByZero, Overflow]
)


def money(x: Decimal) -> Decimal:
    """Quantize an amount to 4 dp (half-even)."""
    return x.quantize(MONEY_QUANTUM)


def significant(x: Decimal) -> Decimal:
    """Round to UNIT_COST_SIGNIFICANT_DIGITS significant digits (half-even)."""
    if not x:
        return ZERO
    return x.quantize(Decimal(1).scaleb(x.adjusted() - UNIT_COST_SIGNIFICANT_DIGITS + 1))


def owned_monthly_cost_per_gpu(
    *, capex_per_gpu: Decimal, gpu_tdp_w: Decimal | None, finance: FinanceAssumptions
) -> Decimal:
    """One owned GPU for a month: capex / (amortisation_years x 12)
    + TDP / 1000 x PUE x 730 h x power price (powered all month) + hosting per GPU-month."""
    amortised = capex_per_gpu / (finance.amortisation_years * MONTHS_PER_YEAR)
    tdp = gpu_tdp_w if gpu_tdp_w is not None else ZERO
    power = tdp / WATTS_PER_KW * finance.pue * HOURS_PER_MONTH * finance.power_price_per_kwh
    return amortised + power + finance.hosting_cost_per_gpu_month


def gpu_hourly_rate(quote: QuoteTerms, finance: FinanceAssumptions) -> tuple[Decimal, list[str]]:
    """The effective price of one GPU-hour under the quote, and how it was reached."""
    price = quote.hourly_price_per_gpu
    if quote.pricing_term is PricingTerm.OWNED and quote.capex_per_gpu is not None:
        monthly = owned_monthly_cost_per_gpu(
            capex_per_gpu=quote.capex_per_gpu, gpu_tdp_w=quote.gpu_tdp_w, finance=finance
        )
        notes = [
            f"owned: capex {quote.capex_per_gpu} / {finance.amortisation_years * 12} months"
            f" + power ({quote.gpu_tdp_w or 0} W x PUE {finance.pue} x 730 h x "
            f"{finance.power_price_per_kwh}/kWh) + hosting {finance.hosting_cost_per_gpu_month}"
            f" = {monthly:.2f} per GPU-month ({monthly / HOURS_PER_MONTH:.4f}/GPU-h)"
        ]
        if quote.gpu_tdp_w is None:
            notes.append("owned: GPU TDP unknown, power not costed")
        return monthly / HOURS_PER_MONTH, notes
    if quote.pricing_term is PricingTerm.SPOT:
        rate = price * (ONE + SPOT_INTERRUPTION_OVERHEAD)
        return rate, [
            f"spot: {price}/GPU-h x (1 + {SPOT_INTERRUPTION_OVERHEAD} interruption overhead)"
        ]
    return price, []


def commitment_months(quote: QuoteTerms, finance: FinanceAssumptions) -> int:
    """Months the quote binds the buyer to: the quote's minimum, or the term's own length
    (12 / 36 for reservations, the amortisation period for bought hardware)."""
    implied = _TERM_MONTHS.get(quote.pricing_term, 0)
    if quote.pricing_term is PricingTerm.OWNED and quote.capex_per_gpu is not None:
        implied = int(
            (finance.amortisation_years * MONTHS_PER_YEAR).to_integral_value(ROUND_CEILING)
        )
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
