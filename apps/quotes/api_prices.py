"""Model/API route prices from the ``genai-prices`` package (pydantic/genai-prices on PyPI).

The package ships its price list, so an import works offline. It is read through the package's
public objects only: ``genai_prices.data_snapshot.get_snapshot().providers`` (the providers,
each with its ``models``), ``ModelInfo.prices`` (one ``ModelPrice``, or ``ConditionalPrice``
periods with a ``StartDateConstraint``) and ``ModelInfo.price_variants`` (the batch prices,
``when={"processing": "batch"}``, README "Batch API"). Nothing of the list is copied into the
repository.

Dates: the prices of a model "looked up for a date" are those of the last period that has
started on that date (the package's own rule, ``ModelInfo.get_prices``: later periods win).

Hours of the day: a model priced by the hour of day (``TimeOfDateConstraint``: DeepSeek's
deepseek-chat and deepseek-reasoner are listed at their off-peak price with no constraint and
their standard price from 00:30 to 16:30 UTC) is read as the package reads a request at each
time of day (the last conditional price active then wins), into windows that cover the day.
The route keeps each window and its prices (``ApiRoute.price_windows``, see
apps/quotes/price_windows.py) and its own input / output prices are the windows'
hour-weighted figures (deepseek-reasoner: 16 h at 0.55 / 2.19 and 8 h at 0.135 / 0.55 make
0.4117 / 1.6433), never the price of one window alone.
The route's own price fields take the period in effect on the date imported for; every
period that started up to that date is kept as an ``ApiRoutePrice`` row, so a route can be
priced at any date (``route_price_on``). A period that starts after the date is left for a
later import. Candidate tables cost a route at its own price fields, and a decision record
freezes those (apps.decisions.snapshot.route_evidence): a later import changes the route
(and bumps its version, so the record says its inputs have changed), never a frozen record.
"""

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import genai_prices
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.db.models.functions import Lower
from django.utils import timezone
from genai_prices import data_snapshot
from genai_prices import types as gp

from apps.briefs.models import WorkloadBrief
from apps.core.currency import Currency
from apps.engine import PRESETS

from . import services
from .models import ApiRoute, ApiRoutePrice, Provider
from .price_windows import weighted, window_hours, windows_text

# genai-prices prices everything in US dollars per million tokens ("Base price in USD per
# million tokens", genai_prices.types.TieredPrices.base).
SOURCE_CURRENCY = Currency.USD
# The request context that selects a provider's batch prices (genai-prices README, "Batch API").
BATCH_CONTEXT = {"processing": "batch"}
# batch_discount is stored with 4 decimals and must stay below 1 (ApiRoute.batch_discount).
DISCOUNT_QUANTUM = Decimal("0.0001")
MAX_DISCOUNT = Decimal("0.9999")
# Route prices are stored with 4 decimals (apps.quotes.models._money); the list's figures are
# read to 10 decimals first, which takes off binary-float noise such as 0.18000000000000002.
PRICE_QUANTUM = Decimal("0.0001")
LIST_QUANTUM = Decimal("1E-10")
ONE = Decimal(1)
ZERO = Decimal(0)
# Field lengths of ApiRoute / Provider: a longer name from the list is reported, not cut.
MAX_MODEL_LENGTH = ApiRoute._meta.get_field("model").max_length or 120
MAX_URL_LENGTH = 200
# How many changed or new routes the page lists (the counts always cover all of them).
PAGE_LIST_LIMIT = 500

# --- Which catalog preset a listed model serves ------------------------------------------------
# A route is costed only for briefs of the preset it serves (apps.finance.candidates.live_routes),
# so the import says which one, never guessing: the model id's last path segment, lower-case,
# with the qualifiers below taken off its end (they name a serving variant of the same weights,
# not another model), must then equal a preset name, or be one of PRESET_ALIASES. Everything
# else is imported without a preset (procurement may set one on the route's page).
# ("-instant", "-versatile", "-preview": Groq's names for its Llama 3.x deployments.)
MODEL_QUALIFIERS = (
    "-instruct", "-it", "-chat", "-fp8", "-turbo", "-hf", "-v0.1", "-v0.2", "-v0.3",
    "-instant", "-versatile", "-preview",
)  # fmt: skip
# Names that providers use for a preset's weights (model cards: Llama 4 Scout is
# 17B active / 16 experts, Maverick 17B / 128 experts; DeepSeek's API serves V3 as
# "deepseek-chat" and R1 as "deepseek-reasoner"; Meta's own ids carry a "meta-" prefix).
PRESET_ALIASES = {
    "llama-4-scout-17b-16e": "llama-4-scout",
    "llama-4-maverick-17b-128e": "llama-4-maverick",
    "deepseek-chat": "deepseek-v3",
    "deepseek-reasoner": "deepseek-r1",
    "meta-llama-3.1-8b": "llama-3.1-8b",
    "meta-llama-3.1-70b": "llama-3.1-70b",
    "meta-llama-3.1-405b": "llama-3.1-405b",
    "meta-llama-3-8b": "llama-3-8b",
}


def preset_for(model_id: str, presets: Iterable[str] = PRESETS) -> str:
    """The catalog preset a listed model id serves, or "" (see MODEL_QUALIFIERS)."""
    name = model_id.lower().rsplit("/", 1)[-1].split(":", 1)[0]
    stripped = True
    while stripped:
        stripped = False
        for qualifier in MODEL_QUALIFIERS:
            if name.endswith(qualifier):
                name, stripped = name[: -len(qualifier)], True
    name = PRESET_ALIASES.get(name, name)
    return name if name in set(presets) else ""


def source_label() -> str:
    return f"genai-prices {genai_prices.__version__}"


# --- From genai-prices objects to route fields -----------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ListedPrice:
    """One period of a model's price as route fields (USD per million tokens)."""

    effective_from: date | None  # None: since the list's first record of the model
    input_price_per_mtok: Decimal
    output_price_per_mtok: Decimal
    cached_input_price_per_mtok: Decimal | None
    batch_discount: Decimal
    notes: tuple[str, ...] = ()
    # Hour-of-day windows (apps/quotes/price_windows.py), empty for a price all day long.
    windows: tuple[dict[str, str], ...] = ()

    def figures(self) -> tuple[Any, ...]:
        return (
            self.input_price_per_mtok,
            self.output_price_per_mtok,
            self.cached_input_price_per_mtok,
            self.batch_discount,
        )


@dataclass(frozen=True, kw_only=True)
class ListedRoute:
    """A provider's model as the list prices it on the date looked up for."""

    provider_id: str
    provider_name: str
    provider_url: str
    model: str
    model_preset: str
    price: ListedPrice  # in effect on the date
    history: tuple[ListedPrice, ...]  # every period started by the date, oldest first

    @property
    def key(self) -> tuple[str, str]:
        return (self.provider_name.lower(), self.model)


def _start(constraint: Any) -> tuple[bool, date | None]:
    """(usable as a period, start date): a start-date constraint or none. A time-of-day
    constraint is a window within a day (``day_windows``), not a period."""
    if constraint is None:
        return True, None
    if isinstance(constraint, gp.StartDateConstraint):
        return True, constraint.start_date
    return False, None


def _minute(value: Any) -> int:
    """A constraint's time of day as minutes after midnight UTC."""
    at = datetime.combine(date(1970, 1, 1), value)
    if at.tzinfo is not None:
        at = at.astimezone(UTC)
    return at.hour * 60 + at.minute


def day_windows(model: gp.ModelInfo, day: date) -> list[tuple[int, int, gp.ModelPrice]] | None:
    """The model's standard prices on ``day`` through the day: (start minute, end minute,
    prices) windows covering it, the package's rule at each time (the last conditional price
    active then wins), adjacent windows of equal prices merged; one window when the price does
    not depend on the hour. None before the model's first period."""
    if isinstance(model.prices, gp.ModelPrice):
        return [(0, 24 * 60, model.prices)]
    cuts = {0}
    for conditional in model.prices:
        if isinstance(conditional.constraint, gp.TimeOfDateConstraint):
            cuts.update(
                (
                    _minute(conditional.constraint.start_time),
                    _minute(conditional.constraint.end_time),
                )
            )
    bounds = sorted(cuts)
    segments: list[tuple[int, int, gp.ModelPrice]] = []
    for i, begin in enumerate(bounds):
        end = bounds[i + 1] if i + 1 < len(bounds) else 24 * 60
        moment = datetime.combine(day, time(begin // 60, begin % 60), tzinfo=UTC)
        found: gp.ModelPrice | None = None
        for conditional in model.prices:  # the last active one wins
            constraint = conditional.constraint
            if constraint is None or constraint.active(moment):
                found = conditional.prices
        if found is None:
            return None
        if segments and segments[-1][2] == found:
            segments[-1] = (segments[-1][0], end, found)
        else:
            segments.append((begin, end, found))
    if len(segments) > 1 and segments[0][2] == segments[-1][2]:  # one window across midnight
        first, last = segments[0], segments.pop()
        segments[0] = (last[0], first[1], first[2])
    return segments


def _started(start: date | None, day: date) -> bool:
    return start is None or start <= day


def period_start_on(model: gp.ModelInfo, day: date) -> tuple[bool, date | None]:
    """(priced on ``day`` at all, the start date of the period in effect then): the last
    start-date period begun by ``day``; (False, None) before the model's first period (the
    package would fall back to its first period: we do not price a date the list has no
    price for)."""
    if isinstance(model.prices, gp.ModelPrice):
        return True, None
    for conditional in reversed(model.prices):  # the last period that has started wins
        usable, start = _start(conditional.constraint)
        if usable and _started(start, day):
            return True, start
    return False, None


def batch_prices_on(model: gp.ModelInfo, day: date) -> tuple[date | None, dict[str, Any]]:
    """The batch prices on ``day`` per price key (the first variant that sets a key wins, as
    in ``ModelInfo.get_prices``) and the latest start date among those used."""
    prices: dict[str, Any] = {}
    latest: date | None = None
    for variant in model.price_variants or ():
        if variant.when != BATCH_CONTEXT:
            continue
        usable, start = _start(variant.constraint)
        if not usable or not _started(start, day):
            continue
        used = False
        for key in ("input_mtok", "output_mtok"):
            value = getattr(variant.prices, key, None)
            if value is not None and key not in prices:
                prices[key], used = value, True
        if used and start is not None and (latest is None or start > latest):
            latest = start
    return latest, prices


def _stored(value: Any, what: str, notes: list[str]) -> Decimal:
    """A listed price as a route stores it: the list's float noise taken off
    (0.18000000000000002 -> 0.18), then to the route's 4 decimals, said in a note if rounded."""
    exact = Decimal(value).quantize(LIST_QUANTUM).normalize()
    stored = exact.quantize(PRICE_QUANTUM, rounding=ROUND_HALF_UP)
    if stored != exact:
        notes.append(f"the {what} price {exact:f} is rounded to {stored.normalize():f}")
    return stored.normalize()


def _per_mtok(
    value: Any, what: str, tiered: list[tuple[str, int | None]], notes: list[str]
) -> Decimal | None:
    if value is None:
        return None
    if isinstance(value, gp.TieredPrices):
        tiered.append((what, value.tiers[0].start if value.tiers else None))
        return _stored(value.base, what, notes)
    return _stored(value, what, notes)


def _tiered_note(tiered: list[tuple[str, int | None]]) -> str:
    names = ", ".join(what for what, _ in tiered)
    first = min((start for _, start in tiered if start), default=None)
    where = f" (they rise from {first:,} input tokens a request)" if first else ""
    return f"tiered {names} price: the base price is used{where}"


def _discount(standard: Decimal, batch: Any) -> Decimal | None:
    if batch is None or standard <= 0:
        return None
    price = Decimal(batch.base if isinstance(batch, gp.TieredPrices) else batch)
    off = ONE - price.quantize(LIST_QUANTUM) / standard
    return min(max(off, ZERO), MAX_DISCOUNT).quantize(DISCOUNT_QUANTUM, rounding=ROUND_HALF_UP)


def listed_price(model: gp.ModelInfo, day: date) -> ListedPrice | None:
    """A model's price on ``day`` as route fields, or None: no price on that date, not priced
    per input and output token (images, audio, searches), or free (a rate-limited free tier
    is not a price to buy capacity at)."""
    priced, start = period_start_on(model, day)
    segments = day_windows(model, day) if priced else None
    if not segments:
        return None
    notes: list[str] = []
    tiered: list[tuple[str, int | None]] = []
    windows: list[dict[str, str]] = []
    for begin, end, prices in segments:
        w_in = _per_mtok(getattr(prices, "input_mtok", None), "input", tiered, notes)
        w_out = _per_mtok(getattr(prices, "output_mtok", None), "output", tiered, notes)
        if w_in is None or w_out is None:
            return None
        w_cached = _per_mtok(
            getattr(prices, "cache_read_mtok", None), "cached-input", tiered, notes
        )
        windows.append({
            "start": f"{begin // 60:02d}:{begin % 60:02d}",
            "end": f"{end // 60 % 24:02d}:{end % 60:02d}",
            "hours": f"{window_hours(begin, end):f}",
            "input_price_per_mtok": f"{w_in:f}",
            "output_price_per_mtok": f"{w_out:f}",
            "cached_input_price_per_mtok": "" if w_cached is None else f"{w_cached:f}",
        })  # fmt: skip
    if len(windows) == 1:
        windows = []
        price_in, price_out = Decimal(str(w_in)), Decimal(str(w_out))
        cached = w_cached
    else:
        day_price = weighted(windows)
        price_in = day_price.input_price_per_mtok
        price_out = day_price.output_price_per_mtok
        cached = day_price.cached_input_price_per_mtok
        notes.append(day_price.note)
    if price_in == 0 and price_out == 0:
        return None
    if tiered:
        notes.append(_tiered_note(tiered))
    batch_start, batch = batch_prices_on(model, day)
    offs = [
        d
        for d in (
            _discount(price_in, batch.get("input_mtok")),
            _discount(price_out, batch.get("output_mtok")),
        )
        if d is not None
    ]
    discount = min(offs) if offs else ZERO
    if len(set(offs)) > 1:
        notes.append(
            f"batch discounts differ for input and output ({', '.join(map(str, offs))}): "
            "the smaller is used"
        )
    if not offs:
        batch_start = None
    effective = max((d for d in (start, batch_start) if d is not None), default=None)
    return ListedPrice(
        effective_from=effective,
        input_price_per_mtok=price_in,
        output_price_per_mtok=price_out,
        cached_input_price_per_mtok=cached,
        batch_discount=discount,
        notes=tuple(notes),
        windows=tuple(windows),
    )


def price_history(model: gp.ModelInfo, day: date) -> list[ListedPrice]:
    """Every period of the model's price that started by ``day``, oldest first; a period
    whose figures equal the one before it is not a change and is left out."""
    starts: set[date] = set()
    periods = [] if isinstance(model.prices, gp.ModelPrice) else model.prices
    for holder in [*periods, *(model.price_variants or ())]:
        if isinstance(holder, gp.PriceVariant) and holder.when != BATCH_CONTEXT:
            continue
        usable, start = _start(holder.constraint)
        if usable and start is not None and start <= day:
            starts.add(start)
    history: list[ListedPrice] = []
    for at in [date.min, *sorted(starts)]:
        price = listed_price(model, at)
        if price is None:
            continue
        if history and history[-1].figures() == price.figures():
            continue
        if history and history[-1].effective_from == price.effective_from:
            history[-1] = price
        else:
            history.append(price)
    return history


def listed_route(provider: gp.Provider, model: gp.ModelInfo, day: date) -> ListedRoute | None:
    """The route fields of one listed model on ``day`` (None: see ``listed_price``)."""
    price = listed_price(model, day)
    if price is None:
        return None
    history = price_history(model, day)
    if not history or history[-1].figures() != price.figures():
        # Not with the package's rule (nothing changes between two start dates); should it
        # happen, the route's price is the last period, as the route will hold it.
        history = [h for h in history if h.effective_from != price.effective_from] + [price]
    url = (provider.pricing_urls or [""])[0]
    return ListedRoute(
        provider_id=provider.id,
        provider_name=provider.name,
        provider_url=url if len(url) <= MAX_URL_LENGTH else "",
        model=model.id,
        model_preset=preset_for(model.id),
        price=price,
        history=tuple(history),
    )


# --- Reading the list ------------------------------------------------------------------------


def listed_providers() -> list[gp.Provider]:
    return list(data_snapshot.get_snapshot().providers)


def provider_choices() -> list[tuple[str, str]]:
    return sorted(((p.id, p.name) for p in listed_providers()), key=lambda c: c[1].lower())


def find_listed_provider(name: str) -> gp.Provider:
    """A listed provider by its id or name, ignoring case; a field error otherwise."""
    wanted = name.strip().lower()
    for provider in listed_providers():
        if wanted in (provider.id.lower(), provider.name.lower()):
            return provider
    raise ValidationError(
        {"provider": f"genai-prices {genai_prices.__version__} lists no provider {name!r}; "
         "give one of its provider ids, e.g. openai, groq, together."}
    )  # fmt: skip


def check_date(day: date, *, today: date) -> None:
    if day > today:
        raise ValidationError(
            {"date": "Must not be after today: a candidate table is costed at the routes' "
             "prices now, and a price that has not started yet would reprice it early."}
        )  # fmt: skip


def listed_routes(
    *, day: date, provider: str = "", all_models: bool = False
) -> tuple[list[ListedRoute], list[str]]:
    """The routes the list prices on ``day`` (one provider's, or every provider's), and why
    some listed models were left out. By default only the models that serve a catalog preset
    (the only routes a candidate table costs); ``all_models`` takes every model priced per
    token."""
    providers = [find_listed_provider(provider)] if provider else listed_providers()
    routes: list[ListedRoute] = []
    skipped: list[str] = []
    seen: set[tuple[str, str]] = set()
    for listed in providers:
        for model in listed.models:
            route = listed_route(listed, model, day)
            if route is None:
                continue
            if not (all_models or route.model_preset):
                continue
            if len(model.id) > MAX_MODEL_LENGTH:
                skipped.append(f"{listed.name} {model.id[:60]}…: model name too long")
                continue
            if route.key in seen:
                continue
            seen.add(route.key)
            routes.append(route)
    return routes, skipped


# --- The diff and the import -----------------------------------------------------------------

PRICE_FIELDS = (
    ("input_price_per_mtok", "input per million tokens"),
    ("output_price_per_mtok", "output per million tokens"),
    ("cached_input_price_per_mtok", "cached input per million tokens"),
    ("batch_discount", "batch discount"),
)


@dataclass(frozen=True, kw_only=True)
class FieldChange:
    label: str
    old: Any
    new: Any


@dataclass(frozen=True, kw_only=True)
class RouteChange:
    listed: ListedRoute
    route_id: int
    changes: tuple[FieldChange, ...]


@dataclass(kw_only=True)
class ImportPlan:
    day: date
    source: str
    new: list[ListedRoute] = field(default_factory=list)
    changed: list[RouteChange] = field(default_factory=list)
    unchanged: int = 0
    history_added: int = 0
    skipped: list[str] = field(default_factory=list)
    affected_briefs: int = 0

    @property
    def has_changes(self) -> bool:
        return bool(self.new or self.changed or self.history_added)

    def fingerprint(self) -> str:
        """What the plan would write: the confirm step applies only the plan it showed."""
        body = {
            "day": self.day.isoformat(),
            "source": self.source,
            "new": [(r.key, r.price.figures()) for r in self.new],
            "changed": [
                (c.route_id, [(f.label, f.old, f.new) for f in c.changes]) for c in self.changed
            ],
            "history_added": self.history_added,
            "windows": [(r.key, r.price.windows) for r in self.new],
        }
        text = json.dumps(body, default=str, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()


def route_source(listed: ListedRoute, day: date) -> str:
    start = listed.price.effective_from
    when = f"price from {start.isoformat()}" if start else "price as first listed"
    return f"{source_label()} ({listed.provider_id}/{listed.model}; {when}; looked up for {day})"[
        :300
    ]


def _route_fields(listed: ListedRoute, day: date) -> dict[str, Any]:
    price = listed.price
    return {
        "input_price_per_mtok": price.input_price_per_mtok,
        "output_price_per_mtok": price.output_price_per_mtok,
        "cached_input_price_per_mtok": price.cached_input_price_per_mtok,
        "batch_discount": price.batch_discount,
        "price_windows": list(price.windows),
        "currency": SOURCE_CURRENCY,
        "quote_date": price.effective_from or day,
        "source": route_source(listed, day),
    }


def _same(a: Decimal | None, b: Decimal | None) -> bool:
    return a == b if a is None or b is None else Decimal(a) == Decimal(b)


def _live_routes(listed: Sequence[ListedRoute], *, lock: bool) -> dict[tuple[str, str], ApiRoute]:
    names = {r.provider_name.lower() for r in listed}
    qs = (
        ApiRoute.objects.filter(retired=False)
        .annotate(provider_lower=Lower("provider__name"))
        .filter(provider_lower__in=names, model__in={r.model for r in listed})
        .select_related("provider")
    )
    if lock:
        qs = qs.select_for_update(no_key=True, of=("self",))
    return {(r.provider.name.lower(), r.model): r for r in qs.order_by("pk")}


def _retired_only(
    listed: Sequence[ListedRoute], live: dict[tuple[str, str], ApiRoute]
) -> list[ListedRoute]:
    """The listed routes that procurement retired (and has no live route for): an import does
    not bring back a route someone took out of the tables."""
    wanted = [r for r in listed if r.key not in live]
    if not wanted:
        return []
    retired = set(
        ApiRoute.objects.filter(retired=True, model__in={r.model for r in wanted})
        .annotate(provider_lower=Lower("provider__name"))
        .values_list("provider_lower", "model")
    )
    return [r for r in wanted if r.key in retired]


def _history_to_write(
    route_id: int | None,
    listed: ListedRoute,
    stored: dict[int, dict[date | None, ApiRoutePrice]],
) -> list[tuple[ListedPrice, ApiRoutePrice | None]]:
    """The periods missing from a route's history, or stored with other figures."""
    have = stored.get(route_id or 0, {})
    out: list[tuple[ListedPrice, ApiRoutePrice | None]] = []
    for period in listed.history:
        row = have.get(period.effective_from)
        if row is None:
            out.append((period, None))
        elif not all(
            _same(getattr(row, name), value)
            for (name, _), value in zip(PRICE_FIELDS, period.figures(), strict=True)
        ):
            out.append((period, row))
    return out


def _stored_history(route_ids: Iterable[int]) -> dict[int, dict[date | None, ApiRoutePrice]]:
    stored: dict[int, dict[date | None, ApiRoutePrice]] = {}
    for row in ApiRoutePrice.objects.filter(route_id__in=list(route_ids)):
        stored.setdefault(row.route_id, {})[row.effective_from] = row
    return stored


def _plan(
    listed: list[ListedRoute], skipped: list[str], day: date, *, lock: bool
) -> tuple[
    ImportPlan, dict[tuple[str, str], ApiRoute], dict[int, dict[date | None, ApiRoutePrice]]
]:
    plan = ImportPlan(day=day, source=source_label(), skipped=list(skipped))
    live = _live_routes(listed, lock=lock)
    retired = _retired_only(listed, live)
    if retired:
        plan.skipped.extend(
            f"{r.provider_name} {r.model}: retired here, not re-created" for r in retired
        )
        listed = [r for r in listed if r.key not in {x.key for x in retired}]
    stored = _stored_history(r.pk for r in live.values())
    for item in listed:
        route = live.get(item.key)
        if route is None:
            plan.new.append(item)
            plan.history_added += len(item.history)
            continue
        changes = [
            FieldChange(label=label, old=getattr(route, name), new=value)
            for (name, label), value in zip(PRICE_FIELDS, item.price.figures(), strict=True)
            if not _same(getattr(route, name), value)
        ]
        if route.currency != SOURCE_CURRENCY:
            changes.append(FieldChange(label="currency", old=route.currency, new=SOURCE_CURRENCY))
        if list(route.price_windows or []) != list(item.price.windows):
            changes.append(
                FieldChange(
                    label="hour-of-day prices",
                    old=windows_text(route.price_windows or []),
                    new=windows_text(item.price.windows),
                )
            )
        if not route.model_preset and item.model_preset:
            changes.append(FieldChange(label="serves preset", old="", new=item.model_preset))
        plan.history_added += len(_history_to_write(route.pk, item, stored))
        if changes:
            plan.changed.append(RouteChange(listed=item, route_id=route.pk, changes=tuple(changes)))
        else:
            plan.unchanged += 1
    presets = {r.model_preset for r in plan.new} | {
        live[c.listed.key].model_preset or c.listed.model_preset for c in plan.changed
    }
    presets.discard("")
    plan.affected_briefs = WorkloadBrief.objects.filter(model_preset__in=presets).count()
    return plan, live, stored


def plan_import(*, day: date, provider: str = "", all_models: bool = False) -> ImportPlan:
    """What an import would change, without writing anything."""
    listed, skipped = listed_routes(day=day, provider=provider, all_models=all_models)
    return _plan(listed, skipped, day, lock=False)[0]


class PlanChanged(Exception):
    """The prices changed between the diff shown and its confirmation."""

    def __init__(self, plan: ImportPlan) -> None:
        super().__init__("the prices to import changed since the diff was shown")
        self.plan = plan


def _provider_for(listed: ListedRoute, cache: dict[str, Provider]) -> Provider:
    key = listed.provider_name.lower()
    if key not in cache:
        provider = Provider.objects.filter(name__iexact=listed.provider_name).first()
        if provider is None:
            provider = Provider(name=listed.provider_name, website=listed.provider_url)
            try:
                provider.full_clean()
            except ValidationError as exc:
                if set(exc.message_dict) != {"website"}:
                    raise
                provider.website = ""  # a price page the URL field refuses: left out
            provider.save()
        cache[key] = provider
    return cache[key]


def _write(
    plan: ImportPlan,
    listed: list[ListedRoute],
    live: dict[tuple[str, str], ApiRoute],
    stored: dict[int, dict[date | None, ApiRoutePrice]],
) -> set[str]:
    """The plan's routes, providers and price periods; returns the presets they serve."""
    day = plan.day
    providers: dict[str, Provider] = {}
    presets: set[str] = set()
    created: list[tuple[ApiRoute, ListedRoute]] = []
    for item in plan.new:
        route = ApiRoute(
            provider=_provider_for(item, providers),
            model=item.model,
            model_preset=item.model_preset,
            **_route_fields(item, day),
        )
        route.full_clean(exclude=["provider"], validate_unique=False, validate_constraints=False)
        created.append((route, item))
        presets.add(item.model_preset)
    ApiRoute.objects.bulk_create([route for route, _ in created], batch_size=500)
    for change in plan.changed:
        route = live[change.listed.key]
        fields = _route_fields(change.listed, day)
        if not route.model_preset and change.listed.model_preset:
            fields["model_preset"] = change.listed.model_preset
        for name, value in fields.items():
            setattr(route, name, value)
        route.full_clean(exclude=["provider"], validate_unique=False, validate_constraints=False)
        ApiRoute.objects.filter(pk=route.pk).update(
            **fields, version=F("version") + 1, updated_at=timezone.now()
        )
        presets.add(route.model_preset)
    source = source_label()
    rows: list[ApiRoutePrice] = []
    targets = [(route, item) for route, item in created] + [
        (live[item.key], item) for item in listed if item.key in live
    ]
    for route, item in targets:
        for period, row in _history_to_write(route.pk, item, stored):
            values = {
                "input_price_per_mtok": period.input_price_per_mtok,
                "output_price_per_mtok": period.output_price_per_mtok,
                "cached_input_price_per_mtok": period.cached_input_price_per_mtok,
                "batch_discount": period.batch_discount,
                "currency": SOURCE_CURRENCY,
                "source": source,
            }
            if row is None:
                rows.append(
                    ApiRoutePrice(route=route, effective_from=period.effective_from, **values)
                )
            else:  # the list corrected a period it had published: the newer list wins
                ApiRoutePrice.objects.filter(pk=row.pk).update(**values, updated_at=timezone.now())
    ApiRoutePrice.objects.bulk_create(rows, batch_size=500)
    presets.discard("")
    return presets


@transaction.atomic
def apply_import(
    *,
    day: date,
    provider: str = "",
    all_models: bool = False,
    expected_fingerprint: str | None = None,
) -> ImportPlan:
    """Create and update the routes the list prices on ``day``, with their price history, in
    one transaction, then ask once for the recompute of the candidate tables of the briefs
    whose preset a new or changed route serves (coalesced: one recompute per brief).
    ``expected_fingerprint``: the plan the user confirmed; if the prices to write differ,
    nothing is written and ``PlanChanged`` carries the new plan."""
    listed, skipped = listed_routes(day=day, provider=provider, all_models=all_models)
    plan, live, stored = _plan(listed, skipped, day, lock=True)
    if expected_fingerprint is not None and plan.fingerprint() != expected_fingerprint:
        raise PlanChanged(plan)
    if not plan.has_changes:
        return plan
    try:
        with transaction.atomic():
            presets = _write(plan, listed, live, stored)
    except IntegrityError as exc:
        # Another import created the same route or provider meanwhile (a database rule):
        # nothing of this one is saved, in words, not a 500.
        raise ValidationError(
            "Another update of API prices ran at the same time; nothing was saved. Look at "
            "the changes again."
        ) from exc
    briefs = list(
        WorkloadBrief.objects.filter(model_preset__in=presets).values_list("pk", flat=True)
    )
    if briefs and (plan.new or plan.changed):
        services.candidate_tables_request_recompute(brief_ids=briefs, quotes_only=True)
    return plan


# --- Prices at a date ------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class RoutePrice:
    effective_from: date | None
    input_price_per_mtok: Decimal
    output_price_per_mtok: Decimal
    cached_input_price_per_mtok: Decimal | None
    batch_discount: Decimal
    currency: str
    source: str


def route_price_on(route: ApiRoute, day: date) -> RoutePrice | None:
    """The route's price in effect on ``day``: its history's last period started by then. A
    route with no history (entered by hand) has its own price from its quote date on (or
    always, without one). None: no price known for that date."""
    row = (
        ApiRoutePrice.objects.filter(route=route)
        .filter(Q(effective_from__isnull=True) | Q(effective_from__lte=day))
        .order_by(F("effective_from").desc(nulls_last=True))
        .first()
    )
    if row is not None:
        return RoutePrice(
            effective_from=row.effective_from,
            input_price_per_mtok=row.input_price_per_mtok,
            output_price_per_mtok=row.output_price_per_mtok,
            cached_input_price_per_mtok=row.cached_input_price_per_mtok,
            batch_discount=row.batch_discount,
            currency=row.currency,
            source=row.source,
        )
    if ApiRoutePrice.objects.filter(route=route).exists():
        return None
    if route.quote_date is not None and route.quote_date > day:
        return None
    return RoutePrice(
        effective_from=route.quote_date,
        input_price_per_mtok=route.input_price_per_mtok,
        output_price_per_mtok=route.output_price_per_mtok,
        cached_input_price_per_mtok=route.cached_input_price_per_mtok,
        batch_discount=route.batch_discount,
        currency=route.currency,
        source=route.source,
    )
