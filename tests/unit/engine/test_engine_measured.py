"""Measured beats estimated: a run's figures replace the estimate's performance, the latency
verdict is taken on them, and memory fit and capacity stay as the engine sized them."""

import pytest

from apps.engine import estimate, parse_estimate_request
from apps.engine.measured import LatencyTargets, Measurement, apply_measurement
from tests.unit.engine.engine_catalog import gpu

H100 = "h100-sxm5-80gb"
BODY = {
    "workload_type": "REALTIME_INFERENCE",
    "model": {"preset": "llama-3.1-8b"},
    "weight_precision": "FP8",
    "kv_cache_precision": "FP8",
    "input_tokens": {"p50": 1000, "p95": 4000},
    "output_tokens": {"p50": 200, "p95": 800},
    "concurrency": 32,
    "latency_target": {"ttft_p95_ms": 500, "itl_p95_ms": 50},
}


@pytest.fixture(scope="module")
def estimated():
    request = parse_estimate_request(BODY, known_gpus={H100})
    return estimate(request, (gpu(H100),))[0]


def run(**figures):
    return Measurement(run_id=7, source="vllm bench serve 0.11.0", **figures)


def test_the_runs_figures_replace_the_estimated_ones(estimated):
    measured = apply_measurement(
        estimated,
        run(output_tokens_per_s=1234.0, ttft_ms=80.0, itl_ms=12.5, e2e_latency_ms=2600.0),
        LatencyTargets(ttft_ms=500, itl_ms=50),
    )

    perf = measured.performance
    assert (perf.output_tokens_per_s, perf.ttft_ms, perf.itl_ms, perf.e2e_latency_s) == (
        1234.0,
        80.0,
        12.5,
        2.6,
    )
    assert measured.basis == "MEASURED"
    assert measured.notes[-1] == (
        "MEASURED: benchmark run #7 (vllm bench serve 0.11.0) replaces the estimate"
    )
    assert (measured.memory, measured.capacity, measured.fit) == (
        estimated.memory,
        estimated.capacity,
        estimated.fit,
    )


def test_a_figure_the_run_did_not_report_stays_estimated(estimated):
    measured = apply_measurement(estimated, run(ttft_ms=90.0), LatencyTargets(ttft_ms=500))

    assert measured.performance.itl_ms == estimated.performance.itl_ms
    assert measured.performance.output_tokens_per_s == estimated.performance.output_tokens_per_s


@pytest.mark.parametrize(
    ("figures", "targets", "meets"),
    [
        ({"ttft_ms": 600.0}, LatencyTargets(ttft_ms=500), False),
        ({"ttft_ms": 400.0, "itl_ms": 60.0}, LatencyTargets(ttft_ms=500, itl_ms=50), False),
        ({"ttft_ms": 400.0, "itl_ms": 40.0}, LatencyTargets(ttft_ms=500, itl_ms=50), True),
        ({"e2e_latency_ms": 9000.0}, LatencyTargets(e2e_ms=8000), False),
    ],
)
def test_the_latency_verdict_is_the_runs(estimated, figures, targets, meets):
    assert apply_measurement(estimated, run(**figures), targets).meets_latency_target is meets


def test_without_a_measured_targeted_figure_the_estimates_verdict_stands(estimated):
    measured = apply_measurement(estimated, run(output_tokens_per_s=999.0), LatencyTargets())

    assert measured.meets_latency_target is estimated.meets_latency_target
