"""Quotes and API routes named in words for the finance page, where the JSON names them by id
(the not-costed list, the rent / reserve / buy options): provider · GPU · term · region, or
provider · model · model API. Two queries whatever the number of ids."""

import re
from collections.abc import Iterable, Sequence

from apps.catalog.models import Gpu
from apps.core import formatting
from apps.quotes.models import ApiRoute, Quote

from .lines import MONEY_AFTER, TERM_LABELS
from .shown import ShownRow


def offer_labels(
    quote_ids: Iterable[int | None], route_ids: Iterable[int | None]
) -> tuple[dict[int, str], dict[int, str]]:
    """({quote id: words}, {API route id: words}) for the ids given (None ignored)."""
    quotes: dict[int, str] = {}
    wanted = {i for i in quote_ids if i}
    if wanted:
        for q in Quote.objects.filter(pk__in=wanted).values(
            "pk", "provider__name", "gpu__name", "system__name", "pricing_term", "region"
        ):
            what = q["gpu__name"] or q["system__name"] or "GPU"
            parts = [q["provider__name"], what, TERM_LABELS.get(q["pricing_term"], "—")]
            if q["region"]:
                parts.append(q["region"])
            quotes[q["pk"]] = " · ".join(parts)
    routes: dict[int, str] = {}
    wanted = {i for i in route_ids if i}
    if wanted:
        for r in ApiRoute.objects.filter(pk__in=wanted).values("pk", "provider__name", "model"):
            routes[r["pk"]] = f"{r['provider__name']} · {r['model']} · model API"
    return quotes, routes


# The label of a candidate row's price source among its facts (apps.finance.lines._facts, which
# names the source by id: "quote #12, 30 days old"); the page says it in words instead.
PRICE_FROM = "Price from"
GONE = "a quote no longer listed"


def price_from_text(row: ShownRow, quotes: dict[int, str], routes: dict[int, str]) -> str:
    """Where a candidate row's price comes from, in words: provider · GPU · term · region and
    the quote's age (and staleness), or provider · model · model API; never a bare id (the
    JSON and the CSV keep ``quote_id`` and ``api_route_id``)."""
    quote_id = row.get("quote_id")
    if quote_id:
        text = quotes.get(quote_id, GONE)
        age = row.get("quote_age_days")
        if age is not None:
            text += f", {age:,} day{'' if age == 1 else 's'} old"
        if row.get("quote_stale"):
            text += " (stale: ask for a new quote)"
        return text
    return routes.get(row.get("api_route_id") or 0, "an API route no longer listed")


def name_price_sources(
    rows: Sequence[ShownRow], quotes: dict[int, str], routes: dict[int, str]
) -> None:
    """Each row's "Price from" fact in words (``display_facts`` as candidate_table_display
    made it, with its id-named source replaced in place)."""
    for row in rows:
        if not (row.get("quote_id") or row.get("api_route_id")):
            continue
        text = price_from_text(row, quotes, routes)
        row["display_facts"] = [
            (label, text if label == PRICE_FROM else value)
            for label, value in row.get("display_facts", [])
        ]


def gpu_name(slug: str | None) -> str:
    """A catalog GPU's name for its slug (the slug itself when the catalog has none)."""
    if not slug:
        return ""
    return Gpu.objects.filter(slug=slug).values_list("name", flat=True).first() or slug


# How the API's texts name a quote ("quote #12").
QUOTE_REF = re.compile(r"\bquote #(\d+)")


def quote_ids_in(text: str) -> list[int]:
    """The quote ids an API text names ("quote #12")."""
    return [int(m) for m in QUOTE_REF.findall(text)]


def offers_in_words(text: str, quotes: dict[int, str]) -> str:
    """An API text as the page says it: each "quote #12" by its words (provider · GPU · term ·
    region), money with its currency first as every figure on the page (USD 7,635.34)."""
    text = QUOTE_REF.sub(lambda m: quotes.get(int(m.group(1)), GONE), text)
    return MONEY_AFTER.sub(
        lambda m: formatting.money(m.group(1).replace(",", ""), m.group(2)), text
    )
