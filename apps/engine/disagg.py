"""Disaggregated serving: a prefill pool and a decode pool, each sized for one latency target.

DistServe (Zhong et al., OSDI '24, arXiv 2401.09670) and NVIDIA Dynamo's SLA planner
(ai-dynamo/dynamo docs/architecture/sla_planner.md) run prompts and decoding on separate
instances: prefill instances are sized for the TTFT target, decode instances for the ITL target,
and the prompt's KV cache crosses the network between them. `plan_disagg` sizes both pools for
every (prefill option, decode option) pair, pairs of two GPU types included, and keeps the
cheapest that meets both targets.

Per option the figures come from the engine itself: the layout the engine picks for that GPU
and count (serving.estimate_serving), its serving model's prompt time (`prefill_seconds`), its
decode step time with no prompt tokens mixed in (`seconds`), and its KV-memory limit on the
sequences in flight (`Estimate.max_concurrency`, the engine's memory fit at the p95 context).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from apps.engine import constants as c
from apps.engine.estimator import estimate_at
from apps.engine.memory import kv_bytes_per_token
from apps.engine.performance import ServingModel, scale_out_gb_per_s
from apps.engine.serving import candidate_layouts, serving_plan_for
from apps.engine.types import (
    LLM_SERVING_TYPES,
    EngineInputError,
    EstimateRequest,
    Fit,
    GpuSpec,
    Layout,
    ModelSpec,
    Precision,
)

# The scale-out network per GPU when the quote gives none, Gb/s: one 400 Gb/s ConnectX-7 port
# per GPU on NVIDIA DGX / HGX H100, H200 and B200 nodes (the engine's
# constants.SCALE_OUT_GB_PER_S_NVLINK_NODE, 50 GB/s, with its citation). An option whose quote
# has no figure takes the engine's per-interconnect default (performance.scale_out_gb_per_s),
# which is this for NVLink nodes and less for PCIe servers.
DEFAULT_FABRIC_GBPS: Final = c.SCALE_OUT_GB_PER_S_NVLINK_NODE * 8.0
# Share of the link an RDMA transfer sustains: DeepEP's measured 43 of ~50 GB/s over RDMA
# (constants.A2A_BW_EFFICIENCY_SCALE_OUT, DeepEP docs/legacy.md). The KV hand-off is one large
# point-to-point write, so this is, if anything, conservative.
KV_TRANSFER_BW_EFFICIENCY: Final = c.A2A_BW_EFFICIENCY_SCALE_OUT
# DistServe's Eq. 1 gives the MEAN TTFT of an M/D/1 prefill queue; the brief's target is a p95.
# The queueing delay is scaled by ln(20) ~ 3.0, the p95 / mean of an exponential distribution:
# Kingman's heavy-traffic approximation (Kingman 1961, "The single server queue in heavy
# traffic") makes the M/G/1 waiting time approximately exponential. Engine choice, checked by a
# Lindley-recursion simulation of M/D/1 (bench/accuracy.md, "Disaggregated prefill and decode"):
# p95 / mean waiting is 3.1-3.5 at utilisations 0.7-0.95, where goodput usually binds, but
# larger at low utilisation (4.1 at 0.5, 9.7 at 0.1), where the queueing term is small next to
# the prompt's own time.
TTFT_QUEUE_P95_FACTOR: Final = math.log(20.0)

_NO_CALIBRATION: Mapping[str, float] = {}


@dataclass(frozen=True, kw_only=True, slots=True)
class PoolOption:
    """One way to buy instances: `gpus_per_instance` x `gpu` at `cost_per_gpu_month`."""

    key: str  # the caller's id, e.g. "quote:17"
    label: str
    gpu: GpuSpec
    gpus_per_instance: int
    cost_per_gpu_month: float  # reporting currency
    fabric_gbps: float | None = None  # scale-out network per GPU, Gb/s; None: the default


@dataclass(frozen=True, kw_only=True, slots=True)
class PrefillPool:
    key: str
    label: str
    instances: int
    gpus_per_instance: int
    layout: str  # the engine's layout for the count, e.g. "TP2", "DP2xTP1"
    goodput_rps_per_instance: float  # at the pair's TTFT budget (tail-adjusted M/D/1)
    prefill_s: float  # D: the p95 prompt alone on one engine of the instance


@dataclass(frozen=True, kw_only=True, slots=True)
class DecodePool:
    key: str
    label: str
    instances: int
    gpus_per_instance: int
    layout: str
    batch: int  # sequences in flight per instance at the ITL target
    itl_ms: float  # decode step at `batch`, p95 context (the engine's ITL convention)
    rps_per_instance: float  # batch / ITL / output_p50


@dataclass(frozen=True, kw_only=True, slots=True)
class DisaggPlan:
    prefill: PrefillPool
    decode: DecodePool
    ttft_ms: float  # p95 estimate: D + ln(20) x M/D/1 mean wait + transfer, at the actual load
    ttft_mean_ms: float  # DistServe Eq. 1 mean at the actual load + transfer
    transfer_ms: float  # KV of the p95 prompt over the slower of the two fabrics
    itl_ms: float  # as DecodePool.itl_ms (the sized batch: an upper bound at the actual load)
    e2e_s: float  # ttft_ms + output_p95 x itl_ms
    monthly_cost: float
    gpus_total: int
    notes: tuple[str, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class DisaggInfeasible:
    """No pair meets both targets; `option_reasons` says why, option by option."""

    reason: str
    option_reasons: tuple[str, ...]


def md1_mean_ttft(prefill_s: float, rate: float) -> float:
    """DistServe Eq. 1 (section 3.1): mean TTFT of an M/D/1 prefill queue, D + R D^2 / (2 (1 - R
    D)), with D the prompt's execution time and R the arrival rate (R D < 1; else inf)."""
    rho = rate * prefill_s
    if rho >= 1.0:
        return math.inf
    return prefill_s + rate * prefill_s * prefill_s / (2.0 * (1.0 - rho))


def md1_goodput(
    prefill_s: float, budget_s: float, queue_factor: float = 1.0, service_s: float | None = None
) -> float:
    """The largest arrival rate r with D + f r S^2 / (2 (1 - r S)) <= budget: D the prompt's own
    prefill, S the service time of the queue (the typical prompt's prefill; D when not given),
    f the factor on the queueing term (1 for the mean). With s = budget - D > 0,
    f r S^2 = 2 s (1 - r S) gives r = 2 s / (S (f S + 2 s)). 0 when the prompt alone takes the
    whole budget or more."""
    slack = budget_s - prefill_s
    service = prefill_s if service_s is None else service_s
    if slack <= 0.0 or prefill_s <= 0.0 or service <= 0.0:
        return 0.0
    return 2.0 * slack / (service * (queue_factor * service + 2.0 * slack))


def kv_transfer_seconds(
    model: ModelSpec, kv_precision: Precision, tokens: int, fabric_gbps: float
) -> float:
    """Seconds to send `tokens` tokens' KV cache (memory.kv_bytes_per_token) over one link of
    `fabric_gbps` Gb/s at KV_TRANSFER_BW_EFFICIENCY."""
    data = kv_bytes_per_token(model, kv_precision) * tokens
    return data / (fabric_gbps * 1e9 / 8.0 * KV_TRANSFER_BW_EFFICIENCY)


@dataclass(frozen=True, kw_only=True, slots=True)
class _Figures:
    """What an option's (GPU, count) gives, whatever its price and fabric."""

    layout: str
    engines: int  # independent engines per instance, each prefilling its own prompt
    prefill_s: float  # inf: the model does not fit
    # The queue's service time: the median prompt's prefill. Prompts queue for the engine at
    # their typical length (Pollaczek-Khinchine's M/G/1 wait with the median standing in for
    # the mean, deterministic); the p95 prompt's own prefill is what the target adds on top.
    service_s: float
    batch: int  # 0: cannot decode within the ITL target
    itl_s: float
    rps: float
    why_not: str | None  # set when neither role is possible


def _itl(sm: ServingModel, batch: int, context: int) -> float:
    return sm.seconds(float(batch), float(context), 0.0, 0.0)


def _figures(
    req: EstimateRequest, gpu: GpuSpec, n: int, cal: Mapping[str, float], itl_target_s: float
) -> _Figures:
    est = estimate_at(req, gpu, n, cal)  # refuses a precision the GPU lacks
    layout = next(
        (
            lay
            for lay in candidate_layouts(req.model, gpu, n)
            if lay.label(gpu.max_gpus_per_node) == est.layout
        ),
        Layout(tp=n),
    )
    label = est.layout or layout.label(gpu.max_gpus_per_node)
    if est.fit is Fit.NO:
        return _Figures(
            layout=label,
            engines=layout.replicas,
            prefill_s=math.inf,
            service_s=math.inf,
            batch=0,
            itl_s=math.inf,
            rps=0.0,
            why_not="the model does not fit",
        )
    bw = cal.get("decode_bw_efficiency", 1.0)
    mfu = cal.get("prefill_mfu", 1.0)
    sm = serving_plan_for(req, gpu, layout, bw, mfu).sm
    prefill_s = sm.prefill_seconds(req.input_tokens_p95)
    service_s = (
        prefill_s
        if req.input_tokens_p50 == req.input_tokens_p95
        else sm.prefill_seconds(req.input_tokens_p50)
    )
    # ITL at the p95 context, as the engine's colocated estimate (serving._latency); no prompt
    # tokens mixed into the steps. The largest batch the KV cache holds that meets the target.
    ctx = req.input_tokens_p95 + req.output_tokens_p95
    lo, hi = 0, est.max_concurrency
    while lo < hi:  # step time never decreases with the batch
        mid = (lo + hi + 1) // 2
        if _itl(sm, mid, ctx) <= itl_target_s:
            lo = mid
        else:
            hi = mid - 1
    itl_s = _itl(sm, lo, ctx) if lo else _itl(sm, 1, ctx)
    rps = lo / itl_s / max(req.output_tokens_p50, 1) if lo else 0.0
    return _Figures(
        layout=label,
        engines=layout.replicas,
        prefill_s=prefill_s,
        service_s=service_s,
        batch=lo,
        itl_s=itl_s,
        rps=rps,
        why_not=None,
    )


def _instances(rate: float, per_instance: float) -> int:
    """The fewest instances n with n x per_instance >= rate."""
    n = max(math.ceil(rate / per_instance), 1)
    while n * per_instance < rate:
        n += 1
    while n > 1 and (n - 1) * per_instance >= rate:
        n -= 1
    return n


def _check(req: EstimateRequest, options: Sequence[PoolOption]) -> tuple[float, float, float]:
    if req.workload_type not in LLM_SERVING_TYPES:
        raise EngineInputError("workload_type", "disaggregated pools serve an LLM")
    rate = req.requests_per_second
    if rate is None or rate <= 0:
        raise EngineInputError("requests_per_second", "a positive request rate is needed")
    if req.ttft_p95_ms is None or req.itl_p95_ms is None:
        # The pools are sized one per phase (DistServe Table 1 and Dynamo's planner both take a
        # TTFT and a TPOT / ITL target); an e2e target alone does not say how to split it.
        field = "ttft_p95_ms" if req.ttft_p95_ms is None else "itl_p95_ms"
        raise EngineInputError(
            field,
            "disaggregated planning needs both a TTFT and an ITL p95 target (split an e2e "
            "target into the two)",
        )
    if req.ttft_p95_ms <= 0 or req.itl_p95_ms <= 0:
        raise EngineInputError("ttft_p95_ms", "latency targets must be positive")
    if not options:
        raise EngineInputError("options", "at least one pool option is needed")
    for i, o in enumerate(options):
        if o.gpus_per_instance < 1:
            raise EngineInputError(f"options[{i}].gpus_per_instance", "must be at least 1")
        if o.cost_per_gpu_month < 0:
            raise EngineInputError(f"options[{i}].cost_per_gpu_month", "must not be negative")
        if o.fabric_gbps is not None and o.fabric_gbps <= 0:
            raise EngineInputError(f"options[{i}].fabric_gbps", "must be positive")
    return rate, req.ttft_p95_ms / 1e3, req.itl_p95_ms / 1e3


_Key = tuple[float, int, int]  # (monthly cost, GPUs, option index): the cheapest, then fewest


def plan_disagg(
    request: EstimateRequest,
    options: Sequence[PoolOption],
    calibration: Mapping[str, float] | None = None,
) -> DisaggPlan | DisaggInfeasible:
    """The cheapest (prefill pool, decode pool) over every pair of `options` (the same option in
    both roles included) that meets the brief's TTFT and ITL p95 targets at its request rate.

    Each option's figures depend only on its GPU and count, so they are computed once per
    distinct (GPU, count). A pair's prefill pool depends on the decode option only through the
    slower of the two fabrics, so the search keeps, per distinct fabric, the cheapest decode pool
    on it and on anything faster: O(options x distinct fabrics) arithmetic, the same answer as
    trying every pair. Ties: fewer GPUs, then the earlier prefill option, then decode option.
    """
    rate, ttft_s, itl_s = _check(request, options)
    cal = calibration or _NO_CALIBRATION
    memo: dict[tuple[int, int], tuple[GpuSpec, _Figures]] = {}
    figs: list[_Figures] = []
    for o in options:
        mkey = (id(o.gpu), o.gpus_per_instance)
        hit = memo.get(mkey)
        if hit is None or hit[0] is not o.gpu:
            hit = (o.gpu, _figures(request, o.gpu, o.gpus_per_instance, cal, itl_s))
            memo[mkey] = hit
        figs.append(hit[1])
    fabrics = [
        o.fabric_gbps if o.fabric_gbps is not None else scale_out_gb_per_s(o.gpu) * 8.0
        for o in options
    ]
    levels = sorted(set(fabrics))

    # Decode pools, independent of the prefill side: the cheapest per fabric, and per fabric the
    # cheapest on that fabric or a faster one.
    decode_n: dict[int, int] = {}
    exact: dict[float, _Key] = {}
    for j, (o, f) in enumerate(zip(options, figs, strict=True)):
        if f.batch < 1:
            continue
        n = _instances(rate, f.rps)
        decode_n[j] = n
        gpus = n * o.gpus_per_instance
        key = (gpus * o.cost_per_gpu_month, gpus, j)
        old = exact.get(fabrics[j])
        if old is None or key < old:
            exact[fabrics[j]] = key
    at_least: dict[float, _Key | None] = {}
    best_d: _Key | None = None
    for lvl in reversed(levels):
        e = exact.get(lvl)
        if e is not None and (best_d is None or e < best_d):
            best_d = e
        at_least[lvl] = best_d

    model, kvp, in95 = request.model, request.kv_cache_precision, request.input_tokens_p95
    best: tuple[float, int, int, int] | None = None  # (cost, GPUs, prefill i, decode j)
    best_fabric = 0.0
    for i, (o, f) in enumerate(zip(options, figs, strict=True)):
        if not f.prefill_s < ttft_s:
            continue
        own = fabrics[i]
        pairs = [(own, at_least[own])] + [(lvl, exact.get(lvl)) for lvl in levels if lvl < own]
        for lvl, dkey in pairs:
            if dkey is None:
                continue
            budget = ttft_s - kv_transfer_seconds(model, kvp, in95, lvl)
            goodput = f.engines * md1_goodput(
                f.prefill_s, budget, TTFT_QUEUE_P95_FACTOR, f.service_s
            )
            if goodput <= 0.0:
                continue
            gpus = _instances(rate, goodput) * o.gpus_per_instance
            cand = (gpus * o.cost_per_gpu_month + dkey[0], gpus + dkey[1], i, dkey[2])
            if best is None or cand < best:
                best, best_fabric = cand, lvl
    if best is None:
        return _infeasible(request, options, figs, fabrics, ttft_s)
    return _plan(request, options, figs, best, best_fabric, decode_n[best[3]], rate)


def _plan(
    req: EstimateRequest,
    options: Sequence[PoolOption],
    figs: Sequence[_Figures],
    best: tuple[float, int, int, int],
    fabric: float,
    n_d: int,
    rate: float,
) -> DisaggPlan:
    _, gpus_total, i, j = best
    po, pf, do, df = options[i], figs[i], options[j], figs[j]
    assert req.ttft_p95_ms is not None and req.itl_p95_ms is not None  # noqa: S101 - _check
    transfer = kv_transfer_seconds(req.model, req.kv_cache_precision, req.input_tokens_p95, fabric)
    goodput = pf.engines * md1_goodput(
        pf.prefill_s, req.ttft_p95_ms / 1e3 - transfer, TTFT_QUEUE_P95_FACTOR, pf.service_s
    )
    n_p = _instances(rate, goodput)
    lam = rate / (n_p * pf.engines)  # per engine: DistServe's replication, R -> R / N
    wait = md1_mean_ttft(pf.service_s, lam) - pf.service_s
    ttft = pf.prefill_s + TTFT_QUEUE_P95_FACTOR * wait + transfer
    cost = n_p * po.gpus_per_instance * po.cost_per_gpu_month
    cost += n_d * do.gpus_per_instance * do.cost_per_gpu_month
    notes = [
        f"prefill pool: {n_p} x {po.label} ({pf.layout}); the p95 prompt takes "
        f"{pf.prefill_s * 1e3:.1f} ms alone, the median {pf.service_s * 1e3:.1f} ms; goodput "
        f"{goodput:.2f} requests/s per instance is the largest rate whose TTFT (the p95 prompt "
        "after an M/D/1 queue of median prompts: DistServe arXiv 2401.09670 section 3.1, Eq. 1) "
        "with "
        f"its queueing term x {TTFT_QUEUE_P95_FACTOR:.2f} (ln 20, the p95 of an exponential "
        "wait; Kingman) fits the TTFT target less the KV transfer; instances = ceil(rate / "
        "goodput) (DistServe section 4.1; Dynamo SLA planner)",
        f"KV transfer: {kv_bytes_per_token(req.model, req.kv_cache_precision) / 1e6:.3f} MB per "
        f"token (memory.kv_bytes_per_token) x {req.input_tokens_p95} prompt tokens over "
        f"{fabric:.0f} Gb/s (the slower pool's network per GPU, one link) at "
        f"{KV_TRANSFER_BW_EFFICIENCY:.0%} (DeepEP's measured RDMA share): "
        f"{transfer * 1e3:.2f} ms, sent after the prompt and before the first token",
        f"decode pool: {n_d} x {do.label} ({df.layout}); {df.batch} sequences in flight, the "
        "largest batch whose step at the p95 context (the engine's ITL convention) meets the "
        "ITL target within the KV cache the engine fits; no prompt tokens in the steps "
        "(DistServe section 2); requests/s = batch / ITL / output p50 and instances = "
        "ceil(rate / that) (Dynamo SLA planner's decode replicas)",
        f"TTFT {ttft * 1e3:.1f} ms is the p95 estimate at the pool's actual load "
        f"({lam:.2f} requests/s per engine); the M/D/1 mean is "
        f"{(pf.prefill_s + wait + transfer) * 1e3:.1f} ms",
        "not modelled: the decode instance's time to receive KV, the prefill instance holding "
        "KV until it is sent, and speculative decoding; the layouts are the engine's own choice "
        "for each GPU count (serving.estimate_serving)",
    ]
    e2e = ttft + req.output_tokens_p95 * df.itl_s
    if req.e2e_p95_s is not None and e2e > req.e2e_p95_s:
        notes.append(
            f"the e2e estimate {e2e:.2f} s exceeds the e2e target {req.e2e_p95_s:.2f} s: the "
            "pools are sized for the TTFT and ITL targets only"
        )
    return DisaggPlan(
        prefill=PrefillPool(
            key=po.key,
            label=po.label,
            instances=n_p,
            gpus_per_instance=po.gpus_per_instance,
            layout=pf.layout,
            goodput_rps_per_instance=goodput,
            prefill_s=pf.prefill_s,
        ),
        decode=DecodePool(
            key=do.key,
            label=do.label,
            instances=n_d,
            gpus_per_instance=do.gpus_per_instance,
            layout=df.layout,
            batch=df.batch,
            itl_ms=df.itl_s * 1e3,
            rps_per_instance=df.rps,
        ),
        ttft_ms=ttft * 1e3,
        ttft_mean_ms=(pf.prefill_s + wait + transfer) * 1e3,
        transfer_ms=transfer * 1e3,
        itl_ms=df.itl_s * 1e3,
        e2e_s=e2e,
        monthly_cost=cost,
        gpus_total=gpus_total,
        notes=tuple(notes),
    )


def _infeasible(
    req: EstimateRequest,
    options: Sequence[PoolOption],
    figs: Sequence[_Figures],
    fabrics: Sequence[float],
    ttft_s: float,
) -> DisaggInfeasible:
    reasons: list[str] = []
    prefills = decodes = 0
    for o, f, fab in zip(options, figs, fabrics, strict=True):
        if f.why_not is not None:
            reasons.append(f"{o.key}: {f.why_not}")
            continue
        transfer = kv_transfer_seconds(req.model, req.kv_cache_precision, req.input_tokens_p95, fab)
        if transfer >= ttft_s:
            reasons.append(
                f"{o.key} as prefill: the KV transfer alone ({transfer * 1e3:.1f} ms at {fab:.0f} "
                "Gb/s) takes the whole TTFT target"
            )
        elif f.prefill_s >= ttft_s - transfer:
            reasons.append(
                f"{o.key} as prefill: the p95 prompt alone takes {f.prefill_s * 1e3:.1f} ms, over "
                f"the TTFT budget of {(ttft_s - transfer) * 1e3:.1f} ms"
            )
        else:
            prefills += 1
        if f.batch < 1:
            reasons.append(
                f"{o.key} as decode: one sequence's step takes {f.itl_s * 1e3:.1f} ms, over the "
                "ITL target"
            )
        else:
            decodes += 1
    if not prefills:
        reason = "no option can prefill within the TTFT target"
    elif not decodes:
        reason = "no option can decode within the ITL target"
    else:
        reason = "no pair meets the TTFT target over the slower of its two networks"
    return DisaggInfeasible(reason=reason, option_reasons=tuple(reasons))
