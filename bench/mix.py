"""The heterogeneous GPU mix's solve time on a synthetic but realistically sized problem: the
default log-normal request-size grid (12 buckets), 21 GPU types x {1, 2, 4, 8} GPUs a replica,
~2,000 quotes with seeded random prices, capacities from a simple per-GPU prefill and decode speed.

Then the same with capacities from the engine itself (``engine_problem``): Llama 3.1 8B in FP8 at
the brief shapes bench/estimate.py uses (1,000 / 4,000 prompt and 200 / 800 output tokens, p50 /
p95; TTFT 500 ms, ITL 50 ms), every catalog GPU at 1, 2, 4 and 8 GPUs a replica, each bucket
estimated as the candidate table does (apps.finance.plans.bucket_capacities): the engine's
time for the capacities, cold, and the solve over ~2,000 quotes of those GPUs.

Run: .venv/bin/python bench/mix.py [--runs 20] [--quotes 2000] [--rate 50] [--seed 1]
Prints figures only; nothing here is a timed assertion. aim: < 1 s a solve.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit" / "engine"))

from dataclasses import replace  # noqa: E402

from engine_catalog import load_gpus  # noqa: E402

from apps.engine import estimate, parse_estimate_request  # noqa: E402
from apps.engine.estimator import clear_caches  # noqa: E402
from apps.engine.mix import MixOption, MixPlan, best_single, solve_mix  # noqa: E402
from apps.engine.request_sizes import SizeBucket, lognormal_buckets  # noqa: E402

COUNTS = (1, 2, 4, 8)


def problem(quotes: int, seed: int) -> tuple[tuple[SizeBucket, ...], list[MixOption]]:
    """Buckets and quote options. Each GPU type has a prefill speed (input tokens/s), a decode
    speed (output tokens/s of all its concurrent streams) and a memory size; a replica of n GPUs
    gets n^0.9 of one GPU's speed (tensor-parallel losses), and cannot serve a bucket whose input
    needs more memory than it has (KV cache for long prompts). List prices follow speed with
    noise; each quote is a list price x 0.75-1.3 and a fixed monthly extra now and then."""
    rng = random.Random(seed)
    buckets = lognormal_buckets(1000, 4000, 200, 800)
    types = []
    for g in range(21):
        speed = rng.lognormvariate(0, 0.6)
        prefill = 8000 * speed * rng.uniform(0.7, 1.4)
        decode = 1500 * speed * rng.uniform(0.7, 1.4)
        memory_gb = rng.choice([24, 48, 80, 96, 141, 192])
        price = 1400 * speed ** rng.uniform(0.8, 1.2) * rng.uniform(0.8, 1.25)
        types.append((f"gpu{g:02d}", prefill, decode, memory_gb, price))
    per_cell = max(1, round(quotes / (len(types) * len(COUNTS))))
    options = []
    for name, prefill, decode, memory_gb, price in types:
        for n in COUNTS:
            scale = n**0.9
            caps = tuple(
                0.0
                if b.input_tokens + b.output_tokens > 200 * memory_gb * n
                else round(scale / (b.input_tokens / prefill + b.output_tokens / decode * 0.1), 4)
                for b in buckets
            )
            for q in range(per_cell):
                options.append(
                    MixOption(
                        key=f"quote:{name}x{n}:{q}",
                        label=f"{name} x{n} quote {q}",
                        replica_cost_per_month=round(price * n * rng.uniform(0.75, 1.3), 2),
                        requests_per_s_per_replica=caps,
                        fixed_cost_per_month=rng.choice([0.0, 0.0, 0.0, 150.0, 600.0]),
                    )
                )
    return buckets, options


ENGINE_BRIEF = {
    "workload_type": "REALTIME_INFERENCE",
    "model": {"preset": "llama-3.1-8b"},
    "weight_precision": "FP8",
    "kv_cache_precision": "FP8",
    "input_tokens": {"p50": 1000, "p95": 4000},
    "output_tokens": {"p50": 200, "p95": 800},
    "requests_per_second": 50,
    "latency_target": {"ttft_p95_ms": 500, "itl_p95_ms": 50},
}


def engine_capacities(
    buckets: tuple[SizeBucket, ...],
) -> dict[tuple[str, int], list[float]]:
    """Requests a second a replica completes at the target, per (GPU, count) and bucket: one
    engine call per bucket and count over the whole catalog, as the candidate table makes."""
    gpus = load_gpus()
    request = parse_estimate_request(ENGINE_BRIEF, known_gpus=frozenset(g.slug for g in gpus))
    out: dict[tuple[str, int], list[float]] = {}
    for count in COUNTS:
        for b, bucket in enumerate(buckets):
            sized = replace(
                request,
                input_tokens_p50=bucket.input_tokens,
                input_tokens_p95=bucket.input_tokens,
                output_tokens_p50=bucket.output_tokens,
                output_tokens_p95=bucket.output_tokens,
                gpu_count=count,
            )
            for e in estimate(sized, gpus):
                rate = e.capacity.requests_per_s_at_target if e.capacity and e.fits else None
                out.setdefault((e.gpu, count), [0.0] * len(buckets))[b] = rate or 0.0
    return out


def engine_problem(quotes: int, seed: int) -> tuple[tuple[SizeBucket, ...], list[MixOption], float]:
    """The default bucket grid, quote options on the engine's capacities, and the engine's
    wall time for those capacities (caches cleared first)."""
    rng = random.Random(seed)
    buckets = lognormal_buckets(1000, 4000, 200, 800)
    clear_caches()
    t0 = time.perf_counter()
    capacities = engine_capacities(buckets)
    engine_s = time.perf_counter() - t0
    usable = [(key, caps) for key, caps in capacities.items() if any(caps)]
    options = []
    for q in range(quotes):
        (slug, count), caps = usable[q % len(usable)]
        hourly = rng.uniform(0.3, 6.0) * count
        options.append(
            MixOption(
                key=f"{slug}x{count}:{q}",
                label=f"{slug} x{count} quote {q}",
                replica_cost_per_month=hourly * 730 * 1.1,
                fixed_cost_per_month=4600.0 + (rng.choice((0, 0, 500))),
                requests_per_s_per_replica=tuple(caps),
            )
        )
    return buckets, options, engine_s


def timed[T](fn: Callable[[], T], runs: int) -> tuple[T, float, float]:
    """The last result, and the median and max wall time of `runs` calls."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return result, statistics.median(times), max(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20, help="solves to time")
    parser.add_argument("--quotes", type=int, default=2000, help="quote options, about")
    parser.add_argument("--rate", type=float, default=50.0, help="requests/s")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(
        f"{now} | {platform.processor() or platform.machine()} | {os.cpu_count()} CPUs | "
        f"Python {platform.python_version()} ({platform.python_implementation()})\n"
    )
    buckets, options = problem(args.quotes, args.seed)
    shares = tuple(b.share for b in buckets)
    print(
        f"problem: {len(buckets)} buckets, {len(options)} quote options "
        f"(21 GPU types x {len(COUNTS)} GPU counts), {args.rate:g} req/s, seed {args.seed}"
    )
    mix, mix_med, mix_max = timed(
        lambda: solve_mix(rate_rps=args.rate, shares=shares, options=options), args.runs
    )
    single, one_med, one_max = timed(
        lambda: best_single(rate_rps=args.rate, shares=shares, options=options), args.runs
    )
    for name, med, top in (("solve_mix:  ", mix_med, mix_max), ("best_single:", one_med, one_max)):
        print(f"{name} median {med * 1000:.1f} ms, max {top * 1000:.1f} ms ({args.runs} runs)")
    print("aim: < 1 s")
    if not isinstance(mix, MixPlan) or single is None:
        print(f"no plan: {mix}")
        return
    print(
        f"\nmix: {mix.options_considered} options after pruning, status {mix.status}, "
        f"gap {mix.gap:.2g}, ${mix.monthly_cost:,.2f}/month"
    )
    for p in mix.parts:
        served = ", ".join(f"{s:.2f}" for s in p.bucket_shares)
        print(
            f"  {p.label}: {p.replicas} replicas, load {p.load_replicas:.2f}, "
            f"${p.monthly_cost:,.2f}; bucket shares [{served}]"
        )
    part = single.parts[0]
    print(f"best single: {part.label}: {part.replicas} replicas, ${single.monthly_cost:,.2f}/month")
    saving = 1 - mix.monthly_cost / single.monthly_cost
    print(f"saving of the mix against the best single option: {saving:.1%}")

    buckets, options, engine_s = engine_problem(args.quotes, args.seed)
    shares = tuple(b.share for b in buckets)
    pairs = len({o.key.split(":")[0] for o in options})
    print(
        f"\nengine capacities: {len(buckets)} buckets x {pairs} (GPU, count) pairs that serve a "
        f"bucket, Llama 3.1 8B FP8: {engine_s * 1000:.0f} ms cold"
    )
    mix, mix_med, mix_max = timed(
        lambda: solve_mix(rate_rps=args.rate, shares=shares, options=options), args.runs
    )
    print(
        f"solve_mix over {len(options)} quotes: median {mix_med * 1000:.1f} ms, max "
        f"{mix_max * 1000:.1f} ms ({args.runs} runs); aim: < 1 s"
    )
    if isinstance(mix, MixPlan):
        parts = ", ".join(f"{p.replicas} x {p.label}" for p in mix.parts)
        print(f"mix: {parts}: ${mix.monthly_cost:,.2f}/month")


if __name__ == "__main__":
    main()
