"""How a decision record, its PDF and the record form name a candidate: in words, never by id.

A quote's row reads "provider · GPU name (system) · pricing term" ("Acme Cloud · NVIDIA H100
SXM5 · On demand"); an API route's "provider · model · Per token (API)"; a serving plan its
kind and GPUs. Where two rows of one table would read the same, each of them says what tells
them apart, in this order, until none is alike: its region, its configuration ("8 GPUs
(1 replica x 8)"), its quote date, and last "offer 1", "offer 2" in the table's order (issue
27: "no ids or slugs").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from apps.core import formatting
from apps.finance.lines import PLAN_WORDS, plan_text
from apps.finance.shown import ShownRow, shown_row
from apps.quotes.models import TERM_LABELS

from .frozen import FrozenQuote

#: What an API route's row reads for its pricing term.
API_TERM_WORDS = "Per token (API)"
# A candidate row as these words read it: a live ``ShownRow``, or one frozen in a snapshot by
# any build (``frozen.FrozenTable``'s rows: older ones lack keys, so read with .get; the PDF's
# report passes them as plain mappings). A quote likewise: a ``frozen.FrozenQuote``, or the
# record form's live values of a quote (views._candidates).
RowLike = ShownRow | Mapping[str, Any]
QuoteLike = FrozenQuote | Mapping[str, Any]


def base_label(row: RowLike, names: dict[str, str], quote: QuoteLike) -> str:
    """provider · GPU name (system) · term, the names from ``names`` (slug -> name) or the
    frozen quote, without what would tell it from a row like it."""
    if row.get("candidate_kind") in PLAN_WORDS:
        return f"{PLAN_WORDS[row['candidate_kind']]}: {plan_text(shown_row(row), names)}"
    if row.get("candidate_kind") == "API_ROUTE" or (
        row.get("quote_id") is None and row.get("api_route_id") is not None
    ):
        model = row.get("api_model") or row.get("model")
        return f"{row.get('provider')} · {model} · {API_TERM_WORDS}"
    slug = row.get("gpu") or quote.get("gpu") or ""
    gpu = quote.get("gpu_name") or names.get(slug) or slug or "-"
    system_slug = row.get("system") or quote.get("system")
    system = quote.get("system_name") or names.get(system_slug or "", system_slug)
    term = row.get("pricing_term") or quote.get("pricing_term")
    parts = [str(row.get("provider") or quote.get("provider") or "-"), gpu]
    if system:
        parts[-1] += f" ({system})"
    if term:
        parts.append(TERM_LABELS.get(term, formatting.words_of_code(str(term))))
    return " · ".join(parts)


def configuration(row: RowLike) -> str:
    """ "8 GPUs (1 replica x 8)": the GPUs the row pays for and how they serve."""
    config = row.get("configuration") or {}
    count, replicas = row.get("gpu_count"), row.get("replicas")
    paid = config.get("paid_gpus") or (int(count) * int(replicas or 1) if count else 0)
    if not paid:
        return ""
    if row.get("candidate_kind") in PLAN_WORDS or not count:
        return formatting.gpus(int(paid))
    return formatting.gpus(int(paid), int(replicas or 1), int(count))


def _region(row: RowLike, quote: QuoteLike) -> str:
    return str(quote.get("region") or row.get("region") or "")


def _quoted(row: RowLike, quote: QuoteLike) -> str:
    when = quote.get("quote_date") or row.get("quote_date")
    return f"quoted {str(when)[:10]}" if when else ""


def candidate_labels(
    rows: Sequence[RowLike],
    names: dict[str, str] | None = None,
    quotes: Mapping[Any, QuoteLike] | None = None,
) -> list[str]:
    """Each row's label, in ``rows``' order, no two alike (``quotes``: the frozen quotes by
    id, for their names, region and date)."""
    names, quotes = names or {}, quotes or {}
    found = [quotes.get(r.get("quote_id")) or {} for r in rows]
    labels = [base_label(r, names, q) for r, q in zip(rows, found, strict=True)]
    telling: list[Callable[[RowLike, QuoteLike], str]] = [
        _region,
        lambda r, _q: configuration(r),
        _quoted,
    ]
    for tell in telling:
        alike = Counter(labels)
        for i, (row, quote) in enumerate(zip(rows, found, strict=True)):
            if alike[labels[i]] > 1 and (extra := tell(row, quote)):
                labels[i] = f"{labels[i]} · {extra}"
    alike, seen = Counter(labels), Counter[str]()
    for i, label in enumerate(list(labels)):
        if alike[label] > 1:
            seen[label] += 1
            labels[i] = f"{label} · offer {seen[label]}"
    return labels
