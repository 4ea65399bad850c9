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
    marlin_moe_padding,
    profiled_sampler_bytes,
    scheduler_limits,
)
from apps.engine.performance import with_moe_kernel
from apps.engine.request import parse_estimate_request
from apps.engine.serving import scheduler_max_seqs, serving_setup
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


def test_vllm_reserves_its_sampler_warm_up_at_max_num_seqs_and_the_others_do_not() -> None:
    h100, mi300x = gpu("h100-sxm5-80gb"), gpu("mi300x-192gb")
    vocab = PRESETS["gpt-oss-120b"].vocab_size
    vllm = scheduler_limits(h100, Framework.VLLM)
    # 1024 dummy requests x 201,088 logits x 14 bytes (FlashInfer path on CUDA) = 2.9 GB.
    assert profiled_sampler_bytes(vocab, h100, vllm) == pytest.approx(
        1024 * vocab * c.VLLM_SAMPLER_WARMUP_BYTES_PER_LOGIT["NVIDIA"]
    )
    # A deployment for 4 sequences sets --max-num-seqs 4: the warm-up shrinks with it.
    assert profiled_sampler_bytes(vocab, h100, vllm, 4) == pytest.approx(
        4 * vocab * c.VLLM_SAMPLER_WARMUP_BYTES_PER_LOGIT["NVIDIA"]
    )
    # ROCm has no FlashInfer: the PyTorch sort path holds twice the bytes per logit.
    amd = profiled_sampler_bytes(vocab, mi300x, scheduler_limits(mi300x, Framework.VLLM))
    assert amd > profiled_sampler_bytes(vocab, h100, vllm)
    for fw in (Framework.SGLANG, Framework.TENSORRT_LLM):
        assert profiled_sampler_bytes(vocab, h100, scheduler_limits(h100, fw)) == 0.0


def test_the_marlin_padding_applies_to_mxfp4_experts_on_hopper_under_vllm_only() -> None:
    oss = PRESETS["gpt-oss-120b"]
    h100, b200 = gpu("h100-sxm5-80gb"), gpu("b200-sxm-180gb")
    # hidden 2880 -> 3072 (multiple of 256), expert width 2880 -> 2944 (multiple of 128).
    assert marlin_moe_padding(oss, h100, Precision.FP4, None, 1) == pytest.approx(
        3072 * 2944 / (2880 * 2880)
    )
    # TP2 slices the width to 1440 -> 1536.
    assert marlin_moe_padding(oss, h100, Precision.FP4, Framework.VLLM, 2) == pytest.approx(
        3072 * 1536 / (2880 * 1440)
    )
    assert marlin_moe_padding(oss, b200, Precision.FP4, Framework.VLLM, 1) == 1.0  # FP4 cores
    assert marlin_moe_padding(oss, h100, Precision.FP4, Framework.SGLANG, 1) == 1.0
    assert marlin_moe_padding(PRESETS["llama-3.1-8b"], h100, Precision.FP4, None, 1) == 1.0


def test_marlin_moe_runs_prompts_slower_on_hopper_and_decode_reads_the_padding() -> None:
    # A Hopper part without a measured kernel table (the SXM H100 has one: see below)
    oss, h100 = PRESETS["gpt-oss-20b"], gpu("h100-nvl-94gb")
    sm = serving_setup(oss, h100, 1, Precision.FP4, Precision.BF16, 1.0, 1.0).sm
    marlin = with_moe_kernel(sm, oss, h100, Precision.FP4, Framework.VLLM)
    pad = marlin_moe_padding(oss, h100, Precision.FP4, Framework.VLLM, 1)
    # An 8192-token prompt pass fills the expert tiles: mma.sync's 2/3 of the peak binds.
    assert marlin.prefill_seconds(8192) > 1.3 * sm.prefill_seconds(8192)
    # One decoding sequence reads the padded experts it touches, no more than pad x slower.
    one = sm.seconds(1.0, 1024.0, 0.0, 0.0)
    assert one < marlin.seconds(1.0, 1024.0, 0.0, 0.0) <= pad * one
    assert with_moe_kernel(sm, oss, h100, Precision.FP4, Framework.SGLANG) is sm


def test_on_a_gpu_with_measured_kernels_marlin_pads_the_bytes_only() -> None:
    """The measured W4A16 MXFP4 MoE curve (kernel_tables) is vLLM's Marlin kernel itself, its
    padding and mma.sync included: only the extra bytes read are added."""
    oss, h100 = PRESETS["gpt-oss-20b"], gpu("h100-sxm5-80gb")
    sm = serving_setup(oss, h100, 1, Precision.FP4, Precision.BF16, 1.0, 1.0).sm
    assert sm.moe_points
    marlin = with_moe_kernel(sm, oss, h100, Precision.FP4, Framework.VLLM)
    pad = marlin_moe_padding(oss, h100, Precision.FP4, Framework.VLLM, 1)
    assert marlin.expert_bytes == sm.expert_bytes * pad
    assert marlin.expert_flops_per_token == sm.expert_flops_per_token
    assert marlin.expert_mma == 1.0


def test_the_token_budget_bounds_the_offline_batch_a_mixing_scheduler_reaches() -> None:
    """vLLM fills a step with decode tokens first and replacements' prompts in the rest, so at
    2000 in / 100 out its 8192-token budget keeps at most 8192 x 100 / 2100 = 390 decoding;
    SGLang, whose prompts run as passes of their own, is bounded by its KV cache and limits."""

    def req(framework: Framework | None) -> EstimateRequest:
        return replace(
            _offline(framework),
            input_tokens_p50=2000,
            input_tokens_p95=2000,
            output_tokens_p50=100,
            output_tokens_p95=100,
        )

    b200 = gpu("b200-sxm-180gb")
    vllm = estimate_at(req(None), b200, 1)
    note = next(n for n in vllm.notes if n.startswith("batch chosen"))
    assert "vLLM's --max-num-batched-tokens 8192 keeps 390 decoding" in note
    assert "of the batches up to 390" in note
    sglang = estimate_at(req(Framework.SGLANG), b200, 1)
    assert not any("chunked-prefill-size" in n for n in sglang.notes)
