"""A decision record as CSV (its frozen candidate table) and as a PDF report.

The PDF's content is built once, in words, by apps.decisions.report (a typed
``pdf_layout.Document``, from the typed report apps.decisions.report_data reads; its sections'
words in report_words, report_commercial and report_alternatives) and drawn by
apps.decisions.pdf_layout; this module is their entry points."""

from apps.finance.exports import ranking_csv
from apps.finance.units import unit_of_snapshot

from .frozen import Snapshot
from .pdf_layout import (
    MAX_PARAGRAPH_CHARS,
    MAX_PARAGRAPH_LINES,
    clip,
    draw,
    latin1,
    truncation_mark,
)
from .report import build_document
from .report_alternatives import alternatives_lost, why_it_lost
from .report_commercial import commercial_summary
from .report_data import Report
from .report_words import NOT_RECORDED, criterion_words
from .selectors import RecordReport

__all__ = [
    "MAX_PARAGRAPH_CHARS",
    "MAX_PARAGRAPH_LINES",
    "NOT_RECORDED",
    "alternatives_lost",
    "clip",
    "commercial_summary",
    "criterion_words",
    "decision_record_csv",
    "decision_record_pdf",
    "latin1",
    "truncation_mark",
    "why_it_lost",
]


def decision_record_csv(snapshot: Snapshot) -> str:
    """The frozen candidate table, in the rankings CSV's columns (decimals exact, formulas
    neutralised)."""
    table = snapshot.get("candidate_table", {})
    unit, _ = unit_of_snapshot(table)
    return ranking_csv(
        {"rows": table.get("rows", []), "currency": table.get("currency"), "unit": unit}
    )


def decision_record_pdf(report: RecordReport | Report) -> bytes:
    """A readable PDF of a decision record from ``selectors.decision_record_report``."""
    return draw(build_document(report))
