"""FX rates: which rate applies, and converting an amount into a reporting currency.

Finance keeps one table of rates (FxRate), each in units of the base currency
(apps.core.currency.BASE_CURRENCY) per one unit of another currency; the newest ``as_of`` per
currency applies. A brief reporting in the base currency converts with one rate; one reporting
in another currency converts through the base currency (a cross rate: two rates).
"""

from decimal import Decimal

from apps.core.currency import BASE_CURRENCY

from .models import FxRate
from .state import FxApplied


class FxMissing(Exception):
    """No rate applies to a currency a quote or route needs; the message names it."""


def rate_text(rate: Decimal) -> str:
    """A stored rate without the column's trailing zeros, never in exponent form
    (0.0067000000 -> "0.0067", 100.0000000000 -> "100")."""
    return format(rate.normalize(), "f")


def fx_rates_applied() -> dict[str, FxApplied]:
    """The rate that applies per currency (the newest ``as_of``, the later entry on a tie)."""
    applied: dict[str, FxApplied] = {}
    # Ordered newest first within each currency (the model's ordering): the first row wins.
    for row in FxRate.objects.order_by("currency", "-as_of", "-pk").values(
        "pk", "currency", "rate", "as_of", "source"
    ):
        if row["currency"] not in applied:
            applied[row["currency"]] = FxApplied(
                id=row["pk"],
                rate=Decimal(rate_text(row["rate"])),
                as_of=row["as_of"].isoformat(),
                source=row["source"],
            )
    return applied


def fx_rates_json(rates: dict[str, FxApplied]) -> dict[str, dict[str, object]]:
    """The applied rates as a fingerprint or a decision snapshot freezes them (strings)."""
    return {
        currency: {"id": r.id, "rate": rate_text(r.rate), "as_of": r.as_of, "source": r.source}
        for currency, r in rates.items()
    }


def _to_base(currency: str, rates: dict[str, FxApplied], reporting: str) -> Decimal:
    if currency == BASE_CURRENCY:
        return Decimal(1)
    found = rates.get(currency)
    if found is None:
        raise FxMissing(
            f"no FX rate for {currency} (to convert {currency} into {reporting}, finance "
            f"needs a rate of {BASE_CURRENCY} per {currency} in the FX-rate table)"
        )
    return found.rate


def fx_convert(
    amount: Decimal, currency: str, reporting: str, rates: dict[str, FxApplied]
) -> Decimal:
    """``amount`` of ``currency`` in ``reporting`` currency (raises FxMissing)."""
    if currency == reporting:
        return amount
    return amount * _to_base(currency, rates, reporting) / _to_base(reporting, rates, reporting)
