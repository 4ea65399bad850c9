"""Engine speed: estimate_at evaluations/s and full-catalog estimate() calls/s per brief, a
per-configuration speed ratio against the PyPI package llm-analysis (when importable), and the
wall time of `POST /api/v1/estimate` for a full-catalog estimate of each brief, in-process through
Django's test client against a throwaway SQLite database.

Run: .venv/bin/python bench/estimate.py [--seconds 1.0] [--requests 200]
Prints figures only; nothing here is a timed assertion.

"warm" figures repeat one call, so the engine's per-(model, GPU, count) memo is hit, as it is for
the presets and catalog GPUs a server sees on every request; "cold" figures clear that memo
before every call.
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import os
import platform
import statistics
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit" / "engine"))

from engine_catalog import gpu, load_gpus  # noqa: E402

from apps.engine import (  # noqa: E402
    PRESETS,
    EstimateRequest,
    Sharding,
    TrainingSpec,
    WorkloadType,
    estimate,
    estimate_at,
    parse_estimate_request,
)
from apps.engine.estimator import clear_caches  # noqa: E402
from apps.engine.types import Layout  # noqa: E402

GPUS = load_gpus()
GPU_SLUGS = frozenset(g.slug for g in GPUS)

# Contract-shaped bodies (docs/design.md, POST /api/v1/estimate) without a `gpus` filter: the engine
# figures parse them with the engine's own parser, the endpoint figures POST them as they are.
_SHAPES: dict[str, Any] = {
    "input_tokens": {"p50": 1000, "p95": 4000},
    "output_tokens": {"p50": 200, "p95": 800},
}
BRIEF_BODIES: dict[str, dict[str, Any]] = {
    "8B realtime FP8": {
        "workload_type": "REALTIME_INFERENCE",
        "model": {"preset": "llama-3.1-8b"},
        "weight_precision": "FP8",
        "kv_cache_precision": "FP8",
        **_SHAPES,
        "concurrency": 32,
        "latency_target": {"ttft_p95_ms": 500, "itl_p95_ms": 50},
    },
    "70B realtime BF16": {
        "workload_type": "REALTIME_INFERENCE",
        "model": {"preset": "llama-3.1-70b"},
        "weight_precision": "BF16",
        "kv_cache_precision": "BF16",
        **_SHAPES,
        "concurrency": 16,
        "latency_target": {"ttft_p95_ms": 1000, "itl_p95_ms": 60},
    },
    "Mixtral 8x7B batch": {
        "workload_type": "BATCH_INFERENCE",
        "model": {"preset": "mixtral-8x7b"},
        "weight_precision": "BF16",
        "kv_cache_precision": "BF16",
        **_SHAPES,
    },
    "405B FP8 realtime": {
        "workload_type": "REALTIME_INFERENCE",
        "model": {"preset": "llama-3.1-405b"},
        "weight_precision": "FP8",
        "kv_cache_precision": "FP8",
        **_SHAPES,
        "concurrency": 8,
        "latency_target": {"ttft_p95_ms": 3000, "itl_p95_ms": 100},
    },
    "8B LoRA finetune": {
        "workload_type": "LORA_FINETUNE",
        "model": {"preset": "llama-3.1-8b"},
        "training": {"sequence_length": 4096, "tokens": 2e8, "lora_rank": 16},
    },
    "70B training ZeRO-3": {
        "workload_type": "TRAINING",
        "model": {"preset": "llama-3.1-70b"},
        "training": {
            "sequence_length": 8192,
            "tokens": 1e12,
            "sharding": "ZERO3",
            "activation_checkpointing": True,
        },
    },
}
BRIEFS: dict[str, EstimateRequest] = {
    name: parse_estimate_request(body, known_gpus=GPU_SLUGS) for name, body in BRIEF_BODIES.items()
}


def rate(fn: Callable[[], object], seconds: float) -> float:
    """Calls per second of `fn`, measured for about `seconds`."""
    fn()
    n, start = 0, time.perf_counter()
    while True:
        for _ in range(10):
            fn()
        n += 10
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return n / elapsed


def _count_evaluations(req: EstimateRequest) -> int:
    """estimate_at calls made by one full-catalog estimate()."""
    from apps.engine import estimator

    original = estimator.estimate_at
    calls = 0

    def counting(*a: Any, **k: Any) -> Any:
        nonlocal calls
        calls += 1
        return original(*a, **k)

    estimator.estimate_at = counting  # type: ignore[assignment]
    try:
        estimate(req, GPUS)
    finally:
        estimator.estimate_at = original
    return calls


def cold(fn: Callable[[], object]) -> Callable[[], object]:
    def call() -> object:
        clear_caches()
        return fn()

    return call


def engine_figures(seconds: float) -> None:
    print(
        f"{'brief':24s} {'estimate_at/s':>14s} {'(cold)':>9s} "
        f"{'estimate(catalog)/s':>20s} {'(cold)':>8s} {'evals/call':>10s}"
    )
    h100 = gpu("h100-sxm5-80gb")
    for name, req in BRIEFS.items():

        def at(req: EstimateRequest = req) -> object:
            return estimate_at(req, h100, 8)

        def full(req: EstimateRequest = req) -> object:
            return estimate(req, GPUS)

        print(
            f"{name:24s} {rate(at, seconds):14,.0f} {rate(cold(at), seconds):9,.0f} "
            f"{rate(full, seconds):20,.0f} {rate(cold(full), seconds):8,.0f} "
            f"{_count_evaluations(req):10d}"
        )


def _import_llm_analysis() -> Any | None:
    # llm-analysis 0.2.2 imports `fire` only for its CLI; fire<0.6 (its pin) imports the `pipes`
    # module that Python 3.13 removed. Install with `pip install --no-deps llm-analysis==0.2.2`
    # and stub `fire` so the library API imports.
    sys.modules.setdefault("fire", types.ModuleType("fire"))
    try:
        from llm_analysis import analysis
    except Exception as exc:
        print(f"llm-analysis unavailable ({type(exc).__name__}: {exc}); comparison skipped")
        return None
    logging.getLogger().setLevel(logging.ERROR)
    return analysis


def llm_analysis_figures(seconds: float) -> None:
    analysis = _import_llm_analysis()
    if analysis is None:
        return
    cases: list[tuple[str, Callable[[], object], Callable[[], object]]] = []

    def infer_case(
        label: str,
        model: str,
        preset: str,
        gpu_name: str,
        slug: str,
        tp: int,
        batch: int,
        seq: int,
        out: int,
    ) -> None:
        req = EstimateRequest(
            workload_type=WorkloadType.BATCH_INFERENCE,
            model=PRESETS[preset],
            input_tokens_p50=seq,
            input_tokens_p95=seq,
            output_tokens_p50=out,
            output_tokens_p95=out,
            concurrency=batch,
        )
        g = gpu(slug)
        cases.append(
            (
                label,
                # One configuration against one: llm-analysis evaluates the given TP size, so
                # the engine is held to TP too (estimate_at alone also searches the layouts).
                lambda: estimate_at(req, g, tp, layout=Layout(tp=tp)),
                lambda: analysis.infer(
                    model_name=model,
                    gpu_name=gpu_name,
                    dtype_name="w16a16e16",
                    tp_size=tp,
                    batch_size_per_gpu=batch,
                    seq_len=seq,
                    num_tokens_to_generate=out,
                    log_level="ERROR",
                ),
            )
        )

    infer_case(
        "infer llama-2-7b A100 bs1",
        "NousResearch_Llama-2-7b-hf",
        "llama-2-7b",
        "a100-sxm-80gb",
        "a100-sxm4-80gb",
        1,
        1,
        512,
        128,
    )
    infer_case(
        "infer llama-2-7b H100 bs32",
        "NousResearch_Llama-2-7b-hf",
        "llama-2-7b",
        "h100-sxm-80gb",
        "h100-sxm5-80gb",
        1,
        32,
        2048,
        128,
    )
    infer_case(
        "infer llama-2-70b H100 TP4",
        "upstage_Llama-2-70b-instruct-v2",
        "llama-2-70b",
        "h100-sxm-80gb",
        "h100-sxm5-80gb",
        4,
        16,
        2048,
        256,
    )
    infer_case(
        "infer gpt-j-6b A100 bs32",
        "EleutherAI_gpt-j-6b",
        "gpt-j-6b",
        "a100-sxm-80gb",
        "a100-sxm4-80gb",
        1,
        32,
        1024,
        128,
    )

    train_req = EstimateRequest(
        workload_type=WorkloadType.TRAINING,
        model=PRESETS["llama-2-7b"],
        training=TrainingSpec(sequence_length=4096, tokens=1e10, sharding=Sharding.ZERO3),
    )
    a100 = gpu("a100-sxm4-80gb")
    cases.append(
        (
            "train llama-2-7b 8xA100 ZeRO-3",
            lambda: estimate_at(train_req, a100, 8),
            lambda: analysis.train(
                model_name="NousResearch_Llama-2-7b-hf",
                gpu_name="a100-sxm-80gb",
                dtype_name="w16a16e16",
                total_num_tokens=int(1e10),
                seq_len=4096,
                batch_size_per_gpu=1,
                total_num_gpus=8,
                ds_zero=3,
                flops_efficiency=0.45,
                hbm_memory_efficiency=0.75,
                log_level="ERROR",
            ),
        )
    )

    print(
        f"\n{'configuration (vs llm-analysis 0.2.2)':36s} {'engine/s':>10s} {'(cold)':>8s} "
        f"{'llm-analysis/s':>15s} {'ratio':>7s} {'(cold)':>7s}"
    )
    for label, ours, theirs in cases:
        try:
            theirs()
        except Exception as exc:
            print(f"{label:36s} llm-analysis failed: {type(exc).__name__}: {exc}")
            continue
        a, a_cold, b = best_rates([ours, cold(ours), theirs], seconds)
        print(f"{label:36s} {a:10,.0f} {a_cold:8,.0f} {b:15,.0f} {a / b:6.1f}x {a_cold / b:6.1f}x")
    print(
        f"(each figure: the fastest of {COMPARE_ROUNDS} turns of ~{seconds / COMPARE_ROUNDS:.2f} "
        "s, the three timed in turn within each round, so a busy machine slows both sides alike)"
    )


# The comparison's rounds: each side is timed in short turns, alternating, and its fastest turn
# kept (as timeit's min of repeats: the turn least disturbed by other processes). On a shared
# machine one second of each side, one after the other, could meet different loads: the same
# code gave 12x and 98x for one configuration within a minute.
COMPARE_ROUNDS = 7


def best_rates(fns: list[Callable[[], object]], seconds: float) -> list[float]:
    """Calls per second of each of ``fns``: its fastest of COMPARE_ROUNDS turns, the functions
    timed in turn within each round, each turn ~seconds / COMPARE_ROUNDS long."""
    turn = seconds / COMPARE_ROUNDS
    sizes = []
    for fn in fns:  # calls per turn, from a first timing
        fn()
        n, start = 0, time.perf_counter()
        while time.perf_counter() - start < turn / 4:
            fn()
            n += 1
        sizes.append(max(1, n * 4))
    best = [float("inf")] * len(fns)
    for _ in range(COMPARE_ROUNDS):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            for _ in range(sizes[i]):
                fn()
            best[i] = min(best[i], (time.perf_counter() - start) / sizes[i])
    return [1.0 / t for t in best]


def endpoint_figures(requests: int) -> None:
    """Median and p95 wall time of POST /api/v1/estimate per brief (no `gpus` filter)."""
    tmp = tempfile.TemporaryDirectory(prefix="gpuselect-bench-")
    os.environ["DJANGO_SETTINGS_MODULE"] = "gpuselect.settings.test"
    os.environ["DATABASE_URL"] = f"sqlite:///{tmp.name}/bench.sqlite3"
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.core.management import call_command
    from django.test import Client

    from apps.core.roles import Role
    from apps.core.services import api_token_create

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]  # the test client's host
    call_command("migrate", verbosity=0)
    call_command("load_catalog", stdout=open(os.devnull, "w"))  # noqa: SIM115
    user = get_user_model().objects.create_user(username="bench", password=None)
    user.groups.add(Group.objects.get_or_create(name=Role.API_CLIENT)[0])
    _, key = api_token_create(user=user, days=1)
    client = Client(HTTP_AUTHORIZATION=f"Token {key}")

    def post(body: dict[str, Any]) -> Any:
        return client.post("/api/v1/estimate", json.dumps(body), content_type="application/json")

    print(
        f"\nPOST /api/v1/estimate, full catalog, {requests} requests per brief "
        "(in-process test client, SQLite)"
    )
    print(f"{'brief':24s} {'GPUs':>5s} {'median ms':>10s} {'p95 ms':>8s} {'max ms':>8s}")
    try:
        for name, body in BRIEF_BODIES.items():
            response = post(body)
            if response.status_code != 200:
                print(f"{name:24s} HTTP {response.status_code}: {response.content[:200]!r}")
                continue
            answered = len(response.json()["estimates"])
            for _ in range(20):  # warm-up: imports, caches, first-query costs
                post(body)
            times = []
            for _ in range(requests):
                start = time.perf_counter()
                post(body)
                times.append((time.perf_counter() - start) * 1e3)
            p95 = statistics.quantiles(times, n=20)[-1]
            print(
                f"{name:24s} {answered:5d} {statistics.median(times):10.2f} {p95:8.2f} "
                f"{max(times):8.2f}"
            )
    finally:
        from django.db import connections

        connections.close_all()
        tmp.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    parser.add_argument("--requests", type=int, default=200, help="HTTP requests per brief")
    args = parser.parse_args()
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(
        f"{now} | {platform.processor() or platform.machine()} | {os.cpu_count()} CPUs | "
        f"Python {platform.python_version()} ({platform.python_implementation()})\n"
    )
    engine_figures(args.seconds)
    llm_analysis_figures(args.seconds)
    endpoint_figures(args.requests)


if __name__ == "__main__":
    main()
