"""LLM serving (realtime, batch, evaluation): memory fit, latency, throughput, capacity."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache

from apps.engine import constants as c
from apps.engine.frameworks import (
    FRAMEWORK_NAMES,
    SchedulerLimits,
    marlin_moe_padding_bytes,
    profiled_sampler_bytes,
    scheduler_limits,
    setting_words,
)
from apps.engine.kernel_tables import kernel_note_for, moe_version_for
from apps.engine.memory import (
    KvCost,
    gpu_capacity_source,
    kv_cost,
    serving_memory,
    utilization_advice,
    utilization_needed,
)
from apps.engine.performance import (
    ServingModel,
    bound_of,
    is_pcie_only,
    serving_model,
    with_moe_kernel,
    with_scheduler,
)
from apps.engine.precision import compute_path
from apps.engine.speculative import per_token_times, speculative_note
from apps.engine.types import (
    BASIS_ESTIMATED,
    CapacityPlan,
    Estimate,
    EstimateRequest,
    Fit,
    Framework,
    GpuSpec,
    Layout,
    ModelSpec,
    Precision,
    WorkloadType,
    fast_init,
    new_capacity_plan,
    new_estimate,
    new_memory_breakdown,
    new_performance,
)


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class ServingSetup:
    """Everything about (model, GPU, parallel layout, precisions, calibration) that does not
    depend on the request's shapes or concurrency; cached, since a catalog estimate revisits the
    same presets and GPUs on every request."""

    note: str | None  # the compute path's note, if any
    capacity_per_gpu: float
    capacity_source: str
    usable_per_gpu: float
    weights_per_gpu: float
    overhead_per_gpu: float
    activation_per_token: float  # per GPU, per token of the prefill chunk
    kv_per_token_per_gpu: float
    kv: KvCost  # per-GPU KV bytes of one sequence by context (windowed / linear layers)
    sm: ServingModel
    # GPUs a replica's sequences are spread over, each holding its own (DEP: dep; else 1: every
    # GPU holds its share of every sequence).
    seq_ranks: int = 1


@lru_cache(maxsize=1024)
def serving_setup(
    model: ModelSpec,
    gpu: GpuSpec,
    tp: int,
    weight_precision: Precision,
    kv_precision: Precision,
    bw_scale: float,
    mfu_scale: float,
    layout: Layout | None = None,
    moe_version: str | None = None,
) -> ServingSetup:
    """`layout` None: tensor parallel over `tp` GPUs; `moe_version`: an older vLLM version's
    measured MoE tables (kernel_tables.moe_version_for; None: the newest)."""
    lay = layout if layout is not None else Layout(tp=tp)
    path = compute_path(gpu, weight_precision)
    sm = serving_model(
        model,
        gpu,
        lay.tp,
        weight_precision=weight_precision,
        kv_precision=kv_precision,
        path=path,
        bw_scale=bw_scale,
        mfu_scale=mfu_scale,
        layout=lay,
        moe_version=moe_version,
    )
    # The same per-GPU figures `serving_memory` gives, without the chunk-dependent activations.
    mem = serving_memory(
        model,
        gpu,
        lay.tp,
        weight_precision=weight_precision,
        kv_precision=kv_precision,
        chunk_tokens=1,
        layout=lay,
    )
    return ServingSetup(
        note=path.note,
        capacity_per_gpu=mem.capacity_per_gpu,
        capacity_source=gpu_capacity_source(gpu),
        usable_per_gpu=mem.usable_per_gpu,
        weights_per_gpu=mem.weights_per_gpu,
        overhead_per_gpu=mem.overhead_per_gpu,
        activation_per_token=mem.activations_per_gpu,
        kv_per_token_per_gpu=mem.kv_per_token_per_gpu,
        kv=kv_cost(model, kv_precision, lay.tp, lay),
        sm=sm,
        seq_ranks=lay.dep * lay.replicas,
    )


# These process-wide memos keyed by object identity stay (issue 23 item 9 asked for memo tables
# owned by one evaluation unless bench/estimate.py showed a loss over 20%): a memo that lives
# for one estimate() call is what the bench's "cold" column approaches, and there a full-catalog
# estimate() runs at 40% of the warm rate (8B realtime FP8: 210 against 516 calls/s, Mixtral
# batch 75 against 288, at f907b0a), with the presets and catalog GPUs a server sees on every
# request. Each entry keeps its key objects alive, so an id is never reused while it exists.
_SetupKey = tuple[int, int, Layout, Precision, Precision, float, float, str | None]
_SETUPS: dict[_SetupKey, tuple[ModelSpec, GpuSpec, ServingSetup]] = {}
_SETUPS_MAX = 4096


def _setup_for(
    model: ModelSpec,
    gpu: GpuSpec,
    layout: Layout,
    weight_precision: Precision,
    kv_precision: Precision,
    bw_scale: float,
    mfu_scale: float,
    moe_version: str | None = None,
) -> ServingSetup:
    """`serving_setup`, memoised by the identity of the (usually long-lived) model and GPU
    objects: hashing two 15-19-field dataclasses per evaluation costs more than the lookup. The
    entry keeps both objects alive, so their ids cannot be reused while it exists."""
    key = (
        id(model),
        id(gpu),
        layout,
        weight_precision,
        kv_precision,
        bw_scale,
        mfu_scale,
        moe_version,
    )
    hit = _SETUPS.get(key)
    if hit is not None and hit[0] is model and hit[1] is gpu:
        return hit[2]
    setup = serving_setup(
        model,
        gpu,
        layout.tp,
        weight_precision,
        kv_precision,
        bw_scale,
        mfu_scale,
        layout,
        moe_version,
    )
    if len(_SETUPS) >= _SETUPS_MAX:
        _SETUPS.clear()
    _SETUPS[key] = (model, gpu, setup)
    return setup


_LIMITS: dict[tuple[int, Framework | None, bool], tuple[GpuSpec, SchedulerLimits]] = {}
_WORDS: dict[tuple[Layout, int, int], tuple[ModelSpec, GpuSpec, tuple[str, str]]] = {}


def _limits_for(gpu: GpuSpec, framework: Framework | None, speculative: bool) -> SchedulerLimits:
    """`scheduler_limits`, memoised by the GPU object's identity (as `_setup_for`): its lru_cache
    hashes the 19-field GpuSpec on every evaluation."""
    key = (id(gpu), framework, speculative)
    hit = _LIMITS.get(key)
    if hit is not None and hit[0] is gpu:
        return hit[1]
    limits = scheduler_limits(gpu, framework, speculative=speculative)
    if len(_LIMITS) >= _SETUPS_MAX:
        _LIMITS.clear()
    _LIMITS[key] = (gpu, limits)
    return limits


def _words_for(layout: Layout, model: ModelSpec, gpu: GpuSpec) -> tuple[str, str]:
    """`_layout_words`, memoised by the identity of the model and GPU objects (as `_setup_for`)."""
    key = (layout, id(model), id(gpu))
    hit = _WORDS.get(key)
    if hit is not None and hit[0] is model and hit[1] is gpu:
        return hit[2]
    words = _layout_words(layout, model, gpu)
    if len(_WORDS) >= _SETUPS_MAX:
        _WORDS.clear()
    _WORDS[key] = (model, gpu, words)
    return words


_PREFILLS: dict[tuple[int, int], tuple[ServingModel, float]] = {}


def _prefill_for(sm: ServingModel, tokens: int) -> float:
    """`sm.prefill_seconds(tokens)`, memoised by the serving model's identity (it lives as long
    as its memoised setup, `_setup_for`) and the prompt length: every batch, count search and
    capacity plan of one layout and request shape prefills the same p95 prompt."""
    key = (id(sm), tokens)
    hit = _PREFILLS.get(key)
    if hit is not None and hit[0] is sm:
        return hit[1]
    seconds = sm.prefill_seconds(tokens)
    if len(_PREFILLS) >= _SETUPS_MAX:
        _PREFILLS.clear()
    _PREFILLS[key] = (sm, seconds)
    return seconds


@dataclass(slots=True)
class _LayoutPlan:
    """What `_estimate_layout` needs of one (model, GPU, layout, precisions, calibration,
    framework, speculative or not), none of which depends on the request's shapes or
    concurrency: the memoised setup, the serving model as the framework's scheduler and MoE
    kernel run it, the scheduler limits, the Marlin padding, the layout's words and the memory
    thresholds. One memo lookup per evaluation instead of six."""

    model: ModelSpec  # kept alive, so the ids in the memo key are not reused
    gpu: GpuSpec
    setup: ServingSetup
    sm: ServingModel  # with_scheduler and with_moe_kernel applied
    limits: SchedulerLimits
    max_seqs: int  # limits.max_seqs x setup.seq_ranks (one scheduler per DP / attention-DP rank)
    padding: float  # marlin_moe_padding_bytes
    weights: float  # setup.weights_per_gpu + padding
    logits_per_seq: float
    label: str
    layout_note: str
    kernel_note: str  # measured kernel tables or per-architecture constants (kernel_tables)
    fits_bytes: float  # memory_fit's thresholds for setup.capacity_per_gpu
    tight_bytes: float
    weights_fit: bool  # the weights alone fit the tight share (else no batch or context can)
    sampler_default: float  # profiled_sampler_bytes at the framework's default max sequences
    # profiled_sampler_bytes by the sequences a deployment is sized for, and sm.prefill_seconds
    # by prompt tokens (as `_prefill_for`), each memoised per plan
    samplers: dict[int, float]
    prefills: dict[int, float]
    # breakdown_of's per-layout parts for the replica's gpu_count GPUs, in GB
    per_gb: float  # gpu_count / c.GB
    weights_gb: float
    overhead_gb: float
    capacity_gb: float
    safety_gb: float
    zero_gb: float  # gradients, optimizer and adapters: none when serving
    capacity_gb_per_gpu: float


# The layout keys by its four fields: hashing a Layout (its generated __hash__, a Python call)
# costs more than the rest of the key, and callers may build an equal Layout on every call.
_PlanKey = tuple[
    int,
    int,
    int,
    int,
    int,
    int,
    Precision,
    Precision,
    float,
    float,
    Framework | None,
    str | None,
    bool,
]
_PLANS: dict[_PlanKey, _LayoutPlan] = {}
_SAMPLERS_MAX = 64  # entries of a plan's per-concurrency and per-prompt-length memos


def serving_plan_for(
    req: EstimateRequest, gpu: GpuSpec, layout: Layout, bw_scale: float, mfu_scale: float
) -> _LayoutPlan:
    """The memoised `_LayoutPlan` for `layout.gpus` x `gpu`, keyed by the model and GPU
    objects' identity (as `_setup_for`)."""
    model = req.model
    key = (
        id(model),
        id(gpu),
        layout.tp,
        layout.pp,
        layout.dep,
        layout.replicas,
        req.weight_precision,
        req.kv_cache_precision,
        bw_scale,
        mfu_scale,
        req.framework,
        req.framework_version,
        req.speculative is not None,
    )
    hit = _PLANS.get(key)
    if hit is not None and hit.model is model and hit.gpu is gpu:
        return hit
    plan = _new_plan(req, gpu, layout, bw_scale, mfu_scale)
    if len(_PLANS) >= _SETUPS_MAX:
        _PLANS.clear()
    _PLANS[key] = plan
    return plan


def _new_plan(
    req: EstimateRequest, gpu: GpuSpec, layout: Layout, bw_scale: float, mfu_scale: float
) -> _LayoutPlan:
    model = req.model
    framework = req.framework
    speculative = req.speculative is not None
    wp = req.weight_precision
    moe_version = moe_version_for(gpu.slug, framework, req.framework_version)
    setup = _setup_for(
        model, gpu, layout, wp, req.kv_cache_precision, bw_scale, mfu_scale, moe_version
    )
    limits = _limits_for(gpu, framework, speculative)
    sm = with_scheduler(setup.sm, framework, limits.max_batched_tokens)  # SGLang: own passes
    sm = with_moe_kernel(sm, model, gpu, wp, framework)  # vLLM Marlin MoE
    padding = marlin_moe_padding_bytes(model, gpu, wp, framework, layout)
    label, layout_note = _words_for(layout, model, gpu)
    capacity = setup.capacity_per_gpu
    n = layout.gpus / c.GB
    capacity_gb = capacity * n
    return _LayoutPlan(
        model=model,
        gpu=gpu,
        setup=setup,
        sm=sm,
        limits=limits,
        max_seqs=limits.max_seqs * setup.seq_ranks,
        padding=padding,
        weights=setup.weights_per_gpu + padding,
        logits_per_seq=model.vocab_size * c.LOGITS_BYTES,
        label=label,
        layout_note=layout_note,
        kernel_note=kernel_note_for(gpu, framework, req.framework_version, moe_version),
        fits_bytes=capacity * c.USABLE_MEMORY_FRACTION,
        tight_bytes=capacity * c.TIGHT_MEMORY_FRACTION,
        weights_fit=setup.weights_per_gpu + setup.overhead_per_gpu
        <= capacity * c.TIGHT_MEMORY_FRACTION,
        sampler_default=profiled_sampler_bytes(model.vocab_size, gpu, limits, None),
        samplers={},
        prefills={},
        per_gb=n,
        weights_gb=(setup.weights_per_gpu + padding) * n,
        overhead_gb=setup.overhead_per_gpu * n,
        capacity_gb=capacity_gb,
        safety_gb=capacity_gb * _SAFETY_FRACTION,
        zero_gb=0.0 * n,
        capacity_gb_per_gpu=capacity / c.GB,
    )


_SAFETY_FRACTION = 1.0 - c.USABLE_MEMORY_FRACTION  # as memory.breakdown_of's safety margin


def clear_serving_caches() -> None:
    _SETUPS.clear()
    _PLANS.clear()
    _PREFILLS.clear()
    _LIMITS.clear()
    _WORDS.clear()
    serving_setup.cache_clear()
    _LAYOUTS.clear()
    _candidate_layouts.cache_clear()
    _layout_words.cache_clear()
    scheduler_limits.cache_clear()


def _latency(
    sm: ServingModel, req: EstimateRequest, conc: int, prefill_s: float
) -> tuple[float, float, float]:
    """(ttft_s, itl_s, e2e_s) at p95 request shapes with `conc` sequences in flight;
    `prefill_s` is `sm.prefill_seconds(req.input_tokens_p95)`, which does not depend on `conc`.

    ITL is the mean decode-step time at the p95 context, including the prompt tokens that chunked
    prefill mixes into each step. Those prompts belong to the OTHER requests in flight: each of
    the conc - 1 others is replaced every out_p50 steps, so a step carries (conc - 1) x in_p50 /
    out_p50 prompt tokens, and none at concurrency 1 (a lone request's own prompt is its TTFT,
    not part of its ITL). TTFT is the p95 prompt's prefill plus one in-flight step when other
    sequences are running; queueing for a prefill slot is not modelled.
    """
    ctx = req.input_tokens_p95 + req.output_tokens_p95
    out50 = req.output_tokens_p50
    mixed = (conc - 1) * req.input_tokens_p50 / (out50 if out50 > 1 else 1)
    spec = req.speculative
    if spec is None:
        itl = sm.seconds(conc, ctx, mixed, req.input_tokens_p50 / 2)
    else:  # several tokens per step (speculative.py): the step time per token gained
        itl = per_token_times(sm, req.model, spec, conc, ctx, mixed, req.input_tokens_p50 / 2)[0]
    ttft = prefill_s
    if conc > 1:
        ttft += sm.seconds(conc - 1, ctx, 0.0, 0.0)
    return ttft, itl, ttft + req.output_tokens_p95 * itl


def scheduler_max_seqs(gpu: GpuSpec, framework: Framework | None = None) -> int:
    """The most sequences one replica schedules at once at the framework's defaults (vLLM's
    max_num_seqs when none is named; frameworks.py)."""
    return scheduler_limits(gpu, framework).max_seqs


def _throughput_step(
    sm: ServingModel, req: EstimateRequest, conc: int
) -> tuple[float, float, float, float]:
    """`sm.times` of a steady-state step at the median shapes: `conc` tokens decoded and the
    prompt tokens of the requests that replace finished ones (conc x in_p50 / out_p50). With
    speculative decoding, the times per token each sequence gains (so conc / seconds is still
    the output rate)."""
    in50 = req.input_tokens_p50
    out50 = req.output_tokens_p50
    if out50 < 1:  # max(out_p50, 1)
        out50 = 1
    if req.speculative is not None:
        spec = req.speculative
        return per_token_times(
            sm, req.model, spec, conc, in50 + out50 / 2, conc * in50 / out50, in50 / 2
        )
    return sm.times(conc, in50 + out50 / 2, conc * in50 / out50, in50 / 2)


def _budget_reach(sm: ServingModel, req: EstimateRequest, ranks: int) -> int:
    """The most sequences a scheduler that mixes prompts into its steps under a token budget
    (vLLM, TensorRT-LLM: sm.chunk_budget) keeps decoding in steady state: each step carries the
    decode tokens first and its replacements' prompts in what is left, so D decoding sequences
    need D (1 + in / out) tokens a step, and D <= budget x out / (in + out) at the p50 shapes;
    for each of `ranks` schedulers (DP engines, attention-DP ranks). Unbounded (a huge number)
    where prompts run as passes of their own (SGLang) or no budget is set."""
    budget = sm.chunk_budget
    if not budget:
        return c.MAX_REPORTED_CONCURRENCY
    out50 = req.output_tokens_p50 if req.output_tokens_p50 > 1 else 1
    per = int(budget * out50 / (req.input_tokens_p50 + out50))
    return (per if per > 1 else 1) * ranks


def budget_note(limits: SchedulerLimits, reach: int) -> str:
    """E.g. "vLLM's --max-num-batched-tokens 8192 keeps 390 decoding beside their
    replacements' prompts"."""
    return (
        f"{limits.budget_setting} {limits.max_batched_tokens} keeps {reach} decoding beside "
        "their replacements' prompts"
    )


def best_batch(sm: ServingModel, req: EstimateRequest, limit: int) -> int:
    """The batch in [1, limit] with the most output tokens/s among `limit` and the powers of two
    below it (throughput is nearly monotone in the batch, so `limit` usually wins; a smaller
    batch is kept only when strictly faster)."""
    best = max(limit, 1)
    best_tok = best / _throughput_step(sm, req, best)[0]
    b = 1
    while b < best:
        tok = b / _throughput_step(sm, req, b)[0]
        if tok > best_tok * (1.0 + 1e-9):
            best, best_tok = b, tok
        b *= 2
    return best


def _meets(req: EstimateRequest, ttft: float, itl: float, e2e: float) -> bool:
    return (
        (req.ttft_p95_ms is None or ttft * 1e3 <= req.ttft_p95_ms)
        and (req.itl_p95_ms is None or itl * 1e3 <= req.itl_p95_ms)
        and (req.e2e_p95_s is None or e2e <= req.e2e_p95_s)
    )


def largest_meeting_bisect(
    sm: ServingModel, req: EstimateRequest, hi: int, prefill_s: float
) -> int:
    """Largest concurrency in [1, hi] meeting the latency target, by bisection (~17 steps),
    given that concurrency 1 meets it. The reference for `largest_meeting`."""
    lo = 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _meets(req, *_latency(sm, req, mid, prefill_s)):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _worst_ratio(req: EstimateRequest, lat: tuple[float, float, float]) -> float:
    """Largest latency / target ratio over the targets set (all positive): > 1 misses."""
    ttft, itl, e2e = lat
    worst = 0.0
    if req.ttft_p95_ms is not None:
        worst = ttft * 1e3 / req.ttft_p95_ms
    if req.itl_p95_ms is not None:
        r = itl * 1e3 / req.itl_p95_ms
        worst = r if r > worst else worst
    if req.e2e_p95_s is not None:
        r = e2e / req.e2e_p95_s
        worst = r if r > worst else worst
    return worst


def largest_meeting(
    sm: ServingModel,
    req: EstimateRequest,
    hi: int,
    prefill_s: float,
    conc: int,
    at_conc: tuple[float, float, float],
    at_one: tuple[float, float, float],
) -> int:
    """Largest concurrency in [1, hi] meeting the latency target, given that 1 meets it.

    TTFT, ITL and e2e latency never decrease with concurrency, so the concurrencies that meet
    the target are exactly 1..k and any bracketing search finds the same k as bisection. The
    search keeps `lo` meeting and `up` missing (both decided by `_meets` itself) and places each
    probe where the worst latency/target ratio, interpolated between the ends, crosses 1; that
    ratio is piecewise linear in concurrency (max of the memory and compute rooflines), so ~3-5
    evaluations replace bisection's ~17. A probe that does not halve the bracket is followed by
    a bisection step, so the worst case stays logarithmic.
    """
    if not (
        (req.ttft_p95_ms is None or req.ttft_p95_ms > 0)
        and (req.itl_p95_ms is None or req.itl_p95_ms > 0)
        and (req.e2e_p95_s is None or req.e2e_p95_s > 0)
    ):
        return largest_meeting_bisect(sm, req, hi, prefill_s)
    at_hi = at_conc if hi == conc else _latency(sm, req, hi, prefill_s)
    if _meets(req, *at_hi):
        return hi
    lo, lo_r = 1, _worst_ratio(req, at_one)
    up, up_r = hi, _worst_ratio(req, at_hi)
    bisect = False
    while up - lo > 1:
        width = up - lo
        if bisect or not up_r > lo_r:
            probe = (lo + up) // 2
        else:
            probe = lo + int((1.0 - lo_r) * width / (up_r - lo_r))
            probe = lo + 1 if probe <= lo else (up - 1 if probe >= up else probe)
        lat = at_conc if probe == conc else _latency(sm, req, probe, prefill_s)
        if _meets(req, *lat):
            lo, lo_r = probe, _worst_ratio(req, lat)
            nxt = probe + 1  # the interpolated crossing is usually just above: check it now
        else:
            up, up_r = probe, _worst_ratio(req, lat)
            nxt = probe - 1
        if lo < nxt < up:
            lat = at_conc if nxt == conc else _latency(sm, req, nxt, prefill_s)
            if _meets(req, *lat):
                lo, lo_r = nxt, _worst_ratio(req, lat)
            else:
                up, up_r = nxt, _worst_ratio(req, lat)
        bisect = (up - lo) * 2 > width
    return lo


_MAX_SEARCHED = c.BATCH_INFERENCE_MAX_CONCURRENCY * 64  # the capacity search's top concurrency
_NO_PLAN = CapacityPlan(
    max_concurrency_at_target=0, replicas=None, gpus_total=None, gpu_hours_per_month=None
)


def _capacity(
    sm: ServingModel,
    req: EstimateRequest,
    gpu_count: int,
    mem_max: int,
    conc: int,
    prefill_s: float,
    has_target: bool,
    at_conc: tuple[float, float, float],
    max_seqs: int,
) -> CapacityPlan:
    """`at_conc` is `_latency(sm, req, conc, prefill_s)`, already computed by the caller."""
    if mem_max < 1:
        return _NO_PLAN
    hi = _MAX_SEARCHED if mem_max > _MAX_SEARCHED else mem_max  # min(...); mem_max >= 1
    if has_target:
        at_one = at_conc if conc == 1 else _latency(sm, req, 1, prefill_s)
        if not _meets(req, *at_one):
            return _NO_PLAN
        best = largest_meeting(sm, req, hi, prefill_s, conc, at_conc, at_one)
    else:
        best = max_seqs if max_seqs < hi else hi  # min(hi, max_seqs)
    rate_at_target = None
    in_system = 0.0
    if has_target or req.requests_per_second is not None:
        ttft, itl = (at_conc if best == conc else _latency(sm, req, best, prefill_s))[:2]
        # Little's law takes the MEAN time a request spends in the system: the prompt's time
        # to first token and the median output's decode steps (the p95 output would size every
        # request as the longest; the latency check above already holds the p95 to the target).
        in_system = ttft + req.output_tokens_p50 * itl
        if has_target and in_system > 0:
            rate_at_target = best / in_system  # requests a replica completes a second
    if req.requests_per_second is not None:
        demand = req.requests_per_second * in_system  # Little's law: requests in flight
    elif req.concurrency is not None:
        demand = float(req.concurrency)
    else:
        demand = float(best if best < conc else conc)  # min(conc, best)
    replicas = math.ceil(demand / best - 1e-9)
    if replicas < 1:  # max(1, ...)
        replicas = 1
    gpus_total = replicas * gpu_count
    return new_capacity_plan(
        best, replicas, gpus_total, gpus_total * req.hours_per_month, rate_at_target
    )


def eager_pass_note(framework: Framework, tokens: int, floor_s: float) -> str:
    """Why a prompt's pass takes the host's eager floor (constants.EAGER_PASS_FLOOR_FACTOR)."""
    return (
        f"{FRAMEWORK_NAMES[framework]} runs each prompt as a pass of its own outside CUDA graphs "
        f"(graphs capture decode only unless --enable-piecewise-cuda-graph is set): a "
        f"{tokens}-token prompt's pass takes the {floor_s * 1e3:.0f} ms the host needs to launch "
        "its kernels, more than its GPU work"
    )


_PERFORMANCE_NOTE = (
    "performance: roofline estimate (prefill compute-bound, decode bandwidth-bound, plus the "
    "layout's communication: tensor-parallel all-reduces, expert all-to-all, pipeline sends); "
    "latencies at p95 shapes, throughput at p50 shapes"
)
# The serving framework's memory knob, as TIGHT advice quotes it (frameworks.setting_words).
_UTILIZATION_SETTING = (
    f"fits with {{}}, which eats into the engine's {1 - c.USABLE_MEMORY_FRACTION:.0%} safety margin"
)


def _utilization_setting(framework: Framework | None) -> str:
    return _UTILIZATION_SETTING.format(setting_words(framework)[0])


def _smaller_workload(
    conc: int, mem_max: int, ctx_p95: int, max_ctx: int, framework: Framework | None
) -> str | None:
    """TIGHT advice when the brief fits the default memory share at a smaller batch or a shorter
    context that keeps at least TIGHT_MIN_WORKLOAD_FRACTION of what it asked, in the settings of
    the brief's framework (None: vLLM); else None."""
    keep = c.TIGHT_MIN_WORKLOAD_FRACTION
    if conc > 1 and mem_max >= math.ceil(conc * keep):
        return (
            f"fits with at most {mem_max} sequence{'s' if mem_max != 1 else ''} in flight per "
            f"replica (asked {conc}): set {setting_words(framework)[1]} {mem_max}"
        )
    if max_ctx >= 1 and max_ctx >= math.ceil(ctx_p95 * keep):
        return (
            f"fits at a context of at most {max_ctx} tokens per sequence (asked {ctx_p95} at "
            f"p95) with {conc} in flight: set {setting_words(framework)[2]} {max_ctx}"
        )
    return None


_DOES_NOT_FIT_NOTE = (
    "does not fit: weights + KV cache at p95 context exceed "
    f"{c.USABLE_MEMORY_FRACTION:.0%} of GPU memory"
)


_TIGHT_NOTE = (
    "tight fit: weights + KV cache at p95 context exceed "
    f"{c.USABLE_MEMORY_FRACTION:.0%} of GPU memory; fit_advice says what to change"
)


def _estimate_layout(
    req: EstimateRequest,
    gpu: GpuSpec,
    gpu_count: int,
    calibration: Mapping[str, float],
    layout: Layout,
) -> tuple[Estimate, float]:
    """The estimate under one layout, and its score for the layout search: output tokens/s of
    the replica at the estimate's batch, or with a latency target at the largest concurrency
    that meets it (0 when none does)."""
    model = req.model
    plan = serving_plan_for(
        req,
        gpu,
        layout,
        calibration.get("decode_bw_efficiency", 1.0) if calibration else 1.0,
        calibration.get("prefill_mfu", 1.0) if calibration else 1.0,
    )
    setup = plan.setup
    sm = plan.sm
    notes: list[str] = []
    if setup.note:
        notes.append(setup.note)
    in95 = req.input_tokens_p95
    ctx_p95 = in95 + req.output_tokens_p95
    if ctx_p95 > model.max_context_tokens:
        notes.append(
            f"p95 context {ctx_p95} tokens exceeds the model's "
            f"{model.max_context_tokens}-token window"
        )
    explicit_conc = req.concurrency
    limits = plan.limits
    # Each data-parallel engine / attention-DP rank runs its own scheduler (vLLM "Data Parallel
    # Deployment": one engine core per DP rank; SGLang DP attention: one scheduler per DP worker).
    max_seqs = plan.max_seqs
    # min(max_batched_tokens, max(in95, 1) x (concurrency or 1)), spelled out (as below: max(a, b)
    # is `b if b > a else a`, min(a, b) `b if b < a else a`, the first on ties, as the builtins)
    chunk = (in95 if in95 > 1 else 1) * (explicit_conc or 1)
    if chunk > limits.max_batched_tokens:
        chunk = limits.max_batched_tokens
    # vLLM: its profiled peak also holds the sampler warm-up (at max_num_seqs requests offline).
    realtime = req.workload_type is WorkloadType.REALTIME_INFERENCE
    warm = explicit_conc if explicit_conc is not None else (1 if realtime else None)
    if warm is None:
        sampler = plan.sampler_default
    else:
        sampler = plan.samplers.get(warm)  # type: ignore[assignment]
        if sampler is None:
            sampler = profiled_sampler_bytes(model.vocab_size, gpu, limits, warm)
            if len(plan.samplers) >= _SAMPLERS_MAX:
                plan.samplers.clear()
            plan.samplers[warm] = sampler
    activations = (chunk if chunk > 1 else 1) * setup.activation_per_token
    if sampler > activations:  # max(chunk activations, sampler)
        activations = sampler
    kv = setup.kv
    kv_per_seq = kv.sequence_bytes(ctx_p95)
    fixed = plan.weights + activations + setup.overhead_per_gpu
    logits_per_seq = plan.logits_per_seq
    free = setup.usable_per_gpu - fixed
    if free < 0.0:  # max(..., 0.0)
        free = 0.0
    # DEP: each GPU holds its own sequences whole, so a replica holds ranks x what one GPU does.
    ranks = setup.seq_ranks
    mem_max = _sequences_fitting(free, kv_per_seq + logits_per_seq, ranks)
    if explicit_conc is not None:
        conc = explicit_conc
    elif req.workload_type is WorkloadType.REALTIME_INFERENCE:
        conc = 1
    else:
        room = mem_max
        share = ""
        if mem_max < 1:
            # Not one sequence fits the default share: size the batch at the largest share a
            # TIGHT verdict may advise, so the batch and the advice describe one deployment.
            tight_free = max(setup.capacity_per_gpu * c.TIGHT_MEMORY_FRACTION - fixed, 0.0)
            room = _sequences_fitting(tight_free, kv_per_seq + logits_per_seq, ranks)
            share = f" with {c.TIGHT_MEMORY_FRACTION:.0%} of GPU memory"
        limit = max(1, min(room, max_seqs))
        reach = _budget_reach(sm, req, ranks)
        conc = best_batch(sm, req, min(limit, reach))
        bound = f"the KV cache holds {max(room, 0)}{share}" if room < max_seqs else limits.note
        if ranks > 1 and room >= max_seqs:  # one scheduler per engine / attention-DP rank
            bound = f"{limits.note}, for each of the {ranks} schedulers"
        if reach < limit:
            bound = (
                f"{budget_note(limits, reach // ranks)}"
                + (f", for each of the {ranks} schedulers" if ranks > 1 else "")
                + f"; {bound}"
            )
            limit = reach
        notes.append(
            f"batch chosen: {conc} sequence{'s' if conc != 1 else ''} in flight, the best "
            f"throughput of the batches up to {limit} ({bound})"
        )
    local = -(-conc // ranks)  # sequences on the busiest GPU: ceil(conc / ranks)
    kv_used = local * kv_per_seq
    logits = local * logits_per_seq
    required = fixed + kv_used + logits
    kv_room = free - logits
    kv_room = (0.0 if kv_room < 0.0 else kv_room) / (local if local > 1 else 1)
    max_ctx_f = kv.max_context(kv_room)
    max_ctx = int(model.max_context_tokens if model.max_context_tokens < max_ctx_f else max_ctx_f)
    # FITS is exactly "within the usable share of the GPU"; TIGHT first tries a larger share,
    # then a smaller batch or shorter context at the default share.
    capacity = setup.capacity_per_gpu
    # memory_fit, its thresholds computed once per plan
    if required <= plan.fits_bytes:
        fit = Fit.FITS
    elif required <= plan.tight_bytes:
        fit = Fit.TIGHT
    else:
        fit = Fit.NO
    fit_advice: str | None = None
    if fit is Fit.TIGHT:
        # The figures describe the deployment as advised: at the larger share of the GPU.
        fit_advice = utilization_advice(required, capacity, _utilization_setting(req.framework))
        smaller = _smaller_workload(conc, mem_max, ctx_p95, max_ctx, req.framework)
        if smaller is not None:
            fit_advice += f"; or, at the default, {smaller}"
        free = max(capacity * utilization_needed(required, capacity) - fixed, 0.0)
        mem_max = _sequences_fitting(free, kv_per_seq + logits_per_seq, ranks)
        kv_room = max(free - logits, 0.0) / max(local, 1)
        max_ctx = int(min(kv.max_context(kv_room), model.max_context_tokens))
    elif fit is Fit.NO:
        fit_advice = _smaller_workload(conc, mem_max, ctx_p95, max_ctx, req.framework)
        if fit_advice is not None:
            fit = Fit.TIGHT
    fits = fit is not Fit.NO

    prefill_s = plan.prefills.get(in95)
    if prefill_s is None:
        prefill_s = _prefill_for(sm, in95)
        if len(plan.prefills) >= _SAMPLERS_MAX:
            plan.prefills.clear()
        plan.prefills[in95] = prefill_s
    at_conc = _latency(sm, req, conc, prefill_s)
    ttft, itl, e2e = at_conc
    # Throughput at the median shapes: each step decodes `conc` tokens and carries the prompt
    # tokens of the requests that replace finished ones (conc x in_p50 / out_p50).
    step_s, memory_s, compute_s, comm_s = _throughput_step(sm, req, conc)
    tok_s = conc / step_s
    has_target = (  # req.has_latency_target, without the property's call
        req.ttft_p95_ms is not None or req.itl_p95_ms is not None or req.e2e_p95_s is not None
    )
    meets = _meets(req, ttft, itl, e2e) if has_target else None
    if fit is Fit.NO:
        notes.append(_DOES_NOT_FIT_NOTE)
    elif fit is Fit.TIGHT:
        notes.append(_TIGHT_NOTE)
    notes.append(_PERFORMANCE_NOTE)
    notes.append(plan.kernel_note)
    floor = sm.prompt_pass_floor_s
    if floor and prefill_s <= floor and req.framework is not None:
        notes.append(eager_pass_note(req.framework, in95, floor))
    if req.speculative is not None:
        notes.append(speculative_note(model, req.speculative))
    label = plan.label
    notes.append(plan.layout_note)
    # breakdown_of(gpu_count, capacity, plan.weights, kv_used, activations + logits, 0, 0, 0,
    # overhead), its per-layout parts from the plan (adding the three zeros changes no sum)
    n = plan.per_gb
    total = (plan.weights + kv_used + (activations + logits) + setup.overhead_per_gpu) * n
    memory = new_memory_breakdown(
        plan.weights_gb,
        kv_used * n,
        (activations + logits) * n,
        plan.zero_gb,
        plan.zero_gb,
        plan.zero_gb,
        plan.overhead_gb,
        plan.safety_gb,
        total,
        plan.capacity_gb,
        plan.capacity_gb - total,
    )
    capacity_plan = _capacity(
        sm, req, gpu_count, mem_max, conc, prefill_s, has_target, at_conc, max_seqs
    )
    if has_target:
        at_target = capacity_plan.max_concurrency_at_target or 0
        score = at_target / _throughput_step(sm, req, at_target)[0] if at_target > 0 else 0.0
    else:
        score = tok_s
    estimate = new_estimate(
        gpu.slug,
        gpu_count,
        fits,
        fit,
        fit_advice,
        plan.capacity_gb_per_gpu,
        setup.capacity_source,
        memory,
        mem_max if mem_max > 0 else 0,
        max_ctx if max_ctx > 0 else 0,
        new_performance(
            tok_s,
            tok_s / gpu_count,
            ttft * 1e3,
            itl * 1e3,
            e2e,
            bound_of(memory_s, compute_s, comm_s),
            None,
            None,
            None,
            None,
        ),
        meets,
        capacity_plan,
        None,
        BASIS_ESTIMATED,
        tuple(notes),
        label,
    )
    return estimate, score


def _sequences_fitting(free: float, per_sequence: float, ranks: int) -> int:
    """Sequences a replica holds when each of `ranks` GPUs has `free` bytes and a sequence on
    a GPU takes `per_sequence` of them (ranks 1: every GPU holds its share of every sequence)."""
    per_gpu = free / per_sequence if per_sequence > 0 else float(c.MAX_REPORTED_CONCURRENCY)
    if ranks > 1:
        per_gpu = math.floor(per_gpu) * ranks
    top = c.MAX_REPORTED_CONCURRENCY
    return int(top if top < per_gpu else per_gpu)  # int(min(per_gpu, top))


@lru_cache(maxsize=4096)  # the same for every batch and count of a layout
def _layout_words(layout: Layout, model: ModelSpec, gpu: GpuSpec) -> tuple[str, str]:
    """The layout's label ("TP8", "DEP16 (2 nodes)") and what it means, in words."""
    label = layout.label(gpu.max_gpus_per_node)
    return label, _layout_note(layout, label, model, gpu)


def _layout_note(layout: Layout, label: str, model: ModelSpec, gpu: GpuSpec) -> str:
    """What the layout means, in words."""
    if layout.replicas > 1:
        inner = Layout(tp=layout.tp, pp=layout.pp, dep=layout.dep)
        return (
            f"{_layout_note(inner, label, model, gpu)}; {layout.replicas} such engines side by "
            "side (data parallel), each serving its own share of the sequences"
        )
    n = layout.gpus
    nodes = -(-n // max(gpu.max_gpus_per_node, 1))
    over = f"over {nodes} nodes' network" if nodes > 1 else "within the node"
    if layout.dep > 1:
        kv = "its MLA latent KV cache" if model.is_mla else "its KV cache"
        return (
            f"layout {label}: attention data-parallel on {n} GPUs (each serves its own sequences "
            f"and holds {kv}), {model.experts // n} routed experts per GPU, attention and dense "
            f"weights on every GPU; one all-to-all dispatch and combine per MoE layer {over}"
        )
    if layout.pp > 1:
        each = f"tensor-parallel over {layout.tp} GPUs" if layout.tp > 1 else "on one GPU"
        return (
            f"layout {label}: {layout.pp} pipeline stages of up to "
            f"{-(-model.layers // layout.pp)} layers, each {each}; activations passed stage to "
            f"stage {over}, and fewer sequences in flight than stages leave stages idle (the "
            "pipeline bubble)"
        )
    if n == 1:
        return f"layout {label}: the whole model on one GPU"
    return f"layout {label}: tensor parallel over {n} GPUs, two all-reduces per layer {over}"


def _tp_ok(model: ModelSpec, tp: int) -> bool:
    """vLLM's rule: tensor parallelism must divide the attention heads; KV heads split evenly
    or are replicated (tp a multiple of them)."""
    if tp <= 1:
        return True
    heads, kv = model.attention_heads, model.kv_heads
    if heads % tp:
        return False
    return model.is_mla or kv <= 0 or (kv % tp == 0 if kv >= tp else tp % kv == 0)


def layout_problem(model: ModelSpec, layout: Layout) -> str | None:
    """Why `model` cannot run under `layout` in vLLM, SGLang or TensorRT-LLM (the rules
    `_candidate_layouts` applies), or None. All three offer TP, PP, DP engines and attention
    DP with expert parallelism for MoE models (vLLM "Parallelism and Scaling" / "Data
    Parallel Deployment" / "Expert Parallel Deployment"; SGLang --tp / --pp-size / --dp with
    --enable-dp-attention; TensorRT-LLM tensor_parallel_size, pipeline_parallel_size,
    enable_attention_dp with moe_expert_parallel_size), so the rules are the model's."""
    if layout.dep > 1:
        if model.experts <= 1:
            return "DEP (attention data parallel + expert parallel) needs an MoE model"
        if model.experts % layout.dep:
            return f"{model.experts} routed experts do not split evenly over {layout.dep} GPUs"
        return None
    if not _tp_ok(model, layout.tp):
        return (
            f"tensor parallelism {layout.tp} does not divide the {model.attention_heads} "
            f"attention heads / {model.kv_heads} KV heads"
        )
    if layout.pp > model.layers:
        return f"{layout.pp} pipeline stages for {model.layers} layers"
    return None


@lru_cache(maxsize=4096)
def _candidate_layouts(model: ModelSpec, per_node: int, pcie: bool, n: int) -> tuple[Layout, ...]:
    """The handful of layouts the engine tries for `n` GPUs: TP n first (the reference, and
    the answer when nothing else applies); on PCIe-only GPUs, beyond one node, or for a count
    TP cannot split (6 GPUs for 64 heads), TP x pipeline stages; for an MoE model, DEP n when
    its routed experts split evenly over n GPUs (constants, parallel-layouts block)."""
    out: list[Layout] = []
    tp_n = _tp_ok(model, n)
    if tp_n:
        out.append(Layout(tp=n))
    if n > 1 and (pcie or n > per_node or not tp_n):
        for pp in range(2, min(n, model.layers) + 1):
            if n % pp:
                continue
            tp = n // pp
            if tp > per_node or not _tp_ok(model, tp):
                continue
            # NVLink nodes: TP within the node x PP across nodes (or, for a count TP cannot
            # split, the widest TP that divides it); PCIe boxes try every split.
            if not pcie and tp_n and tp != min(per_node, n):
                continue
            out.append(Layout(tp=tp, pp=pp))
    if n > 1 and model.experts > 1 and model.experts % n == 0 and n <= model.experts:
        out.append(Layout(dep=n))
    if not out:
        out.append(Layout(tp=n))
    if n % 2 == 0:
        # Two engines of every layout for n / 2 (recursively: DP4 x TP2, DP8 x TP1, ...), so a
        # larger count can always do what the smaller one did, twice.
        for inner in _candidate_layouts(model, per_node, pcie, n // 2):
            dp = Layout(tp=inner.tp, pp=inner.pp, dep=inner.dep, replicas=inner.replicas * 2)
            if dp not in out:
                out.append(dp)
    return tuple(out)


_LAYOUTS: dict[tuple[int, int, int], tuple[ModelSpec, GpuSpec, tuple[Layout, ...]]] = {}


def candidate_layouts(model: ModelSpec, gpu: GpuSpec, n: int) -> tuple[Layout, ...]:
    """`_candidate_layouts` for `n` x `gpu`, memoised by object identity as `_setup_for` is."""
    key = (id(model), id(gpu), n)
    hit = _LAYOUTS.get(key)
    if hit is not None and hit[0] is model and hit[1] is gpu:
        return hit[2]
    out = _candidate_layouts(model, max(gpu.max_gpus_per_node, 1), is_pcie_only(gpu), n)
    if len(_LAYOUTS) >= _SETUPS_MAX:
        _LAYOUTS.clear()
    _LAYOUTS[key] = (model, gpu, out)
    return out


_FIT_RANK = {Fit.FITS: 2, Fit.TIGHT: 1, Fit.NO: 0}


def _tried(e: Estimate, score: float) -> str:
    """How a layout the search passed over did, in words."""
    if e.fit is Fit.NO:
        return "(does not fit)"
    if e.meets_latency_target is False or score <= 0:
        return "(misses the latency target)"
    return f"{score:,.0f}" + (" (tight fit)" if e.fit is Fit.TIGHT else "")


def estimate_serving(
    req: EstimateRequest,
    gpu: GpuSpec,
    gpu_count: int,
    calibration: Mapping[str, float],
    layout: Layout | None = None,
    *,
    data_parallel: bool = True,
) -> Estimate:
    """The estimate on `gpu_count` x `gpu` under the best of the candidate layouts (or under
    `layout` when given): the best fit verdict first, then meeting the latency target, then the
    most output tokens/s (with a target: at the largest concurrency that meets it; offline
    batch: at the batch it chooses). The same GPU count, so per replica = per GPU. Ties keep
    the earlier candidate (TP first). `data_parallel` False leaves out the layouts of several
    independent engines (one engine over all the GPUs, as a published benchmark runs)."""
    if layout is not None:
        if layout.gpus != gpu_count:
            raise ValueError(f"layout {layout} uses {layout.gpus} GPUs, not {gpu_count}")
        return _estimate_layout(req, gpu, gpu_count, calibration, layout)[0]
    layouts = candidate_layouts(req.model, gpu, gpu_count)
    if not data_parallel:
        layouts = tuple(lay for lay in layouts if lay.replicas == 1) or layouts
    best, best_score = _estimate_layout(req, gpu, gpu_count, calibration, layouts[0])
    if len(layouts) == 1:
        return best
    tried = [(best.layout, _tried(best, best_score))]
    best_key = (_FIT_RANK[best.fit], best.meets_latency_target is not False)
    cal = calibration
    bw = cal.get("decode_bw_efficiency", 1.0) if cal else 1.0
    mfu = cal.get("prefill_mfu", 1.0) if cal else 1.0
    for lay in layouts[1:]:
        if not serving_plan_for(req, gpu, lay, bw, mfu).weights_fit:
            continue  # the weights alone do not fit: no batch or context can make it fit
        e, score = _estimate_layout(req, gpu, gpu_count, calibration, lay)
        tried.append((e.layout, _tried(e, score)))
        key = (_FIT_RANK[e.fit], e.meets_latency_target is not False)
        if key > best_key or (key == best_key and score > best_score * (1.0 + 1e-9)):
            best, best_score, best_key = e, score, key
    others = ", ".join(f"{name} {what}" for name, what in tried if name != best.layout)
    if not others:
        return best
    what = "output tokens/s at the latency target" if req.has_latency_target else "output tokens/s"
    note = f"layout chosen: {best.layout} ({best_score:,.0f} {what}; also tried {others})"
    return replace(best, notes=(*best.notes, note))
