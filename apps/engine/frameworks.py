"""Scheduler limits of the serving frameworks: how many sequences one replica runs at once and
how many tokens one forward pass batches, at each framework's defaults.

An offline batch ("as many as fit") is bounded by the KV cache AND by these limits; the estimate
names the framework and the limit that applied. A request that names no framework is sized for
vLLM (DEFAULT_FRAMEWORK), whose flags the engine's advice quotes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from apps.engine import constants as c
from apps.engine.memory import routed_expert_bytes, stage_fraction
from apps.engine.types import Framework, GpuSpec, Layout, ModelSpec, Precision, fast_init

DEFAULT_FRAMEWORK = Framework.VLLM

# SGLang, python/sglang/srt/server_args.py (ServerArgs._handle_gpu_memory_settings): with
# --chunked-prefill-size unset, the chunk follows the device memory in MiB: < 35 GiB (A10, 4090,
# 5090) 2048 tokens, < 60 GiB (A100-40GB, L40) 4096, < 160 GiB (H100, A100-80GB, H200, H20) 8192,
# else (B200, MI300) 16384. https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/server_args.py
SGLANG_CHUNKED_PREFILL_TIERS: tuple[tuple[int, int], ...] = (
    (35 * 1024, 2048),
    (60 * 1024, 4096),
    (160 * 1024, 8192),
)
SGLANG_CHUNKED_PREFILL_LARGEST = 16384
# SGLang with --max-running-requests unset: the scheduler runs min(KV pool tokens // 2, request
# pool) sequences, the request pool being clamp(pool tokens / context_len x 512, 2048, 4096)
# (python/sglang/srt/model_executor/model_runner.py, max_num_reqs; managers/scheduler.py,
# max_running_requests). For a model with a 128K+ window the pool term is below 2048 unless the
# KV pool exceeds ~0.5-1M tokens, so the floor, 2048, is the limit; the KV cache bound is
# applied separately by the engine.
SGLANG_MAX_RUNNING_REQUESTS = 2048
# With speculative decoding (EAGLE / EAGLE3 / MTP, standalone draft) and --max-running-requests
# unset, SGLang resets it to 48 ("Max running requests is reset to 48 for speculative decoding",
# server_args.py _handle_speculative_decoding; SGLang cookbook DeepSeek-V3 section 4.2.3).
SGLANG_SPECULATIVE_MAX_RUNNING_REQUESTS = 48

# TensorRT-LLM LLM API / trtllm-serve (tensorrt_llm/llmapi/llm_args.py, BaseLlmArgs):
# max_batch_size default 2048, max_num_tokens default 8192, whatever the GPU.
# https://github.com/NVIDIA/TensorRT-LLM/blob/main/tensorrt_llm/llmapi/llm_args.py
TRTLLM_MAX_BATCH_SIZE = 2048
TRTLLM_MAX_NUM_TOKENS = 8192

FRAMEWORK_NAMES = {
    Framework.VLLM: "vLLM",
    Framework.SGLANG: "SGLang",
    Framework.TENSORRT_LLM: "TensorRT-LLM",
}
# The setting that caps the sequences in flight, as each framework spells it.
_MAX_SEQS_SETTING = {
    Framework.VLLM: "--max-num-seqs",
    Framework.SGLANG: "--max-running-requests",
    Framework.TENSORRT_LLM: "max_batch_size",
}
# The setting that caps the tokens one step carries, as each framework spells it (vLLM engine
# arguments; SGLang server arguments, its chunked-prefill size; TensorRT-LLM LLM API).
_BUDGET_SETTING = {
    Framework.VLLM: "--max-num-batched-tokens",
    Framework.SGLANG: "--chunked-prefill-size",
    Framework.TENSORRT_LLM: "max_num_tokens",
}
# The setting that caps one sequence's context, as each framework spells it: vLLM engine
# arguments (--max-model-len), SGLang server arguments (--context-length), TensorRT-LLM LLM API
# arguments (max_seq_len; tensorrt_llm/llmapi/llm_args.py).
_MAX_CONTEXT_SETTING = {
    Framework.VLLM: "--max-model-len",
    Framework.SGLANG: "--context-length",
    Framework.TENSORRT_LLM: "max_seq_len",
}
# How each framework is given a larger share of the GPU, formatted with that share: vLLM's
# --gpu-memory-utilization and SGLang's --mem-fraction-static are fractions of the whole GPU
# (weights + KV cache; SGLang server arguments); TensorRT-LLM's
# kv_cache_config.free_gpu_memory_fraction is a share of the memory left after the weights
# (llm_args.py KvCacheConfig), so no whole-GPU figure is quoted for it.
_MEMORY_SHARE_SETTING = {
    Framework.VLLM: "vLLM --gpu-memory-utilization {:.2f}",
    Framework.SGLANG: "SGLang --mem-fraction-static {:.2f}",
    Framework.TENSORRT_LLM: "a larger TensorRT-LLM kv_cache_config.free_gpu_memory_fraction",
}


def setting_words(framework: Framework | None) -> tuple[str, str, str]:
    """How the brief's framework (None: vLLM) spells the three settings TIGHT advice names: a
    larger share of the GPU (a format string taking the share), the sequences in flight and the
    context per sequence, each prefixed with the framework's name."""
    fw = framework or Framework.VLLM
    name = FRAMEWORK_NAMES[fw]
    return (
        _MEMORY_SHARE_SETTING[fw],
        f"{name} {_MAX_SEQS_SETTING[fw]}",
        f"{name} {_MAX_CONTEXT_SETTING[fw]}",
    )


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class SchedulerLimits:
    framework: Framework
    max_seqs: int  # sequences one replica schedules at once
    max_batched_tokens: int  # tokens one forward pass carries (the chunked-prefill budget)

    @property
    def budget_setting(self) -> str:
        """E.g. "vLLM's --max-num-batched-tokens": the per-step token budget's setting."""
        return f"{FRAMEWORK_NAMES[self.framework]}'s {_BUDGET_SETTING[self.framework]}"

    @property
    def note(self) -> str:
        """E.g. "SGLang's default --max-running-requests on this GPU is 2048"."""
        name = FRAMEWORK_NAMES[self.framework]
        setting = _MAX_SEQS_SETTING[self.framework]
        return f"{name}'s default {setting} on this GPU is {self.max_seqs}"


def _device_mib(gpu: GpuSpec) -> float:
    mib = gpu.device_memory_mib
    return mib if mib is not None else gpu.memory_gb * 1e9 / 2**20


def _vllm_max_seqs(gpu: GpuSpec) -> int:
    """vLLM's default max_num_seqs on `gpu` (VLLM_MAX_NUM_SEQS_LARGE_GPU on >= 70 GiB parts
    other than A100, else VLLM_MAX_NUM_SEQS)."""
    name = f"{gpu.slug} {gpu.name}".lower()
    if _device_mib(gpu) >= c.VLLM_LARGE_GPU_MIN_MIB and c.VLLM_SMALL_DEFAULTS_DEVICE not in name:
        return c.VLLM_MAX_NUM_SEQS_LARGE_GPU
    return c.VLLM_MAX_NUM_SEQS


def _vllm_batched_tokens(gpu: GpuSpec) -> int:
    """vLLM's default max_num_batched_tokens for `vllm serve` on `gpu` (the same device rule as
    `_vllm_max_seqs`: VLLM_MAX_NUM_BATCHED_TOKENS_LARGE_GPU, else VLLM_MAX_NUM_BATCHED_TOKENS)."""
    name = f"{gpu.slug} {gpu.name}".lower()
    if _device_mib(gpu) >= c.VLLM_LARGE_GPU_MIN_MIB and c.VLLM_SMALL_DEFAULTS_DEVICE not in name:
        return c.VLLM_MAX_NUM_BATCHED_TOKENS_LARGE_GPU
    return c.VLLM_MAX_NUM_BATCHED_TOKENS


def _sglang_chunk(gpu: GpuSpec) -> int:
    mib = _device_mib(gpu)
    for below, tokens in SGLANG_CHUNKED_PREFILL_TIERS:
        if mib < below:
            return tokens
    return SGLANG_CHUNKED_PREFILL_LARGEST


@lru_cache(maxsize=1024)  # called for every layout and count; the answer never changes
def scheduler_limits(
    gpu: GpuSpec, framework: Framework | None = None, *, speculative: bool = False
) -> SchedulerLimits:
    """The default scheduler limits of `framework` (vLLM when None) on one replica of `gpu`,
    with or without speculative decoding."""
    fw = DEFAULT_FRAMEWORK if framework is None else framework
    if fw is Framework.SGLANG:
        return SchedulerLimits(
            framework=fw,
            max_seqs=SGLANG_SPECULATIVE_MAX_RUNNING_REQUESTS
            if speculative
            else SGLANG_MAX_RUNNING_REQUESTS,
            max_batched_tokens=_sglang_chunk(gpu),
        )
    if fw is Framework.TENSORRT_LLM:
        return SchedulerLimits(
            framework=fw, max_seqs=TRTLLM_MAX_BATCH_SIZE, max_batched_tokens=TRTLLM_MAX_NUM_TOKENS
        )
    return SchedulerLimits(
        framework=fw,
        max_seqs=_vllm_max_seqs(gpu),
        max_batched_tokens=_vllm_batched_tokens(gpu),
    )


def framework_from_tooling(tooling: Iterable[str]) -> Framework | None:
    """The serving framework a brief's tooling list names: the first one listed (VLLM, SGLANG,
    TENSORRT_LLM), or None when it names none."""
    for item in tooling:
        if isinstance(item, str) and item in Framework.__members__:
            return Framework(item)
    return None


def profiled_sampler_bytes(
    vocab_size: int, gpu: GpuSpec, limits: SchedulerLimits, sequences: int | None = None
) -> float:
    """Per-GPU bytes of the sampler warm-up in vLLM's memory profiling run, which the KV cache is
    sized around (VLLM_SAMPLER_WARMUP_BYTES_PER_LOGIT); 0 for the other frameworks. vLLM warms up
    min(max_num_batched_tokens, max_num_seqs) requests: the default max_num_seqs when `sequences`
    is None (an offline batch left at the defaults, as the published offline runs are), else a
    deployment sized for `sequences` in flight, which sets --max-num-seqs to that."""
    if limits.framework is not Framework.VLLM:
        return 0.0
    per_logit = c.VLLM_SAMPLER_WARMUP_BYTES_PER_LOGIT.get(
        gpu.vendor, c.DEFAULT_VLLM_SAMPLER_WARMUP_BYTES_PER_LOGIT
    )
    seqs = limits.max_seqs if sequences is None else min(sequences, limits.max_seqs)
    return min(seqs, limits.max_batched_tokens) * vocab_size * per_logit


def _round_up(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple


def marlin_moe_padding(
    model: ModelSpec,
    gpu: GpuSpec,
    weight_precision: Precision,
    framework: Framework | None,
    tp: int,
) -> float:
    """Factor (>= 1) by which vLLM's Marlin MXFP4 MoE pads the routed experts it holds on one GPU
    (MARLIN_MOE_HIDDEN_MULTIPLE, MARLIN_MOE_INTERMEDIATE_MULTIPLE): vLLM (or no framework named)
    serving a published FP4 MoE checkpoint on an NVIDIA part without FP4 tensor cores; else 1."""
    fw = DEFAULT_FRAMEWORK if framework is None else framework
    ck = model.checkpoint
    if (
        fw is not Framework.VLLM
        or weight_precision is not Precision.FP4
        or ck is None
        or ck.precision is not Precision.FP4
        or not model.is_moe
        or gpu.vendor != "NVIDIA"
        or gpu.architecture in c.FP4_ARCHITECTURES
    ):
        return 1.0
    hidden = model.hidden_size
    width = max(model.intermediate_size // max(tp, 1), 1)
    padded = _round_up(hidden, c.MARLIN_MOE_HIDDEN_MULTIPLE) * _round_up(
        width, c.MARLIN_MOE_INTERMEDIATE_MULTIPLE
    )
    return padded / (hidden * width)


def marlin_moe_padding_bytes(
    model: ModelSpec,
    gpu: GpuSpec,
    weight_precision: Precision,
    framework: Framework | None,
    layout: Layout,
) -> float:
    """Per-GPU bytes the Marlin padding (marlin_moe_padding) adds to the routed experts one GPU of
    `layout` holds (TP slices each expert's width; DEP keeps experts whole, dep of them apart)."""
    split = layout.dep if layout.dep > 1 else layout.tp
    pad = marlin_moe_padding(
        model, gpu, weight_precision, framework, 1 if layout.dep > 1 else layout.tp
    )
    if pad <= 1.0:
        return 0.0
    held = routed_expert_bytes(model, weight_precision) / split * stage_fraction(model, layout.pp)
    return (pad - 1.0) * held
