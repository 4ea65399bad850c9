"""The decision pages' codes and figures as a person reads them: a status, a pricing term, a
verdict or a role in words; money to the cent with separators; a unit cost to four
significant digits (apps.finance.units, the candidate table's rules)."""

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from django import template
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from apps.core.roles import Role
from apps.decisions.models import Approval, ChecklistAnswer, DecisionRecord
from apps.decisions.report_words import criterion_words
from apps.finance.lines import BASIS_LABELS, figure_text
from apps.finance.units import money_text
from apps.quotes.models import Quote

register = template.Library()

STATUS_WORDS: dict[str, str] = {
    DecisionRecord.Status.DRAFT: "Draft",
    DecisionRecord.Status.IN_REVIEW: "In review",
    DecisionRecord.Status.APPROVED: "Approved",
    DecisionRecord.Status.REJECTED: "Rejected",
    DecisionRecord.Status.SUPERSEDED: "Superseded",
}
VERDICT_WORDS: dict[str, str] = {
    Approval.Verdict.APPROVE: "Approved",
    Approval.Verdict.REJECT: "Rejected",
}
WORDS: dict[str, str] = {
    **STATUS_WORDS,
    **VERDICT_WORDS,
    **dict(Quote.PricingTerm.choices),
    **dict(Role.choices),
    **dict(ChecklistAnswer.Answer.choices),
    **BASIS_LABELS,
}


@register.filter
def words(code: Any) -> str:
    """A code in words ("IN_REVIEW" -> "In review", "RESERVED_1Y" -> "Reserved 1 year"); an
    unknown one with its underscores as spaces; none as ""."""
    if code in (None, ""):
        return ""
    text = str(code)
    known = WORDS.get(text)
    if known is not None:
        return str(known)
    return text.replace("_", " ").capitalize()


@register.filter
def money(value: Any) -> str:
    return money_text(value)


@register.filter
def unit_cost(value: Any) -> str:
    """A unit cost as the candidate table shows it (four significant digits); "—" for none."""
    if value in (None, ""):
        return "—"
    return figure_text(Decimal(str(value)))


@register.filter
def when(value: Any) -> str:
    """A frozen ISO timestamp ("2026-12-02T06:52:14.686340+00:00") as "2026-12-02 06:52:14
    UTC"; a datetime likewise; anything else as it is."""
    moment = parse_datetime(value) if isinstance(value, str) else value
    if not isinstance(moment, datetime):
        return str(value or "")
    if timezone.is_aware(moment):
        moment = moment.astimezone(UTC)
    return f"{moment:%Y-%m-%d %H:%M:%S} UTC"


@register.filter
def criterion(item: tuple[str, Any]) -> tuple[str, str]:
    """An acceptance criterion (key, value) as the PDF words it: ("ttft_target_ms", 500) ->
    ("Time to first token target", "500 ms")."""
    return criterion_words(*item)
