"""12- and 36-month cost of every row the candidate table shows.

The sensitivity section totals only its leading candidates (it recosts them); the table needs
a total for each row it shows, from what the row already holds. Each total is the engine's own
(``apps.engine.sensitivity.horizon_totals``): the row's monthly all-in cost x months, plus what
a longer commitment still binds after the horizon (committed GPU-hours at the quote's rate, or
bought GPUs' capex not yet depreciated), with the commitment as ``commitment_months`` defines
it. One query for the shown quotes' terms, whatever the number of rows.
"""

from collections.abc import Sequence
from decimal import Decimal, InvalidOperation

from apps.engine.sensitivity import TOTAL_MONTHS, Total, horizon_totals
from apps.quotes.models import Quote

from .fx import FxMissing
from .offers import quote_facts
from .shown import ShownRow
from .state import Assumptions

__all__ = ["TOTAL_MONTHS", "row_totals"]


def row_totals(
    rows: Sequence[ShownRow], assumptions: Assumptions
) -> dict[int, dict[int, Total | None]]:
    """{index of the row in ``rows`` (the rankings' row JSON): {months: its total, or None
    where it cannot be told}}. A row's quote that can no longer be read in the reporting
    currency (its FX rate removed since the compute) has no total rather than a wrong one."""
    finance = assumptions.finance
    quote_ids = {quote_id for r in rows if (quote_id := r.get("quote_id"))}
    facts = (
        {f.pk: f for f in quote_facts(Quote.objects.filter(pk__in=quote_ids))} if quote_ids else {}
    )
    out: dict[int, dict[int, Total | None]] = {}
    for i, row in enumerate(rows):
        none: dict[int, Total | None] = dict.fromkeys(TOTAL_MONTHS)
        try:
            monthly = Decimal(row["monthly_cost"] or "")  # none: no total
        except InvalidOperation:
            out[i] = none
            continue
        quote = None
        if (row.get("plan") or {}).get("committed"):
            # A serving plan with a committed part binds beyond its months in ways one
            # quote's terms do not tell: no total rather than one that leaves that out.
            out[i] = none
            continue
        quote_id = row.get("quote_id")
        if quote_id:
            fact = facts.get(quote_id)
            if fact is None:
                out[i] = none
                continue
            try:
                quote = fact.terms(assumptions)
            except FxMissing:
                out[i] = none
                continue
        totals = horizon_totals(
            key=str(i),
            quote=quote,
            finance=finance,
            monthly_cost=monthly,
            paid_gpu_hours_per_month=Decimal(row.get("paid_gpu_hours_per_month") or 0),
            gpus_paid=int(row.get("paid_gpus") or 0),
        )
        out[i] = {t.months: t for t in totals}
    return out
