"""Serving plans that no single quote is: a heterogeneous GPU mix by request size (``MIX``) and
disaggregated prefill / decode pools (``DISAGG``), each costed into one candidate row.

Both are for real-time LLM briefs with a latency target, and both are built from the same
quotes the table's GPU rows are (the brief's team's, in the reporting currency):

- A quote's cost per replica is found by the costing itself: the quote costed for one replica
  and for two (``_probe``); the difference is what each replica adds (GPU-hours, serving
  stack, observability, shared labour), the rest what using the quote at all costs (storage,
  network, extras, a deployment's platform labour). A quote whose probe misses the brief for a
  reason of its own (a commitment beyond the horizon, bought hardware in a public-cloud brief,
  self-managed GPUs for a managed-API brief) is left out of both plans.
- ``MIX``: every bucket of the brief's request sizes (apps.briefs.models.brief_size_buckets) is
  estimated on every GPU at the GPU count the table's GPU rows use; a replica's capacity in a
  bucket is the requests a second it completes at the latency target
  (``CapacityPlan.requests_per_s_at_target``). ``apps.engine.mix.solve_mix`` (HiGHS) picks the
  replicas of each quote and the buckets they serve. Its saving is reported against the best
  single quote under the same request sizes (``best_single``), costed the same way.
- ``DISAGG``: ``apps.engine.disagg.plan_disagg`` sizes a prefill pool for the TTFT target and a
  decode pool for the ITL target over every pair of GPU types, at the cheapest quote of each
  (GPU, count).

Each part of a plan is costed as a GPU row is (``cost_gpu_quote``) and the parts' lines summed.
A mix part serves its share of the requests, so the parts' accepted outputs add up to the
brief's. A disaggregated plan's outputs are the decode pool's: its prefill pool adds only its
own GPUs' lines (and the extras of its quote when that is another quote); storage, egress and
the deployment's platform labour are counted once, with the decode pool. The KV hand-off
between the pools is not priced (traffic inside the cluster's fabric).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING

from apps.briefs.models import brief_size_buckets
from apps.catalog.selectors import engine_estimates, gpu_names, gpu_specs
from apps.engine import EngineInputError, GpuSpec
from apps.engine.costing import (
    CandidateCost,
    CapacityFigures,
    QuoteTerms,
    cost_gpu_quote,
    gpu_cost_basis,
)
from apps.engine.costing_constants import SECONDS_PER_HOUR
from apps.engine.costing_rates import gpu_hourly_rate, significant
from apps.engine.costing_types import COMMITTED_TERMS, ZERO
from apps.engine.disagg import DisaggPlan as EngineDisaggPlan
from apps.engine.disagg import PoolOption, plan_disagg
from apps.engine.energy import JOULES_PER_KWH
from apps.engine.mix import MixOption, best_single, best_single_cost, solve_mix
from apps.engine.mix import MixPlan as EngineMixPlan
from apps.engine.request_sizes import SizeBucket
from apps.quotes.models import TERM_LABELS

from .configuration import capacity_figures, target_misses
from .fx import FxMissing
from .offers import QuoteFacts
from .rows import UNCOSTABLE, row_overflow, uncostable_reason
from .state import (
    PLAN_KINDS,
    BucketCapacities,
    CandidateKind,
    Configuration,
    DisaggPlan,
    DisaggPool,
    Figures,
    FrontierEntry,
    MixPart,
    MixPlan,
    PlanBucket,
    PlanInputs,
    PlanMissing,
    RequestLog,
    Row,
    shown,
)

if TYPE_CHECKING:  # candidates imports this module
    from .candidates import TableContext

__all__ = ["PLAN_KINDS", "PlanCatalog", "plan_catalog", "plan_rows", "plans_unchanged"]

# A disaggregated plan's prefill pool carries these lines of its own GPUs; the rest of the
# month's lines are the decode pool's (see the module doc).
PREFILL_POOL_LINES = frozenset(
    {"gpu_compute", "retry_waste", "idle_capacity", "serving_stack", "observability"}
)


@dataclass(frozen=True, slots=True)
class _Offer:
    """A quote as the plans use it: its GPU at one GPU count a replica, and its costs."""

    facts: QuoteFacts
    gpu_count: int
    terms: QuoteTerms
    replica_cost: Decimal  # a month, each replica
    fixed_cost: Decimal  # a month, once the quote is used

    @property
    def slug(self) -> str:
        return self.facts.gpu


@dataclass(frozen=True, slots=True)
class PlanCatalog:
    """The catalog as the plans read it: GPU names for their notes, specs for the engine."""

    names: dict[str, str]
    specs: dict[str, GpuSpec]


def plan_catalog() -> PlanCatalog:
    """Read once per recompute, or once for a batch of tables re-costed together."""
    return PlanCatalog(names=gpu_names(), specs={s.slug: s for s in gpu_specs()})


def plan_counts(ctx: TableContext, slug: str, node_limit: int) -> list[int]:
    """The GPUs per replica a plan may use of a GPU: the count the table's GPU rows use at a full
    node, and the fewest on which the model fits (small requests may need no more)."""
    answer = ctx.answer.for_gpu(slug)
    configured = ctx.configurator.configure(slug, node_limit)
    if answer is None or configured is None:
        return []
    fitting = [r.gpu_count for r in answer.ladder if r.fits or r.max_concurrency >= 1]
    if not fitting:
        return []
    return sorted({configured.gpus_per_replica, fitting[0]})


def part_capacity(
    ctx: TableContext, slug: str, count: int, replicas: int, batch: int | None = None
) -> CapacityFigures:
    """A plan part's capacity figures: ``replicas`` of ``count`` GPUs kept up through the
    active hours (the one builder, apps.finance.configuration.capacity_figures)."""
    answer = ctx.answer.for_gpu(slug)
    rung = answer.rung(count) if answer is not None else None
    if rung is None and answer is not None:
        rung = answer.chosen
    assert rung is not None  # noqa: S101 - plans use GPUs the engine answered
    capacity = capacity_figures(
        estimate=rung,
        gpus_per_replica=count,
        replicas=replicas,
        hours_per_month=ctx.demand.hours_per_month,
        meets_latency_target=True,
        provisioned=True,
        batch=batch,
    )
    # The plans size the replicas for the load themselves (the solver, the pools): no
    # throughput check of the costing's own, as for one quote's row.
    return replace(capacity, output_tokens_per_s_per_replica=None)


def _offers(ctx: TableContext, quotes: Iterable[QuoteFacts], catalog: PlanCatalog) -> list[_Offer]:
    """The quotes the plans may use, at each GPU count of ``plan_counts`` the quote offers: of
    a GPU the engine fits, in the reporting currency, and not missing the brief on their own
    (a spot quote for work that cannot be interrupted, a commitment beyond the horizon, ...)."""
    # Of the quotes of one GPU, GPU counts, pricing term, operating model and commitment, one
    # with no lower GPU-hour rate and no lower fixed monthly prices (storage, egress, network,
    # extras) than another costs at least as much per replica and at least as much once used,
    # and misses the brief for the same reasons: it is never chosen, so it is not costed.
    some = next(iter(ctx.answer.gpus), None)
    if some is None:
        return []
    volumes = gpu_cost_basis(
        demand=ctx.demand, capacity=part_capacity(ctx, some.gpu, some.pick, 1), finance=ctx.finance
    )
    counts_of: dict[str, list[int]] = {}
    groups: dict[tuple[object, ...], list[tuple[Decimal, Decimal, int, QuoteFacts, QuoteTerms]]]
    groups = {}
    for facts in quotes:
        try:
            terms = ctx.quote_terms(facts)
        except (FxMissing, *UNCOSTABLE):
            continue  # not costed: its own row says why (apps.finance.candidates.cost_offers)
        spec = catalog.specs.get(facts.gpu)
        if spec is None:
            continue
        if facts.gpu not in counts_of:
            counts_of[facts.gpu] = plan_counts(ctx, facts.gpu, spec.max_gpus_per_node)
        instance = facts.instance
        # A quote rented as whole instances joins a plan only at its instance size per
        # replica: the plans cost a replica as its GPUs' share, exact only for a whole instance.
        counts = tuple(
            c for c in counts_of[facts.gpu] if c <= facts.limit and instance in (None, c)
        )
        if not counts:
            continue
        key: tuple[object, ...] = (
            facts.gpu, counts, terms.pricing_term, terms.operating_model, terms.is_bought,
            terms.minimum_commitment_months,
            # A bought GPU's rate depends on its own power figures: each is costed alone.
            facts.pk if terms.is_bought else None,
        )  # fmt: skip
        try:
            rate = ZERO if terms.is_bought else gpu_hourly_rate(terms, ctx.finance)[0]
            fixed = (
                terms.storage_price_per_tb_month * volumes.storage_tb
                + terms.egress_price_per_gb * volumes.egress_gb
                + terms.network_monthly
                + terms.monthly_extras
            )
        except UNCOSTABLE:
            continue
        groups.setdefault(key, []).append((rate, fixed, facts.pk, facts, terms))
    probes: dict[tuple[str, int], tuple[object, object]] = {}
    out: list[_Offer] = []
    for key, members in groups.items():
        lowest_fixed: Decimal | None = None
        for _, fixed, _, facts, terms in sorted(members, key=lambda m: m[:3]):
            if lowest_fixed is not None and fixed >= lowest_fixed:
                continue  # a cheaper-rate quote of the group has fixed prices as low
            lowest_fixed = fixed
            for count in key[1]:  # type: ignore[attr-defined]
                try:
                    offer = _offer(ctx, probes, facts, count, terms)
                except UNCOSTABLE:
                    continue  # a figure too large to cost: never chosen
                if offer is not None:
                    out.append(offer)
    return out


def _offer(
    ctx: TableContext,
    probes: dict[tuple[str, int], tuple[object, object]],
    facts: QuoteFacts,
    count: int,
    terms: QuoteTerms,
) -> _Offer | None:
    """A quote at ``count`` GPUs per replica, costed for one replica and for two: the
    difference is what each replica adds, the rest what using the quote at all costs; None when
    it misses the brief on its own."""
    key = (facts.gpu, count)
    if key not in probes:
        probes[key] = tuple(  # type: ignore[assignment]
            gpu_cost_basis(
                demand=ctx.demand,
                capacity=part_capacity(ctx, facts.gpu, count, n),
                finance=ctx.finance,
            )
            for n in (1, 2)
        )
    one, two = (cost_gpu_quote(basis, terms) for basis in probes[key])  # type: ignore[arg-type]
    if one.why_not:
        return None
    per_replica = two.monthly_cost - one.monthly_cost
    return _Offer(
        facts=facts,
        gpu_count=count,
        terms=terms,
        replica_cost=per_replica,
        fixed_cost=max(one.monthly_cost - per_replica, Decimal(0)),
    )


def _rate_rps(ctx: TableContext) -> float | None:
    """The brief's requests a second over its active hours, retries included (a retried
    request is served again)."""
    requests = ctx.demand.requests_per_month
    hours = ctx.demand.hours_per_month
    if not requests or not hours:
        return None
    return float(requests / (hours * SECONDS_PER_HOUR) / (1 - ctx.finance.retry_rate))


# A brief given as concurrency is a closed loop: its requests in flight, not a rate, are the
# load, as they are for a GPU row (apps.engine.deployment.in_flight_share). A plan solved at the
# demand's rate (the concurrency over the typical GPU's latency, `requests_per_month`) may hold
# fewer; it is solved again at the rate its own latency makes of the brief's requests in flight
# (Little's law, rate = in flight / latency), which settles in a round or two because the
# latency at the targets does not grow with the rate. The rounds are a bound, not a tuning.
PLAN_LOAD_ROUNDS = 4
# Rates within this share of each other are one load (the solver's rounding).
PLAN_RATE_TOLERANCE = 1e-3


def closed_loop_rate(ctx: TableContext, rate: float, in_flight: float) -> float | None:
    """For a brief given as concurrency whose plan, sized at ``rate`` requests a second, holds
    only ``in_flight`` of its requests: the rate to size it at instead (``rate`` scaled by the
    shortfall). None when the plan holds them all, or the brief gives a rate."""
    concurrency = ctx.brief.concurrency
    if ctx.brief.requests_per_second or not concurrency or in_flight <= 0:
        return None
    if in_flight >= concurrency * (1 - PLAN_RATE_TOLERANCE):
        return None
    return rate * concurrency / in_flight


def _eligible(ctx: TableContext) -> str | None:
    """Why the brief gets no plans, or None."""
    brief = ctx.brief
    if brief.workload_type != "REALTIME_INFERENCE":
        return "real-time serving briefs only"
    if not (brief.ttft_target_ms or brief.itl_target_ms or brief.e2e_target_ms):
        return "the brief has no latency target"
    if _rate_rps(ctx) is None:
        return "the brief has no request rate"
    return None


# --- costing a plan's parts --------------------------------------------------------------------


def _part_cost(
    ctx: TableContext, offer: _Offer, replicas: int, request_share: float, batch: int | None
) -> CandidateCost:
    """One part of a plan costed as a GPU row: ``replicas`` of the offer serving
    ``request_share`` of the brief's requests."""
    capacity = part_capacity(ctx, offer.slug, offer.gpu_count, replicas, batch)
    requests = (ctx.demand.requests_per_month or Decimal(0)) * Decimal(repr(request_share))
    demand = replace(ctx.demand, requests_per_month=requests)
    basis = gpu_cost_basis(demand=demand, capacity=capacity, finance=ctx.finance)
    return cost_gpu_quote(basis, offer.terms)


@dataclass(frozen=True, kw_only=True, slots=True)
class _Summed:
    """A plan's row figures, its parts costed apart and summed."""

    cost_lines: dict[str, Decimal]
    monthly_cost: Decimal
    accepted: Decimal
    unit_cost: Decimal | None
    why_not: tuple[str, ...]
    basis: str
    paid_gpus: int
    paid_gpu_hours: Decimal
    energy: dict[str, Decimal | None]


def _summed(
    costs: Sequence[tuple[CandidateCost, frozenset[str] | None]], accepted: Decimal
) -> _Summed:
    """Each part's lines (all, or those named), summed line by line in the first part's order;
    the energy of every part over ``accepted``."""
    lines: dict[str, Decimal] = {}
    for cost, only in costs:
        for name, amount in cost.cost_lines.items():
            if only is None or name in only:
                lines[name] = lines.get(name, Decimal(0)) + amount
    monthly = sum(lines.values(), Decimal(0))
    energies = [cost.energy for cost, _ in costs]
    kwh = co2e = None
    if all(e is not None for e in energies):
        kwh = sum((e.kwh_per_month for e in energies if e), Decimal(0))
        if all(e and e.kg_co2e_per_month is not None for e in energies):
            co2e = sum((e.kg_co2e_per_month or Decimal(0) for e in energies if e), Decimal(0))
    why_not = tuple(sorted({w for cost, _ in costs for w in cost.why_not}))
    calibrated = any(c.basis.value == "CALIBRATED" for c, _ in costs)
    return _Summed(
        cost_lines=lines,
        monthly_cost=monthly,
        accepted=accepted,
        unit_cost=significant(monthly / accepted) if accepted > 0 and not why_not else None,
        why_not=why_not,
        basis="CALIBRATED" if calibrated else "ESTIMATED",
        paid_gpus=sum(c.gpus_paid for c, _ in costs),
        paid_gpu_hours=sum((c.paid_gpu_hours_per_month for c, _ in costs), Decimal(0)),
        energy={
            "energy_kwh_per_month": None if kwh is None else kwh.quantize(Decimal("0.0001")),
            "energy_j_per_output": (
                None
                if kwh is None or accepted <= 0
                else (kwh * JOULES_PER_KWH / accepted).quantize(Decimal("0.000001"))
            ),
            "co2e_kg_per_month": None if co2e is None else co2e.quantize(Decimal("0.0001")),
        },
    )


def _plan_row(
    kind: CandidateKind,
    summed: _Summed,
    figures: Figures,
    misses: list[str],
    notes: list[str],
    *,
    replicas: int,
    terms: Sequence[str],
    mix: MixPlan | None = None,
    disagg: DisaggPlan | None = None,
) -> Row:
    why_not = tuple(dict.fromkeys([*misses, *summed.why_not]))
    meets = not why_not and summed.accepted > 0
    one_term = list(dict.fromkeys(terms))
    paid = summed.paid_gpus
    return Row(
        kind=kind,
        quote_id=None,
        api_route_id=None,
        gpu_id=None,
        configuration=Configuration(
            gpu=None,
            gpus_per_replica=None,
            replicas=replicas,
            paid_gpus=paid,
            layout="",
            # A plan names one term when its parts share it; each part names its own.
            pricing_term=one_term[0] if len(one_term) == 1 else "",
            hours_billed_per_month=(summed.paid_gpu_hours / paid).quantize(Decimal("0.0001"))
            if paid
            else None,
        ),
        figures=replace(
            figures,
            energy_kwh_per_month=summed.energy["energy_kwh_per_month"],
            energy_j_per_output=summed.energy["energy_j_per_output"],
            co2e_kg_per_month=summed.energy["co2e_kg_per_month"],
        ),
        cost_lines={k: v for k, v in summed.cost_lines.items()},
        monthly_cost=summed.monthly_cost,
        accepted_outputs_per_month=summed.accepted,
        effective_unit_cost=summed.unit_cost if meets else None,
        meets_constraints=meets,
        why_not=why_not,
        notes=tuple(notes),
        basis=summed.basis,
        paid_gpu_hours_per_month=summed.paid_gpu_hours,
        mix=mix,
        disagg=disagg,
    )


def _quote_words(offer: _Offer, names: dict[str, str]) -> str:
    """ "2 x NVIDIA H100 SXM5 on quote #7 (on demand)": an offer in a plan's notes."""
    gpu = names.get(offer.slug, offer.slug)
    term = str(TERM_LABELS.get(offer.facts.pricing_term, offer.facts.pricing_term)).lower()
    gpus = f"{offer.gpu_count} x {gpu}" if offer.gpu_count != 1 else gpu
    return f"{gpus} on quote #{offer.facts.pk} ({term})"


def _rate_words(rate: float) -> str:
    """2,040 or 20.4 or 0.46: a rate as people write it."""
    return f"{rate:,.0f}" if rate >= 100 else f"{rate:.3g}"


def _instances(n: int) -> str:
    return f"{n} instance{'s' if n != 1 else ''}"


def _committed(offers: Iterable[_Offer]) -> bool:
    return any(o.terms.pricing_term in COMMITTED_TERMS for o in offers)


# --- MIX ----------------------------------------------------------------------------------------


def bucket_capacities(
    ctx: TableContext,
    buckets: tuple[SizeBucket, ...],
    wanted: set[tuple[str, int]],
    specs: Sequence[GpuSpec],
) -> tuple[dict[tuple[str, int], list[float]], dict[tuple[str, int], list[int]]]:
    """Per (GPU, GPU count) of ``wanted``: requests a second one replica completes at the
    latency target in each bucket (0 where it cannot), and the sequences it then has in flight.
    One engine call per bucket and GPU count."""
    by_count: dict[int, list[str]] = {}
    for slug, count in sorted(wanted):
        by_count.setdefault(count, []).append(slug)
    rates: dict[tuple[str, int], list[float]] = {k: [0.0] * len(buckets) for k in wanted}
    batches: dict[tuple[str, int], list[int]] = {k: [0] * len(buckets) for k in wanted}
    calibration = ctx.configurator.calibration_now()
    for count, slugs in by_count.items():
        for b, bucket in enumerate(buckets):
            request = replace(
                ctx.request,
                input_tokens_p50=bucket.input_tokens,
                input_tokens_p95=bucket.input_tokens,
                output_tokens_p50=bucket.output_tokens,
                output_tokens_p95=bucket.output_tokens,
                gpus=tuple(slugs),
                gpu_count=count,
            )
            try:
                found = engine_estimates(request, calibration=calibration, specs=specs)
            except EngineInputError:
                continue  # e.g. the bucket does not fit the model's context window
            for e in found:
                plan = e.capacity
                if e.fits and plan is not None and plan.requests_per_s_at_target:
                    rates[(e.gpu, count)][b] = plan.requests_per_s_at_target
                    batches[(e.gpu, count)][b] = plan.max_concurrency_at_target or 0
    return rates, batches


def plan_buckets(ctx: TableContext) -> tuple[tuple[SizeBucket, ...], str]:
    """The request sizes a mix is planned for, and where they are from: the brief's own
    buckets, else the request log of its latest benchmark run that has one, else log-normal
    from its p50 and p95 token counts."""
    if not ctx.brief.request_size_buckets and ctx.request_log is not None:
        return ctx.request_log.buckets, ctx.request_log.source
    return brief_size_buckets(ctx.brief)


def stored_request_log(stored: PlanInputs | None) -> RequestLog | None:
    """The buckets a table's plans last used when they came from a benchmark's request log
    (a context rebuilt from the table reads no runs)."""
    if stored is None or not stored.bucket_source.startswith("the request log"):
        return None
    if not stored.buckets:
        return None
    buckets = tuple(
        SizeBucket(input_tokens=b.input_tokens, output_tokens=b.output_tokens, share=b.share)
        for b in stored.buckets
    )
    return RequestLog(buckets=buckets, source=stored.bucket_source)


def _capacities_key(ctx: TableContext, buckets: tuple[SizeBucket, ...]) -> str:
    """What bucket capacities depend on: the engine's answer for the brief (its key: request,
    catalog, calibration, engine version) and the buckets."""
    blob = json.dumps([ctx.answer.key, [list(astuple(b)) for b in buckets]])
    return hashlib.sha256(blob.encode()).hexdigest()


# Bucket capacities are estimated for this many (GPU, count) pairs at a time, the cheapest first,
# until the best single-option plan bounds the rest out (``_mix_capacities``). A speed setting of
# this module (bench/recompute.py), not a model figure: the plan is the same at any value.
CAPACITY_BATCH = 4


def _key(slug: str, count: int) -> str:
    return f"{slug}|{count}"


class _Capacities:
    """Bucket capacities by (GPU, count): from what the table kept of its last compute when that
    still holds (a price change re-solves the plans without the engine when it can), else from
    the engine, a batch of pairs at a time."""

    def __init__(
        self, ctx: TableContext, buckets: tuple[SizeBucket, ...], specs: Sequence[GpuSpec]
    ) -> None:
        self.ctx, self.buckets, self.specs = ctx, buckets, specs
        self.key = _capacities_key(ctx, buckets)
        self.rates: dict[tuple[str, int], list[float]] = {}
        self.batches: dict[tuple[str, int], list[int]] = {}
        stored = ctx.plan_capacities
        if stored is not None and stored.key == self.key:
            for text, rates in stored.rates.items():
                pair = _pair(text)
                self.rates[pair] = list(rates)
                self.batches[pair] = list(stored.batches.get(text, (0,) * len(rates)))

    def fetch(self, pairs: Iterable[tuple[str, int]]) -> None:
        missing = {k for k in pairs if k not in self.rates}
        if not missing:
            return
        rates, batches = bucket_capacities(self.ctx, self.buckets, missing, self.specs)
        for k in missing:  # a pair the engine no longer fits serves nothing
            self.rates[k] = rates.get(k, [0.0] * len(self.buckets))
            self.batches[k] = batches.get(k, [0] * len(self.buckets))

    def keep(self, pairs: Iterable[tuple[str, int]]) -> None:
        """Kept on the context (the table's inputs), for ``pairs`` only: what a fresh compute
        of the same quotes keeps, whatever was stored before."""
        pairs = list(pairs)
        self.ctx.plan_capacities = BucketCapacities(
            key=self.key,
            rates={_key(s, n): tuple(self.rates[(s, n)]) for s, n in pairs},
            batches={_key(s, n): tuple(self.batches[(s, n)]) for s, n in pairs},
        )


def _pair(text: str) -> tuple[str, int]:
    slug, count = text.rsplit("|", 1)
    return slug, int(count)


def _mix_option(i: int, o: _Offer, rates: list[float], names: dict[str, str]) -> MixOption:
    return MixOption(
        key=str(i),
        label=_quote_words(o, names),
        replica_cost_per_month=float(o.replica_cost),
        fixed_cost_per_month=float(o.fixed_cost),
        requests_per_s_per_replica=tuple(rates),
    )


def _mix_capacities(
    ctx: TableContext,
    buckets: tuple[SizeBucket, ...],
    rate: float,
    offers: list[_Offer],
    catalog: PlanCatalog,
) -> tuple[list[tuple[str, int]], _Capacities]:
    """The (GPU, count) pairs a cheapest mix may use, with their bucket capacities. A plan that
    uses an offer pays at least one replica and its fixed cost; once the best single-option plan
    among the pairs estimated costs less than that for every offer of the pairs left, none of
    them can be in the cheapest mix (apps.engine.mix, "Pruning"), so they are not estimated.
    The pairs are taken cheapest first, so the answer is the one estimating every pair gives."""
    shares = [b.share for b in buckets]
    by_pair: dict[tuple[str, int], list[_Offer]] = {}
    for o in offers:
        by_pair.setdefault((o.slug, o.gpu_count), []).append(o)
    floor = {  # the least a plan using the pair pays: one replica and the fixed cost
        pair: min(float(o.replica_cost) + float(o.fixed_cost) for o in group)
        for pair, group in by_pair.items()
    }
    order = sorted(floor, key=lambda k: (floor[k], k))
    known = _Capacities(ctx, buckets, tuple(catalog.specs.values()))
    bound, done = math.inf, 0
    while done < len(order) and floor[order[done]] <= bound:
        # The cheapest pair alone first: its single-option plan usually bounds most others out,
        # so a re-solve asks the engine for no pair a fresh compute would not keep.
        size = 1 if done == 0 else CAPACITY_BATCH
        batch = [k for k in order[done : done + size] if floor[k] <= bound]
        done += size
        known.fetch(batch)
        options = [
            _mix_option(i, o, known.rates[pair], catalog.names)
            for pair in batch
            for i, o in enumerate(by_pair[pair])
        ]
        single = best_single_cost(rate_rps=rate, shares=shares, options=options)
        if single is not None:
            bound = min(bound, single[0])
    # Every pair left has a floor above the bound: the bound is the best single plan of all.
    needed = [k for k in order if floor[k] <= bound]
    known.keep(needed)
    return needed, known


def _mix_part(
    offer: _Offer,
    replicas: int,
    request_share: float,
    shares: tuple[float, ...],
    cost: CandidateCost,
    batch: int,
) -> MixPart:
    return MixPart(
        quote_id=offer.facts.pk,
        gpu=offer.slug,
        gpu_count=offer.gpu_count,
        replicas=replicas,
        pricing_term=offer.facts.pricing_term.value,
        request_share=round(request_share, 6),
        bucket_shares=tuple(round(x, 6) for x in shares),
        monthly_cost=cost.monthly_cost,
        batch=batch,
    )


def mix_row(
    ctx: TableContext, offers: list[_Offer], catalog: PlanCatalog
) -> tuple[Row | None, str | None]:
    """The MIX row, or why there is none: for a brief given as concurrency, sized again until
    its parts hold the requests in flight (`closed_loop_rate`)."""
    rate = _rate_rps(ctx)
    assert rate is not None  # noqa: S101 - _eligible checked
    row, reason, in_flight = _mix_row_at(ctx, offers, catalog, rate)
    for _ in range(PLAN_LOAD_ROUNDS):
        wanted = closed_loop_rate(ctx, rate, in_flight)
        if row is None or wanted is None:
            break
        rate = wanted
        row, reason, in_flight = _mix_row_at(ctx, offers, catalog, rate)
    return row, reason


def _mix_row_at(
    ctx: TableContext, offers: list[_Offer], catalog: PlanCatalog, rate: float
) -> tuple[Row | None, str | None, float]:
    """The MIX row at ``rate`` requests a second (or why there is none), and the requests its
    parts hold in flight."""
    names = catalog.names
    buckets, source = plan_buckets(ctx)
    shares = [b.share for b in buckets]
    needed, known = _mix_capacities(ctx, buckets, rate, offers, catalog)
    rates, batches, wanted = known.rates, known.batches, set(needed)
    usable = [
        o for o in offers if (o.slug, o.gpu_count) in wanted and any(rates[(o.slug, o.gpu_count)])
    ]
    options = [_mix_option(i, o, rates[(o.slug, o.gpu_count)], names) for i, o in enumerate(usable)]
    if not options:
        return None, "no quote's GPU meets the latency target at any request size", 0.0
    solved = solve_mix(rate_rps=rate, shares=shares, options=options)
    if not isinstance(solved, EngineMixPlan):
        sizes = ", ".join(
            f"{buckets[b].input_tokens} in / {buckets[b].output_tokens} out"
            for b in solved.unservable_buckets
        )
        return None, solved.reason + (f" (requests of {sizes} tokens)" if sizes else ""), 0.0
    single = best_single(rate_rps=rate, shares=shares, options=options)
    # The parts serve the brief's whole demand: its accepted outputs, as a GPU row counts them
    # (the parts' own, each rounded to 4 places, may sum a ten-thousandth off).
    first = usable[0]
    accepted = gpu_cost_basis(
        demand=ctx.demand,
        capacity=part_capacity(ctx, first.slug, first.gpu_count, 1),
        finance=ctx.finance,
    ).accepted_q

    def costed(plan: EngineMixPlan) -> tuple[_Summed, list[MixPart], list[_Offer], list[int]]:
        parts, used, costs, flights = [], [], [], []
        for part in plan.parts:
            offer = usable[int(part.key)]
            served = [s * share for s, share in zip(part.bucket_shares, shares, strict=True)]
            request_share = math.fsum(served)
            at_target = batches[(offer.slug, offer.gpu_count)]
            in_flight = math.fsum(x * at_target[b] for b, x in enumerate(served) if x)
            in_flight /= request_share or 1
            load = part.load_replicas / part.replicas if part.replicas else 0
            batch = max(1, round(in_flight * load))
            cost = _part_cost(ctx, offer, part.replicas, request_share, batch)
            costs.append((cost, None))
            used.append(offer)
            flights.append(batch)
            parts.append(
                _mix_part(offer, part.replicas, request_share, part.bucket_shares, cost, batch)
            )
        return _summed(costs, accepted), parts, used, flights

    summed, parts, used, flights = costed(solved)
    in_flight = math.fsum(p.replicas * f for p, f in zip(parts, flights, strict=True))
    notes = [
        f"GPU mix by request size: {len(buckets)} bucket{'s' if len(buckets) != 1 else ''} "
        f"({source}) at {_rate_words(rate)} requests a second, retries included; each served "
        "by the quotes whose GPU meets the latency target at that size (Mélange's integer program, "
        f"solved by HiGHS over {solved.options_considered} GPU and quote options after pruning)",
    ]
    for part, offer in zip(parts, used, strict=True):
        served_sizes = [
            f"{b.input_tokens}/{b.output_tokens}"
            for b, x in zip(buckets, part.bucket_shares, strict=True)
            if x > 0
        ]
        notes.append(
            f"{part.replicas} replica{'s' if part.replicas != 1 else ''} of "
            f"{_quote_words(offer, names)} serve {part.request_share:.1%} of requests "
            f"(prompt/output tokens {', '.join(served_sizes)})"
        )
    notes.append(
        "latency: each part meets the latency target at the request sizes it serves (its "
        "capacity in each bucket is the engine's at the target)"
    )
    best_part: MixPart | None = None
    saving = share = None
    if single is not None:
        single_summed, single_parts, single_used, _ = costed(single)
        saving = (single_summed.monthly_cost - summed.monthly_cost).quantize(Decimal("0.01"))
        share = (
            (single_summed.monthly_cost - summed.monthly_cost) / single_summed.monthly_cost
            if single_summed.monthly_cost
            else Decimal(0)
        ).quantize(Decimal("0.0001"))
        best_part = replace(single_parts[0], monthly_cost=single_summed.monthly_cost)
        if len(parts) == 1 and saving <= 0:
            notes.append(
                "no saving: the cheapest mix is one GPU type, the best single quote under the "
                "same request sizes"
            )
        else:
            notes.append(
                f"saves {share:.1%} a month ({saving:,.2f} {ctx.currency}) against the best "
                f"single quote under the same request sizes: "
                f"{_quote_words(single_used[0], names)}, {single_parts[0].replicas} replicas, "
                f"{single_summed.monthly_cost:,.2f} {ctx.currency}"
            )
    plan = MixPlan(
        rate_rps=round(rate, 6),
        bucket_source=source,
        buckets=tuple(
            PlanBucket(input_tokens=b.input_tokens, output_tokens=b.output_tokens, share=b.share)
            for b in buckets
        ),
        parts=tuple(parts),
        best_single=best_part,
        saving_monthly=saving,
        saving_share=share,
        committed=_committed(used),
    )
    figures = Figures(fit="FITS", throughput=shown(rate), throughput_unit="requests/s")
    row = _plan_row(
        CandidateKind.MIX,
        summed,
        figures,
        [],
        notes,
        replicas=sum(p.replicas for p in parts),
        terms=[p.pricing_term for p in parts],
        mix=plan,
    )
    return row, None, in_flight


# --- DISAGG ---------------------------------------------------------------------------------------


def disagg_row(
    ctx: TableContext, offers: list[_Offer], catalog: PlanCatalog
) -> tuple[Row | None, str | None]:
    """The DISAGG row, or why there is none."""
    names = catalog.names
    brief = ctx.brief
    if not (brief.ttft_target_ms and brief.itl_target_ms):
        return None, "disaggregated pools are sized for a TTFT and an ITL target; give both"
    rate = _rate_rps(ctx)
    assert rate is not None  # noqa: S101 - _eligible checked
    specs = catalog.specs
    cheapest: dict[tuple[str, int], _Offer] = {}
    for o in offers:  # quotes of one GPU and count perform alike: the cheapest per GPU-month
        key = (o.slug, o.gpu_count)
        if key not in cheapest or o.replica_cost < cheapest[key].replica_cost:
            cheapest[key] = o
    chosen = [o for o in cheapest.values() if o.slug in specs]
    options = [
        PoolOption(
            key=str(i),
            label=_quote_words(o, names),
            gpu=specs[o.slug],
            gpus_per_instance=o.gpu_count,
            cost_per_gpu_month=float(o.replica_cost / o.gpu_count),
        )
        for i, o in enumerate(chosen)
    ]
    if not options:
        return None, "no quote's GPU fits the model"
    try:
        found = plan_disagg(
            replace(ctx.request, requests_per_second=rate, concurrency=None), options
        )
        for _ in range(PLAN_LOAD_ROUNDS):
            if not isinstance(found, EngineDisaggPlan):
                break
            # Little's law at the plan's own mean latency: the requests it holds in flight.
            mean_s = (
                found.ttft_mean_ms + float(ctx.demand.output_tokens_mean) * found.itl_ms
            ) / 1000
            wanted = closed_loop_rate(ctx, rate, rate * mean_s)
            if wanted is None:
                break
            rate = wanted
            request = replace(ctx.request, requests_per_second=rate, concurrency=None)
            found = plan_disagg(request, options)
    except EngineInputError as exc:
        return None, f"{exc.field}: {exc.message}"
    if not isinstance(found, EngineDisaggPlan):
        return None, found.reason
    prefill, decode = chosen[int(found.prefill.key)], chosen[int(found.decode.key)]
    decode_cost = _part_cost(ctx, decode, found.decode.instances, 1.0, found.decode.batch)
    prefill_lines = set(PREFILL_POOL_LINES)
    if prefill.facts.pk != decode.facts.pk:
        prefill_lines.add("provider_extras")
    prefill_cost = _part_cost(ctx, prefill, found.prefill.instances, 1.0, None)
    summed = _summed(
        [(decode_cost, None), (prefill_cost, frozenset(prefill_lines))],
        decode_cost.accepted_outputs_per_month,
    )
    pools = (
        DisaggPool(
            role="prefill",
            quote_id=prefill.facts.pk,
            gpu=prefill.slug,
            gpus_per_instance=found.prefill.gpus_per_instance,
            instances=found.prefill.instances,
            layout=found.prefill.layout,
            pricing_term=prefill.facts.pricing_term.value,
            requests_per_s_per_instance=round(found.prefill.goodput_rps_per_instance, 4),
        ),
        DisaggPool(
            role="decode",
            quote_id=decode.facts.pk,
            gpu=decode.slug,
            gpus_per_instance=found.decode.gpus_per_instance,
            instances=found.decode.instances,
            layout=found.decode.layout,
            pricing_term=decode.facts.pricing_term.value,
            requests_per_s_per_instance=round(found.decode.rps_per_instance, 4),
            batch=found.decode.batch,
        ),
    )
    notes = [
        "disaggregated serving (DistServe, NVIDIA Dynamo): prefill on "
        f"{_instances(found.prefill.instances)} of {_quote_words(prefill, names)}, sized for the "
        f"TTFT target; decode on {_instances(found.decode.instances)} of "
        f"{_quote_words(decode, names)}, sized for the ITL target",
        f"TTFT {found.ttft_ms:.0f} ms (p95 estimate; mean {found.ttft_mean_ms:.0f} ms) including "
        f"{found.transfer_ms:.1f} ms to move the prompt's KV cache to the decode pool; ITL "
        f"{found.itl_ms:.1f} ms at {found.decode.batch} sequences in flight",
        "the prefill pool adds its GPUs' lines; storage, egress and platform labour are the "
        "decode pool's, counted once; the KV transfer inside the fabric is not priced",
        *found.notes,
    ]
    plan = DisaggPlan(
        pools=pools,
        ttft_ms=round(found.ttft_ms, 2),
        ttft_mean_ms=round(found.ttft_mean_ms, 2),
        transfer_ms=round(found.transfer_ms, 3),
        itl_ms=round(found.itl_ms, 3),
        committed=_committed((prefill, decode)),
    )
    figures = Figures(
        fit="FITS",
        ttft_p95_ms=shown(found.ttft_ms),
        itl_p95_ms=shown(found.itl_ms),
        latency_p95_ms=shown(found.e2e_s * 1000),
        throughput=shown(rate),
        throughput_unit="requests/s",
        in_flight_per_replica=found.decode.batch,
    )
    misses = target_misses(ctx.brief, figures)
    row = _plan_row(
        CandidateKind.DISAGG,
        summed,
        figures,
        misses,
        notes,
        replicas=found.prefill.instances + found.decode.instances,
        terms=[p.pricing_term for p in pools],
        disagg=plan,
    )
    return row, None


def _frontier(offers: list[_Offer]) -> list[_Offer]:
    """Per GPU and count (whose quotes perform alike), the quotes no other of the group beats on
    both the cost per replica and the fixed cost: the only ones either plan can choose."""
    groups: dict[tuple[str, int], list[_Offer]] = {}
    for o in offers:
        groups.setdefault((o.slug, o.gpu_count), []).append(o)
    kept: list[_Offer] = []
    for group in groups.values():
        lowest_fixed: Decimal | None = None
        for o in sorted(group, key=lambda o: (o.replica_cost, o.fixed_cost, o.facts.pk)):
            if lowest_fixed is None or o.fixed_cost < lowest_fixed:
                kept.append(o)
                lowest_fixed = o.fixed_cost
    # In one order whatever order the quotes were read in: the solver breaks ties by it, and a
    # price change's re-solve must give what a fresh compute gives.
    return sorted(kept, key=lambda o: (o.slug, o.gpu_count, o.facts.pk))


def plan_rows(
    ctx: TableContext, quotes: Iterable[QuoteFacts], catalog: PlanCatalog
) -> tuple[list[Row], PlanInputs]:
    """The MIX and DISAGG rows of a table, and what the table keeps of them: the quotes they
    could choose from, and for each plan that could not be built, why."""
    why = _eligible(ctx)
    if why is not None:
        return [], PlanInputs(not_eligible=why)
    offers = _frontier(_offers(ctx, quotes, catalog))
    built: dict[CandidateKind, Row] = {}
    missing: list[PlanMissing] = []
    for kind, build in ((CandidateKind.MIX, mix_row), (CandidateKind.DISAGG, disagg_row)):
        try:
            row, reason = build(ctx, offers, catalog)
        except UNCOSTABLE as exc:
            row, reason = None, uncostable_reason(exc)
        if row is not None and (overflow := row_overflow(row)) is not None:
            row, reason = None, overflow
        if row is not None:
            built[kind] = row
        elif reason:
            missing.append(PlanMissing(candidate_kind=kind.value, reason=reason))
    rows, unlisted = _worth_listing(built, ctx.currency)
    missing += unlisted
    buckets, source = plan_buckets(ctx)
    return rows, PlanInputs(
        frontier=tuple(
            FrontierEntry(
                quote_id=o.facts.pk,
                gpu=o.slug,
                gpu_count=o.gpu_count,
                replica_cost=o.replica_cost,
                fixed_cost=o.fixed_cost,
            )
            for o in offers
        ),
        missing=tuple(missing),
        capacities=ctx.plan_capacities,
        buckets=tuple(
            PlanBucket(input_tokens=b.input_tokens, output_tokens=b.output_tokens, share=b.share)
            for b in buckets
        ),
        bucket_source=source,
    )


def _worth_listing(
    built: dict[CandidateKind, Row], currency: str
) -> tuple[list[Row], list[PlanMissing]]:
    """The plans that are a candidate of their own, and why the others are not listed. A mix
    is listed when it uses more than one quote and costs less than the best single quote under
    the same request sizes (otherwise it is that quote's own row again); disaggregated pools
    when they cost less a month than that best single quote, colocated."""
    rows: list[Row] = []
    unlisted: list[PlanMissing] = []
    mix = built.get(CandidateKind.MIX)
    single = None
    if mix is not None and mix.mix is not None:
        plan = mix.mix
        single = plan.best_single
        if len(plan.parts) > 1 and (plan.saving_monthly or 0) > 0:
            rows.append(mix)
        else:
            part = plan.parts[0]
            unlisted.append(
                PlanMissing(
                    candidate_kind="MIX",
                    reason="the cheapest plan for the brief's request sizes uses one quote "
                    f"alone (quote #{part.quote_id}, {part.replicas} "
                    f"replica{'' if part.replicas == 1 else 's'} of {part.gpu_count} "
                    f"GPU{'' if part.gpu_count == 1 else 's'}): no mix to list; that quote's "
                    "own row sizes every request at the brief's p50 and p95 token counts",
                )
            )
    disagg = built.get(CandidateKind.DISAGG)
    if disagg is not None:
        colocated = single.monthly_cost if single else None
        if colocated is None or disagg.monthly_cost < colocated:
            rows.append(disagg)
        else:
            unlisted.append(
                PlanMissing(
                    candidate_kind="DISAGG",
                    reason=f"separate prefill and decode pools cost "
                    f"{disagg.monthly_cost:,.2f} {currency} a month, more than serving "
                    f"colocated on quote #{single.quote_id if single else ''} "
                    f"({colocated:,.2f} {currency}) under the same request sizes",
                )
            )
    return rows, unlisted


def plans_unchanged(
    ctx: TableContext,
    stored: PlanInputs | None,
    changed: Iterable[QuoteFacts],
    gone: Iterable[int],
) -> bool:
    """Whether a table's plans still hold after the quotes ``changed`` (their new facts) and
    ``gone`` changed: none of them was a quote the plans could choose from, and none of the
    changed ones now beats one of those on both costs or offers a GPU and count they lacked."""
    if stored is None:
        return False
    if stored.not_eligible:
        return True  # the brief gets no plans whatever the quotes
    ids = {entry.quote_id for entry in stored.frontier}
    changed = list(changed)
    if ids & ({f.pk for f in changed} | set(gone)):
        return False
    by_group: dict[tuple[str, int], list[tuple[Decimal, Decimal]]] = {}
    for entry in stored.frontier:
        by_group.setdefault((entry.gpu, entry.gpu_count), []).append(
            (entry.replica_cost, entry.fixed_cost)
        )
    catalog = PlanCatalog(names={}, specs={s.slug: s for s in gpu_specs()})
    for offer in _offers(ctx, changed, catalog):
        beaten = by_group.get((offer.slug, offer.gpu_count), [])
        if not any(r <= offer.replica_cost and f <= offer.fixed_cost for r, f in beaten):
            return False
    return True
