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
from typing import Any

from apps.briefs.models import brief_size_buckets, size_buckets_of
from apps.catalog.selectors import engine_estimates, gpu_names, gpu_specs
from apps.engine import EngineInputError
from apps.engine.costing import (
    CandidateCost,
    CapacityFigures,
    QuoteTerms,
    cost_gpu_quote,
    gpu_cost_basis,
)
from apps.engine.costing_constants import SECONDS_PER_HOUR
from apps.engine.costing_rates import gpu_hourly_rate, significant
from apps.engine.costing_types import COMMITTED_TERMS, ZERO, Basis
from apps.engine.disagg import DisaggPlan, PoolOption, plan_disagg
from apps.engine.energy import JOULES_PER_KWH
from apps.engine.mix import MixOption, MixPlan, best_single, best_single_cost, solve_mix
from apps.engine.request_sizes import SizeBucket
from apps.quotes.models import Quote

from .configuration import LADDER_KEY
from .fx import FxMissing

# The kinds of rows this module builds (CandidateRow.Kind). Any quote may change them: a full
# recompute rebuilds them, a price change only when it touches a quote they could choose from
# (``plans_unchanged``).
PLAN_KINDS = ("MIX", "DISAGG")

# A disaggregated plan's prefill pool carries these lines of its own GPUs; the rest of the
# month's lines are the decode pool's (see the module doc).
PREFILL_POOL_LINES = frozenset(
    {"gpu_compute", "retry_waste", "idle_capacity", "serving_stack", "observability"}
)


@dataclass(frozen=True, slots=True)
class _Offer:
    """A quote as the plans use it: its GPU at one GPU count a replica, and its costs."""

    facts: dict[str, Any]
    gpu_id: int
    slug: str
    gpu_count: int
    terms: QuoteTerms
    replica_cost: Decimal  # a month, each replica
    fixed_cost: Decimal  # a month, once the quote is used


def _probe_capacity(ctx: Any, gpu_count: int, replicas: int) -> CapacityFigures:
    hours = Decimal(ctx.brief.hours_per_month or 0)
    return CapacityFigures(
        gpu_count=gpu_count,
        replicas=replicas,
        gpu_hours_per_month=gpu_count * replicas * hours,
        fits=True,
        meets_latency_target=True,
    )


def plan_counts(estimate: dict[str, Any]) -> list[int]:
    """The GPUs per replica a plan may use of a GPU: the count the table's GPU rows use, and the
    fewest on which the model fits (small requests may need no more; big ones the first)."""
    if not estimate["fits"]:
        return []
    fitting = [r["gpu_count"] for r in estimate.get(LADDER_KEY) or [] if r.get("fits")]
    return sorted({estimate["gpu_count"], *fitting[:1]})


def _offers(ctx: Any, quotes: Iterable[dict[str, Any]], plan_of: Any) -> list[_Offer]:
    """The quotes the plans may use, at each GPU count of ``plan_counts`` the quote offers: of
    a GPU the engine fits, in the reporting currency, and not missing the brief on their own."""
    # Of the quotes of one GPU, GPU counts, pricing term, operating model and commitment, one
    # with no lower GPU-hour rate and no lower fixed monthly prices (storage, egress, network,
    # extras) than another costs at least as much per replica and at least as much once used,
    # and misses the brief for the same reasons: it is never chosen, so it is not costed.
    volumes = gpu_cost_basis(
        demand=ctx.demand, capacity=_probe_capacity(ctx, 1, 1), finance=ctx.finance
    )
    groups: dict[tuple[Any, ...], list[tuple[Decimal, Decimal, int, Any]]] = {}
    for facts in quotes:
        try:
            gpu_id, slug, limit, terms = plan_of(ctx, facts)
        except FxMissing:
            continue
        estimate = ctx.by_gpu.get(slug)
        if estimate is None:
            continue
        counts = tuple(c for c in plan_counts(estimate) if c <= limit)
        if not counts:
            continue
        key: tuple[Any, ...] = (
            slug, counts, terms.pricing_term, terms.operating_model, terms.is_bought,
            terms.minimum_commitment_months,
            # A bought GPU's rate depends on its own power figures: each is costed alone.
            facts["pk"] if terms.is_bought else None,
        )  # fmt: skip
        rate = ZERO if terms.is_bought else gpu_hourly_rate(terms, ctx.finance)[0]
        fixed = (
            terms.storage_price_per_tb_month * volumes.storage_tb
            + terms.egress_price_per_gb * volumes.egress_gb
            + terms.network_monthly
            + terms.monthly_extras
        )
        groups.setdefault(key, []).append((rate, fixed, facts["pk"], (facts, gpu_id, slug, terms)))
    probes: dict[int, tuple[Any, ...]] = {}
    out: list[_Offer] = []
    for key, members in groups.items():
        lowest_fixed: Decimal | None = None
        for _, fixed, _, (facts, gpu_id, slug, terms) in sorted(members, key=lambda m: m[:3]):
            if lowest_fixed is not None and fixed >= lowest_fixed:
                continue  # a cheaper-rate quote of the group has fixed prices as low
            lowest_fixed = fixed
            for count in key[1]:
                offer = _offer(ctx, probes, facts, gpu_id, slug, count, terms)
                if offer is not None:
                    out.append(offer)
    return out


def _offer(
    ctx: Any,
    probes: dict[int, tuple[Any, ...]],
    facts: dict[str, Any],
    gpu_id: int,
    slug: str,
    count: int,
    terms: QuoteTerms,
) -> _Offer | None:
    """A quote at ``count`` GPUs per replica, costed by its two probes; None when it misses
    the brief on its own."""
    if count not in probes:
        probes[count] = tuple(
            gpu_cost_basis(
                demand=ctx.demand, capacity=_probe_capacity(ctx, count, n), finance=ctx.finance
            )
            for n in (1, 2)
        )
    one, two = (cost_gpu_quote(basis, terms) for basis in probes[count])
    if one.why_not:
        return None
    per_replica = two.monthly_cost - one.monthly_cost
    return _Offer(
        facts=facts,
        gpu_id=gpu_id,
        slug=slug,
        gpu_count=count,
        terms=terms,
        replica_cost=per_replica,
        fixed_cost=max(one.monthly_cost - per_replica, Decimal(0)),
    )


def _rate_rps(ctx: Any) -> float | None:
    """The brief's requests a second over its active hours, retries included (a retried
    request is served again)."""
    requests = ctx.demand.requests_per_month
    hours = ctx.demand.hours_per_month
    if not requests or not hours:
        return None
    return float(requests / (hours * SECONDS_PER_HOUR) / (1 - ctx.finance.retry_rate))


def _eligible(ctx: Any) -> str | None:
    """Why the brief gets no plans, or None."""
    brief = ctx.brief
    if brief.workload_type != "REALTIME_INFERENCE":
        return "real-time serving briefs only"
    if not (brief.ttft_target_ms or brief.itl_target_ms or brief.e2e_target_ms):
        return "the brief has no latency target"
    if ctx.request is None or _rate_rps(ctx) is None:
        return "the brief has no request rate"
    return None


# --- costing a plan's parts --------------------------------------------------------------------


def _part_cost(
    ctx: Any, offer: _Offer, replicas: int, request_share: float, batch: int | None
) -> CandidateCost:
    """One part of a plan costed as a GPU row: ``replicas`` of the offer serving
    ``request_share`` of the brief's requests."""
    hours = Decimal(ctx.brief.hours_per_month or 0)
    estimate = ctx.by_gpu[offer.slug]
    capacity = CapacityFigures(
        gpu_count=offer.gpu_count,
        replicas=replicas,
        gpu_hours_per_month=offer.gpu_count * replicas * hours,
        fits=True,
        meets_latency_target=True,
        memory_headroom_gb=None,
        basis=Basis(estimate.get("basis", "ESTIMATED")),
        batch_per_replica=batch,
    )
    requests = ctx.demand.requests_per_month * Decimal(repr(request_share))
    demand = replace(ctx.demand, requests_per_month=requests)
    basis = gpu_cost_basis(demand=demand, capacity=capacity, finance=ctx.finance)
    return cost_gpu_quote(basis, offer.terms)


def _summed(
    costs: Sequence[tuple[CandidateCost, frozenset[str] | None]], accepted: Decimal
) -> dict[str, Any]:
    """The row figures of parts costed apart: each part's lines (all, or those named), summed
    line by line in the first part's order; the energy of every part over ``accepted``."""
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
    why_not = sorted({w for cost, _ in costs for w in cost.why_not})
    basis = Basis.CALIBRATED if any(c.basis is Basis.CALIBRATED for c, _ in costs) else None
    return {
        "cost_lines": {name: str(amount) for name, amount in lines.items()},
        "monthly_cost": monthly,
        "accepted_outputs_per_month": accepted,
        "effective_unit_cost": (
            significant(monthly / accepted) if accepted > 0 and not why_not else None
        ),
        "meets_constraints": not why_not and accepted > 0,
        "why_not": why_not,
        "basis": (basis or Basis.ESTIMATED).value,
        "paid_gpu_hours_per_month": sum((c.paid_gpu_hours_per_month for c, _ in costs), Decimal(0)),
        "energy_kwh_per_month": None if kwh is None else kwh.quantize(Decimal("0.0001")),
        "energy_j_per_output": (
            None
            if kwh is None or accepted <= 0
            else (kwh * JOULES_PER_KWH / accepted).quantize(Decimal("0.000001"))
        ),
        "co2e_kg_per_month": None if co2e is None else co2e.quantize(Decimal("0.0001")),
    }


def _plan_row(
    kind: str, figures: dict[str, Any], notes: list[str], plan: dict[str, Any], **columns: Any
) -> dict[str, Any]:
    return {
        "candidate_kind": kind,
        "quote_id": None,
        "api_route_id": None,
        "gpu_id": None,
        "pricing_term": "",
        "memory_headroom_gb": None,
        "layout": "",
        "p95_latency_ms": None,
        **figures,
        **columns,
        "notes": notes,
        "plan": plan,
    }


_TERM_WORDS = dict(Quote.PricingTerm.choices)


def _quote_words(offer: _Offer, names: dict[str, str]) -> str:
    """ "2 x NVIDIA H100 SXM5 on quote #7 (on demand)": an offer in a plan's notes."""
    gpu = names.get(offer.slug, offer.slug)
    term = _TERM_WORDS.get(offer.facts["pricing_term"], offer.facts["pricing_term"]).lower()
    gpus = f"{offer.gpu_count} x {gpu}" if offer.gpu_count != 1 else gpu
    return f"{gpus} on quote #{offer.facts['pk']} ({term})"


def _rate_words(rate: float) -> str:
    """2,040 or 20.4 or 0.46: a rate as people write it."""
    return f"{rate:,.0f}" if rate >= 100 else f"{rate:.3g}"


def _instances(n: int) -> str:
    return f"{n} instance{'s' if n != 1 else ''}"


def _committed(offers: Iterable[_Offer]) -> bool:
    return any(o.terms.pricing_term in COMMITTED_TERMS for o in offers)


# --- MIX ----------------------------------------------------------------------------------------


def bucket_capacities(
    ctx: Any,
    buckets: tuple[SizeBucket, ...],
    wanted: set[tuple[str, int]] | None = None,
    specs: Sequence[Any] | None = None,
) -> tuple[dict[tuple[str, int], list[float]], dict[tuple[str, int], list[int]]]:
    """Per GPU the engine fits and GPU count (``plan_counts``): requests a second one replica
    completes at the latency target in each bucket (0 where it cannot), and the sequences it
    then has in flight. One engine call per bucket and GPU count, on ``specs`` (the catalog;
    read here when not given)."""
    if specs is None:
        specs = gpu_specs()
    by_count: dict[int, list[str]] = {}
    for slug, estimate in ctx.by_gpu.items():
        for count in plan_counts(estimate):
            if wanted is None or (slug, count) in wanted:  # only what some quote offers
                by_count.setdefault(count, []).append(slug)
    keys = [(s, n) for n, group in by_count.items() for s in group]
    rates: dict[tuple[str, int], list[float]] = {k: [0.0] * len(buckets) for k in keys}
    batches: dict[tuple[str, int], list[int]] = {k: [0] * len(buckets) for k in keys}
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
                found = engine_estimates(request, calibration=ctx.calibration, specs=specs)
            except EngineInputError:
                continue  # e.g. the bucket does not fit the model's context window
            for e in found:
                plan = e.capacity
                if e.fits and plan is not None and plan.requests_per_s_at_target:
                    rates[(e.gpu, count)][b] = plan.requests_per_s_at_target
                    batches[(e.gpu, count)][b] = plan.max_concurrency_at_target or 0
    return rates, batches


def plan_buckets(ctx: Any) -> tuple[tuple[SizeBucket, ...], str]:
    """The request sizes a mix is planned for, and where they are from: the brief's own
    buckets, else the request log of its latest benchmark run that has one, else log-normal
    from its p50 and p95 token counts."""
    if not ctx.brief.request_size_buckets and ctx.request_log is not None:
        return ctx.request_log
    return brief_size_buckets(ctx.brief)


def stored_request_log(stored: dict[str, Any] | None) -> tuple[Any, str] | None:
    """The buckets a table's plans last used when they came from a benchmark's request log
    (a context rebuilt from the table reads no runs)."""
    stored = stored or {}
    source = stored.get("bucket_source") or ""
    if not source.startswith("the request log") or not stored.get("buckets"):
        return None
    return size_buckets_of(stored["buckets"]), source


def _capacities_key(ctx: Any, buckets: tuple[SizeBucket, ...]) -> str:
    """What bucket capacities depend on: the engine's answer for the brief (its estimates key:
    request, catalog, calibration, engine version) and the buckets."""
    blob = json.dumps([ctx.estimates_key, [list(astuple(b)) for b in buckets]])
    return hashlib.sha256(blob.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class PlanCatalog:
    """The catalog as the plans read it: GPU names for their notes, specs for the engine."""

    names: dict[str, str]
    specs: dict[str, Any]


def plan_catalog() -> PlanCatalog:
    """Read once per recompute, or once for a batch of tables re-costed together."""
    return PlanCatalog(names=gpu_names(), specs={s.slug: s for s in gpu_specs()})


# Bucket capacities are estimated for this many (GPU, count) pairs at a time, the cheapest first,
# until the best single-option plan bounds the rest out (``_mix_capacities``). A speed setting of
# this module (bench/recompute.py), not a model figure: the plan is the same at any value.
CAPACITY_BATCH = 4


class _Capacities:
    """Bucket capacities by (GPU, count): from what the table kept of its last compute when that
    still holds (``ctx.plan_capacities``: a price change re-solves the plans without the engine
    when it can), else from the engine, a batch of pairs at a time."""

    def __init__(self, ctx: Any, buckets: tuple[SizeBucket, ...], specs: Sequence[Any]) -> None:
        self.ctx, self.buckets, self.specs = ctx, buckets, specs
        self.key = _capacities_key(ctx, buckets)
        stored = ctx.plan_capacities or {}
        self.rates: dict[tuple[str, int], list[float]] = {}
        self.batches: dict[tuple[str, int], list[int]] = {}
        if stored.get("key") == self.key:
            self.rates = {_pair(k): v for k, v in stored["rates"].items()}
            self.batches = {_pair(k): v for k, v in stored["batches"].items()}

    def fetch(self, pairs: Iterable[tuple[str, int]]) -> None:
        missing = {k for k in pairs if k not in self.rates}
        if not missing:
            return
        if self.ctx.calibration_loader is not None:  # a context rebuilt from a table
            self.ctx.calibration = self.ctx.calibration_loader()
            self.ctx.calibration_loader = None
        rates, batches = bucket_capacities(self.ctx, self.buckets, missing, self.specs)
        for k in missing:  # a pair the engine no longer fits serves nothing
            self.rates[k] = rates.get(k, [0.0] * len(self.buckets))
            self.batches[k] = batches.get(k, [0] * len(self.buckets))

    def keep(self, pairs: Iterable[tuple[str, int]]) -> None:
        """Kept on the context (``inputs["plans"]``), for ``pairs`` only: what a fresh compute
        of the same quotes keeps, whatever was stored before."""
        self.ctx.plan_capacities = {
            "key": self.key,
            "rates": {f"{s}|{n}": self.rates[(s, n)] for s, n in pairs},
            "batches": {f"{s}|{n}": self.batches[(s, n)] for s, n in pairs},
        }


def _mix_option(i: int, o: _Offer, rates: list[float], names: dict[str, str]) -> MixOption:
    return MixOption(
        key=str(i),
        label=_quote_words(o, names),
        replica_cost_per_month=float(o.replica_cost),
        fixed_cost_per_month=float(o.fixed_cost),
        requests_per_s_per_replica=tuple(rates),
    )


def _mix_capacities(
    ctx: Any,
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
        batch = order[done : done + CAPACITY_BATCH]
        done += CAPACITY_BATCH
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


def _pair(text: str) -> tuple[str, int]:
    slug, count = text.rsplit("|", 1)
    return slug, int(count)


def mix_row(
    ctx: Any, offers: list[_Offer], catalog: PlanCatalog
) -> tuple[dict[str, Any] | None, str | None]:
    """The MIX row, or why there is none."""
    names = catalog.names
    rate = _rate_rps(ctx)
    assert rate is not None  # noqa: S101 - _eligible checked
    buckets, source = plan_buckets(ctx)
    shares = [b.share for b in buckets]
    needed, known = _mix_capacities(ctx, buckets, rate, offers, catalog)
    rates, batches, wanted = known.rates, known.batches, set(needed)
    usable = [
        o for o in offers if (o.slug, o.gpu_count) in wanted and any(rates[(o.slug, o.gpu_count)])
    ]
    options = [_mix_option(i, o, rates[(o.slug, o.gpu_count)], names) for i, o in enumerate(usable)]
    if not options:
        return None, "no quote's GPU meets the latency target at any request size"
    solved = solve_mix(rate_rps=rate, shares=shares, options=options)
    if not isinstance(solved, MixPlan):
        sizes = ", ".join(
            f"{buckets[b].input_tokens} in / {buckets[b].output_tokens} out"
            for b in solved.unservable_buckets
        )
        return None, solved.reason + (f" (requests of {sizes} tokens)" if sizes else "")
    single = best_single(rate_rps=rate, shares=shares, options=options)
    # The parts serve the brief's whole demand: its accepted outputs, as a GPU row counts them
    # (the parts' own, each rounded to 4 places, may sum a ten-thousandth off).
    accepted = gpu_cost_basis(
        demand=ctx.demand, capacity=_probe_capacity(ctx, 1, 1), finance=ctx.finance
    ).accepted_q

    def costed(plan: MixPlan) -> tuple[dict[str, Any], list[dict[str, Any]], list[_Offer]]:
        parts, used, costs = [], [], []
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
            parts.append(
                {
                    "quote_id": offer.facts["pk"],
                    "gpu": offer.slug,
                    "gpu_count": offer.gpu_count,
                    "replicas": part.replicas,
                    "pricing_term": offer.facts["pricing_term"],
                    "request_share": round(request_share, 6),
                    "bucket_shares": [round(x, 6) for x in part.bucket_shares],
                    "monthly_cost": str(cost.monthly_cost),
                }
            )
        return _summed(costs, accepted), parts, used

    figures, parts, used = costed(solved)
    notes = [
        f"GPU mix by request size: {len(buckets)} bucket{'s' if len(buckets) != 1 else ''} "
        f"({source}) at {_rate_words(rate)} requests a second, retries included; each served "
        "by the quotes whose GPU meets the latency target at that size (Mélange's integer program, "
        f"solved by HiGHS over {solved.options_considered} GPU and quote options after pruning)",
    ]
    for part, offer in zip(parts, used, strict=True):
        served = [
            f"{b.input_tokens}/{b.output_tokens}"
            for b, x in zip(buckets, part["bucket_shares"], strict=True)
            if x > 0
        ]
        notes.append(
            f"{part['replicas']} replica{'s' if part['replicas'] != 1 else ''} of "
            f"{_quote_words(offer, names)} serve {part['request_share']:.1%} of requests "
            f"(prompt/output tokens {', '.join(served)})"
        )
    plan: dict[str, Any] = {
        "rate_rps": round(rate, 6),
        "bucket_source": source,
        "buckets": [
            {"input_tokens": b.input_tokens, "output_tokens": b.output_tokens, "share": b.share}
            for b in buckets
        ],
        "parts": parts,
        "best_single": None,
        "saving_monthly": None,
        "saving_share": None,
        "committed": _committed(used),
    }
    if single is not None:
        single_figures, single_parts, single_used = costed(single)
        saving = single_figures["monthly_cost"] - figures["monthly_cost"]
        share = saving / single_figures["monthly_cost"] if single_figures["monthly_cost"] else 0
        plan.update(
            best_single={**single_parts[0], "monthly_cost": str(single_figures["monthly_cost"])},
            saving_monthly=str(saving.quantize(Decimal("0.01"))),
            saving_share=str(Decimal(share).quantize(Decimal("0.0001"))),
        )
        if len(parts) == 1 and saving <= 0:
            notes.append(
                "no saving: the cheapest mix is one GPU type, the best single quote under the "
                "same request sizes"
            )
        else:
            notes.append(
                f"saves {share:.1%} a month ({saving:,.2f} {ctx.values['reporting_currency']}) "
                f"against the best single quote under the same request sizes: "
                f"{_quote_words(single_used[0], names)}, {single_parts[0]['replicas']} replicas, "
                f"{single_figures['monthly_cost']:,.2f} {ctx.values['reporting_currency']}"
            )
    total_gpus = sum(p["gpu_count"] * p["replicas"] for p in parts)
    return (
        _plan_row(
            "MIX",
            figures,
            notes,
            plan,
            gpu_count=total_gpus,
            replicas=sum(p["replicas"] for p in parts),
        ),
        None,
    )


# --- DISAGG ---------------------------------------------------------------------------------------


def disagg_row(
    ctx: Any, offers: list[_Offer], catalog: PlanCatalog
) -> tuple[dict[str, Any] | None, str | None]:
    """The DISAGG row, or why there is none."""
    names = catalog.names
    brief = ctx.brief
    if not (brief.ttft_target_ms and brief.itl_target_ms):
        return None, "disaggregated pools are sized for a TTFT and an ITL target; give both"
    rate = _rate_rps(ctx)
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
    request = replace(ctx.request, requests_per_second=rate, concurrency=None)
    try:
        found = plan_disagg(request, options)
    except EngineInputError as exc:
        return None, f"{exc.field}: {exc.message}"
    if not isinstance(found, DisaggPlan):
        return None, found.reason
    prefill, decode = chosen[int(found.prefill.key)], chosen[int(found.decode.key)]
    decode_cost = _part_cost(ctx, decode, found.decode.instances, 1.0, found.decode.batch)
    prefill_lines = set(PREFILL_POOL_LINES)
    if prefill.facts["pk"] != decode.facts["pk"]:
        prefill_lines.add("provider_extras")
    prefill_cost = _part_cost(ctx, prefill, found.prefill.instances, 1.0, None)
    figures = _summed(
        [(decode_cost, None), (prefill_cost, frozenset(prefill_lines))],
        decode_cost.accepted_outputs_per_month,
    )
    pools = [
        {
            "role": "prefill",
            "quote_id": prefill.facts["pk"],
            "gpu": prefill.slug,
            "gpus_per_instance": found.prefill.gpus_per_instance,
            "instances": found.prefill.instances,
            "layout": found.prefill.layout,
            "pricing_term": prefill.facts["pricing_term"],
            "requests_per_s_per_instance": round(found.prefill.goodput_rps_per_instance, 4),
        },
        {
            "role": "decode",
            "quote_id": decode.facts["pk"],
            "gpu": decode.slug,
            "gpus_per_instance": found.decode.gpus_per_instance,
            "instances": found.decode.instances,
            "layout": found.decode.layout,
            "pricing_term": decode.facts["pricing_term"],
            "requests_per_s_per_instance": round(found.decode.rps_per_instance, 4),
            "batch": found.decode.batch,
        },
    ]
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
    plan = {
        "pools": pools,
        "ttft_ms": round(found.ttft_ms, 2),
        "ttft_mean_ms": round(found.ttft_mean_ms, 2),
        "transfer_ms": round(found.transfer_ms, 3),
        "itl_ms": round(found.itl_ms, 3),
        "committed": _committed((prefill, decode)),
    }
    return (
        _plan_row(
            "DISAGG",
            figures,
            notes,
            plan,
            gpu_count=found.gpus_total,
            replicas=found.prefill.instances + found.decode.instances,
            p95_latency_ms=Decimal(str(round(found.e2e_s * 1000, 2))),
        ),
        None,
    )


def _frontier(offers: list[_Offer]) -> list[_Offer]:
    """Per GPU and count (whose quotes perform alike), the quotes no other of the group beats on
    both the cost per replica and the fixed cost: the only ones either plan can choose."""
    groups: dict[tuple[str, int], list[_Offer]] = {}
    for o in offers:
        groups.setdefault((o.slug, o.gpu_count), []).append(o)
    kept: list[_Offer] = []
    for group in groups.values():
        lowest_fixed: Decimal | None = None
        for o in sorted(group, key=lambda o: (o.replica_cost, o.fixed_cost, o.facts["pk"])):
            if lowest_fixed is None or o.fixed_cost < lowest_fixed:
                kept.append(o)
                lowest_fixed = o.fixed_cost
    # In one order whatever order the quotes were read in: the solver breaks ties by it, and a
    # price change's re-solve must give what a fresh compute gives.
    return sorted(kept, key=lambda o: (o.slug, o.gpu_count, o.facts["pk"]))


def _frontier_entry(o: _Offer) -> dict[str, Any]:
    return {
        "quote_id": o.facts["pk"],
        "gpu": o.slug,
        "gpu_count": o.gpu_count,
        "replica_cost": str(o.replica_cost),
        "fixed_cost": str(o.fixed_cost),
    }


def plan_rows(
    ctx: Any, quotes: Iterable[dict[str, Any]], plan_of: Any, catalog: PlanCatalog
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The MIX and DISAGG rows of a table, and what the table keeps of them (``inputs["plans"]``:
    the quotes they could choose from, and for each plan that could not be built, why)."""
    why = _eligible(ctx)
    if why is not None:
        return [], {"frontier": [], "missing": [], "not_eligible": why}
    offers = _frontier(_offers(ctx, quotes, plan_of))
    built: dict[str, dict[str, Any]] = {}
    missing = []
    for kind, build in (("MIX", mix_row), ("DISAGG", disagg_row)):
        row, reason = build(ctx, offers, catalog)
        if row is not None:
            built[kind] = row
        elif reason:
            missing.append({"candidate_kind": kind, "reason": reason})
    rows, unlisted = _worth_listing(built, ctx.values["reporting_currency"])
    missing += unlisted
    buckets, source = plan_buckets(ctx)
    return rows, {
        "frontier": [_frontier_entry(o) for o in offers],
        "missing": missing,
        "capacities": ctx.plan_capacities or {},
        "buckets": [
            {"input_tokens": b.input_tokens, "output_tokens": b.output_tokens, "share": b.share}
            for b in buckets
        ],
        "bucket_source": source,
    }


def _worth_listing(
    built: dict[str, dict[str, Any]], currency: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The plans that are a candidate of their own, and why the others are not listed. A mix
    is listed when it uses more than one quote and costs less than the best single quote under
    the same request sizes (otherwise it is that quote's own row again); disaggregated pools
    when they cost less a month than that best single quote, colocated."""
    rows, unlisted = [], []
    mix = built.get("MIX")
    single = None
    if mix is not None:
        plan = mix["plan"]
        single = plan.get("best_single")
        if len(plan["parts"]) > 1 and Decimal(plan.get("saving_monthly") or 0) > 0:
            rows.append(mix)
        else:
            unlisted.append(
                {
                    "candidate_kind": "MIX",
                    "reason": "the cheapest plan for the brief's request sizes uses one quote "
                    f"alone (quote #{plan['parts'][0]['quote_id']}, "
                    f"{plan['parts'][0]['replicas']} replicas of {plan['parts'][0]['gpu_count']} "
                    "GPUs): no mix to list; that quote's own row sizes every request at the "
                    "brief's p50 and p95 token counts",
                }
            )
    disagg = built.get("DISAGG")
    if disagg is not None:
        colocated = Decimal(single["monthly_cost"]) if single else None
        if colocated is None or disagg["monthly_cost"] < colocated:
            rows.append(disagg)
        else:
            unlisted.append(
                {
                    "candidate_kind": "DISAGG",
                    "reason": f"separate prefill and decode pools cost "
                    f"{disagg['monthly_cost']:,.2f} {currency} a month, more than serving "
                    f"colocated on quote #{single['quote_id'] if single else ''} "
                    f"({colocated:,.2f} {currency}) under the same request sizes",
                }
            )
    return rows, unlisted


def plans_unchanged(
    ctx: Any,
    stored: dict[str, Any] | None,
    changed: Iterable[dict[str, Any]],
    gone: Iterable[int],
    plan_of: Any,
) -> bool:
    """Whether a table's plans still hold after the quotes ``changed`` (their new facts) and
    ``gone`` changed: none of them was a quote the plans could choose from, and none of the
    changed ones now beats one of those on both costs or offers a GPU and count they lacked."""
    if stored is None or "frontier" not in stored:
        return False
    if stored.get("not_eligible"):
        return True  # the brief gets no plans whatever the quotes
    frontier = stored["frontier"]
    ids = {entry["quote_id"] for entry in frontier}
    changed = list(changed)
    if ids & ({f["pk"] for f in changed} | set(gone)):
        return False
    by_group: dict[tuple[str, int], list[tuple[Decimal, Decimal]]] = {}
    for entry in frontier:
        by_group.setdefault((entry["gpu"], entry["gpu_count"]), []).append(
            (Decimal(entry["replica_cost"]), Decimal(entry["fixed_cost"]))
        )
    for offer in _offers(ctx, changed, plan_of):
        beaten = by_group.get((offer.slug, offer.gpu_count), [])
        if not any(r <= offer.replica_cost and f <= offer.fixed_cost for r, f in beaten):
            return False
    return True
