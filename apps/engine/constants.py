"""Every efficiency factor, overhead, default and rule of thumb the engine uses.

Each value names where it comes from. Values marked "engine choice" are not taken from a single
published figure; they are conservative round numbers, and the accuracy table
(bench/accuracy.md) is where they are checked against published measurements. Constants are
per architecture and precision, never per benchmark point.
"""

from __future__ import annotations

from typing import Final

# Raised with every change to what the engine answers or says: it is part of each candidate
# table's fingerprint (a new version recomputes every table on its next compute) and each
# decision record keeps the version its figures came from. 0.2.0: issue 25's scheduler (chunked
# prefill under the token budget, the batch it reaches, measured MoE kernels at their exact
# shapes) and shares written as percentages in the costing notes. 0.3.0: SGLang's prompt-only
# passes run outside CUDA graphs and take at least the host's eager floor
# (EAGER_PASS_FLOOR_FACTOR); prompt tokens run the LM head only where a token is sampled
# (LM_HEAD_ON_SAMPLED_POSITIONS_ONLY). 0.4.0: an estimate's `framework_version` picks the
# measured MoE tables of the vLLM version nearest at or below it (kernel_tables.moe_version_for),
# and the kernel note says which. 0.5.0: prompt tokens of DeepSeek-V3-shaped MLA pay vLLM's
# measured MLA prefill module where the GPU has one (MEASURED_MLA_CONTEXT).
ENGINE_VERSION: Final = "0.5.0"

GB: Final = 1e9  # docs/design.md: "GB means 10^9 bytes".
# nvidia-smi ("FB Memory Usage: Total ... MiB") and amd-smi ("VRAM total ... MB", MiB in fact)
# report device memory in MiB = 2^20 bytes; the catalog's `device_memory_mib` is that figure.
MIB: Final = 2**20

# --- Bytes per stored value -------------------------------------------------------------------
# IEEE / OCP formats: FP32 4 bytes, BF16 and FP16 2, FP8 (E4M3/E5M2) and INT8 1, INT4 and FP4 half.
BYTES_FP32: Final = 4.0
BYTES_16BIT: Final = 2.0
BYTES_8BIT: Final = 1.0
BYTES_4BIT: Final = 0.5

# Group-wise INT4 (GPTQ / AWQ): one FP16 scale and one packed zero point per group of 128 weights
# (AWQ paper, Lin et al. 2023, arXiv:2306.00978 section 4 uses group size 128; AutoAWQ default
# q_group_size=128).  2 bytes scale + 0.5 byte zero per 128 weights.
INT4_GROUP_SIZE: Final = 128
INT4_GROUP_OVERHEAD_BYTES: Final = 2.5

# NVFP4: one FP8 (E4M3) scale per block of 16 FP4 values, plus a per-tensor FP32 scale (NVIDIA
# "Introducing NVFP4" technical blog, 2025; TensorRT Model Optimizer docs).
FP4_BLOCK_SIZE: Final = 16
FP4_BLOCK_SCALE_BYTES: Final = 1.0

# FP8 and INT8 are per-tensor or per-channel scaled (TensorRT-LLM / vLLM fp8 docs): negligible.
FP8_SCALE_OVERHEAD_FRACTION: Final = 0.0

# QLoRA NF4 base weights with double quantization: 4 bits + 8-bit block constants per 64 weights +
# FP32 second-level constants per 256 blocks = 4 + 8/64 + 32/(64*256) = 4.127 bits per parameter
# (Dettmers et al. 2023, "QLoRA", arXiv:2305.14314, section 3 "Double Quantization").
QLORA_BITS_PER_PARAM: Final = 4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0)

# --- Memory: capacity and the fit verdict --------------------------------------------------------
# Capacity per GPU is device_memory_mib x MIB where the catalog has the driver's figure, else the
# datasheet memory_gb x GB. The response names which (Estimate.memory_capacity_source).
CAPACITY_SOURCE_DATASHEET: Final = "datasheet"
# The tool whose "Total" the catalog copied, by vendor (for "device (nvidia-smi MiB)").
DEVICE_MEMORY_TOOL: Final = {"NVIDIA": "nvidia-smi", "AMD": "amd-smi"}
DEFAULT_DEVICE_MEMORY_TOOL: Final = "driver"

# vLLM reserves gpu_memory_utilization=0.9 of each GPU by default; the other 10% is our safety
# margin (vLLM engine arguments: "--gpu-memory-utilization ... default 0.9"). Within it: FITS.
USABLE_MEMORY_FRACTION: Final = 0.9
# TIGHT: fits only when the framework is given more of the GPU, up to 0.95. vLLM's docs suggest
# raising --gpu-memory-utilization when the KV cache runs short ("Optimization and Tuning:
# Preemption"). Engine choice: never advise more than 0.95, since the last 5% holds allocations
# outside the framework's own accounting (NCCL buffers, cuBLAS workspaces, other processes).
TIGHT_MEMORY_FRACTION: Final = 0.95
# TIGHT also covers "fits at a smaller batch / shorter context", but only if that keeps at least
# half of what the brief asked for (engine choice: a brief cut by more than half is a different
# workload, so the verdict is NO).
TIGHT_MIN_WORKLOAD_FRACTION: Final = 0.5

# --- Memory: serving ---------------------------------------------------------------------------

# CUDA context, cuBLAS/NCCL workspaces and CUDA graphs per GPU.  PyTorch's CUDA context alone is
# ~0.3-0.8 GB; vLLM logs report CUDA-graph capture of ~0.5-1 GiB ("Graph capturing finished in N
# secs, took X GiB"). Engine choice: 1.5 GB per GPU for inference.
INFERENCE_RUNTIME_OVERHEAD_GB_PER_GPU: Final = 1.5

# Training adds NCCL buffers and allocator fragmentation (PyTorch CUDA caching allocator docs note
# fragmentation; DeepSpeed ZeRO docs budget extra temp buffers). Engine choice: 2.5 GB per GPU.
TRAINING_RUNTIME_OVERHEAD_GB_PER_GPU: Final = 2.5

# Tokens processed by one forward pass during serving: vLLM V1 default max_num_batched_tokens for
# chunked prefill is 8192 on data-centre GPUs (vLLM docs, "Optimization and Tuning: chunked
# prefill").  Activation peak per token ~ (4 * hidden + 2 * intermediate / tp) 16-bit values.
SERVING_PREFILL_CHUNK_TOKENS: Final = 8192
SERVING_ACTIVATION_HIDDEN_FACTOR: Final = 4.0
SERVING_ACTIVATION_INTERMEDIATE_FACTOR: Final = 2.0
LOGITS_BYTES: Final = 4.0  # logits are materialised in FP32 for sampling (vLLM sampler).

# Upper end of the concurrency search for a latency target (x 64 in serving._capacity).
BATCH_INFERENCE_MAX_CONCURRENCY: Final = 1024
# Batch inference with concurrency unspecified: the engine tries batches up to what the KV cache
# holds AND the serving framework's scheduler allows, and keeps the best throughput. The engine
# assumes vLLM (its advice quotes vLLM flags; the request names no framework). vLLM's
# EngineArgs.get_batch_defaults (vllm/engine/arg_utils.py, V1 engine) sets max_num_seqs 1024 on a
# GPU with >= 70 GiB whose device name does not contain "a100" ("For GPUs like H100 and MI300x";
# A100 is excluded because the larger budget cut its throughput, vLLM PR #17885), else 256.
VLLM_MAX_NUM_SEQS_LARGE_GPU: Final = 1024
VLLM_MAX_NUM_SEQS: Final = 256
# The same function's token budget per step for the OpenAI-compatible server (`vllm serve`,
# UsageContext.OPENAI_API_SERVER, what the published serving benchmarks run): 8192 on the large
# GPUs, else 2048 (the LLM class offline gets 16384 / 8192). The scheduler fills it with the
# running sequences' decode tokens first, then waiting prompts, chunked (vllm/v1/core/sched/
# scheduler.py), so it bounds the prompt chunk a step carries (performance.ServingModel._chunked).
VLLM_MAX_NUM_BATCHED_TOKENS_LARGE_GPU: Final = 8192
VLLM_MAX_NUM_BATCHED_TOKENS: Final = 2048
VLLM_LARGE_GPU_MIN_MIB: Final = 70 * 1024
VLLM_SMALL_DEFAULTS_DEVICE: Final = "a100"
MAX_REPORTED_CONCURRENCY: Final = 1_000_000
# vLLM sizes its KV cache after a profiling run (vllm/v1/worker/gpu_model_runner.py profile_run):
# one forward pass of max_num_batched_tokens, then `_dummy_sampler_run` warms up the sampler on the
# last token of min(max_num_batched_tokens, max_num_seqs) dummy requests with top_p 0.9 and
# top_k vocab - 1, so the top-k / top-p path runs. The profiled peak, which the KV cache is sized
# around, holds per (request, vocabulary entry):
#  NVIDIA 14 bytes: the V1 sampler uses FlashInfer when it is importable (vllm/envs.py
#   VLLM_USE_FLASHINFER_SAMPLER defaults to None, and topk_topp_sampler.py takes `is not False` as
#   on in V1; vLLM's CUDA images ship FlashInfer): the model's BF16 logits (2), the sampler's FP32
#   copy (4), and in flashinfer.sampling.top_k_top_p_sampling_from_logits the top-k-masked logits
#   (4) and their softmax (4).
#  AMD 28 bytes: no FlashInfer on ROCm, so the PyTorch path (topk_topp_sampler.py
#   apply_top_k_top_p): BF16 logits (2), FP32 copy (4), sorted values (4) and int64 indices (8),
#   top-k mask (1), top-p probabilities (4, cumsum in place) and mask (1), scattered result (4).
# For gpt-oss (201,088-entry vocabulary) at 1024 requests that is 2.9 GB on an H100, several times
# the forward pass's activations. The engine charges the larger of this and the forward
# activations under vLLM only (SGLang sizes its pool by mem_fraction_static, TensorRT-LLM by the
# free fraction after loading).
VLLM_SAMPLER_WARMUP_BYTES_PER_LOGIT: Final = {"NVIDIA": 14.0, "AMD": 28.0}
DEFAULT_VLLM_SAMPLER_WARMUP_BYTES_PER_LOGIT: Final = 28.0
# vLLM's MXFP4 MoE on CUDA parts without FP4 tensor cores (Ampere, Ada, Hopper) runs the Marlin
# kernel in the releases up to 0.11.0 (vllm/model_executor/layers/quantization/mxfp4.py
# get_mxfp4_backend: Marlin when triton_kernels is not installed; vLLM PR #27523: the
# triton_kernels dependency added later is what moved SM90 to Triton), and
# Mxfp4MoEMethod.create_weights pads each expert for it ("The moe marlin kernel requires that for
# each linear n % 256 == 0 and k % 128 == 0"): the per-GPU intermediate size up to a multiple of
# 128 and the hidden size up to a multiple of 256. gpt-oss (hidden 2880, expert width 2880)
# stores 3072 x 2944 per expert matrix on one GPU (+9%), 3072 x 1536 per GPU at TP2 (+14%).
MARLIN_MOE_HIDDEN_MULTIPLE: Final = 256
MARLIN_MOE_INTERMEDIATE_MULTIPLE: Final = 128
# Marlin is built on Ampere's mma.sync; on Hopper, "without the wgmma instruction, the older
# mma.sync instruction can only reach about 2/3 the peak throughput of Hopper Tensor Cores"
# (Shah et al., "FlashAttention-3", PyTorch blog 2024-07-11, note 1, citing Luo et al.,
# arXiv:2402.13499). The engine runs Marlin's MoE expert GEMMs on Hopper at that share of the rate
# it charges a wgmma-class weight-only GEMM; on Ampere and Ada mma.sync is the native path (1.0).
MARLIN_MMA_SYNC_PEAK_FRACTION: Final = {"HOPPER": 2.0 / 3.0}

# --- Memory: training --------------------------------------------------------------------------
# Training does not run under a serving engine, so vLLM's gpu_memory_utilization cap
# (USABLE_MEMORY_FRACTION) does not apply: a training job may use the whole GPU except what the
# runtime itself takes (TRAINING_RUNTIME_OVERHEAD_GB_PER_GPU, counted in the breakdown) and a
# headroom for the PyTorch CUDA caching allocator, which keeps freed blocks reserved and splits
# them, so "reserved" runs ahead of "allocated" (PyTorch docs, "CUDA semantics: memory
# management" and PYTORCH_CUDA_ALLOC_CONF expandable_segments, which exists to reduce this
# fragmentation). Engine choice: 2 GB per GPU kept free on top of the runtime overhead; a
# training estimate fits when weights + gradients + optimizer + adapters + activations + overhead
# + this headroom <= the GPU's memory.
TRAINING_ALLOCATOR_HEADROOM_GB_PER_GPU: Final = 2.0

# Mixed-precision Adam: 2 bytes FP16/BF16 weights + 2 bytes gradients + K=12 bytes optimizer state
# (FP32 master weights, momentum, variance) per parameter = 16 bytes (Rajbhandari et al. 2020,
# "ZeRO", arXiv:1910.02054, section 3.1).  The engine splits K into the FP32 master copy (4 bytes,
# only when the trained weights are 16-bit) and the optimizer's own states below.
TRAIN_WEIGHT_BYTES_MIXED: Final = 2.0
TRAIN_GRAD_BYTES_MIXED: Final = 2.0
MASTER_WEIGHT_BYTES: Final = 4.0

# Optimizer states per trained parameter (what torch.optim / bitsandbytes allocate):
#  AdamW: FP32 first and second moments, 4 + 4 bytes (Loshchilov & Hutter, arXiv:1711.05101).
OPTIMIZER_STATE_BYTES_ADAMW: Final = 8.0
#  8-bit Adam / AdamW (bitsandbytes Adam8bit / AdamW8bit): both moments block-wise quantized to
#  8 bits, 1 + 1 bytes, plus one FP32 absmax per block of 2048 values per state (Dettmers et al.
#  2022, "8-bit Optimizers via Block-wise Quantization", arXiv:2110.02861, sections 2-3: "we
#  reduce the memory footprint of optimizer states from 8 bytes to 2 bytes per parameter").
BNB_8BIT_BLOCK_SIZE: Final = 2048
OPTIMIZER_STATE_BYTES_8BIT: Final = 2.0 * (1.0 + BYTES_FP32 / BNB_8BIT_BLOCK_SIZE)
#  SGD with momentum (torch.optim.SGD momentum > 0): one FP32 momentum buffer, 4 bytes (plain SGD
#  without momentum keeps none). Lion keeps one momentum buffer too (Chen et al. 2023, "Symbolic
#  Discovery of Optimization Algorithms", arXiv:2302.06675, algorithm 1).
OPTIMIZER_STATE_BYTES_SGD_MOMENTUM: Final = 4.0
OPTIMIZER_STATE_BYTES_LION: Final = 4.0
#  Adafactor factors each weight matrix's second moment into a row and a column vector (Shazeer &
#  Stern 2018, arXiv:1804.04235, section 3): rows + cols FP32 values per matrix, no first moment
#  (Hugging Face transformers.optimization.Adafactor: beta1=None by default). Documented
#  approximation: the engine counts (in + out) FP32 values for every linear projection and the
#  embedding matrices, and ignores 1-D tensors (norms, biases), which keep a full second moment
#  but are < 0.1% of a transformer's parameters.
ADAFACTOR_STATE_BYTES_PER_FACTOR: Final = BYTES_FP32
# Paged optimizers (bitsandbytes PagedAdamW / PagedAdamW8bit, transformers optim
# "paged_adamw_32bit" / "paged_adamw_8bit") allocate their states in CUDA unified memory, "which
# automatically transfers memory from the GPU to the CPU when GPU memory is exhausted"
# (bitsandbytes optimizer docs; QLoRA paper, arXiv:2305.14314, section 3 "Paged Optimizers").
# Their states therefore do not count against the GPU's peak: the engine counts only a page-in
# buffer, the states of the largest single trained tensor (the optimizer updates one tensor at a
# time, and that tensor's states must be on the GPU for its update). The full states still need
# host RAM and are written to checkpoints.

# Activation memory per layer per sequence with FlashAttention / selective recomputation:
# s * b * h * 34 bytes (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
# Transformer Models", arXiv:2205.05198, eq. 2 without the 5as/h attention-score term that
# FlashAttention and selective recompute remove).  With full activation (gradient) checkpointing
# only each layer's input is kept (one 16-bit hidden state per layer boundary, 2 * s * b * h
# bytes), and in backward one layer at a time is recomputed: its 34 s b h bytes include its own
# input (the checkpoint already counted), so checkpointing adds 34 - 2 = 32 s b h bytes on top of
# the checkpoints (Korthikanti et al. section 4.1; Chen et al. 2016, "Training Deep Nets with
# Sublinear Memory Cost", arXiv:1604.06174).
ACTIVATION_BYTES_PER_TOKEN_HIDDEN: Final = 34.0
CHECKPOINTED_BYTES_PER_TOKEN_HIDDEN: Final = 2.0
DEFAULT_MICRO_BATCH_SEQUENCES: Final = 1

# LoRA / QLoRA adapters: only the adapters train, so gradients and optimizer states exist only
# for adapter parameters; the base model is frozen at its own (QLoRA: NF4) precision.
#  LoRA: PEFT keeps adapter weights in FP32 when the base is 16-bit (peft get_peft_model /
#   LoraModel autocast_adapter_dtype=True: "cast adapter weights using float16 and bfloat16 to
#   float32"), so adapters and their gradients are 4 bytes and need no separate master copy.
#  QLoRA: the reference recipe casts every LoraLayer to bfloat16 under --bf16 (artidoro/qlora,
#   qlora.py get_accelerate_model), so adapters and their gradients are 2 bytes, states as the
#   optimizer keeps them, no master copy.
LORA_ADAPTER_BYTES: Final = BYTES_FP32
QLORA_ADAPTER_BYTES: Final = BYTES_16BIT
DEFAULT_LORA_RANK: Final = 16

# --- Compute ----------------------------------------------------------------------------------
# Training FLOPs per token: 6 * N (forward 2N + backward 4N) plus attention 12 * layers * hidden *
# seq (Chowdhery et al. 2022, "PaLM", arXiv:2204.02311, appendix B).  Full recomputation repeats
# the forward: 8 * N (Korthikanti et al. 2022, section 5).
TRAIN_FLOPS_PER_PARAM: Final = 6.0
TRAIN_FLOPS_PER_PARAM_RECOMPUTE: Final = 8.0
# LoRA skips weight gradients of the frozen base: forward 2N + activation gradients 2N = 4N
# (Hu et al. 2021, "LoRA", arXiv:2106.09685, section 4: no gradients for frozen weights; the 4N
# figure is the engine's accounting of that statement).
LORA_FLOPS_PER_PARAM: Final = 4.0
LORA_FLOPS_PER_PARAM_RECOMPUTE: Final = 6.0
# QLoRA dequantizes NF4 weights on every forward and backward; engine choice 0.75 of LoRA speed
# (the QLoRA paper reports it trades speed for memory; no single authoritative figure).
QLORA_SPEED_FACTOR: Final = 0.75

# Model FLOPs utilization for training (BF16) per architecture.
#  HOPPER 0.40: Llama 3 405B on 16K H100 ran at 38-43% BF16 MFU (Llama Team 2024, "The Llama 3
#   Herd of Models", arXiv:2407.21783, table 4: 380-430 TFLOPs/GPU); Megatron-Core reports up to
#   47% MFU on H100 (Megatron-LM README, GPT-3 175B).
#  AMPERE 0.45: Megatron-LM 1T-parameter run, 163 TFLOPs/GPU = 52% of A100 peak counting the
#   recompute forward (Narayanan et al. 2021, arXiv:2104.04473), i.e. ~39% model FLOPs; small
#   models on one node reach ~50% (MosaicML llm-foundry benchmarks table).  Engine: 0.45.
#  BLACKWELL 0.40, CDNA3 0.30, ADA 0.35: engine choice; newer parts and PCIe-only parts reach
#   lower MFU early in their software life (AMD ROCm training results page shows MI300X BF16
#   Llama training well below H100 MFU).
#  BLACKWELL_ULTRA 0.40: INHERITED from BLACKWELL. B300/GB300 reuse the Blackwell SM and the same
#   4NP dual-die design (NVIDIA Technical Blog, "Inside NVIDIA Blackwell Ultra", 2025; Tom's
#   Hardware, Hot Chips 2025); the differences are in the datasheet peaks (FP4 x1.5, INT8 cut,
#   288 GB), which the catalog columns carry. No published Blackwell Ultra MFU.
#  CDNA4 0.30: INHERITED from CDNA3. MI355X keeps CDNA3's wave64 matrix cores with a larger LDS
#   (160 KB, 256 B/clk) and FP4/FP6 MFMA (AMD CDNA 4 architecture white paper; ROCm Blogs, "FP8
#   GEMM Optimization on AMD CDNA4 Architecture", 2026). No published MI355X training MFU.
#  VOLTA 0.30: Megatron-LM's 8.3B GPT-2 on 512 V100s sustained 15.1 PFLOPs, 39 TFLOPs per GPU =
#   30% of the 125 TFLOPs FP16 peak (Shoeybi et al. 2019, arXiv:1909.08053, section 1 / table 1).
#  TURING 0.25: engine choice, below Volta: the T4 is a 70 W inference card whose clocks fall
#   under sustained tensor load (NVIDIA T4 datasheet: 70 W); no published T4 training MFU.
TRAINING_MFU: Final = {
    "VOLTA": 0.30,
    "TURING": 0.25,
    "AMPERE": 0.45,
    "HOPPER": 0.40,
    "BLACKWELL": 0.40,
    "BLACKWELL_ULTRA": 0.40,
    "ADA": 0.35,
    "CDNA3": 0.30,
    "CDNA4": 0.30,
}
# FP8 training runs at FP8 peak with lower utilization (Transformer Engine FP8 on H100 gives ~1.3-
# 1.5x over BF16, not 2x: NVIDIA NeMo performance tables); engine: MFU x 0.7 of the BF16 value.
FP8_TRAINING_MFU_FACTOR: Final = 0.7

# Prefill (compute-bound) model FLOPs utilization by architecture and compute path.
#  AMPERE BF16 0.60: A100 dense GEMMs sustain 70-80% of the 312 TFLOPs peak (NVIDIA cuBLAS
#   performance pages); end-to-end prefill loses attention/norm time.
#  HOPPER BF16 0.55 / FP8 0.40: Hopper GEMMs reach ~ 600-700 of 989 BF16 TFLOPs; FP8 kernels
#   reach a lower fraction of the doubled peak (TensorRT-LLM H100 FP8 first-token latencies,
#   DeepSeek DeepGEMM README: 1350+ FP8 TFLOPs of 1979 for the best shapes only).
#  ADA: 0.55 / 0.45 (L40S/L4 power-limited; engine choice, below Hopper).
#  BLACKWELL 0.50 / 0.40 / FP4 0.30 (engine choice: same fractions as Hopper, lower for FP4).
#  CDNA3 0.45 / 0.35: MI300X GEMMs reach ~ 60% of peak in vendor-independent tests
#   (SemiAnalysis "MI300X vs H100" 2024); engine choice.
#  BLACKWELL_ULTRA BF16 0.50 / FP8 0.40: INHERITED from BLACKWELL (same SM, see TRAINING_MFU).
#   FP4 0.30: INHERITED from BLACKWELL too, though the dense NVFP4 peak rises 1.5x (10 -> 15
#   PFLOPS per package, NVIDIA Blackwell Ultra blog); no published figure says what share of it
#   prefill reaches, and the accuracy table (bench/accuracy.md) is where to revisit it.
#   No INT8 entry: Blackwell Ultra cut dense INT8 (the catalog's int8 column is empty, so INT8 is
#   served weight-only, see precision.compute_path).
#  CDNA4 BF16 0.45 / FP8 0.35 / INT8 0.35: INHERITED from CDNA3 (no published MI355X GEMM
#   efficiency; third-party FP8 GEMM write-ups such as Makora's "AI-generated FP8 GEMMs on AMD
#   MI355X", 2026, report per-shape results only). FP4 0.25: CDNA3 has no FP4 to inherit, so
#   engine choice: CDNA4's FP8 0.35 x Blackwell's FP4/FP8 ratio (0.30 / 0.40) = 0.26, rounded down
#   (CDNA4 is AMD's first FP4 MFMA generation).
#  VOLTA / TURING: the "BF16" key is the 16-bit path, which is FP16 there (no BF16 tensor cores,
#   NO_BF16_ARCHITECTURES). VOLTA 0.55: V100 cuBLAS HGEMM sustains ~ 100 of the 125 TFLOPs peak
#   for large shapes (NVIDIA Volta V100 whitepaper, figure 9: cuBLAS mixed-precision GEMM up to 9x
#   Pascal); engine choice below Ampere's 0.60 for the older scheduler. TURING 0.45 / INT8 0.40:
#   engine choice, the T4's 70 W limit holds it below its peak under load (as ADA's L4).
PREFILL_MFU: Final = {
    ("VOLTA", "BF16"): 0.55,
    ("TURING", "BF16"): 0.45,
    ("TURING", "INT8"): 0.40,
    ("AMPERE", "BF16"): 0.60,
    ("AMPERE", "INT8"): 0.45,
    ("HOPPER", "BF16"): 0.55,
    ("HOPPER", "FP8"): 0.40,
    ("HOPPER", "INT8"): 0.40,
    ("ADA", "BF16"): 0.55,
    ("ADA", "FP8"): 0.45,
    ("ADA", "INT8"): 0.45,
    ("BLACKWELL", "BF16"): 0.50,
    ("BLACKWELL", "FP8"): 0.40,
    ("BLACKWELL", "FP4"): 0.30,
    ("BLACKWELL", "INT8"): 0.40,
    ("CDNA3", "BF16"): 0.45,
    ("CDNA3", "FP8"): 0.35,
    ("CDNA3", "INT8"): 0.35,
    ("BLACKWELL_ULTRA", "BF16"): 0.50,
    ("BLACKWELL_ULTRA", "FP8"): 0.40,
    ("BLACKWELL_ULTRA", "FP4"): 0.30,
    ("CDNA4", "BF16"): 0.45,
    ("CDNA4", "FP8"): 0.35,
    ("CDNA4", "FP4"): 0.25,
    ("CDNA4", "INT8"): 0.35,
}
# Architectures with FP4 tensor / matrix cores (NVFP4 / MXFP4): Blackwell (NVIDIA Blackwell
# architecture technical brief), Blackwell Ultra, and CDNA4 (AMD CDNA 4 white paper: FP4/FP6
# MFMA). Elsewhere FP4 weights are served weight-only (W4A16).
FP4_ARCHITECTURES: Final = frozenset({"BLACKWELL", "BLACKWELL_ULTRA", "CDNA4"})
# Architectures without BF16: Volta's and Turing's tensor cores take FP16 only (NVIDIA Tesla V100
# and Turing architecture whitepapers; BF16 arrives with Ampere: NVIDIA A100 Tensor Core GPU
# architecture whitepaper, "BF16 ... new"); the catalog's 16-bit column holds their FP16 rate.
# vLLM refuses a bfloat16 model there ("Bfloat16 is only supported on GPUs with compute capability
# of at least 8.0 ... You can use float16 instead", vllm/worker/worker.py
# _check_if_gpu_supports_dtype), so the engine refuses BF16 weights on them and says to use FP16.
NO_BF16_ARCHITECTURES: Final = frozenset({"VOLTA", "TURING"})
DEFAULT_PREFILL_MFU: Final = 0.40

# Decode reads weights and KV cache once per step. Fraction of the datasheet HBM bandwidth that
# decode kernels sustain: Azure measured 92% of peak on GB200 with a STREAM-like test (Microsoft
# Tech Community, "Azure's ND GB200 v6 ..." 2025); fused decode kernels reach less.  NVIDIA parts
# 0.75 (engine choice), AMD CDNA3 0.60 (chips-and-cheese measured ~4.0 of 5.3 TB/s on MI300X in
# microbenchmarks, lower in serving stacks).  BLACKWELL_ULTRA 0.75: INHERITED from BLACKWELL
# (same 8 TB/s HBM3E, 8 stacks). CDNA4 0.60: INHERITED from CDNA3 (MI355X keeps the Infinity
# Cache + HBM3E layout at 8 TB/s; no published sustained-bandwidth measurement).
# VOLTA / TURING 0.75: the NVIDIA-part figure (engine choice), no separate measurement.
DECODE_BW_EFFICIENCY: Final = {
    "VOLTA": 0.75,
    "TURING": 0.75,
    "AMPERE": 0.75,
    "HOPPER": 0.75,
    "BLACKWELL": 0.75,
    "BLACKWELL_ULTRA": 0.75,
    "ADA": 0.75,
    "CDNA3": 0.60,
    "CDNA4": 0.60,
}
# Decode GEMMs are skinny (M = batch, at most ~1K rows) and each step also runs sampling, norms
# and rotary kernels whose cost grows with the batch; cuBLAS reaches its peak only for large M
# (NVIDIA "Matrix Multiplication Background User's Guide": small dimensions under-fill the GPU).
# Engine choice: decode compute runs at 0.7 x the prefill MFU.
DECODE_MFU_FACTOR: Final = 0.7

# Weight-only quantization (W8A16 / W4A16 / FP4 weights on pre-Blackwell parts): weights are
# dequantized to BF16 in the GEMM; Marlin-style kernels stay near ideal when memory-bound and lose
# ~10% when compute-bound (Frantar et al. 2024, "MARLIN", arXiv:2408.11743).
WEIGHT_ONLY_COMPUTE_EFFICIENCY: Final = 0.9

# Fixed per-step cost of a decode iteration outside the roofline (kernel launches, sampling,
# scheduler): ~ 15 us per layer without CUDA graphs, a few us with them.  Engine: 4 us per layer.
DECODE_OVERHEAD_S_PER_LAYER: Final = 4e-6

# MoE grouped GEMM: each routed expert multiplies only the tokens routed to it, so a step's expert
# GEMMs have M = tokens x top-k / experts-touched rows each, far fewer than the batch. Efficiency
# relative to the path's dense prefill MFU, by tokens per expert (log-linear between points):
#  256-8192 rows: DeepGEMM README (deepseek-ai/DeepGEMM, FP8 on H800, N x K of DeepSeek-V3's
#   experts 4096 x 7168 and 7168 x 2048, averaged): masked layout 256 rows 874, 512 rows 978,
#   1024 rows 1079 TFLOPS; contiguous layout 4096 rows 1191, 8192 rows 1198 TFLOPS; each divided
#   by the 8192-row figure.
#  Below 256 rows the 256-row efficiency is kept and, under GROUPED_GEMM_TILE_M rows, scaled by
#   rows / tile: vLLM / SGLang fused_moe pad each expert's tokens up to a whole block
#   (`moe_align_block_size`), so a 4-token expert pays for a full 16-row block.
# The curve is Hopper's; no published grouped-GEMM sweep exists for the other generations, so
# they reuse it. Small per-expert batches are what make small-expert
# models (gpt-oss, Qwen3-30B-A3B: 4-8 of 32-128 experts) fall far below their dense-FLOP rate.
GROUPED_GEMM_EFFICIENCY: Final = (
    (256.0, 0.73),
    (512.0, 0.82),
    (1024.0, 0.90),
    (4096.0, 0.99),
    (8192.0, 1.0),
)
# Rows of the smallest block a grouped-GEMM kernel pads one expert's tokens to: vLLM's fused_moe
# (vllm/model_executor/layers/fused_moe/fused_moe.py `get_default_config`, and its tuned
# configs/*.json for small batches, SGLang's copy likewise) picks BLOCK_SIZE_M 16 when there are
# fewer tokens than experts; 16 is also the M of mma.sync m16n8k16 and of AMD's 16x16 MFMA.
# Hopper's wgmma (M 64) is not used at these sizes, so one value serves every generation.
GROUPED_GEMM_TILE_M: Final = 16
# Grouped-GEMM efficiency also depends on how wide each expert is on one GPU: the fused-MoE
# kernels (vLLM / SGLang fused_moe, Triton) gather each expert's rows and run short K loops over
# few output tiles, so narrow experts, and experts sliced by tensor parallelism (width
# moe_intermediate / tp), reach a fraction of the dense rate, and a faster tensor path (FP8:
# twice BF16's peak, FP4: four times) needs proportionally more work per tile to keep up.
# Factor: min(1, width / (GROUPED_GEMM_SATURATION_WIDTH x path peak / BF16 peak)), on top of
# GROUPED_GEMM_EFFICIENCY. Published kernel sweeps, as achieved / (PREFILL_MFU x
# GROUPED_GEMM_EFFICIENCY at the same rows per expert):
#  Qwen3-30B-A3B fp8_w8a8, width 768, H100 (vLLM PR #24700, benchmarks/kernels/benchmark_moe.py):
#   batch 4096 in 1648 us = 188 TFLOP/s at 256 rows per expert: 0.33.
#  Gemma 4 MoE BF16, width 704, H200 (vLLM PR #44818): M 4096 in 1190 us = 328 TFLOP/s: 0.82.
#  Kimi-VL-A3B BF16, width 1408, A100 (vLLM PR #40542): M 4096 in 2637 us = 161 TFLOP/s: 1.1.
#  Mixtral 8x7B BF16 at TP2, width 7168, H100 (vLLM PR #24700): batch 1536 in 1123 us: 1.2.
#  DeepSeek-V3 FP8 whole experts, width 2048, H800 (DeepGEMM README, masked layout, 256 rows):
#   932 TFLOP/s: 1.6.
# 1024 puts the BF16 704-wide point at 0.69 and the FP8 768-wide one at 0.38, and saturates the
# others (engine choice between the two narrow points; the sweeps are Hopper and Ampere, the
# other generations reuse it).
GROUPED_GEMM_SATURATION_WIDTH: Final = 1024
# Narrower slices than any sweep measured (DeepSeek-V3 at TP8: 256 per GPU on FP8, x = 0.125)
# are held at the narrowest measured point's factor, Qwen3-30B-A3B FP8's 0.33, rather than
# extrapolated.
GROUPED_GEMM_MIN_WIDTH_EFFICIENCY: Final = 0.33
# Router and token dispatch / combine of one MoE layer within a GPU (tensor parallel, no expert
# parallel all-to-all): vLLM's fused_moe path launches topk_softmax, moe_align_block_size, a
# permute / activation step and moe_sum besides the two expert GEMMs, ~4 extra kernels of ~2 us
# each under CUDA graphs (the same few-us-per-kernel figure DECODE_OVERHEAD_S_PER_LAYER uses).
# Engine: 8 us per MoE layer, every layer of an MoE model counted as MoE.
MOE_ROUTING_OVERHEAD_S_PER_LAYER: Final = 8e-6

# Small kernels a decode step launches beyond the ones DECODE_OVERHEAD_S_PER_LAYER and
# MOE_ROUTING_OVERHEAD_S_PER_LAYER already count. At decode sizes each is latency-bound: what it
# costs is its launch plus its minimum duration, not its bytes. NVIDIA Technical Blog, "Getting
# Started with CUDA Graphs" (A. Gray, 2019): a 2.9 us kernel runs at 3.8 us per kernel launched
# back to back on a stream and 3.4 us per kernel replayed from a CUDA graph (V100); serving stacks
# replay decode steps from graphs (vLLM / SGLang --cuda-graph, TensorRT-LLM
# cuda_graph_config), so 3.4 us per kernel. No generation-specific figure is published (HIP
# graphs on CDNA included), so every architecture uses it.
SMALL_KERNEL_S: Final = 3.4e-6
# Kernels an MLA layer's decode runs beyond a GQA layer's (qkv projection, rotary, attention,
# output projection), in the absorbed form (DeepSeek-V2 paper, arXiv:2405.04434, section 2.1;
# SGLang python/sglang/srt/models/deepseek_v2.py DeepseekV2AttentionMLA.forward_absorb, vLLM
# vllm/attention/backends/mla/common.py): the fused q_a / kv_a down-projection, q_b
# up-projection (two GEMMs where GQA has one, +1), the q_a and kv_a RMSNorms (+2), the split of
# the rotary part and its concatenation into the latent cache (+1), the query's absorption of
# W_UK before attention and the output's W_UV after it, two batched GEMMs (+2), and the
# combine of split-KV partial results that MLA decode kernels (FlashMLA, FlashInfer MLA, the
# Triton MLA decode) run as a second kernel (+1): 7 in all.
MLA_DECODE_EXTRA_KERNELS: Final = 7
# FP8 (W8A8) GEMMs in vLLM and SGLang take FP8 activations that a separate kernel quantizes
# first, one per GEMM input (vLLM vllm/model_executor/layers/quantization/utils/fp8_utils.py
# W8A8BlockFp8LinearOp -> per_token_group_quant_fp8, and scaled_fp8_quant for per-tensor
# scales; SGLang sglang_per_token_group_quant_fp8 in
# python/sglang/srt/layers/quantization/fp8_kernel.py; fused_moe quantizes the input of each
# of its two expert GEMMs likewise). GEMM inputs per layer: attention 2 (qkv and output
# projections; MLA 3: q_a / kv_a, q_b and output) and the MLP's 2 (gate / up and down; the
# routed experts' two grouped GEMMs for MoE). Counted on the FP8 compute path only.
FP8_QUANT_KERNELS_ATTENTION: Final = 2
FP8_QUANT_KERNELS_ATTENTION_MLA: Final = 3
FP8_QUANT_KERNELS_MLP: Final = 2
# Block-scaled FP8 checkpoints (DeepSeek-V3/R1: 128 x 128 weight blocks, per-token groups of 128
# activations) run their attention and dense / shared-MLP projections through block-FP8 GEMM
# kernels that, at decode batch sizes, take far longer than their weight bytes: on Hopper, vLLM
# PR #23280 (H100, DeepSeek-V3's fused q_a / kv_a shape N 2112 x K 7168, 15 MB) measures 1.30
# TFLOP/s at batch 1 and 20.8 at batch 16 with the tuned Triton kernel, i.e. 23 us a call, 33 us
# at batch 128, against 4.5 us to stream the bytes; SGLang PR #5820's table of DeepSeek-V3's
# shapes gives 10-15 us (N 3072 x K 1536) to 32-46 us (N 4608 x K 7168) a call at batch 1-256
# across vLLM's, SGLang's and DeepGEMM's kernels. Engine choice: 20 us a GEMM, the middle of
# those figures, charged as a floor under each layer's dense weight read (the roofline's bytes
# time counts when it is longer). Per layer: attention projections (MLA: q_a / kv_a, q_b,
# output; GQA: qkv, output) and the dense or shared-expert MLP's gate / up and down; the routed
# experts stream enough bytes that their own floor hides.
#  BLACKWELL / BLACKWELL_ULTRA: none charged. No block-FP8 GEMM sweep is published for SM100,
#   where SGLang and TensorRT-LLM run DeepGEMM's SM100 and TRT-LLM-gen kernels: Blackwell's
#   block-scaled tensor-core MMA applies the (UE8M0) scales itself, where Hopper's block-FP8
#   kernels promote partial sums on CUDA cores (DeepGEMM README: SM90 FP32 scales with two-level
#   accumulation, SM100 packed UE8M0 scales).
#  CDNA3 / CDNA4: INHERITED from HOPPER (ROCm runs the same Triton block-FP8 kernels; no MI300X
#   sweep published, and the early-2025 ROCm rows in the accuracy table are slower still).
#  ADA: INHERITED from HOPPER (FP8 tensor cores; the same Triton block-FP8 kernels run on SM89).
#  AMPERE: none: FP8 is served weight-only there (precision.compute_path).
FP8_BLOCK_GEMM_FLOOR_S: Final = {
    "HOPPER": 20e-6,
    "CDNA3": 20e-6,
    "CDNA4": 20e-6,
    "ADA": 20e-6,
}
FP8_BLOCK_GEMMS_ATTENTION_MLA: Final = 3
FP8_BLOCK_GEMMS_ATTENTION: Final = 2
FP8_BLOCK_GEMMS_MLP: Final = 2
# A checkpoint whose label (quantization.checkpoint_weights) names square weight blocks, e.g.
# "FP8 128x128 blocks", is block-scaled.
FP8_BLOCK_LABEL_MARKER: Final = "x128 blocks"

# Tensor-parallel all-reduce: 2 per transformer layer (Shoeybi et al. 2019, "Megatron-LM",
# arXiv:1909.08053, section 3). Ring all-reduce moves 2 (n-1)/n of the message per GPU.  NCCL
# bus-bandwidth efficiency ~0.8 of link rate on NVLink (nccl-tests all_reduce_perf on DGX H100:
# ~360-380 GB/s of 450 GB/s unidirectional); per-hop latency a few microseconds.
ALLREDUCES_PER_LAYER: Final = 2
ALLREDUCE_BW_EFFICIENCY: Final = 0.8
ALLREDUCE_HOP_LATENCY_S: Final = 2e-6
ALLREDUCE_BASE_LATENCY_S: Final = 5e-6

# Checkpoint writes: Meta's Tectonic file system sustained 2 TB/s for 16K GPUs (Llama 3 paper
# section 3.3.1): ~0.12 GB/s per GPU of aggregate write bandwidth.
CHECKPOINT_WRITE_GB_PER_S_PER_GPU: Final = 2000.0 / 16384.0

# --- Embeddings (encoder models) ---------------------------------------------------------------
# Encoder inference is a single compute-bound forward (2 * N FLOPs per token, Kaplan et al. 2020,
# arXiv:2001.08361 section 2.1); short sequences keep GEMMs small: engine uses 0.8 x prefill MFU.
ENCODER_MFU_FACTOR: Final = 0.8
ENCODER_BATCH_CAP: Final = 1024

# --- Diffusion (image / video) -----------------------------------------------------------------
# FLOPs per denoising step at 1024x1024 (1 megapixel), per image, including classifier-free
# guidance where the model uses it.
#  FLUX.1-dev: DiT with 12B params on 4096 image + 512 text tokens. ~3.2B of the 12B are adaLN
#   modulation weights applied once per sample (19 double blocks x 2 x 3072 x 18432 + 38 single
#   blocks x 3072 x 9216, from the diffusers FluxTransformer2DModel shapes), so ~8.8B params see
#   every token: 2 * 8.8e9 * 4608 + attention 4 * 4608^2 * 3072 * 57 ~ 9.6e13 per step
#   (guidance-distilled: no CFG pass; Black Forest Labs model card).
#  SDXL: 2.6B-param UNet on a 128x128 latent; SD 1.5 measures 0.84 TFLOPs per UNet pass at 64x64
#   (NVIDIA "Stable Diffusion inference acceleration" talk: 1.68e12 per step with CFG), scaled by
#   params (2.6/0.86) and positions (4x) with CFG (2 passes) ~ 2.0e13.
DIFFUSION_FLOPS_PER_STEP_1MP: Final = {
    "flux.1-dev": 9.6e13,
    "sdxl": 2.0e13,
}
# DiT/UNet denoising runs as large GEMMs/convolutions: engine uses the prefill MFU.
DIFFUSION_MFU_FACTOR: Final = 1.0
DEFAULT_IMAGE_PIXELS: Final = 1024 * 1024
# Video DiTs compress time 4x in the VAE (Wan 2.1 and HunyuanVideo causal 3D VAEs: 4x temporal,
# 8x spatial) so FLOPs per clip ~ per-frame cost x frames / 4.
VIDEO_TEMPORAL_COMPRESSION: Final = 4.0
DEFAULT_VIDEO_FPS: Final = 16
DEFAULT_VIDEO_SECONDS: Final = 5.0

# --- Defaults -----------------------------------------------------------------------------------
HOURS_PER_MONTH_ALWAYS_ON: Final = 730.0  # 8760 h / 12.
DEFAULT_TRAINING_SEQUENCE_LENGTH: Final = 2048
MAX_TOKENS_PER_REQUEST: Final = 10_000_000
MAX_GPU_COUNT: Final = 72 * 8
AUTO_GPU_COUNTS: Final = (1, 2, 4, 8)
AUTO_GPU_COUNTS_LARGE_DOMAIN: Final = (16, 32, 72)

# Tensor parallelism beyond one NVLink domain crosses the scale-out network: see
# SCALE_OUT_GB_PER_S_* in the parallel-layouts block below (one 400 Gb/s ConnectX-7 port per GPU
# = 50 GB/s per direction on DGX H100, NVIDIA DGX H100 datasheet).
DEFAULT_LINK_GB_PER_S: Final = 32.0  # PCIe Gen4 x16 per direction, when a catalog row has none.

# --- Parallel layouts: attention data parallel + expert parallel (DEP), pipeline (PP), nodes ---
# Besides tensor parallelism (TP) the engine evaluates, per GPU count, the layouts serving stacks
# run and keeps the best for the brief's objective (serving.estimate_serving):
#  DEP: attention data-parallel over the replica's GPUs, each holding its own sequences' KV cache
#   (for MLA the compressed latent, which TP replicates on every rank because it has one KV head),
#   with the routed experts split across the same GPUs and the attention / dense / shared-expert
#   weights replicated on each; one all-to-all dispatch + combine per MoE layer. SGLang docs
#   "DP, DPA and SGLang DP Router" (https://docs.sglang.io/docs/advanced_features/
#   dp_dpa_smg_guide.md: "DeepSeek models use MLA and only have one KV head ... KV cache
#   duplicated across all GPUs" under TP); --enable-dp-attention with DeepEP all-to-all; vLLM
#   "Data Parallel Deployment" with --enable-expert-parallel; TensorRT-LLM attention DP.
#  PP: the layers split into consecutive stages (vLLM "Parallelism and Scaling": pipeline
#   parallelism across nodes, or on GPUs without NVLink where TP's all-reduces are slow).
# DeepEP needs the expert count to divide evenly over the ranks ("assert num_experts %
# group.size() == 0", deepseek-ai/DeepEP docs/legacy.md low-latency buffer example); the engine
# applies the same rule to DEP, and vLLM's rule that TP must divide the attention heads.
#
# All-to-all bytes per (token, routed expert) pair and hidden value: DeepEP dispatches in FP8 (1
# byte + one FP32 scale per 128 values) and combines in BF16 (2 bytes), "following the
# DeepSeek-V3/R1 ... setting: FP8 dispatching and BF16 combining" (DeepEP docs/legacy.md,
# "Performance"; DeepSeek-V3 technical report, arXiv:2412.19437, section 3.3.2 / 3.5.1).
A2A_DISPATCH_BYTES: Final = 1.0 + 4.0 / 128.0
A2A_COMBINE_BYTES: Final = BYTES_16BIT
# Share of the link the all-to-all sustains. DeepEP normal kernels on H800: 153 (dispatch) and 158
# (combine) of ~160 GB/s NVLink intranode, 0.96-0.99; 43 of ~50 GB/s RDMA at EP16 (0.86), 58 and
# 51 at EP32 / EP64 (DeepEP docs/legacy.md, "Normal kernels with NVLink and RDMA forwarding").
# Engine: 0.9 within the NVLink / Infinity Fabric domain (decode batches are small and the
# experts' loads uneven, so a little under DeepEP's large-batch figure), 0.86 over the fabric.
A2A_BW_EFFICIENCY_SCALE_UP: Final = 0.9
A2A_BW_EFFICIENCY_SCALE_OUT: Final = 0.86
# Fixed cost of one dispatch or one combine (signalling, the layout / count exchange, kernel
# launch): engine choice 10 us within a node (twice ALLREDUCE_BASE_LATENCY_S: an all-to-all
# synchronises every pair of ranks), 20 us when it crosses the fabric (an RDMA round trip on top).
# DeepEP's low-latency kernels at 128 tokens per rank take 77 us (dispatch) and 114 us (combine)
# at EP8 over RDMA, which the byte terms above reproduce within ~5% (7.5 MB at 98 GB/s; 14.7 MB
# at 127 GB/s), so the fixed part is small next to them.
A2A_LATENCY_S: Final = 10e-6
A2A_LATENCY_SCALE_OUT_S: Final = 20e-6
# Pipeline stages hand the activations (tokens x hidden, 16-bit) to the next stage: one
# point-to-point send per stage boundary per micro-batch, over the slowest link between stages,
# plus a fixed latency (engine choice 10 us: a NCCL send/recv pair with its launch).
PP_P2P_LATENCY_S: Final = 10e-6
# Micro-batches in flight: vLLM's pipeline-parallel scheduler keeps one batch per stage ("virtual
# engines" = pipeline_parallel_size, vllm/v1/engine/core.py batch queue of size pp), so with p
# stages at most p batches are in flight and a step for every sequence takes p stage times.
#
# Scale-out (node-to-node) bandwidth per GPU, GB/s per direction, when neither the GPU system nor
# the quote gives one, by interconnect family (substring of the catalog's `interconnect`):
#  NVLink SXM / NVL nodes and MI300-class platforms: one 400 Gb/s port per GPU = 50 GB/s (NVIDIA
#   DGX H100 / H200 / B200 reference architectures: 8x 400 Gb/s ConnectX-7 InfiniBand NDR compute
#   fabric per 8-GPU node; AMD Instinct MI300X platform: 8x 400 Gb/s RoCE). The catalog's systems
#   file lists the same networks (apps/catalog/data/systems.csv `scale_out_network`).
#  NVLink 5 rack-scale domains (GB300 NVL72: ConnectX-8 800 Gb/s per GPU) = 100 GB/s; GB200 NVL72
#   trays carry ConnectX-7 400 Gb/s per GPU = 50 GB/s (NVIDIA GB200 / GB300 NVL72 datasheets).
#  PCIe servers (L40S, L4, RTX PRO 6000, RTX 4090/5090): Ethernet / RoCE shared by the node,
#   2x 200 Gb/s per 8 GPUs (NVIDIA OVX L40S server reference, systems.csv) = 50 Gb/s = 6.25 GB/s.
SCALE_OUT_GB_PER_S_NVLINK_NODE: Final = 50.0
SCALE_OUT_GB_PER_S_CX8: Final = 100.0
SCALE_OUT_GB_PER_S_PCIE_SERVER: Final = 6.25
# Interconnect strings that mean "no switched GPU-to-GPU fabric across the node": TP traffic then
# crosses PCIe (bridges join pairs only), which is where pipeline layouts are worth evaluating.
PCIE_INTERCONNECT_MARKERS: Final = ("pcie", "bridge")
# Node counts the engine tries, beyond one node, when a model does not fit one (the smallest
# count that fits wins, DESIGN.md): DeepSeek-R1 FP8 on H100 needs two 8-GPU nodes, BF16 four
# (SGLang docs "DeepSeek V3/V3.1/R1 Usage", recommended settings).
AUTO_NODE_COUNTS: Final = (2, 4)
# NVLink bridges join 2 (or 4) GPUs (A100 / H100 PCIe, H100 NVL, H200 NVL: "NVLink bridge (2
# GPUs)" in the catalog's interconnect); a tensor-parallel or all-to-all group larger than the
# bridged group crosses PCIe, per direction: Gen4 x16 32 GB/s (A100 PCIe), Gen5 x16 64 GB/s
# (H100 / H200 PCIe cards) (PCI-SIG: 16 / 32 GT/s x 16 lanes; NVIDIA A100 and H100 PCIe product
# briefs list "PCIe Gen4 64 GB/s" and "PCIe Gen5 128 GB/s" bidirectional).
# Volta and Turing cards are PCIe Gen3 x16: 16 GB/s per direction (NVIDIA T4 datasheet "PCIe Gen3
# x16"; V100 PCIe datasheet "32 GB/s" bidirectional).
PCIE_GB_PER_S_BY_ARCHITECTURE: Final = {
    "VOLTA": 16.0,
    "TURING": 16.0,
    "AMPERE": 32.0,
    "HOPPER": 64.0,
    "BLACKWELL": 64.0,
}
# Attention (QK^T and PV) runs in 16-bit even when the weights are FP8 / FP4: serving stacks
# dequantize an FP8 KV cache to BF16/FP16 for the attention kernel "in most cases" (SGLang issue
# #10083, "Support multiple KVCache optimizations"); only with an FP8 KV cache does attention run
# in FP8 ("When using the Flash Attention 3 backend with FP8 KV cache, attention operations are
# also performed in the quantized (FP8) domain", vLLM docs "Quantized KV Cache"; TensorRT-LLM's
# FP8 context FMHA likewise). The engine charges attention FLOPs at the BF16 path's rate, or the
# FP8 path's with an FP8 KV cache (performance.serving_model). Weight-path GEMMs are unchanged.
# Frameworks whose scheduler, at its defaults, runs newly arrived prompts as forward passes of
# their own instead of mixing their chunks into the decode step: SGLang (ServerArgs
# enable_mixed_chunk = False, python/sglang/srt/server_args.py; the --enable-mixed-chunk flag
# turns mixing on), so each arrival costs a prompt-only pass (weights, all-reduces and kernel
# floors again) during which decoding stalls. vLLM's V1 scheduler always mixes prefill chunks
# into the decode batch (vLLM docs, "Optimization and Tuning: chunked prefill") and
# TensorRT-LLM's in-flight batching schedules context and generation requests in one batch
# (TensorRT-LLM docs, "In-flight batching"). Values are Framework values (apps/engine/types.py).
SEPARATE_PREFILL_FRAMEWORKS: Final = frozenset({"SGLANG"})
# Those prompt-only passes run outside CUDA graphs at SGLang's defaults: it captures graphs for
# decode batches only (--cuda-graph-max-bs); graphs for prefill are opt-in
# (--enable-piecewise-cuda-graph, sgl-project/sglang PR #10062: "SGLang's current native
# prefilling can incur kernel launch overhead"; DeepSeek-V3 support in PR #12996), and none of
# the published SGLang runs the engine is checked against pass it. Eager, a short pass is bound
# by the host launching its kernels one by one, with the GPU work running under it: SGLang PR
# #12160 logs a DeepSeek-V3 prefill of one new token at "forward cost 82.6 ms" eager against
# 23.1 ms under a prefill CUDA graph, and "prefill latency is similar when new_tokens < 100".
# Over DeepSeek-V3's 61 layers the eager figure is 1.354 ms a layer, 25.6 times the 52.8 us a
# layer the engine charges that model's graphed kernels at FP8 (performance.layer_overhead_s:
# DECODE_OVERHEAD_S_PER_LAYER, MOE_ROUTING_OVERHEAD_S_PER_LAYER and 12 small kernels at
# SMALL_KERNEL_S), so a prompt-only pass of these frameworks takes at least 25.6 x its layers'
# graphed kernel cost (the host floor); longer prompts, whose GPU time exceeds it, are unchanged.
# One measurement (DeepSeek-V3, its GPU and CPU unstated) scaled by the engine's per-layer kernel
# accounting to the other models: the host's speed is not modelled per machine.
EAGER_PASS_FLOOR_FACTOR: Final = 25.6
# Prompt tokens run the LM head (hidden x vocab) only at the positions a token is sampled from,
# each prompt's last: vLLM computes logits at `logits_indices`, the last scheduled position of
# each request (vllm/v1/worker/gpu_model_runner.py, `_prepare_inputs`), SGLang's LogitsProcessor
# keeps the last token of each extend sequence unless logprobs of the prompt are asked for
# (python/sglang/srt/layers/logits_processor.py), and TensorRT-LLM gathers context logits only
# with gather_context_logits (default False). Decode tokens are each sampled, so they pay it.
LM_HEAD_ON_SAMPLED_POSITIONS_ONLY: Final = True
# The measurement the factor comes from, kept so a test can check the derivation.
EAGER_PASS_MEASURED_S: Final = 82.6e-3  # SGLang PR #12160, DeepSeek-V3, 1 new token, eager
EAGER_PASS_MEASURED_LAYERS: Final = 61  # DeepSeek-V3's decoder layers (config.json)
ATTENTION_16BIT_NOTE: Final = "attention at the 16-bit tensor rate unless the KV cache is FP8"
# Measured kernel tables (apps/engine/kernel_tables_data.py, from AIConfigurator's database):
# the grouped-MoE and the per-precision GEMM rates are charged from them on the GPUs they
# cover. The measured tensor-parallel all-reduce (vLLM's custom all-reduce under CUDA graphs,
# 4.7 us for a small message on 8 x H100) is NOT charged yet: the engine's analytic all-reduce
# (ALLREDUCE_BASE_LATENCY_S + per-hop latency, ~33 us a call at TP8) also stands in for the
# per-layer norms, residual adds, rotary and quantization kernels it does not model op by op
# (AIConfigurator does), and charging the measured figure alone moved DeepSeek-R1's batch-1 ITL
# on 8 x B200 from -12% to -45% of the published figure. Turn it on with those kernels modelled.
MEASURED_ALLREDUCE: Final = False
# Prompt tokens of a model with DeepSeek-V3's MLA shape pay vLLM's measured MLA prefill module
# (AIConfigurator mla_context_module, kernel_tables_data "mla_context_us": the q_a / kv_a
# down-projections replicated on every GPU as vLLM's ReplicatedLinear / fused_qkv_a_proj runs
# them, the q_b / kv_b / o_proj slices at their narrow TP shapes, and the prefill attention
# kernel) in place of the projection and attention FLOPs at the path's one rate. On 8 x H200 at
# TP8 (16 heads a GPU, block FP8) it is 1.28 ms a layer for 4 x 2048 prompt tokens where the
# FLOPs gave 0.64, and 10.1 ms for one 32K prompt where they gave 12.0 (issue 25's op-by-op
# comparison with AIConfigurator's context phase).
MEASURED_MLA_CONTEXT: Final = True
# Where AIConfigurator measured the exact expert shape of the served model (hidden, expert
# intermediate, experts, top-k) at the layout's tensor-parallel slice (kernel_tables_data
# "moe_shapes_us": vLLM's fused MoE op, balanced routing, 1-16384 tokens), that op's measured
# latency by tokens through the layer is a floor under the width x rows efficiency table (whose
# buckets, medians over many shapes, lose the op's small-batch latency: gpt-oss-120b on H100,
# 63 us a layer at one token and 122 us at four, where the table's rate gave ~20 and ~80), and
# the routed experts are charged after the rest of the step's roofline (the op's latency
# includes its own weight reads). A floor, not a replacement: at prefill sizes the exact shapes
# (vLLM 0.24.0 kernels) run faster than the published vLLM 0.10-0.11 and SGLang 0.5 runs did,
# and replacing the table with them moved gpt-oss's H100 offline rows from within 25% to +25-140%.
MEASURED_MOE_SHAPES: Final = True
# How a preset's checkpoint label names an MXFP4 (OCP microscaling, 32-value blocks) checkpoint,
# e.g. gpt-oss's "MXFP4, 32-value blocks; ..." (presets.py), as against NVFP4.
MXFP4_LABEL_MARKER: Final = "MXFP4"
# Expert load imbalance without expert parallelism: AIConfigurator measures each MoE shape with
# balanced and power-law (power_law_1.2) routing at moe_ep_size 1, i.e. one GPU's fused MoE op
# with uneven expert loads (scripts/kernel_tables.py: the median latency ratio over the shapes
# at >= 256 tokens, 1.03-1.18 by dtype on Hopper and Blackwell). Served traffic routes unevenly,
# so that ratio is charged on a tensor-parallel GPU too once a pass routes as many tokens as it
# was measured at; below that, the engine charges none (uneven routing then touches fewer
# experts, which AIConfigurator's ratio does not cover).
MOE_SKEW_UNDER_TP: Final = True
MOE_SKEW_MIN_TOKENS: Final = 256
