"""A decision record's PDF, drawn once for what it shows and kept.

Drawing the PDF is the costly part of a download (a long frozen table runs to many pages), so
each PDF is stored, privately, under a name made of the record's id and the SHA-256 of the
report it is drawn from (``selectors.decision_record_report``: the frozen snapshot and what the
record says about it, its status, verdicts and audit trail). A later download of the same
record in the same state reads the stored file; a record that changed (a refresh, a
verdict) gets a new PDF and its older one is deleted. The files sit in the default storage
under ``decision-pdfs/``, which no route serves (apps.core.files); they leave only through the
record's own export views, after the team check, as an attachment.
"""

import hashlib
import json

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.http import HttpResponse

from .exports import decision_record_pdf
from .models import DecisionRecord
from .selectors import RecordReport, decision_record_report

#: Where the stored PDFs live in the default storage (one folder per record).
PDF_FOLDER = "decision-pdfs"


def report_digest(report: RecordReport) -> str:
    """SHA-256 of a report as canonical JSON (dates and decimals as text): two reports with
    the same digest draw the same PDF."""
    text = json.dumps(report, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def stored_pdf_name(record_id: int, digest: str) -> str:
    return f"{PDF_FOLDER}/{record_id}/{digest}.pdf"


def decision_record_pdf_kept(record: DecisionRecord) -> bytes:
    """The record's PDF: the stored one when the record has not changed since it was drawn,
    otherwise drawn now, stored, and the record's older PDFs deleted."""
    report = decision_record_report(record)
    name = stored_pdf_name(record.pk, report_digest(report))
    if default_storage.exists(name):
        with default_storage.open(name, "rb") as stored:
            return bytes(stored.read())
    pdf = decision_record_pdf(report)
    default_storage.save(name, ContentFile(pdf))
    # Only the newest is kept: the older ones show a state the record has left, and a copy
    # that a simultaneous first download saved under a suffixed name is a duplicate.
    folder = f"{PDF_FOLDER}/{record.pk}"
    for other in default_storage.listdir(folder)[1]:
        if f"{folder}/{other}" != name:
            default_storage.delete(f"{folder}/{other}")
    return pdf


def decision_record_pdf_response(record: DecisionRecord) -> HttpResponse:
    """The PDF as a download (never shown inline, never kept by a shared cache)."""
    response = HttpResponse(decision_record_pdf_kept(record), content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="decision-{record.pk}.pdf"'
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, no-store"
    return response
