"""The quotes and API routes a candidate table costs, as typed facts read from the database, and
their terms in the reporting currency (the engine's ``QuoteTerms`` / ``ApiRouteTerms``).

Quotes and routes are read as plain values (no model instance per quote: a table can cost
~2,000 of them) and mapped here, once, to ``QuoteFacts`` / ``RouteFacts``; every reader of a
quote's price in apps.finance (rows, serving plans, the rent / reserve / buy comparison, the
sensitivity, the totals) takes these.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import QuerySet

from apps.catalog.selectors import catalog_version
from apps.engine.costing import ApiRouteTerms, Demand, DutyCycle, PricingTerm, QuoteTerms
from apps.quotes.models import ApiRoute, Quote
from apps.quotes.price_windows import WindowPrices, for_hours, weighted

from .configuration import quote_limit
from .fx import fx_convert
from .state import Assumptions

QUOTE_VALUES = (
    "pk", "version", "pricing_term", "hourly_price_per_gpu", "currency",
    "storage_price_per_tb_month", "egress_price_per_gb", "network_monthly", "monthly_extras",
    "minimum_commitment_months", "gpu_id", "gpu__slug", "gpu__tdp_w", "system__gpu_id",
    "system__gpu__slug", "system__gpu__tdp_w", "gpus_per_node", "system__gpus_per_domain",
    "capex_per_gpu", "depreciation_months", "power_kw_per_gpu", "pue", "electricity_per_kwh",
    "hosting_per_kw_month", "ops_hours_per_month", "provider_id", "provider__name", "import_key",
)  # fmt: skip
ROUTE_VALUES = (
    "pk", "version", "input_price_per_mtok", "output_price_per_mtok", "currency",
    "batch_discount", "rate_limit_rpm", "provider__name", "model", "price_windows",
)  # fmt: skip
# A brief's hours a month as hours a day: x 24 / 730 (730 hours in an average month), to the
# hundredth of an hour.
_HOURS_PER_DAY, _HOURS_PER_MONTH, _HOUR_STEP = Decimal(24), Decimal(730), Decimal("0.01")


@dataclass(frozen=True, kw_only=True, slots=True)
class QuoteFacts:
    """A GPU quote as a table costs it (amounts in the quote's own currency)."""

    pk: int
    version: int
    provider: str
    pricing_term: PricingTerm
    currency: str
    hourly_price_per_gpu: Decimal
    storage_price_per_tb_month: Decimal
    egress_price_per_gb: Decimal
    network_monthly: Decimal
    monthly_extras: Decimal
    minimum_commitment_months: int
    gpu_id: int
    gpu: str  # the GPU's slug (a system quote's GPU)
    gpu_tdp_w: int
    gpus_per_node: int | None
    gpus_per_domain: int | None
    capex_per_gpu: Decimal | None = None
    depreciation_months: int | None = None
    power_kw_per_gpu: Decimal | None = None
    pue: Decimal | None = None
    electricity_per_kwh: Decimal | None = None
    hosting_per_kw_month: Decimal | None = None
    ops_hours_per_month: Decimal | None = None
    imported: bool = False  # from a published catalog (apps.quotes.catalog_import)

    @property
    def limit(self) -> int:
        """GPUs per replica the quote offers (a system's NVLink domain, or its node)."""
        return quote_limit(self.gpus_per_node, self.gpus_per_domain)

    @property
    def instance(self) -> int | None:
        """GPUs of the instance the quote rents whole, or None where GPUs are rented one by one.

        A quote imported from a published catalog is one instance size (its ``gpus_per_node``
        the instance's GPU count: apps/quotes/catalog_rows.py), and the provider rents that
        instance whole: Lambda sells its A100 80 GB only as 8-GPU instances. A quote entered by
        hand keeps its per-GPU price for any count up to its node size (its source, not a
        catalog, says how it is sold); a system quote is its system."""
        if self.imported and not self.gpus_per_domain:
            return int(self.gpus_per_node or 1)
        return None

    def terms(self, assumptions: Assumptions) -> QuoteTerms:
        """The quote's terms in the reporting currency (raises FxMissing)."""

        def fx(amount: Decimal) -> Decimal:
            return to_reporting(amount, self.currency, assumptions)

        def fx_or_none(amount: Decimal | None) -> Decimal | None:
            return None if amount is None else fx(amount)

        return QuoteTerms(
            pricing_term=self.pricing_term,
            hourly_price_per_gpu=fx(self.hourly_price_per_gpu),
            storage_price_per_tb_month=fx(self.storage_price_per_tb_month),
            egress_price_per_gb=fx(self.egress_price_per_gb),
            network_monthly=fx(self.network_monthly),
            monthly_extras=fx(self.monthly_extras),
            minimum_commitment_months=self.minimum_commitment_months,
            gpu_tdp_w=Decimal(self.gpu_tdp_w),
            capex_per_gpu=fx_or_none(self.capex_per_gpu),
            depreciation_months=self.depreciation_months,
            power_kw_per_gpu=self.power_kw_per_gpu,
            pue=self.pue,
            electricity_per_kwh=fx_or_none(self.electricity_per_kwh),
            hosting_per_kw_month=fx_or_none(self.hosting_per_kw_month),
            ops_hours_per_month=self.ops_hours_per_month,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class RouteFacts:
    """A model/API route as a table costs it (prices in the route's own currency)."""

    pk: int
    version: int
    provider: str
    model: str
    currency: str
    input_price_per_mtok: Decimal
    output_price_per_mtok: Decimal
    batch_discount: Decimal
    rate_limit_rpm: int | None
    # Hour-of-day prices (apps.quotes.price_windows), empty for one price all day.
    price_windows: tuple[Mapping[str, object], ...] = ()

    def window_prices(self, demand: Demand | None) -> WindowPrices | None:
        """What the brief's traffic pays across the route's hour-of-day prices, or None for a
        route priced the same all day. A scheduled batch runs its hours a day in the cheapest
        windows; any other duty cycle pays the hour-weighted prices (when an always-on, bursty
        or interactive brief's requests arrive is not the buyer's to choose)."""
        if not self.price_windows:
            return None
        if demand is not None and demand.duty_cycle is DutyCycle.SCHEDULED_BATCH:
            daily = demand.hours_per_month * _HOURS_PER_DAY / _HOURS_PER_MONTH
            return for_hours(self.price_windows, daily.quantize(_HOUR_STEP))
        return weighted(self.price_windows)

    def terms(self, assumptions: Assumptions, demand: Demand | None = None) -> ApiRouteTerms:
        """The route's terms in the reporting currency, at the hours ``demand`` runs where
        the route is priced by the hour of day (raises FxMissing)."""
        price_in, price_out = self.input_price_per_mtok, self.output_price_per_mtok
        hours = self.window_prices(demand)
        if hours is not None:
            price_in, price_out = hours.input_price_per_mtok, hours.output_price_per_mtok
        return ApiRouteTerms(
            input_price_per_mtok=to_reporting(price_in, self.currency, assumptions),
            output_price_per_mtok=to_reporting(price_out, self.currency, assumptions),
            batch_discount=self.batch_discount,
            rate_limit_rpm=self.rate_limit_rpm,
        )


def to_reporting(amount: Decimal, currency: str, assumptions: Assumptions) -> Decimal:
    """``amount`` of ``currency`` in the table's reporting currency (raises FxMissing)."""
    return fx_convert(amount, currency, assumptions.currency, assumptions.fx_rates)


def _quote(v: Mapping[str, object]) -> QuoteFacts:
    system = v["gpu_id"] is None
    return QuoteFacts(
        pk=v["pk"],  # type: ignore[arg-type]
        version=v["version"],  # type: ignore[arg-type]
        provider=v["provider__name"],  # type: ignore[arg-type]
        pricing_term=PricingTerm(str(v["pricing_term"])),
        currency=v["currency"],  # type: ignore[arg-type]
        hourly_price_per_gpu=v["hourly_price_per_gpu"],  # type: ignore[arg-type]
        storage_price_per_tb_month=v["storage_price_per_tb_month"],  # type: ignore[arg-type]
        egress_price_per_gb=v["egress_price_per_gb"],  # type: ignore[arg-type]
        network_monthly=v["network_monthly"],  # type: ignore[arg-type]
        monthly_extras=v["monthly_extras"],  # type: ignore[arg-type]
        minimum_commitment_months=v["minimum_commitment_months"],  # type: ignore[arg-type]
        gpu_id=v["system__gpu_id" if system else "gpu_id"],  # type: ignore[arg-type]
        gpu=v["system__gpu__slug" if system else "gpu__slug"],  # type: ignore[arg-type]
        gpu_tdp_w=v["system__gpu__tdp_w" if system else "gpu__tdp_w"],  # type: ignore[arg-type]
        gpus_per_node=v["gpus_per_node"],  # type: ignore[arg-type]
        gpus_per_domain=v["system__gpus_per_domain"],  # type: ignore[arg-type]
        capex_per_gpu=v["capex_per_gpu"],  # type: ignore[arg-type]
        depreciation_months=v["depreciation_months"],  # type: ignore[arg-type]
        power_kw_per_gpu=v["power_kw_per_gpu"],  # type: ignore[arg-type]
        pue=v["pue"],  # type: ignore[arg-type]
        electricity_per_kwh=v["electricity_per_kwh"],  # type: ignore[arg-type]
        hosting_per_kw_month=v["hosting_per_kw_month"],  # type: ignore[arg-type]
        ops_hours_per_month=v["ops_hours_per_month"],  # type: ignore[arg-type]
        imported=bool(v["import_key"]),
    )


def _route(v: Mapping[str, object]) -> RouteFacts:
    return RouteFacts(
        pk=v["pk"],  # type: ignore[arg-type]
        version=v["version"],  # type: ignore[arg-type]
        provider=v["provider__name"],  # type: ignore[arg-type]
        model=v["model"],  # type: ignore[arg-type]
        currency=v["currency"],  # type: ignore[arg-type]
        input_price_per_mtok=v["input_price_per_mtok"],  # type: ignore[arg-type]
        output_price_per_mtok=v["output_price_per_mtok"],  # type: ignore[arg-type]
        batch_discount=v["batch_discount"],  # type: ignore[arg-type]
        rate_limit_rpm=v["rate_limit_rpm"],  # type: ignore[arg-type]
        price_windows=tuple(v["price_windows"] or ()),  # type: ignore[arg-type]
    )


def quote_facts(quotes: QuerySet[Quote]) -> list[QuoteFacts]:
    """The quotes of ``quotes`` as facts, in the queryset's order (one query)."""
    return [_quote(v) for v in quotes.values(*QUOTE_VALUES)]


def route_facts(routes: QuerySet[ApiRoute]) -> list[RouteFacts]:
    return [_route(v) for v in routes.values(*ROUTE_VALUES)]


def live_routes(model_preset: str) -> QuerySet[ApiRoute]:
    """API routes that serve the brief's model (by preset)."""
    if not model_preset:
        return ApiRoute.objects.none()
    return ApiRoute.objects.filter(retired=False, model_preset=model_preset).order_by("pk")


# Quote facts read in this process, by quote id: (version, updated_at, catalog stamp, facts).
# A full recompute of every brief reads the same ~2,000 quotes for each; a worker reads each
# once and then only those saved since (any save moves updated_at, a service's also the
# version) or whose GPU or system rows changed (the catalog stamp). Cleared when full.
_FACTS: dict[int, tuple[object, object, object, QuoteFacts]] = {}
FACTS_CACHE_SIZE = 50_000


def quote_facts_seen(seen: Iterable[tuple[int, int, object]]) -> list[QuoteFacts]:
    """The facts of the quotes ``seen`` ((id, version, updated_at), in order), read from the
    database only where this process has not read that version of the quote yet."""
    seen = list(seen)
    stamp = catalog_version()  # the GPU and system rows a quote's facts join
    missing = [
        pk
        for pk, version, updated_at in seen
        if (found := _FACTS.get(pk)) is None or found[:3] != (version, updated_at, stamp)
    ]
    if missing:
        if len(_FACTS) + len(missing) > FACTS_CACHE_SIZE:
            _FACTS.clear()
        for v in Quote.objects.filter(pk__in=missing).values(*QUOTE_VALUES, "updated_at"):
            facts = _quote(v)
            _FACTS[facts.pk] = (facts.version, v["updated_at"], stamp, facts)
    # A quote saved again between the two reads is costed as read (its new version's
    # request recomputes the table again).
    return [_FACTS[pk][3] for pk, _, _ in seen if pk in _FACTS]
