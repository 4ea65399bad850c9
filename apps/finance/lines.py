"""Cost lines as people read them, and the warning when one assumption carries a candidate.

A row's cost lines (apps.engine.costing_types.LINES_BY_KIND) keep their stable keys in the API
and the CSV; pages, charts and the PDF show them in words. Most lines come from an assumption
finance sets rather than from the quote's price: when one of them is more than half of a
candidate's monthly cost, its unit cost says more about that assumption than about the GPU,
and the finance page says so (``dominant_assumption``).
"""

from decimal import Decimal, InvalidOperation
from typing import Any

from apps.quotes.models import Quote

from .models import FinanceAssumptions, LabourAllocation
from .units import count_text, money_text, unit_cost_text

LINE_LABELS = {
    "gpu_compute": "GPU compute",
    "checkpointing": "Checkpointing",
    "failed_run_waste": "Failed-run waste",
    "retry_waste": "Retry waste",
    "serving_stack": "Serving stack",
    "failed_renders": "Failed renders",
    "queue_overhead": "Queue overhead",
    "moderation": "Moderation",
    "operator_review": "Operator review",
    "idle_capacity": "Idle capacity",
    "storage": "Storage",
    "network_egress": "Network and egress",
    "provider_extras": "Provider extras",
    "observability": "Observability",
    "platform_labour": "Platform labour",
    "api_input_tokens": "API input tokens",
    "api_output_tokens": "API output tokens",
}

# The assumption behind each line that finance (not the quote) sets, in the warning's words.
# GPU compute and API tokens are the quote's price times the engine's work: not listed.
ASSUMPTION_BEHIND = {
    "platform_labour": "the platform labour assumption (hours a month x labour rate, as "
    "finance allocates them)",
    "idle_capacity": "paying for committed GPUs the brief's duty cycle leaves idle (utilization)",
    "operator_review": "the operator review share, minutes and labour rate",
    "moderation": "the moderation price per image or video minute",
    "observability": "the observability share",
    "storage": "the storage assumption (terabytes x the quote's storage price)",
    "retry_waste": "the retry rate",
    "failed_run_waste": "the interruption rate of training runs",
    "failed_renders": "the failure rate",
    "serving_stack": "the serving-stack share",
    "queue_overhead": "the queue-overhead share",
    "checkpointing": "the checkpoint interval",
    "provider_extras": "the quote's fixed monthly extras",
    "network_egress": "the egress volume assumption",
}
# "More than half of a candidate's cost" (issue 14, item 6).
DOMINANT_SHARE = Decimal("0.5")

TERM_LABELS = dict(Quote.PricingTerm.choices)

# The line that is shown on its own on the candidate table, beside the monthly cost.
OWN_LINE = "platform_labour"


def line_label(name: str) -> str:
    return LINE_LABELS.get(name, name.replace("_", " ").capitalize())


def _d(value: Any) -> Decimal | None:
    try:
        return None if value in (None, "") else Decimal(str(value))
    except InvalidOperation:
        return None


def dominant_assumption(row: dict[str, Any], currency: str) -> str | None:
    """A warning in words when one assumption-driven line is more than half of the row's
    monthly cost, else None."""
    monthly = _d(row.get("monthly_cost"))
    if not monthly or monthly <= 0:
        return None
    for name, value in (row.get("cost_lines") or {}).items():
        amount = _d(value)
        if name not in ASSUMPTION_BEHIND or amount is None:
            continue
        share = amount / monthly
        if share > DOMINANT_SHARE:
            # "100%" only when it is all of it.
            percent = f"{share:.1%}" if Decimal("0.995") <= share < 1 else f"{share:.0%}"
            return (
                f"{line_label(name)} is {percent} of this candidate's monthly cost "
                f"({money_text(amount)} of {money_text(monthly)} {currency}): its unit cost "
                f"depends mostly on {ASSUMPTION_BEHIND[name]}, not on the price quoted."
            )
    return None


def labour_policy_text(values: dict[str, Any], sources: dict[str, str]) -> str:
    """How platform labour is allocated for this brief's table, in words."""
    rate = f"{money_text(values['labour_rate_per_hour'])} {values['reporting_currency']}/h"
    where = sources.get("labour_allocation", "built-in")
    if values.get("labour_allocation") == "SHARED_BY_GPU_HOURS":
        return (
            f"Platform labour is shared by GPU-hours ({where}): the platform team's "
            f"{count_text(values['platform_labour_pool_hours'])} h a month at {rate} are split "
            f"over the {count_text(values['self_managed_gpu_hours_per_month'])} GPU-hours a "
            "month that self-managed deployments are expected to hold; each self-managed "
            "candidate bears the share its paid GPU-hours are of that total."
        )
    return (
        f"Platform labour is charged per self-managed deployment ({where}): "
        f"{count_text(values['platform_hours_self_managed'])} h a month at {rate} on every "
        "self-managed candidate, whatever its size. Finance can share the platform team by "
        "GPU-hours instead, on the organisation assumptions."
    )


def candidate_table_display(
    rows: list[dict[str, Any]], *, currency: str
) -> tuple[list[str], list[str]]:
    """Ready the shown rows for the page: each row gets its figures as people read them
    (``display_term``, ``display_unit_cost``, ``display_monthly_cost``, ``display_labour``,
    ``display_accepted``,
    ``line_values``) and
    its ``warning`` (``dominant_assumption``, rows that meet the brief). Returns the other cost
    lines' keys and their headers in words (platform labour has its own column)."""
    names: list[str] = []
    for row in rows:
        names += [n for n in row["cost_lines"] if n not in names and n != OWN_LINE]
    for row in rows:
        lines = row["cost_lines"]
        row["display_unit_cost"] = (
            unit_cost_text(row["effective_unit_cost"])
            if row["effective_unit_cost"] is not None
            else None
        )
        term = row.get("pricing_term")
        row["display_term"] = TERM_LABELS.get(term, term) if term else "per token"
        row["display_monthly_cost"] = money_text(row["monthly_cost"])
        row["display_accepted"] = count_text(row["accepted_outputs_per_month"])
        row["display_labour"] = money_text(lines.get(OWN_LINE))
        row["line_values"] = [money_text(lines[n]) if n in lines else "" for n in names]
        # Only for rows that meet the brief: the others have no unit cost to mislead.
        row["warning"] = dominant_assumption(row, currency) if row["meets_constraints"] else None
    return names, [line_label(n) for n in names]


def assumption_label(name: str) -> str:
    """An assumption's name in words (its model field's verbose name)."""
    label = str(getattr(FinanceAssumptions._meta.get_field(name), "verbose_name", name))
    return label[:1].upper() + label[1:]


def assumption_value(name: str, value: Any) -> str:
    """An assumption's value in words: a choice by its label, none as "—"."""
    if value in (None, ""):
        return "—"
    if name == "labour_allocation":
        return str(LabourAllocation(value).label)
    return str(value)
