"""Quotes and API routes named in words for the finance page, where the JSON names them by id
(the not-costed list, the rent / reserve / buy options): provider · GPU · term · region, or
provider · model · model API. Two queries whatever the number of ids."""

from collections.abc import Iterable

from apps.catalog.models import Gpu
from apps.quotes.models import ApiRoute, Quote

from .lines import TERM_LABELS


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


def gpu_name(slug: str | None) -> str:
    """A catalog GPU's name for its slug (the slug itself when the catalog has none)."""
    if not slug:
        return ""
    return Gpu.objects.filter(slug=slug).values_list("name", flat=True).first() or slug
