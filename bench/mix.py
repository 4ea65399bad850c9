"""The heterogeneous GPU mix's solve time on a synthetic but realistically sized problem: the
default log-normal request-size grid (12 buckets), 21 GPU types x {1, 2, 4, 8} GPUs a replica,
~2,000 quotes with seeded random prices, capacities from a simple per-GPU prefill and decode speed.

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


if __name__ == "__main__":
    main()
