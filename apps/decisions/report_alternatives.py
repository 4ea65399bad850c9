"""The candidates a decision record passed over, in words: each row's pricing term, why a row
does not meet the brief, and why each alternative lost against the chosen one (the PDF's
"Alternatives and why they lost"; apps.decisions.report)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from apps.finance.lines import PLAN_WORDS
from apps.quotes.models import TERM_LABELS

from .candidate_words import API_TERM_WORDS, base_label
from .report_data import Evidence, Frozen, Report, ReportRow, as_report, row_of
from .report_words import CRITERIA_WORDS, money_words, number_words, words


def term_words(row: ReportRow) -> str:
    if row.candidate_kind == "API_ROUTE":
        return "Per token (API)"
    if row.candidate_kind in PLAN_WORDS:
        terms = sorted({words(term, TERM_LABELS) for term in row.plan_terms})
        return ", ".join(terms) or "-"
    return words(row.pricing_term, TERM_LABELS)


def why_not_words(reasons: Sequence[str], report: Report, row: ReportRow) -> str:
    """The engine's reasons, with its latency shorthand spelled out against the targets."""
    criteria = report.acceptance_criteria
    out = []
    for reason in reasons:
        text = str(reason)
        if "TTFT/ITL" in text or "latency target" in text:
            targets = [
                f"{label.lower().removesuffix(' target')} {criteria[key]} ms"
                for key, (label, _) in CRITERIA_WORDS.items()
                if key.endswith("_target_ms") and criteria.get(key)
            ]
            text = "misses the latency target" + (": " + ", ".join(targets) if targets else "")
            if row.p95_latency_ms:
                text += f" (estimated p95 {number_words(row.p95_latency_ms)} ms)"
        out.append(text)
    return "; ".join(out)


def _not_costed_words(reason: Any) -> str:
    """ "no FX rate for JPY (to convert ...)" -> "not costed: no FX rate for JPY"."""
    text = str(reason or "no reason recorded").split(" (", 1)[0]
    return f"not costed: {text}"


def why_it_lost(
    row: ReportRow | Frozen | None,
    chosen: ReportRow | Frozen | None,
    unit: str,
    report: Report | Frozen,
) -> str:
    """Why an alternative was not chosen, in words, against the chosen row (rows typed, or as
    frozen)."""
    if row is None:
        return "not in the frozen candidate table"
    row = row if isinstance(row, ReportRow) else row_of(row)
    if not row.meets_constraints:
        reasons = row.why_not or ("does not meet the brief",)
        return why_not_words(reasons, as_report(report), row)
    if chosen is not None and not isinstance(chosen, ReportRow):
        chosen = row_of(chosen)
    cost, base = row.effective_unit_cost, chosen.effective_unit_cost if chosen else None
    if cost is None or base in (None, "") or Decimal(str(base)) == 0:
        return "no unit cost to compare"
    change = (Decimal(str(cost)) / Decimal(str(base)) - 1) * 100
    if change >= Decimal("0.5"):
        return f"costs {change:.0f} % more {unit}"
    if change <= Decimal("-0.5"):
        return f"costs {-change:.0f} % less {unit}; passed over for the reasons in the rationale"
    return f"costs the same {unit}; passed over for the reasons in the rationale"


def alternatives_lost(report: Report | Frozen, unit: str) -> list[dict[str, str]]:
    """Each alternative the record names (else the table's other leading rows), with the
    reason it lost; every quote the table could not cost is listed with why."""
    report = as_report(report)
    rows = report.rows
    chosen_row = report.chosen.row
    refs = report.alternative_refs
    not_costed = {e.quote_id: e for e in report.not_costed if e.quote_id}
    # (the row, else the quote id the record names, else the label it gave)
    picked: list[tuple[ReportRow | None, Any, str]] = []
    if refs:
        for ref in refs:
            qid, rid = ref.quote_id, ref.api_route_id
            found = next(
                (
                    r for r in rows
                    if (qid is not None and r.quote_id == qid)
                    or (qid is None and rid is not None and r.api_route_id == rid)
                ),
                None,
            )  # fmt: skip
            route = report.api_routes.get(rid)
            fallback = (
                f"{route.provider} · {route.model} · {API_TERM_WORDS}"
                if route
                else "an API route not in the frozen evidence"
            )
            picked.append((found, qid, fallback))
    elif refs is None and report.alternatives:  # a report from before alternative_refs
        by_label = {r.label: r for r in rows}
        picked = [(by_label.get(label), None, label) for label in report.alternatives]
    else:
        others = [r for r in rows if not r.chosen][:MAX_IMPLIED_ALTERNATIVES]
        picked = [(r, None, "") for r in others]
    out = []
    seen_quotes = set()
    for row, qid, fallback in picked:
        if row is None:
            entry = not_costed.get(qid) if qid is not None else None
            seen_quotes.add(qid)
            quote = report.quotes.get(qid) if qid is not None else None
            out.append(
                {
                    "label": _quote_label(quote) if qid is not None else fallback,
                    "term": words(quote.pricing_term, TERM_LABELS) if quote else "-",
                    "unit_cost": "-",
                    "monthly": "-",
                    "reason": _not_costed_words(entry.reason)
                    if entry
                    else "not in the frozen candidate table",
                }
            )
            continue
        seen_quotes.add(row.quote_id)
        out.append(
            {
                "label": row.label,
                "term": term_words(row),
                "unit_cost": number_words(row.effective_unit_cost),
                "monthly": money_words(row.monthly_cost, report.currency),
                "reason": why_it_lost(row, chosen_row, unit, report),
            }
        )
    for qid, entry in not_costed.items():
        if qid in seen_quotes:
            continue
        quote = report.quotes.get(qid)
        out.append(
            {
                "label": _quote_label(quote),
                "term": words(quote.pricing_term, TERM_LABELS) if quote else "-",
                "unit_cost": "-",
                "monthly": "-",
                "reason": _not_costed_words(entry.reason),
            }
        )
    return out


def _quote_label(quote: Evidence | None) -> str:
    """A frozen quote without a candidate row: provider · GPU · term · region."""
    if quote is None or not quote.frozen:
        return "a quote not in the frozen evidence"
    label = base_label({}, {}, quote.frozen)
    return f"{label} · {quote.region}" if quote.region else label


# The alternatives shown when the record names none: the table's next rows (the rest are in
# the candidate table further on).
MAX_IMPLIED_ALTERNATIVES = 5
