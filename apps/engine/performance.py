"""Roofline performance: prefill (compute-bound), decode (bandwidth-bound), and the parallel
layout's communication (TP all-reduce, DEP all-to-all, PP stage-to-stage sends).

All closed forms; `ServingModel` precomputes the per-(model, GPU, layout) coefficients once so
that a step time is a handful of multiplications (the capacity search calls it ~20 times).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import lru_cache

from apps.engine import constants as c
from apps.engine.frameworks import marlin_moe_padding
from apps.engine.kernel_tables import (
    MLA_MODULE_PROJECTION_PARAMS,
    MlaPoints,
    allreduce_points,
    allreduce_seconds,
    gemm_dtype,
    interpolate_log,
    mla_context_points,
    mla_context_seconds,
    moe_curve,
    moe_dtype,
    moe_op_seconds,
    moe_shape_points,
    tables_for,
)
from apps.engine.memory import kv_bytes_per_token, kv_cost, stage_fraction
from apps.engine.precision import ComputePath, compute_path, embedding_params, weight_bytes
from apps.engine.types import (
    Bound,
    Framework,
    GpuSpec,
    Layout,
    ModelKind,
    ModelSpec,
    Precision,
    fast_init,
)


def attention_flops_per_layer_position(model: ModelSpec, *, absorbed: bool = True) -> float:
    """FLOPs per token per attended context position in one softmax-attention layer.

    MLA (DeepSeek-V2/V3) runs attention in one of two forms (DeepSeek-V2 paper, arXiv:2405.04434,
    section 2.1.2; FlashMLA / SGLang / vLLM MLA backends): decode ABSORBS the key and value
    up-projections into the query and output, so QK^T spans the latent plus the RoPE key
    (kv_lora_rank + qk_rope_head_dim) and AV the latent (kv_lora_rank) per head; prefill
    up-projects the latent to per-head keys and values once per token and runs ordinary attention
    over qk_nope + qk_rope (ModelSpec.head_dim) and v_head_dim per head, about 3x fewer FLOPs per
    position for DeepSeek-V3 (2 x 128 x (192 + 128) against 2 x 128 x (2 x 512 + 64)).
    """
    if model.kv_lora_rank is not None:
        rope = model.qk_rope_head_dim or 0
        if absorbed:
            return 2.0 * (2 * model.kv_lora_rank + rope) * model.attention_heads
        v_dim = model.v_head_dim if model.v_head_dim is not None else model.head_dim - rope
        return 2.0 * (model.head_dim + max(v_dim, 0)) * model.attention_heads
    return 4.0 * model.attention_heads * model.head_dim


def attention_flops_per_position(model: ModelSpec, *, absorbed: bool = True) -> float:
    """FLOPs per generated/prefilled token per attended context position (QK^T and AV), over
    the softmax-attention layers (full and windowed; linear-attention layers have none)."""
    layout = model.attention
    n = model.layers if layout is None else layout.full_layers + layout.window_layers
    return attention_flops_per_layer_position(model, absorbed=absorbed) * n


def flop_params(model: ModelSpec) -> float:
    """Parameters that multiply each token: active params less the input embedding lookup."""
    emb = embedding_params(model)
    input_embedding = emb / 2 if not model.tied_embeddings else 0.0
    return max(model.active_params - input_embedding, 1.0)


def grouped_gemm_efficiency(rows: float, tile_m: float, width: float = 1.0) -> float:
    """Fraction of the dense-GEMM rate an MoE grouped GEMM reaches with `rows` tokens per expert
    (GROUPED_GEMM_EFFICIENCY, log-linear between its points; under one `tile_m`-row block the
    padded rows are paid for too), times `width` (expert_width_efficiency, <= 1) where the
    kernel runs full tiles: a padded block already runs below the narrow expert's plateau."""
    pts = c.GROUPED_GEMM_EFFICIENCY
    first_rows, first_eff = pts[0]
    if rows <= first_rows:
        if rows < tile_m:
            fill = rows / tile_m
            return first_eff * (fill if fill < width else width)
        return first_eff * width
    lo_rows, lo_eff = first_rows, first_eff
    for hi_rows, hi_eff in pts[1:]:
        if rows <= hi_rows:
            return width * (
                lo_eff + (hi_eff - lo_eff) * math.log(rows / lo_rows) / math.log(hi_rows / lo_rows)
            )
        lo_rows, lo_eff = hi_rows, hi_eff
    return lo_eff * width


def expert_width_efficiency(model: ModelSpec, gpu: GpuSpec, path: ComputePath, split: int) -> float:
    """Share of the grouped-GEMM rate an expert `model.intermediate_size / split` wide on one GPU
    reaches on `path` (GROUPED_GEMM_SATURATION_WIDTH, scaled by the path's peak over BF16's)."""
    speedup = 1.0
    if not path.weight_only and gpu.bf16_tflops > 0 and path.tflops > gpu.bf16_tflops:
        speedup = path.tflops / gpu.bf16_tflops
    width = model.intermediate_size / max(split, 1)
    eff = width / (c.GROUPED_GEMM_SATURATION_WIDTH * speedup)
    return min(max(eff, c.GROUPED_GEMM_MIN_WIDTH_EFFICIENCY), 1.0)


def bound_of(memory_s: float, compute_s: float, comm_s: float) -> Bound:
    if comm_s > memory_s and comm_s > compute_s:  # comm_s > max(memory_s, compute_s)
        return Bound.COMMUNICATION
    return Bound.COMPUTE if compute_s >= memory_s else Bound.MEMORY


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class StepTime:
    seconds: float
    memory_s: float
    compute_s: float
    comm_s: float

    @property
    def bound(self) -> Bound:
        return bound_of(self.memory_s, self.compute_s, self.comm_s)


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class ServingModel:
    """Per-GPU coefficients of one replica under one layout (`tp` x `pp`, or DEP over `dp`).

    TP (dp = 1): every per-token figure is one GPU's share (weights, FLOPs and KV split over tp
    ranks) and every GPU sees every token. DEP (dp > 1): attention, dense and shared-expert
    figures are whole (replicated) and a GPU sees only its own sequences, ceil(seqs / dp) of them
    (a lone prompt runs on one GPU); the routed experts are split `local_experts` per GPU. PP
    (pp > 1): the figures are the largest stage's, and `times` runs the stages in turn.
    """

    tp: int
    layers: int
    hidden: int
    bandwidth: float  # bytes/s sustained per GPU
    rate: float  # FLOP/s sustained per GPU on the compute path
    dense_weight_bytes: float  # per GPU, read every step
    expert_bytes: float  # per GPU, per routed expert it holds (all of the stage's layers)
    experts: int
    active_experts: int
    kv_per_token: float  # per GPU, full-attention layers, per sequence it holds
    flops_per_token: float  # per GPU, all but the routed experts (attention, dense and shared MLPs)
    expert_flops_per_token: float  # per GPU: the top-k routed experts of one token / (tp or dp)
    tile_m: float  # rows an expert's tokens are padded to (GROUPED_GEMM_TILE_M)
    # Attention FLOPs are FLOP-equivalents at `rate` (scaled by rate / the attention path's rate).
    attn_flops_per_position: float  # per GPU, full-attention layers (decode: MLA absorbed)
    # Windowed layers read and attend to min(context, kv_window) tokens; linear layers read a
    # constant state (kv_state). All 0 for a model whose layers all attend fully.
    kv_window: float
    kv_window_per_token: float  # per GPU
    attn_window_flops: float  # per GPU, per attended position, windowed layers
    kv_state: float  # per GPU, per sequence
    link_gb_per_s: float
    # Derived once from the fields above (see `serving_model`) so a step is a few operations.
    decode_rate: float  # rate x DECODE_MFU_FACTOR
    expert_miss: float  # 1 - active_experts / experts (probability an expert is not routed to)
    step_overhead_s: float  # layers x (performance.layer_overhead_s + block_fp8_floor_s)
    allreduces: int  # ALLREDUCES_PER_LAYER x layers (0 under DEP: no tensor parallelism)
    ar_fraction: float  # 2 (tp-1)/tp of the ring all-reduce message crosses each link
    ar_bandwidth: float  # bytes/s of one link at the all-reduce efficiency
    ar_hop_s: float  # 2 (tp-1) x per-hop latency
    # Prefill attention per attended position (MLA: the non-absorbed form; else as decode).
    prefill_attn_flops_per_position: float = 0.0
    prefill_attn_window_flops: float = 0.0
    # Layouts beyond plain TP.
    pp: int = 1  # pipeline stages
    dp: int = 1  # DEP: attention data-parallel ranks = expert-parallel ranks (1: none)
    local_experts: float = 0.0  # routed experts per GPU (TP: all of them; DEP: experts / dp)
    a2a_s_per_token: float = 0.0  # DEP: dispatch + combine s per token a GPU sends, all layers
    a2a_fixed_s: float = 0.0  # DEP: fixed dispatch + combine latency, all MoE layers
    p2p_s_per_token: float = 0.0  # PP: seconds per token to hand activations to the next stage
    p2p_fixed_s: float = 0.0  # PP: fixed latency of one stage-to-stage send
    replicas: int = 1  # independent engines (plain data parallel) sharing the replica's work
    expert_width: float = 1.0  # expert_width_efficiency of the GPU's expert slices
    # Share of the path's peak the expert kernel's MMA instruction reaches once its tiles are
    # full (with_moe_kernel: Marlin's mma.sync on Hopper); 1 for wgmma-class kernels.
    expert_mma: float = 1.0
    # Tokens one prompt-only pass may carry when prompts run as passes of their own (0: they
    # are mixed into the decode steps); see `with_scheduler`.
    prefill_pass_tokens: float = 0.0
    # Tokens one mixed step may carry (the framework's max_num_batched_tokens / max_num_tokens)
    # when prompts are mixed into the decode steps as whole prompts or budget-sized chunks
    # (0: spread evenly over the steps); see `with_scheduler` and `_chunked`.
    chunk_budget: float = 0.0
    # Whether a chunk's cost is not linear in its tokens (routed experts, a measured all-reduce
    # curve): only then does the mean of chunked steps differ from the even spread, which a
    # dense model's step (every term linear in the prompt tokens it carries) equals exactly.
    chunk_lumpy: bool = False
    # Measured kernels (kernel_tables; empty: the per-architecture constants): the routed
    # experts' grouped GEMM as (rows per expert, FLOP/s) points at this GPU's expert width,
    # the power-law / balanced routing latency ratio charged under expert parallelism, and the
    # tensor-parallel all-reduce as (message elements, seconds) points.
    moe_points: tuple[tuple[float, float], ...] = ()
    expert_imbalance: float = 1.0
    ar_points: tuple[tuple[int, float], ...] = ()
    # Without expert parallelism, the same measured power-law / balanced latency ratio charged
    # within the GPU once a pass routes MOE_SKEW_MIN_TOKENS tokens or more (1: not charged).
    skew_imbalance: float = 1.0
    # The fused MoE op measured at this model's exact expert shape and TP slice
    # (kernel_tables.moe_shape_points): (tokens through the layer, seconds for all of the
    # stage's MoE layers on this GPU), a floor under the moe_points rate
    # (constants.MEASURED_MOE_SHAPES). Its latency includes the op's own weight reads, so where
    # it exists the routed experts are charged after the rest of the step's roofline.
    moe_op_points: tuple[tuple[float, float], ...] = ()
    # The fixed per-pass cost of the stage's layers under CUDA graphs (stage layers x
    # layer_overhead_s: launches and small kernels, without the block-FP8 GEMM floors), and the
    # least a prompt-only pass takes where the framework runs such passes outside CUDA graphs
    # (EAGER_PASS_FLOOR_FACTOR x that cost: the host launching its kernels eagerly; 0: graphed
    # or mixed into the decode steps); see `with_scheduler`.
    graphed_overhead_s: float = 0.0
    prompt_pass_floor_s: float = 0.0
    # Per GPU, the LM head's share of flops_per_token (2 x vocab x hidden over the split), which
    # a prompt token skips unless it is the one sampled (constants.LM_HEAD_...); 0: charged.
    head_flops_per_token: float = 0.0
    # vLLM's MLA prefill module measured at this model's exact MLA shape and heads per GPU
    # (kernel_tables.mla_context_points; constants.MEASURED_MLA_CONTEXT): prompt tokens pay it
    # for `mla_prefill_layers` layers in place of the projection FLOPs it covers
    # (`mla_prefill_flops`, per GPU per token) and the prefill attention FLOPs. Empty: FLOPs.
    mla_prefill_points: MlaPoints = ()
    mla_prefill_layers: float = 0.0
    mla_prefill_flops: float = 0.0

    def times(
        self, decode_seqs: float, context: float, prefill_tokens: float, prefill_context: float
    ) -> tuple[float, float, float, float]:
        """(seconds, memory_s, compute_s, comm_s) of one forward pass; see `step`.

        Pipeline: with p stages, vLLM keeps up to p micro-batches in flight; a step in which
        every sequence advances one token takes p stage times of one micro-batch (its share of
        the sequences), plus p stage-to-stage sends. A lone batch or prompt (fewer sequences than
        stages) runs the stages in turn, idle otherwise: the pipeline bubble.

        Plain data parallel (`replicas` engines): each engine runs its own share of the
        sequences, the busiest ceil(seqs / replicas); a lone prompt runs on one engine.
        """
        r = self.replicas
        if r > 1 and decode_seqs > 0:
            # The prompts carried in a step belong to the sequences replacing finished ones, so
            # an engine carries them in proportion to the sequences it holds.
            busiest = float(math.ceil(decode_seqs / r - 1e-9))
            prefill_tokens *= busiest / decode_seqs
            decode_seqs = busiest
        budget = self.prefill_pass_tokens
        if budget and decode_seqs > 0 and prefill_tokens > 0 and prefill_context > 0:
            # SGLang without --enable-mixed-chunk: prompts run as prompt-only passes, during
            # which decoding waits. The callers pass each prompt's causal mean context, half its
            # length, so prefill_tokens / (2 x prefill_context) prompts arrive a step: one pass
            # per prompt while fewer than one arrives a step; above that one pass a step for
            # all of them, or as many as the per-pass token budget needs.
            arrivals = prefill_tokens / (2.0 * prefill_context)
            passes = arrivals if arrivals < 1.0 else 1.0
            if prefill_tokens / budget > passes:
                passes = prefill_tokens / budget
            d = self._staged(decode_seqs, context, 0.0, 0.0)
            f = self._staged(0.0, 0.0, prefill_tokens / passes, prefill_context)
            return (
                d[0] + passes * f[0],
                d[1] + passes * f[1],
                d[2] + passes * f[2],
                d[3] + passes * f[3],
            )
        if self.chunk_lumpy and decode_seqs > 0 and prefill_tokens > 0 and prefill_context > 0:
            return self._chunked(decode_seqs, context, prefill_tokens, prefill_context)
        if self.pp <= 1:  # `_staged` without pipeline stages, one call fewer
            return self._pass(decode_seqs, context, prefill_tokens, prefill_context)
        return self._staged(decode_seqs, context, prefill_tokens, prefill_context)

    def _chunked(
        self, decode_seqs: float, context: float, prefill_tokens: float, prefill_context: float
    ) -> tuple[float, float, float, float]:
        """The mean step of a scheduler that mixes prompts into the decode steps as whole prompts
        or chunks of its token budget (vLLM V1's scheduler: the running sequences' decode tokens
        first, then waiting prompts, chunked, up to max_num_batched_tokens; TensorRT-LLM's
        in-flight batching up to max_num_tokens), rather than spread evenly over the steps.

        `prefill_tokens` is the mean prompt tokens a step carries and `prefill_context` each
        prompt's causal mean context, half its length (as the callers pass them). Where fewer
        than one prompt arrives a step, the prompt tokens come as chunks of min(prompt, budget
        left after the decode tokens) in a share prefill_tokens / chunk of the steps, the rest
        decode-only; each chunk runs at its own size's efficiency (weight reads shared, grouped
        MoE GEMMs at that chunk's rows per expert). Where more arrive a step than one chunk
        holds, the even spread is kept (the step carries them together)."""
        ranks = float(self.dp) if self.dp > 1 else 1.0  # DEP: one scheduler per rank
        room = self.chunk_budget - decode_seqs / ranks
        per_rank = prefill_tokens / ranks
        prompt = 2.0 * prefill_context
        chunk = prompt if prompt > per_rank else per_rank
        if room < chunk:
            chunk = room
        if chunk <= per_rank or chunk < 1.0:
            return self._staged(decode_seqs, context, prefill_tokens, prefill_context)
        share = per_rank / chunk
        run = self._pass if self.pp <= 1 else self._staged
        a = run(decode_seqs, context, chunk * ranks, prefill_context)
        b = run(decode_seqs, context, 0.0, 0.0)
        rest = 1.0 - share
        return (
            share * a[0] + rest * b[0],
            share * a[1] + rest * b[1],
            share * a[2] + rest * b[2],
            share * a[3] + rest * b[3],
        )

    def _staged(
        self, decode_seqs: float, context: float, prefill_tokens: float, prefill_context: float
    ) -> tuple[float, float, float, float]:
        """One forward pass through the pipeline stages (all layers without PP)."""
        pp = self.pp
        if pp <= 1:
            return self._pass(decode_seqs, context, prefill_tokens, prefill_context)
        m = float(pp) if decode_seqs >= pp else (decode_seqs if decode_seqs > 1.0 else 1.0)
        dm = decode_seqs / m
        pm = prefill_tokens / m
        seconds, memory_s, compute_s, comm_s = self._pass(dm, context, pm, prefill_context)
        p2p = self.p2p_fixed_s + (dm + pm) * self.p2p_s_per_token
        return pp * (seconds + p2p), pp * memory_s, pp * compute_s, pp * (comm_s + p2p)

    def _pass(
        self, decode_seqs: float, context: float, prefill_tokens: float, prefill_context: float
    ) -> tuple[float, float, float, float]:
        """One pass through one stage (all layers without PP) on its busiest GPU."""
        tokens = decode_seqs + prefill_tokens  # routed through the MoE layers, replica-wide
        if self.dp > 1:
            # DEP: a GPU attends only to its own sequences; the busiest holds ceil(seqs / dp).
            # The prompts mixed into a decode step go with the sequences they replace; a prompt
            # on its own (decode_seqs 0) runs on one GPU.
            local_decode = float(math.ceil(decode_seqs / self.dp - 1e-9))
            local_prefill = (
                prefill_tokens * local_decode / decode_seqs if decode_seqs > 0 else prefill_tokens
            )
        else:
            local_decode, local_prefill = decode_seqs, prefill_tokens
        decode_expert_s = prefill_expert_s = 0.0
        if self.experts <= 1:
            touched = 0.0
        else:
            # The step reads each expert at least one token routes to: E (1 - (1 - k/E)^tokens)
            # distinct experts in expectation (of them, the share this GPU holds), and runs them
            # as one grouped GEMM whose rows per expert (tokens x k / experts touched) set its
            # efficiency.
            t = 0.0 if tokens < 0.0 else tokens  # max(tokens, 0.0)
            hit = 1.0 - math.pow(self.expert_miss, t)
            n_touched = self.experts * hit
            touched = self.expert_bytes * self.local_experts * hit
            if n_touched > 0.0 and self.expert_flops_per_token:
                rows = t * self.active_experts / n_touched
                if self.moe_points:
                    # measured: the fused MoE op's achieved FLOP/s at this many rows (its
                    # weight reads included), the busiest EP rank's routing skew on top
                    per_token_s = (
                        self.expert_flops_per_token
                        * self.expert_imbalance
                        / interpolate_log(self.moe_points, rows)
                    )
                else:
                    eff = grouped_gemm_efficiency(rows, self.tile_m, self.expert_width)
                    if rows >= self.tile_m:  # full tiles: the MMA instruction's peak binds
                        eff *= self.expert_mma
                    per_token_s = self.expert_flops_per_token / (self.rate * eff)
                if self.moe_op_points:
                    # the exact shape's measured op latency is a floor under the table's rate
                    floor = moe_op_seconds(self.moe_op_points, t) / t
                    if floor > per_token_s:
                        per_token_s = floor
                if t >= c.MOE_SKEW_MIN_TOKENS:
                    per_token_s *= self.skew_imbalance
                decode_expert_s = decode_seqs * per_token_s
                prefill_expert_s = prefill_tokens * per_token_s
        fpt = self.flops_per_token
        apf = self.attn_flops_per_position
        kv_read = context * self.kv_per_token + self.kv_state
        decode_flops = fpt + apf * context
        # A prompt token runs the LM head only where a token is sampled: the prompt's last
        # position, one in 2 x prefill_context (LM_HEAD_ON_SAMPLED_POSITIONS_ONLY).
        head = self.head_flops_per_token
        if head and prefill_context > 0.0:
            head -= head / (2.0 * prefill_context)
        prefill_flops = fpt - head + self.prefill_attn_flops_per_position * prefill_context
        mla_s = 0.0
        if self.mla_prefill_points and local_prefill > 0.0:
            # measured: the MLA module (projections and attention) of the prompt tokens
            prefill_flops -= (
                self.mla_prefill_flops + self.prefill_attn_flops_per_position * prefill_context
            )
            mla_s = self.mla_prefill_layers * mla_context_seconds(
                self.mla_prefill_points, local_prefill, 2.0 * prefill_context
            )
        if self.kv_window_per_token:
            w = self.kv_window
            seen = context if context < w else w
            kv_read += seen * self.kv_window_per_token
            decode_flops += seen * self.attn_window_flops
            prefill_flops += (prefill_context if prefill_context < w else w) * (
                self.prefill_attn_window_flops
            )
        bytes_read = self.dense_weight_bytes + touched + local_decode * kv_read
        # Decode is a roofline of bytes vs skinny-GEMM FLOPs; prompt tokens carried in the same
        # step add their (compute-bound) time on top rather than hiding under the weight read.
        if self.dp > 1:
            # One dispatch and one combine per MoE layer for the tokens this GPU holds.
            comm_s = self.a2a_fixed_s + (local_decode + local_prefill) * self.a2a_s_per_token
        elif self.tp <= 1:
            comm_s = 0.0
        elif self.ar_points:
            comm_s = self.allreduces * allreduce_seconds(self.ar_points, tokens * self.hidden)
        else:
            message = tokens * self.hidden * c.BYTES_16BIT
            comm_s = self.allreduces * (
                self.ar_fraction * message / self.ar_bandwidth
                + c.ALLREDUCE_BASE_LATENCY_S
                + self.ar_hop_s
            )
        memory_s = bytes_read / self.bandwidth
        decode_compute_s = local_decode * decode_flops / self.decode_rate + decode_expert_s
        prefill_s = local_prefill * prefill_flops / self.rate + prefill_expert_s + mla_s
        if self.moe_op_points and decode_expert_s + prefill_expert_s > 0.0:
            # The measured op runs after the step's other kernels, its weight reads its own.
            rest_memory_s = (bytes_read - touched) / self.bandwidth
            rest_decode_s = decode_compute_s - decode_expert_s
            rest_prefill_s = prefill_s - prefill_expert_s
            if decode_seqs > 0:
                roofline = (
                    rest_decode_s if rest_decode_s > rest_memory_s else rest_memory_s
                ) + rest_prefill_s
            else:
                roofline = rest_prefill_s if rest_prefill_s > rest_memory_s else rest_memory_s
            roofline += decode_expert_s + prefill_expert_s
            seconds = roofline + comm_s + self.step_overhead_s
            if decode_seqs <= 0 and seconds < self.prompt_pass_floor_s:
                seconds = self.prompt_pass_floor_s  # an eager prompt pass: the host's floor
            return seconds, memory_s, decode_compute_s + prefill_s, comm_s
        if decode_seqs > 0:
            # max(memory_s, decode_compute_s), spelled out: this runs ~100 times per estimate.
            roofline = (decode_compute_s if decode_compute_s > memory_s else memory_s) + prefill_s
        else:  # a prompt-only pass streams the weights while it computes
            roofline = prefill_s if prefill_s > memory_s else memory_s
        seconds = roofline + comm_s + self.step_overhead_s
        if decode_seqs <= 0 and seconds < self.prompt_pass_floor_s:
            seconds = self.prompt_pass_floor_s  # an eager prompt pass: the host's floor
        return seconds, memory_s, decode_compute_s + prefill_s, comm_s

    def seconds(
        self, decode_seqs: float, context: float, prefill_tokens: float, prefill_context: float
    ) -> float:
        """`times(...)[0]`; for one engine of one stage whose prompts are mixed into the steps
        (where `times` is `_pass`), `_pass` directly: the capacity search calls this most."""
        if (
            self.replicas <= 1
            and self.pp <= 1
            and not self.prefill_pass_tokens
            and not (self.chunk_lumpy and prefill_tokens > 0)
        ):
            return self._pass(decode_seqs, context, prefill_tokens, prefill_context)[0]
        return self.times(decode_seqs, context, prefill_tokens, prefill_context)[0]

    def step(
        self,
        *,
        decode_seqs: float,
        context: float,
        prefill_tokens: float = 0.0,
        prefill_context: float = 0.0,
    ) -> StepTime:
        """One forward pass: `decode_seqs` sequences generating one token each at average
        context `context`, plus `prefill_tokens` prompt tokens (chunked prefill) whose average
        attended context is `prefill_context`."""
        seconds, memory_s, compute_s, comm_s = self.times(
            decode_seqs, context, prefill_tokens, prefill_context
        )
        return StepTime(seconds=seconds, memory_s=memory_s, compute_s=compute_s, comm_s=comm_s)

    def prefill_seconds(self, tokens: float) -> float:
        """Prompt of `tokens` tokens on its own (causal: average context tokens / 2)."""
        return self.times(0.0, 0.0, tokens, tokens / 2.0)[0]

    def prefill(self, tokens: float) -> StepTime:
        return self.step(
            decode_seqs=0.0, context=0.0, prefill_tokens=tokens, prefill_context=tokens / 2.0
        )


def small_kernels_per_layer(
    model: ModelSpec, weight_precision: Precision, path: ComputePath
) -> int:
    """Latency-bound kernels a decode layer runs beyond the ones DECODE_OVERHEAD_S_PER_LAYER and
    MOE_ROUTING_OVERHEAD_S_PER_LAYER cover: MLA's extra projections, norms and batched GEMMs,
    and on the FP8 (W8A8) path one activation-quantization kernel per GEMM input."""
    n = c.MLA_DECODE_EXTRA_KERNELS if model.is_mla else 0
    if weight_precision is Precision.FP8 and not path.weight_only:
        attn = c.FP8_QUANT_KERNELS_ATTENTION_MLA if model.is_mla else c.FP8_QUANT_KERNELS_ATTENTION
        n += attn + c.FP8_QUANT_KERNELS_MLP
    return n


def is_block_fp8(model: ModelSpec, weight_precision: Precision) -> bool:
    """Served as its block-scaled FP8 checkpoint (DeepSeek-V3/R1's 128 x 128 blocks)."""
    ck = model.checkpoint
    return (
        weight_precision is Precision.FP8
        and ck is not None
        and ck.precision is Precision.FP8
        and c.FP8_BLOCK_LABEL_MARKER in ck.label
    )


def block_fp8_floor_s(
    model: ModelSpec, gpu: GpuSpec, weight_precision: Precision, dense_read_s: float
) -> float:
    """Seconds per layer by which the block-FP8 projection GEMMs' latency floor
    (FP8_BLOCK_GEMM_FLOOR_S) exceeds the time to stream the layer's dense weights."""
    floor = c.FP8_BLOCK_GEMM_FLOOR_S.get(gpu.architecture, 0.0)
    if not floor or not is_block_fp8(model, weight_precision):
        return 0.0
    attn = c.FP8_BLOCK_GEMMS_ATTENTION_MLA if model.is_mla else c.FP8_BLOCK_GEMMS_ATTENTION
    excess = (attn + c.FP8_BLOCK_GEMMS_MLP) * floor - dense_read_s
    return excess if excess > 0.0 else 0.0


def layer_overhead_s(model: ModelSpec, weight_precision: Precision, path: ComputePath) -> float:
    """Fixed seconds per layer per forward pass outside the roofline: launches and small
    kernels (DECODE_OVERHEAD_S_PER_LAYER, MoE routing, `small_kernels_per_layer`)."""
    routing = c.MOE_ROUTING_OVERHEAD_S_PER_LAYER if model.is_moe else 0.0
    extra = small_kernels_per_layer(model, weight_precision, path) * c.SMALL_KERNEL_S
    return c.DECODE_OVERHEAD_S_PER_LAYER + routing + extra


_SCHEDULED: dict[tuple[int, float, Framework | None], tuple[ServingModel, ServingModel]] = {}


def with_scheduler(sm: ServingModel, framework: Framework | None, budget: int) -> ServingModel:
    """`sm` as a framework's scheduler runs it: for the frameworks in
    constants.SEPARATE_PREFILL_FRAMEWORKS (SGLang) a copy whose steps run the prompts as
    prompt-only passes of up to `budget` tokens (the framework's max batched tokens); else a
    copy whose steps carry the prompts mixed in, as whole prompts or chunks of up to `budget`
    tokens (`ServingModel._chunked`; vLLM, TensorRT-LLM; None: vLLM). The separate passes run
    outside CUDA graphs, so each takes at least the host's floor (`prompt_pass_floor_s`)."""
    separate = framework is not None and framework.value in c.SEPARATE_PREFILL_FRAMEWORKS
    key = (id(sm), float(budget), framework)
    hit = _SCHEDULED.get(key)
    if hit is not None and hit[0] is sm:
        return hit[1]
    if separate:
        # Its prompt-only passes run eagerly, outside CUDA graphs (EAGER_PASS_FLOOR_FACTOR).
        scheduled = dataclasses.replace(
            sm,
            prefill_pass_tokens=float(max(budget, 1)),
            prompt_pass_floor_s=c.EAGER_PASS_FLOOR_FACTOR * sm.graphed_overhead_s,
        )
    else:
        scheduled = dataclasses.replace(
            sm,
            chunk_budget=float(max(budget, 1)),
            chunk_lumpy=sm.experts > 1 or bool(sm.ar_points),
        )
    if len(_SCHEDULED) >= 4096:
        _SCHEDULED.clear()
    _SCHEDULED[key] = (sm, scheduled)
    return scheduled


_MarlinKey = tuple[int, int, int, Precision, Framework | None]
_MARLIN: dict[_MarlinKey, tuple[ServingModel, ServingModel]] = {}


def with_moe_kernel(
    sm: ServingModel,
    model: ModelSpec,
    gpu: GpuSpec,
    weight_precision: Precision,
    framework: Framework | None,
) -> ServingModel:
    """`sm` as vLLM's Marlin MXFP4 MoE runs its experts on an NVIDIA part without FP4 tensor
    cores (frameworks.marlin_moe_padding): each expert padded (more bytes read, more FLOPs) and,
    on Hopper, computed with mma.sync (MARLIN_MMA_SYNC_PEAK_FRACTION); else `sm` itself."""
    tp = 1 if sm.dp > 1 else sm.tp
    pad = marlin_moe_padding(model, gpu, weight_precision, framework, tp)
    if pad <= 1.0:
        return sm
    key = (id(sm), id(model), id(gpu), weight_precision, framework)
    hit = _MARLIN.get(key)
    if hit is not None and hit[0] is sm:
        return hit[1]
    mma = c.MARLIN_MMA_SYNC_PEAK_FRACTION.get(gpu.architecture, 1.0)
    if sm.moe_points or sm.moe_op_points:  # measured: vLLM's own MXFP4 MoE, padding and all
        marlin = dataclasses.replace(sm, expert_bytes=sm.expert_bytes * pad)
    else:
        marlin = dataclasses.replace(
            sm,
            expert_bytes=sm.expert_bytes * pad,
            expert_flops_per_token=sm.expert_flops_per_token * pad,
            expert_mma=mma,
        )
    if len(_MARLIN) >= 4096:
        _MARLIN.clear()
    _MARLIN[key] = (sm, marlin)
    return marlin


def is_pcie_only(gpu: GpuSpec) -> bool:
    """No switched GPU-to-GPU fabric across the node (PCIe cards, NVLink bridges joining pairs)."""
    text = gpu.interconnect.lower()
    return any(marker in text for marker in c.PCIE_INTERCONNECT_MARKERS)


def scale_out_gb_per_s(gpu: GpuSpec) -> float:
    """Node-to-node bandwidth per GPU, GB/s per direction: the system's or quote's figure when
    the GPU spec carries one, else the default for its interconnect (constants)."""
    if gpu.scale_out_gb_per_s is not None and gpu.scale_out_gb_per_s > 0:
        return gpu.scale_out_gb_per_s
    if is_pcie_only(gpu):
        return c.SCALE_OUT_GB_PER_S_PCIE_SERVER
    if gpu.architecture == "BLACKWELL_ULTRA" and gpu.max_gpus_per_node > 8:  # GB300 NVL72: CX8
        return c.SCALE_OUT_GB_PER_S_CX8
    return c.SCALE_OUT_GB_PER_S_NVLINK_NODE


def bridge_group(gpu: GpuSpec) -> int:
    """GPUs an NVLink bridge joins ("NVLink bridge (2 or 4 GPUs)" -> 4); 0 when not bridged."""
    text = gpu.interconnect.lower()
    if "bridge" not in text:
        return 0
    numbers = [int(w) for w in text.replace("(", " ").replace(")", " ").split() if w.isdigit()]
    return max(numbers, default=2)


def link_gb_per_s(gpu: GpuSpec, count: int) -> float:
    """Per-direction bandwidth of the slowest link a group of `count` GPUs crosses: the
    scale-out network beyond a node, PCIe beyond an NVLink-bridged group, else the catalog's
    interconnect."""
    if count > gpu.max_gpus_per_node:
        return scale_out_gb_per_s(gpu)
    group = bridge_group(gpu)
    if group and count > group:
        return c.PCIE_GB_PER_S_BY_ARCHITECTURE.get(gpu.architecture, c.DEFAULT_LINK_GB_PER_S)
    return gpu.interconnect_gbps / 2.0


def a2a_seconds_per_byte(gpu: GpuSpec, ranks: int) -> float:
    """Seconds per byte a GPU sends in an all-to-all over `ranks` GPUs with uniform routing:
    (ranks within its node - 1) / ranks of its bytes go over NVLink, (ranks beyond it) / ranks
    over the fabric, both at once; the slower part sets the time."""
    if ranks <= 1:
        return 0.0
    per_node = max(gpu.max_gpus_per_node, 1)
    local = min(ranks, per_node)
    up = (local - 1) / ranks / (link_gb_per_s(gpu, local) * c.GB * c.A2A_BW_EFFICIENCY_SCALE_UP)
    if ranks <= per_node:
        return up
    out = (ranks - local) / ranks / (scale_out_gb_per_s(gpu) * c.GB * c.A2A_BW_EFFICIENCY_SCALE_OUT)
    return out if out > up else up


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class ModelCoefficients:
    """Whole-model byte and FLOP counts for one (model, weight precision, KV precision)."""

    weight_bytes: float  # all weights
    dense_bytes: float  # streamed every step (input embedding and routed experts excluded)
    expert_bytes: float  # one routed expert, all layers
    kv_bytes_per_token: float
    flops_per_token: float  # 2 x flop_params, less the routed experts'
    expert_flops_per_token: float  # 2 x the params of the top-k routed experts
    attn_flops_per_position: float


@lru_cache(maxsize=1024)
def model_coefficients(
    model: ModelSpec, weight_precision: Precision, kv_precision: Precision
) -> ModelCoefficients:
    total_w = weight_bytes(model, weight_precision)
    emb = embedding_params(model)
    # The input embedding is gathered, not streamed: drop its bytes from what a step reads.
    per_param = total_w / model.total_params
    ck = model.checkpoint
    # A quantized checkpoint stores each tensor group at its own precision (gpt-oss: FP4
    # experts, BF16 attention), so its embedding and experts are not at the average rate.
    as_published = ck is not None and weight_precision is ck.precision
    emb_per_param = c.BYTES_16BIT if as_published else per_param
    input_emb_bytes = (emb / 2 if not model.tied_embeddings else 0.0) * emb_per_param
    streamed = max(total_w - input_emb_bytes, 0.0)
    expert_bytes = 0.0
    expert_flops = 0.0
    if model.is_moe and model.experts > model.active_experts:
        if ck is not None and as_published:
            expert_bytes = ck.routed_expert_bytes / model.experts
        else:
            per_expert_params = (model.total_params - model.active_params) / (
                model.experts - model.active_experts
            )
            expert_bytes = per_expert_params * per_param
        streamed -= expert_bytes * model.experts
        routed_params = (model.total_params - model.active_params) / (
            model.experts - model.active_experts
        )
        expert_flops = 2.0 * routed_params * model.active_experts
    flops = 2.0 * flop_params(model)
    expert_flops = min(expert_flops, flops)
    return ModelCoefficients(
        weight_bytes=total_w,
        dense_bytes=max(streamed, 0.0),
        expert_bytes=expert_bytes,
        kv_bytes_per_token=kv_bytes_per_token(model, kv_precision),
        flops_per_token=flops - expert_flops,
        expert_flops_per_token=expert_flops,
        attn_flops_per_position=attention_flops_per_position(model),
    )


def serving_model(
    model: ModelSpec,
    gpu: GpuSpec,
    tp: int,
    *,
    weight_precision: Precision,
    kv_precision: Precision,
    path: ComputePath,
    bw_scale: float = 1.0,
    mfu_scale: float = 1.0,
    layout: Layout | None = None,
    moe_version: str | None = None,
) -> ServingModel:
    """The per-GPU coefficients under `layout` (None: tensor parallel over `tp` GPUs);
    `moe_version`: an older vLLM version's measured MoE tables (kernel_tables.moe_version_for;
    None: the newest)."""
    lay = layout if layout is not None else Layout(tp=tp)
    tp = lay.tp
    dp = lay.dep
    mc = model_coefficients(model, weight_precision, kv_precision)
    eff = c.DECODE_BW_EFFICIENCY.get(gpu.architecture, 0.7) * bw_scale
    rate = path.tflops * 1e12 * path.mfu * mfu_scale
    tables = tables_for(gpu.slug, moe_version)
    link = link_gb_per_s(gpu, dp if dp > 1 else tp)
    kv = kv_cost(model, kv_precision, tp, lay)
    stage = stage_fraction(model, lay.pp)
    stage_layers = math.ceil(model.layers / lay.pp) if lay.pp > 1 else model.layers
    split = tp / stage  # TP x PP: each GPU holds 1 / (tp / stage) of every per-layer figure
    attn = model.attention
    # Attention runs in the KV cache's precision class, not the weights': FP8 only with an FP8
    # KV cache on a part with FP8 tensor cores, else 16-bit (constants.ATTENTION_16BIT_NOTE).
    # Its FLOPs are kept as FLOP-equivalents at the weight path's rate (x rate / attention
    # rate), so a step still divides every FLOP by one rate.
    attn_path = compute_path(
        gpu, Precision.FP8 if kv_precision is Precision.FP8 else Precision.BF16
    )
    attn_rate = attn_path.tflops * 1e12 * attn_path.mfu * mfu_scale
    to_path = rate / attn_rate if attn_rate > 0 else 1.0
    per_layer_attn = attention_flops_per_layer_position(model) / split * to_path
    per_layer_prefill = attention_flops_per_layer_position(model, absorbed=False) / split * to_path
    n_full = attn.full_layers if attn is not None else model.layers
    n_window = attn.window_layers if attn is not None else 0
    moe = model.experts > 1
    if dp > 1:
        # DEP: attention / dense / shared weights and FLOPs whole on every GPU; routed experts
        # split dp ways; one dispatch (FP8) and combine (BF16) per MoE layer per (token, expert).
        dense_bytes = mc.dense_bytes
        expert_bytes = mc.expert_bytes
        local_experts = model.experts / dp
        flops = mc.flops_per_token
        expert_flops = mc.expert_flops_per_token / dp
        per_byte = a2a_seconds_per_byte(gpu, dp)
        a2a_per_token = (
            model.layers
            * model.active_experts
            * model.hidden_size
            * (c.A2A_DISPATCH_BYTES + c.A2A_COMBINE_BYTES)
            * per_byte
        )
        latency = c.A2A_LATENCY_SCALE_OUT_S if dp > gpu.max_gpus_per_node else c.A2A_LATENCY_S
        a2a_fixed = model.layers * 2 * latency if moe else 0.0
        allreduces = 0
    else:
        dense_bytes = mc.dense_bytes / split
        expert_bytes = mc.expert_bytes / split
        local_experts = float(model.experts)
        flops = mc.flops_per_token / split
        expert_flops = mc.expert_flops_per_token / split
        a2a_per_token = a2a_fixed = 0.0
        allreduces = c.ALLREDUCES_PER_LAYER * stage_layers
        if attn is not None and (attn.mixer_free_layers or attn.mlp_free_layers):
            # Single-sub-layer blocks (nemotron_h) all-reduce once, not twice.
            allreduces -= round((attn.mixer_free_layers + attn.mlp_free_layers) * stage)
    # Narrow (or TP-sliced) experts run below the grouped-GEMM rate once tiles are full.
    expert_width = expert_width_efficiency(model, gpu, path, tp if dp <= 1 else 1) if moe else 1.0
    p2p_link = link_gb_per_s(gpu, lay.engine_gpus)
    bandwidth = gpu.memory_bandwidth_tbps * 1e12 * eff
    moe_points: tuple[tuple[float, float], ...] = ()
    imbalance = 1.0
    ar_points: tuple[tuple[int, float], ...] = ()
    moe_op_points: tuple[tuple[float, float], ...] = ()
    skew = 1.0
    mla_points: MlaPoints = ()
    mla_layers = mla_flops = 0.0
    if tables is not None:
        if moe and dp <= 1 and c.MEASURED_MOE_SHAPES and expert_flops > 0:
            shape = None
            ck = model.checkpoint
            if (
                weight_precision is Precision.FP4
                and ck is not None
                and ck.precision is Precision.FP4
                and c.MXFP4_LABEL_MARKER in ck.label
            ):
                # A published MXFP4 checkpoint (gpt-oss) runs vLLM's MXFP4 x BF16 expert kernels
                # on every NVIDIA part (Marlin / OAI Triton on Hopper and SM120, FlashInfer
                # TRT-LLM mxfp4_bf16 on SM100), which AIConfigurator files as w4a16_mxfp4.
                shape = moe_shape_points(tables, "w4a16_mxfp4", model, tp)
            if shape is None:
                shape = moe_shape_points(
                    tables, moe_dtype(model, weight_precision, path.weight_only), model, tp
                )
            if shape is not None:
                # The stage's MoE layers on this GPU, from the routed-expert FLOPs per token
                # (gate, up and down projections: 2 x 3 x hidden x its expert slice x top-k).
                per_layer = 6.0 * model.hidden_size * model.intermediate_size / tp
                moe_layers = expert_flops / (per_layer * model.active_experts)
                moe_op_points = tuple((n, s * moe_layers / mfu_scale) for n, s in shape)
        if moe:
            width = model.intermediate_size / (tp if dp <= 1 else 1)
            curve = moe_curve(tables, moe_dtype(model, weight_precision, path.weight_only), width)
            if curve is not None:
                moe_points = tuple((r, f * mfu_scale) for r, f in curve.points)
                imbalance = curve.imbalance if dp > 1 else 1.0
                skew = curve.imbalance if dp <= 1 and c.MOE_SKEW_UNDER_TP else 1.0
        if c.MEASURED_ALLREDUCE and dp <= 1 and 1 < tp <= gpu.max_gpus_per_node:
            ar_points = allreduce_points(tables, tp) or ()
        if c.MEASURED_MLA_CONTEXT and lay.pp <= 1 and not (attn and attn.window_layers):
            heads_split = tp if dp <= 1 else 1  # DEP: every GPU holds all of a sequence's heads
            gemm = gemm_dtype(weight_precision, is_block_fp8(model, weight_precision))
            mla_points = mla_context_points(tables, model, gemm, kv_precision, heads_split) or ()
            if mla_points:
                mla_layers = n_full / mfu_scale  # the calibration scales it as the FLOP rate
                mla_flops = 2.0 * MLA_MODULE_PROJECTION_PARAMS * n_full / heads_split
    return ServingModel(
        tp=tp,
        layers=model.layers,
        hidden=model.hidden_size,
        bandwidth=bandwidth,
        rate=rate,
        dense_weight_bytes=dense_bytes,
        expert_bytes=expert_bytes,
        experts=model.experts,
        active_experts=model.active_experts,
        kv_per_token=kv.per_token,
        flops_per_token=flops,
        expert_flops_per_token=expert_flops,
        tile_m=float(c.GROUPED_GEMM_TILE_M),
        attn_flops_per_position=per_layer_attn * n_full,
        kv_window=kv.window,
        kv_window_per_token=kv.window_per_token,
        attn_window_flops=per_layer_attn * n_window,
        kv_state=kv.per_sequence,
        link_gb_per_s=link,
        decode_rate=rate * c.DECODE_MFU_FACTOR,
        expert_miss=1.0 - model.active_experts / model.experts if model.experts > 1 else 0.0,
        step_overhead_s=stage_layers
        * (
            layer_overhead_s(model, weight_precision, path)
            + block_fp8_floor_s(
                model, gpu, weight_precision, dense_bytes / stage_layers / bandwidth
            )
        ),
        graphed_overhead_s=stage_layers * layer_overhead_s(model, weight_precision, path),
        head_flops_per_token=min(_head_flops(model, lay, split), flops),
        allreduces=allreduces,
        ar_fraction=2.0 * (tp - 1) / tp,
        ar_bandwidth=link * c.GB * c.ALLREDUCE_BW_EFFICIENCY,
        ar_hop_s=2 * (tp - 1) * c.ALLREDUCE_HOP_LATENCY_S,
        prefill_attn_flops_per_position=per_layer_prefill * n_full,
        prefill_attn_window_flops=per_layer_prefill * n_window,
        pp=lay.pp,
        dp=dp,
        local_experts=local_experts,
        a2a_s_per_token=a2a_per_token,
        a2a_fixed_s=a2a_fixed,
        p2p_s_per_token=model.hidden_size * c.BYTES_16BIT / (p2p_link * c.GB),
        p2p_fixed_s=c.PP_P2P_LATENCY_S,
        replicas=lay.replicas,
        expert_width=expert_width,
        moe_points=moe_points,
        expert_imbalance=imbalance,
        ar_points=ar_points,
        moe_op_points=moe_op_points,
        skew_imbalance=skew,
        mla_prefill_points=mla_points,
        mla_prefill_layers=mla_layers,
        mla_prefill_flops=mla_flops,
    )


def _head_flops(model: ModelSpec, lay: Layout, split: float) -> float:
    """Per GPU, the LM head's FLOPs per token under `lay`, split as flops_per_token is (its
    vocab-parallel slice over `split` under TP x PP, whole under DEP); 0 where not modelled."""
    if not c.LM_HEAD_ON_SAMPLED_POSITIONS_ONLY or model.kind is not ModelKind.DECODER:
        return 0.0
    head = 2.0 * model.vocab_size * model.hidden_size
    return head if lay.dep > 1 else head / split


def training_flops_per_token(model: ModelSpec, seq: int, per_param: float) -> float:
    """per_param x N + attention 12 x layers x (heads x head_dim) x seq scaled the same way
    (PaLM appendix B counts 6N + 12 L H Q T for training)."""
    layout = model.attention
    n = model.layers if layout is None else layout.full_layers + layout.window_layers
    attn = 12.0 * n * model.attention_heads * model.head_dim * seq
    return per_param * flop_params(model) + attn * per_param / c.TRAIN_FLOPS_PER_PARAM
