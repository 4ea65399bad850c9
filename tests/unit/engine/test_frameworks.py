"""Scheduler limits of the serving frameworks (issue 13, item 5): vLLM, SGLang, TensorRT-LLM."""

from __future__ import annotations

from dataclasses import replace

import pytest
from engine_catalog import gpu

from apps.engine import PRESETS, EngineInputError, Precision, WorkloadType, estimate_at
from apps.engine import constants as c
from apps.engine.frameworks import (
    SGLANG_MAX_RUNNING_REQUESTS,
    TRTLLM_MAX_BATCH_SIZE,
    TRTLLM_MAX_NUM_TOKENS,
    framework_from_tooling,
    scheduler_limits,
)
from apps.engine.request import parse_estimate_request
from apps.engine.serving import scheduler_max_seqs
from apps.engine.types import EstimateRequest, Framework, SpeculativeMethod, SpeculativeSpec


@pytest.mark.parametrize(
    ("slug", "chunk"),
    [
        ("rtx-4090-24gb", 2048),
        ("l40s-48gb", 4096),
        ("h100-sxm5-80gb", 8192),
        ("h200-sxm-141gb", 8192),
        ("b200-sxm-180gb", 16384),
        ("mi300x-192gb", 16384),
    ],
)
def test_sglang_chunked_prefill_follows_device_memory(slug: str, chunk: int) -> None:
    limits = scheduler_limits(gpu(slug), Framework.SGLANG)
    assert limits.max_batched_tokens == chunk
    assert limits.max_seqs == SGLANG_MAX_RUNNING_REQUESTS


@pytest.mark.parametrize("slug", ["rtx-4090-24gb", "h100-sxm5-80gb", "b200-sxm-180gb"])
def test_tensorrt_llm_defaults_do_not_depend_on_the_gpu(slug: str) -> None:
    limits = scheduler_limits(gpu(slug), Framework.TENSORRT_LLM)
    assert (limits.max_seqs, limits.max_batched_tokens) == (
        TRTLLM_MAX_BATCH_SIZE,
        TRTLLM_MAX_NUM_TOKENS,
    )


def test_no_framework_means_vllm() -> None:
    h100, a100 = gpu("h100-sxm5-80gb"), gpu("a100-sxm4-80gb")
    assert scheduler_limits(h100).framework is Framework.VLLM
    assert scheduler_max_seqs(h100) == c.VLLM_MAX_NUM_SEQS_LARGE_GPU
    assert scheduler_max_seqs(a100) == c.VLLM_MAX_NUM_SEQS
    assert scheduler_max_seqs(h100, Framework.SGLANG) == SGLANG_MAX_RUNNING_REQUESTS


def _offline(framework: Framework | None) -> EstimateRequest:
    return EstimateRequest(
        workload_type=WorkloadType.BATCH_INFERENCE,
        model=PRESETS["llama-3.1-8b"],
        weight_precision=Precision.FP8,
        kv_cache_precision=Precision.FP8,
        input_tokens_p50=128,
        input_tokens_p95=128,
        output_tokens_p50=128,
        output_tokens_p95=128,
        framework=framework,
    )


def test_the_offline_batch_note_names_the_framework_limit_that_applied() -> None:
    b200 = gpu("b200-sxm-180gb")
    vllm = estimate_at(_offline(None), b200, 1)
    sglang = estimate_at(_offline(Framework.SGLANG), b200, 1)
    trt = estimate_at(_offline(Framework.TENSORRT_LLM), b200, 1)
    assert any("vLLM's default --max-num-seqs on this GPU is 1024" in n for n in vllm.notes)
    assert any(
        "SGLang's default --max-running-requests on this GPU is 2048" in n for n in sglang.notes
    )
    assert any("TensorRT-LLM's default max_batch_size on this GPU is 2048" in n for n in trt.notes)
    # A larger scheduler limit never lowers the best offline throughput: the search also tries
    # the smaller batches (here an 8B model on a B200 is compute-bound by 1024 sequences, and
    # SGLang's separate prefill passes add nothing to a compute-bound step, so they tie).
    assert sglang.performance.output_tokens_per_s >= vllm.performance.output_tokens_per_s  # type: ignore[operator]


def test_a_kv_bound_batch_says_so_whatever_the_framework() -> None:
    req = EstimateRequest(
        workload_type=WorkloadType.BATCH_INFERENCE,
        model=PRESETS["llama-3.1-70b"],
        weight_precision=Precision.FP8,
        kv_cache_precision=Precision.FP8,
        input_tokens_p50=8192,
        input_tokens_p95=8192,
        output_tokens_p50=8192,
        output_tokens_p95=8192,
        framework=Framework.SGLANG,
    )
    e = estimate_at(req, gpu("h100-sxm5-80gb"), 1)
    assert any("the KV cache holds" in n for n in e.notes)


def test_sglang_caps_a_speculative_batch_at_48() -> None:
    b200 = gpu("b200-sxm-180gb")
    assert scheduler_limits(b200, Framework.SGLANG, speculative=True).max_seqs == 48
    assert scheduler_limits(b200, Framework.VLLM, speculative=True).max_seqs == 1024
    spec = SpeculativeSpec(method=SpeculativeMethod.EAGLE, tokens=3, acceptance_rate=0.7)
    req = replace(_offline(Framework.SGLANG), speculative=spec)
    e = estimate_at(req, b200, 1)
    assert any("--max-running-requests on this GPU is 48" in n for n in e.notes)


def test_tooling_picks_the_first_serving_framework_listed() -> None:
    assert framework_from_tooling(["KUBERNETES", "SGLANG", "VLLM"]) is Framework.SGLANG
    assert framework_from_tooling(["TENSORRT_LLM"]) is Framework.TENSORRT_LLM
    assert framework_from_tooling(["RAY", "SLURM"]) is None
    assert framework_from_tooling([]) is None


def test_the_request_parses_framework_and_names_a_bad_one() -> None:
    body = {
        "workload_type": "BATCH_INFERENCE",
        "model": {"preset": "llama-3.1-8b"},
        "input_tokens": {"p50": 100},
        "output_tokens": {"p50": 100},
    }
    assert parse_estimate_request({**body, "framework": "sglang"}, known_gpus=()).framework is (
        Framework.SGLANG
    )
    assert parse_estimate_request(body, known_gpus=()).framework is None
    with pytest.raises(EngineInputError) as exc:
        parse_estimate_request({**body, "framework": "ollama"}, known_gpus=())
    assert exc.value.field == "framework"
