"""A frozen checklist's evidence and warnings in words, for the decision PDF (apps.decisions
.exports calls these; the record page says the same in its template): each answer's text, link
and file (name, size, SHA-256), and each must-have question answered No or Partial."""

from collections.abc import Mapping, Sequence
from typing import Any

from django.template.defaultfilters import filesizeformat

from apps.core import formatting

from .checklist import ChecklistWarning
from .frozen import FrozenAnswer

#: The characters of a SHA-256 a line shows (the record page and the snapshot keep all 64).
HASH_SHOWN = 16


def evidence_words(answer: FrozenAnswer) -> str:
    """ "Order form, section 3 · https://… · file SOC2.pdf (73.0 KB, SHA-256 2373ab5b…)";
    a record frozen before answers kept their parts reads its one ``evidence`` string."""
    parts = [answer.get("evidence_text") or "", answer.get("evidence_link") or ""]
    file = answer.get("evidence_file")
    if isinstance(file, dict) and file.get("name"):  # a file frozen with its name, size, hash
        details = []
        if (size := file.get("bytes")) is not None:
            details.append(str(filesizeformat(size)).replace("\u00a0", " "))
        if file.get("sha256"):
            details.append(f"SHA-256 {file['sha256'][:HASH_SHOWN]}…")
        parts.append(f"file {file['name']}" + (f" ({', '.join(details)})" if details else ""))
    text = " · ".join(p for p in parts if p)
    if not text and "evidence_text" not in answer:
        text = answer.get("evidence") or ""
    return text


def warning_lines(warnings: Sequence[ChecklistWarning]) -> list[str]:
    """Each must-have question answered No or Partial (selectors.checklist_warnings) as a
    sentence: "Are the required certifications (SOC 2, ISO 27001) current? No: ISO only"."""
    lines = []
    for w in warnings:
        answer = formatting.label(w["answer"], "ChecklistAnswer.Answer")
        evidence = f": {w['evidence']}" if w.get("evidence") else ""
        lines.append(f"{w['text']} {answer}{evidence}")
    return lines


def acknowledgement_words(approval: Mapping[str, Any]) -> str:
    """What an approval acknowledged ("acknowledged 2 checklist warnings"), else ""."""
    count = len(approval.get("acknowledged_warnings") or [])
    if not count:
        return ""
    return f"acknowledged {count} checklist warning{'s' if count != 1 else ''}"
