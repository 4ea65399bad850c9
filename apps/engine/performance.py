"""Roofline performance: prefill (compute-bound), decode (bandwidth-bound), TP all-reduce.

All closed forms; `ServingModel` precomputes the per-(model, GPU, count) coefficients once so that
a step time is a handful of multiplications (the capacity search calls it ~20 times).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from apps.engine import constants as c
from apps.engine.memory import kv_bytes_per_token, kv_cost
from apps.engine.precision import ComputePath, embedding_params, weight_bytes
from apps.engine.types import Bound, GpuSpec, ModelSpec, Precision, fast_init


def attention_flops_per_layer_position(model: ModelSpec) -> float:
    """FLOPs per token per attended context position in one softmax-attention layer."""
    if model.kv_lora_rank is not None:
        # MLA, absorbed projections: QK over (rank + rope), AV over rank.
        return (
            2.0 * (2 * model.kv_lora_rank + (model.qk_rope_head_dim or 0)) * model.attention_heads
        )
    return 4.0 * model.attention_heads * model.head_dim


def attention_flops_per_position(model: ModelSpec) -> float:
    """FLOPs per generated/prefilled token per attended context position (QK^T and AV), over
    the softmax-attention layers (full and windowed; linear-attention layers have none)."""
    layout = model.attention
    n = model.layers if layout is None else layout.full_layers + layout.window_layers
    return attention_flops_per_layer_position(model) * n


def flop_params(model: ModelSpec) -> float:
    """Parameters that multiply each token: active params less the input embedding lookup."""
    emb = embedding_params(model)
    input_embedding = emb / 2 if not model.tied_embeddings else 0.0
    return max(model.active_params - input_embedding, 1.0)


def grouped_gemm_efficiency(rows: float, tile_m: float) -> float:
    """Fraction of the dense-GEMM rate an MoE grouped GEMM reaches with `rows` tokens per expert
    (GROUPED_GEMM_EFFICIENCY, log-linear between its points; under one `tile_m`-row block the
    padded rows are paid for too)."""
    pts = c.GROUPED_GEMM_EFFICIENCY
    first_rows, first_eff = pts[0]
    if rows <= first_rows:
        return first_eff * rows / tile_m if rows < tile_m else first_eff
    lo_rows, lo_eff = first_rows, first_eff
    for hi_rows, hi_eff in pts[1:]:
        if rows <= hi_rows:
            return lo_eff + (hi_eff - lo_eff) * math.log(rows / lo_rows) / math.log(
                hi_rows / lo_rows
            )
        lo_rows, lo_eff = hi_rows, hi_eff
    return lo_eff


def bound_of(memory_s: float, compute_s: float, comm_s: float) -> Bound:
    if comm_s > max(memory_s, compute_s):
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
    tp: int
    layers: int
    hidden: int
    bandwidth: float  # bytes/s sustained per GPU
    rate: float  # FLOP/s sustained per GPU on the compute path
    dense_weight_bytes: float  # per GPU, read every step
    expert_bytes: float  # per GPU, per routed expert (all layers)
    experts: int
    active_experts: int
    kv_per_token: float  # per GPU, full-attention layers
    flops_per_token: float  # per GPU, all but the routed experts (attention, dense and shared MLPs)
    expert_flops_per_token: float  # per GPU, the top-k routed experts of one token
    tile_m: float  # rows an expert's tokens are padded to (GROUPED_GEMM_TILE_M)
    attn_flops_per_position: float  # per GPU, full-attention layers
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
    step_overhead_s: (
        float  # layers x (DECODE_OVERHEAD_S_PER_LAYER [+ MOE_ROUTING_OVERHEAD_S_PER_LAYER])
    )
    allreduces: int  # ALLREDUCES_PER_LAYER x layers
    ar_fraction: float  # 2 (tp-1)/tp of the ring all-reduce message crosses each link
    ar_bandwidth: float  # bytes/s of one link at the all-reduce efficiency
    ar_hop_s: float  # 2 (tp-1) x per-hop latency

    def times(
        self, decode_seqs: float, context: float, prefill_tokens: float, prefill_context: float
    ) -> tuple[float, float, float, float]:
        """(seconds, memory_s, compute_s, comm_s) of one forward pass; see `step`."""
        tokens = decode_seqs + prefill_tokens
        decode_expert_s = prefill_expert_s = 0.0
        if self.experts <= 1:
            touched = 0.0
        else:
            # The step reads each expert at least one token routes to: E (1 - (1 - k/E)^tokens)
            # distinct experts in expectation, and runs them as one grouped GEMM whose rows per
            # expert (tokens x k / experts touched) set its efficiency.
            t = 0.0 if tokens < 0.0 else tokens  # max(tokens, 0.0)
            n_touched = self.experts * (1.0 - math.pow(self.expert_miss, t))
            touched = self.expert_bytes * n_touched
            if n_touched > 0.0 and self.expert_flops_per_token:
                rows = t * self.active_experts / n_touched
                per_token_s = self.expert_flops_per_token / (
                    self.rate * grouped_gemm_efficiency(rows, self.tile_m)
                )
                decode_expert_s = decode_seqs * per_token_s
                prefill_expert_s = prefill_tokens * per_token_s
        fpt = self.flops_per_token
        apf = self.attn_flops_per_position
        kv_read = context * self.kv_per_token + self.kv_state
        decode_flops = fpt + apf * context
        prefill_flops = fpt + apf * prefill_context
        if self.kv_window_per_token:
            w = self.kv_window
            seen = context if context < w else w
            kv_read += seen * self.kv_window_per_token
            decode_flops += seen * self.attn_window_flops
            prefill_flops += (prefill_context if prefill_context < w else w) * (
                self.attn_window_flops
            )
        bytes_read = self.dense_weight_bytes + touched + decode_seqs * kv_read
        # Decode is a roofline of bytes vs skinny-GEMM FLOPs; prompt tokens carried in the same
        # step add their (compute-bound) time on top rather than hiding under the weight read.
        memory_s = bytes_read / self.bandwidth
        decode_compute_s = decode_seqs * decode_flops / self.decode_rate + decode_expert_s
        prefill_s = prefill_tokens * prefill_flops / self.rate + prefill_expert_s
        if self.tp <= 1:
            comm_s = self.allreduces * 0.0
        else:
            message = tokens * self.hidden * c.BYTES_16BIT
            comm_s = self.allreduces * (
                self.ar_fraction * message / self.ar_bandwidth
                + c.ALLREDUCE_BASE_LATENCY_S
                + self.ar_hop_s
            )
        if decode_seqs > 0:
            # max(memory_s, decode_compute_s), spelled out: this runs ~100 times per estimate.
            roofline = (decode_compute_s if decode_compute_s > memory_s else memory_s) + prefill_s
        else:  # a prompt-only pass streams the weights while it computes
            roofline = prefill_s if prefill_s > memory_s else memory_s
        seconds = roofline + comm_s + self.step_overhead_s
        return seconds, memory_s, decode_compute_s + prefill_s, comm_s

    def seconds(
        self, decode_seqs: float, context: float, prefill_tokens: float, prefill_context: float
    ) -> float:
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


def link_gb_per_s(gpu: GpuSpec, count: int) -> float:
    """Per-direction bandwidth of the slowest link a tensor-parallel group of `count` crosses."""
    if count > gpu.max_gpus_per_node:
        return c.INTER_NODE_GB_PER_S_PER_GPU
    return gpu.interconnect_gbps / 2.0


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
) -> ServingModel:
    mc = model_coefficients(model, weight_precision, kv_precision)
    eff = c.DECODE_BW_EFFICIENCY.get(gpu.architecture, 0.7) * bw_scale
    rate = path.tflops * 1e12 * path.mfu * mfu_scale
    link = link_gb_per_s(gpu, tp)
    kv = kv_cost(model, kv_precision, tp)
    layout = model.attention
    per_layer_attn = attention_flops_per_layer_position(model) / tp
    full_attn = per_layer_attn * (layout.full_layers if layout is not None else model.layers)
    return ServingModel(
        tp=tp,
        layers=model.layers,
        hidden=model.hidden_size,
        bandwidth=gpu.memory_bandwidth_tbps * 1e12 * eff,
        rate=rate,
        dense_weight_bytes=mc.dense_bytes / tp,
        expert_bytes=mc.expert_bytes / tp,
        experts=model.experts,
        active_experts=model.active_experts,
        kv_per_token=kv.per_token,
        flops_per_token=mc.flops_per_token / tp,
        expert_flops_per_token=mc.expert_flops_per_token / tp,
        tile_m=float(c.GROUPED_GEMM_TILE_M),
        attn_flops_per_position=full_attn,
        kv_window=kv.window,
        kv_window_per_token=kv.window_per_token,
        attn_window_flops=per_layer_attn * layout.window_layers if layout is not None else 0.0,
        kv_state=kv.per_sequence,
        link_gb_per_s=link,
        decode_rate=rate * c.DECODE_MFU_FACTOR,
        expert_miss=1.0 - model.active_experts / model.experts if model.experts > 1 else 0.0,
        step_overhead_s=model.layers
        * (
            c.DECODE_OVERHEAD_S_PER_LAYER
            + (c.MOE_ROUTING_OVERHEAD_S_PER_LAYER if model.is_moe else 0.0)
        ),
        allreduces=c.ALLREDUCES_PER_LAYER * model.layers,
        ar_fraction=2.0 * (tp - 1) / tp,
        ar_bandwidth=link * c.GB * c.ALLREDUCE_BW_EFFICIENCY,
        ar_hop_s=2 * (tp - 1) * c.ALLREDUCE_HOP_LATENCY_S,
    )


def training_flops_per_token(model: ModelSpec, seq: int, per_param: float) -> float:
    """per_param x N + attention 12 x layers x (heads x head_dim) x seq scaled the same way
    (PaLM appendix B counts 6N + 12 L H Q T for training)."""
    attn = 12.0 * model.layers * model.attention_heads * model.head_dim * seq
    return per_param * flop_params(model) + attn * per_param / c.TRAIN_FLOPS_PER_PARAM
