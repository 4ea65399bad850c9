"""Parallel layouts (issue 13): TP, DEP (attention data-parallel + expert parallel), TP x PP and
counts beyond one node; the layout the engine picks per count; MLA prefill and KV under DEP."""

from __future__ import annotations

import pytest
from engine_catalog import gpu, load_gpus
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.engine import (
    PRESETS,
    EstimateRequest,
    ModelKind,
    Precision,
    WorkloadType,
    estimate,
    estimate_at,
    estimate_to_dict,
    parse_estimate_request,
)
from apps.engine import constants as c
from apps.engine.memory import routed_expert_bytes, weights_per_gpu
from apps.engine.performance import (
    a2a_seconds_per_byte,
    attention_flops_per_layer_position,
    scale_out_gb_per_s,
)
from apps.engine.precision import weight_bytes
from apps.engine.serving import candidate_layouts, serving_setup
from apps.engine.types import Layout

GPUS = load_gpus()
DECODERS = sorted(k for k, v in PRESETS.items() if v.kind is ModelKind.DECODER)
H200 = gpu("h200-sxm-141gb")
H100 = gpu("h100-sxm5-80gb")
PRO6000 = gpu("rtx-pro-6000-96gb")
R1 = PRESETS["deepseek-r1"]


def _req(
    preset: str,
    prec: Precision,
    *,
    tin: int = 1024,
    tout: int = 1024,
    conc: int | None = None,
    wt: WorkloadType = WorkloadType.BATCH_INFERENCE,
) -> EstimateRequest:
    return EstimateRequest(
        workload_type=wt,
        model=PRESETS[preset],
        weight_precision=prec,
        kv_cache_precision=Precision.BF16,
        input_tokens_p50=tin,
        input_tokens_p95=tin,
        output_tokens_p50=tout,
        output_tokens_p95=tout,
        concurrency=conc,
    )


@pytest.mark.parametrize(
    ("layout", "per_node", "label"),
    [
        (Layout(tp=8), 8, "TP8"),
        (Layout(dep=8), 8, "DEP8"),
        (Layout(tp=2, pp=2), 8, "TP2xPP2"),
        (Layout(pp=4), 8, "PP4"),
        (Layout(dep=16), 8, "DEP16 (2 nodes)"),
        (Layout(tp=8, pp=4), 8, "TP8xPP4 (4 nodes)"),
        (Layout(tp=16), 72, "TP16"),
        (Layout(tp=4, replicas=2), 8, "DP2xTP4"),
    ],
)
def test_layout_labels(layout: Layout, per_node: int, label: str) -> None:
    assert layout.label(per_node) == label


def test_dep_replicates_all_but_the_routed_experts_and_splits_those() -> None:
    total = weight_bytes(R1, Precision.FP8)
    routed = routed_expert_bytes(R1, Precision.FP8)
    assert 0.9 * total < routed < total  # DeepSeek-V3: ~96% of the weights are routed experts
    assert weights_per_gpu(R1, Precision.FP8, Layout(dep=8)) == pytest.approx(
        total - routed + routed / 8
    )
    assert weights_per_gpu(R1, Precision.FP8, Layout(tp=8)) == pytest.approx(total / 8)
    # PP keeps the largest stage's layers: ceil(61 / 2) of 61.
    assert weights_per_gpu(R1, Precision.FP8, Layout(tp=4, pp=2)) == pytest.approx(
        total / 4 * 31 / 61
    )


def test_the_mla_latent_is_not_replicated_under_attention_dp() -> None:
    """TP8 keeps every sequence's latent on all 8 GPUs; DEP8 keeps each on the GPU serving it,
    so at the same batch each GPU holds an eighth of the KV bytes, and 8x the sequences fit."""
    req = _req("deepseek-r1", Precision.FP8, conc=64)
    tp = estimate_at(req, H200, 8, layout=Layout(tp=8))
    dep = estimate_at(req, H200, 8, layout=Layout(dep=8))
    assert dep.memory.kv_cache_gb == pytest.approx(tp.memory.kv_cache_gb / 8, rel=1e-9)
    assert dep.max_concurrency > 4 * tp.max_concurrency


def test_mla_prefill_runs_non_absorbed_and_decode_absorbed() -> None:
    absorbed = attention_flops_per_layer_position(R1)
    plain = attention_flops_per_layer_position(R1, absorbed=False)
    assert absorbed == 2.0 * 128 * (2 * 512 + 64)
    assert plain == 2.0 * 128 * (192 + 128)  # qk_nope + qk_rope, v_head_dim
    dense = PRESETS["llama-3.1-70b"]
    assert attention_flops_per_layer_position(dense, absorbed=False) == (
        attention_flops_per_layer_position(dense)
    )
    sm = serving_setup(R1, H200, 8, Precision.FP8, Precision.BF16, 1.0, 1.0).sm
    assert sm.prefill_attn_flops_per_position < sm.attn_flops_per_position


def test_deepseek_r1_offline_on_8xh200_picks_dep8_and_beats_tp8() -> None:
    req = _req("deepseek-r1", Precision.FP8)
    best = estimate_at(req, H200, 8)
    tp8 = estimate_at(req, H200, 8, layout=Layout(tp=8))
    assert best.layout == "DEP8"
    assert best.performance.output_tokens_per_s > 1.5 * tp8.performance.output_tokens_per_s
    assert any(n.startswith("layout chosen: DEP8") for n in best.notes)
    assert estimate_to_dict(best)["layout"] == "DEP8"


def test_deepseek_r1_fp8_on_h100_needs_two_nodes() -> None:
    (e,) = estimate(_req("deepseek-r1", Precision.FP8), [H100])
    assert e.gpu_count == 16
    assert e.fits
    assert e.layout is not None and e.layout.endswith("(2 nodes)")
    (one_node,) = estimate(_req("deepseek-r1", Precision.FP8), [H200])
    assert one_node.gpu_count <= 8


def test_dense_models_on_nvlink_try_tensor_and_data_parallel_only() -> None:
    """No pipeline or expert layouts for a dense model within an NVLink node: TP n, and data
    parallel engines of the smaller TP groups (DP2 x TP4, DP4 x TP2, DP8 x TP1)."""
    model = PRESETS["llama-3.1-70b"]
    assert candidate_layouts(model, H100, 1) == (Layout(tp=1),)
    assert candidate_layouts(model, H100, 8) == (
        Layout(tp=8),
        Layout(tp=4, replicas=2),
        Layout(tp=2, replicas=4),
        Layout(tp=1, replicas=8),
    )
    e = estimate_at(_req("llama-3.1-70b", Precision.FP8), H100, 4)
    assert e.layout == "TP4"


def test_a_small_model_on_many_gpus_runs_data_parallel_engines() -> None:
    """8B on 8 x H100 offline: eight-way TP pays 64 all-reduces a step for a model that fits one
    GPU; engines side by side (vLLM --data-parallel-size) do more."""
    e = estimate_at(_req("llama-3.1-8b", Precision.FP8), H100, 8)
    tp8 = estimate_at(_req("llama-3.1-8b", Precision.FP8), H100, 8, layout=Layout(tp=8))
    assert e.layout is not None and e.layout.startswith("DP")
    assert e.performance.output_tokens_per_s > tp8.performance.output_tokens_per_s


def test_a_pcie_box_considers_pipeline_layouts_and_may_pick_one() -> None:
    layouts = candidate_layouts(PRESETS["llama-3.1-70b"], PRO6000, 4)
    assert Layout(tp=2, pp=2) in layouts and Layout(pp=4) in layouts
    e = estimate_at(_req("llama-3.1-70b", Precision.FP8), PRO6000, 4)
    assert e.layout in {"TP4", "TP2xPP2", "PP4"}
    tp4 = estimate_at(_req("llama-3.1-70b", Precision.FP8), PRO6000, 4, layout=Layout(tp=4))
    assert e.performance.output_tokens_per_s >= tp4.performance.output_tokens_per_s


def test_a_count_tp_cannot_split_gets_a_pipeline_layout() -> None:
    """64 heads do not split 6 ways; 6 GPUs run TP2 x PP3 (or PP6) instead."""
    e = estimate_at(_req("llama-3.1-70b", Precision.FP8), H100, 6)
    assert e.layout in {"TP2xPP3", "PP6"}
    assert e.fits


def test_gpu_count_may_be_any_count_in_the_request() -> None:
    body = {
        "workload_type": "BATCH_INFERENCE",
        "model": {"preset": "llama-3.1-70b"},
        "weight_precision": "FP8",
        "input_tokens": {"p50": 1000, "p95": 2000},
        "output_tokens": {"p50": 200, "p95": 400},
        "gpu_count": 6,
    }
    req = parse_estimate_request(body, known_gpus={g.slug for g in GPUS})
    assert req.gpu_count == 6
    (e,) = estimate(req, [H100])
    assert e.gpu_count == 6 and e.layout is not None


def test_the_all_to_all_is_slower_across_nodes_and_free_on_one_gpu() -> None:
    assert a2a_seconds_per_byte(H100, 1) == 0.0
    assert a2a_seconds_per_byte(H100, 16) > 3 * a2a_seconds_per_byte(H100, 8)
    assert scale_out_gb_per_s(H100) == c.SCALE_OUT_GB_PER_S_NVLINK_NODE
    assert scale_out_gb_per_s(PRO6000) == c.SCALE_OUT_GB_PER_S_PCIE_SERVER


def test_a_quoted_fabric_bandwidth_replaces_the_default() -> None:
    import dataclasses

    fast = dataclasses.replace(H100, scale_out_gb_per_s=100.0)
    assert scale_out_gb_per_s(fast) == 100.0
    assert a2a_seconds_per_byte(fast, 16) < a2a_seconds_per_byte(H100, 16)


def test_dep_ttft_runs_a_lone_prompt_on_one_gpu() -> None:
    """Attention data-parallel: a lone prompt's attention and dense layers run on the one GPU
    that serves it, so its TTFT is longer than under TP8, which splits it 8 ways."""
    req = _req("deepseek-r1", Precision.FP8, conc=1, wt=WorkloadType.REALTIME_INFERENCE)
    tp = estimate_at(req, H200, 8, layout=Layout(tp=8)).performance.ttft_ms
    dep = estimate_at(req, H200, 8, layout=Layout(dep=8)).performance.ttft_ms
    assert tp is not None and dep is not None and dep > tp


# --- Properties --------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(DECODERS),
    st.sampled_from(GPUS),
    st.sampled_from([Precision.BF16, Precision.FP8, Precision.FP4]),
    st.sampled_from([1, 2, 4, 8]),
    st.integers(16, 8_000),
    st.integers(16, 4_000),
)
def test_more_gpus_never_lower_the_best_offline_throughput_per_replica(
    preset: str, g: object, wp: Precision, n: int, tin: int, tout: int
) -> None:
    """Offline batch ("as many as fit") at n and 2n GPUs, within a node or across two: the
    replica's best layout and batch at 2n produce at least what n does, whenever n fits."""
    from apps.engine.types import GpuSpec

    assert isinstance(g, GpuSpec)
    req = _req(preset, wp, tin=tin, tout=tout)
    small = estimate_at(req, g, n)
    if small.fit.value != "FITS":
        return
    big = estimate_at(req, g, 2 * n)
    a = small.performance.output_tokens_per_s
    b = big.performance.output_tokens_per_s
    assert a is not None and b is not None
    assert b >= a * (1.0 - 1e-9), (small.layout, a, big.layout, b)


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(DECODERS),
    st.integers(0, len(GPUS) - 1),
    st.sampled_from([1, 2, 4, 8, 16]),
    st.integers(0, 7),
    st.integers(1, 8_000),
    st.integers(1, 8_000),
    st.integers(1, 8_000),
    st.integers(1, 1024),
    st.floats(0.0, 8192.0),
)
def test_a_longer_output_never_raises_throughput_per_gpu_at_the_same_batch(
    preset: str, g: int, n: int, pick: int, tin: int, a: int, b: int, conc: int, prompt: float
) -> None:
    """At the same batch and the same prompt tokens carried per step, a longer output means a
    longer average context (input + output / 2), so more KV cache to read and attend to: the
    decode throughput per GPU (batch / step time) cannot rise, under any layout. (The estimate's
    output tokens/s also amortises each prompt over its output, which a longer output spreads
    thinner; that part may rise, and the steady-state step carries fewer prompts per token.)"""
    layouts = candidate_layouts(PRESETS[preset], GPUS[g], n)
    layout = layouts[pick % len(layouts)]
    sm = serving_setup(
        PRESETS[preset], GPUS[g], layout.tp, Precision.FP8, Precision.BF16, 1.0, 1.0, layout
    ).sm
    short, long_ = min(a, b), max(a, b)
    t_short = sm.seconds(conc, tin + short / 2, prompt, tin / 2)
    t_long = sm.seconds(conc, tin + long_ / 2, prompt, tin / 2)
    assert conc / t_long / n <= conc / t_short / n * (1.0 + 1e-12)


def test_a_bridged_pair_is_nvlink_and_a_larger_group_crosses_pcie() -> None:
    from apps.engine.performance import bridge_group, link_gb_per_s

    pcie = gpu("h100-pcie-80gb")
    assert bridge_group(pcie) == 2 and bridge_group(gpu("h200-nvl-141gb")) == 4
    assert bridge_group(H100) == 0
    assert link_gb_per_s(pcie, 2) == pcie.interconnect_gbps / 2
    assert link_gb_per_s(pcie, 4) == c.PCIE_GB_PER_S_BY_ARCHITECTURE["HOPPER"]
    assert link_gb_per_s(H100, 8) == H100.interconnect_gbps / 2
    assert link_gb_per_s(H100, 16) == c.SCALE_OUT_GB_PER_S_NVLINK_NODE


def test_non_serving_estimates_carry_no_layout() -> None:
    from apps.engine import TrainingSpec

    req = EstimateRequest(
        workload_type=WorkloadType.TRAINING,
        model=PRESETS["llama-3.1-8b"],
        training=TrainingSpec(sequence_length=2048, tokens=1e9),
    )
    e = estimate_at(req, H100, 8)
    assert e.layout is None and estimate_to_dict(e)["layout"] is None


@pytest.mark.parametrize(
    ("framework", "count", "layout"),
    [
        ("SGLang 0.5.6.post1 (TP8)", 8, Layout(tp=8)),
        ("SGLang (TP16 over two nodes)", 16, Layout(tp=16)),
        ("vLLM (ROCm, TP8)", 8, Layout(tp=8)),
        ("custom TP2 x PP2", 4, Layout(tp=2, pp=2)),
        ("SGLang DEP8", 8, Layout(dep=8)),
        ("SGLang (TP8)", 16, None),  # a layout for another count is not this row's
        ("TensorRT-LLM (deepseek branch)", 8, None),
    ],
)
def test_the_accuracy_harness_reads_a_stated_layout(
    framework: str, count: int, layout: Layout | None
) -> None:
    from engine_accuracy_data import stated_layout

    assert stated_layout(framework, count) == layout


def test_attention_runs_at_the_16bit_rate_unless_the_kv_cache_is_fp8() -> None:
    """FP8 weights with a BF16 KV cache: attention FLOPs cost what they cost in BF16 (twice the
    FP8-path time per FLOP at equal MFU); an FP8 cache lets attention run at the FP8 rate."""
    model = PRESETS["llama-3.1-70b"]
    bf16_kv = serving_setup(model, H100, 4, Precision.FP8, Precision.BF16, 1.0, 1.0).sm
    fp8_kv = serving_setup(model, H100, 4, Precision.FP8, Precision.FP8, 1.0, 1.0).sm
    bf16_all = serving_setup(model, H100, 4, Precision.BF16, Precision.BF16, 1.0, 1.0).sm
    assert bf16_kv.attn_flops_per_position > fp8_kv.attn_flops_per_position
    # BF16 weights: attention is already on the weight path's (BF16) rate: plain FLOPs.
    per_layer = attention_flops_per_layer_position(model) / 4
    assert bf16_all.attn_flops_per_position == pytest.approx(per_layer * model.layers)
    long_prompt = 32_000
    assert bf16_kv.prefill_seconds(long_prompt) > fp8_kv.prefill_seconds(long_prompt)


@pytest.mark.parametrize("layout", [Layout(tp=8), Layout(dep=8), Layout(tp=4, pp=2)])
def test_the_memory_breakdown_adds_up_under_every_layout(layout: Layout) -> None:
    req = _req("deepseek-r1", Precision.FP8, conc=64)
    e = estimate_at(req, H200, 8, layout=layout)
    m = e.memory
    parts = (
        m.weights_gb
        + m.kv_cache_gb
        + m.activations_gb
        + m.gradients_gb
        + m.optimizer_gb
        + m.adapters_gb
        + m.overhead_gb
    )
    assert m.total_gb == pytest.approx(parts, rel=1e-9)
    assert m.headroom_gb == pytest.approx(m.capacity_gb - m.total_gb, rel=1e-9)
    assert e.layout == layout.label(8)
