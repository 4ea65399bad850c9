"""The speed model's step arithmetic: what a decode step carries at low concurrency, and what an
MoE step reads and computes (issue 13)."""

from __future__ import annotations

import dataclasses
import math
import re

import pytest
from engine_catalog import load_gpus
from hypothesis import example, given, settings
from hypothesis import strategies as st

from apps.engine import (
    PRESETS,
    EstimateRequest,
    GpuSpec,
    ModelKind,
    Precision,
    WorkloadType,
    estimate_at,
)
from apps.engine import constants as c
from apps.engine.performance import (
    expert_width_efficiency,
    flop_params,
    grouped_gemm_efficiency,
    with_scheduler,
)
from apps.engine.precision import compute_path
from apps.engine.serving import candidate_layouts, scheduler_max_seqs, serving_setup
from apps.engine.types import Framework, Layout

DECODERS = sorted(k for k, v in PRESETS.items() if v.kind is ModelKind.DECODER)
# Models whose every layer attends fully: their decode step reads context x kv_per_token bytes.
FULL_ATTENTION = [
    k
    for k in DECODERS
    if PRESETS[k].attention is None
    or (PRESETS[k].attention.window_layers == 0 and PRESETS[k].attention.linear_layers == 0)  # type: ignore[union-attr]
]
GPUS = load_gpus()


def _realtime(preset: str, in50: int, in95: int, out: int) -> EstimateRequest:
    return EstimateRequest(
        workload_type=WorkloadType.REALTIME_INFERENCE,
        model=PRESETS[preset],
        weight_precision=Precision.BF16,
        kv_cache_precision=Precision.BF16,
        input_tokens_p50=in50,
        input_tokens_p95=in95,
        output_tokens_p50=out,
        output_tokens_p95=out,
        concurrency=1,
    )


def _layout(preset: str, gpu_index: int, count: int, pick: int) -> Layout:
    """One of the layouts the engine tries for `count` GPUs (TP, TP x PP, DEP), held fixed."""
    layouts = candidate_layouts(PRESETS[preset], GPUS[gpu_index], count)
    return layouts[pick % len(layouts)]


def _itl_ms(req: EstimateRequest, gpu_index: int, count: int, layout: Layout) -> float:
    itl = estimate_at(req, GPUS[gpu_index], count, layout=layout).performance.itl_ms
    assert itl is not None
    return itl


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(DECODERS),
    st.integers(0, len(GPUS) - 1),
    st.sampled_from([1, 2, 8]),
    st.integers(1, 16_000),
    st.integers(1, 16_000),
    st.integers(1, 2_000),
    st.integers(0, 7),
)
def test_itl_at_concurrency_1_ignores_the_median_prompt(
    preset: str, gpu: int, count: int, a: int, b: int, out: int, pick: int
) -> None:
    """A lone request's decode steps carry no prompt tokens: no other request exists whose
    prompt chunked prefill could mix in, so the median prompt length cannot change its ITL
    (under any of the layouts the engine tries)."""
    in95 = max(a, b)
    layout = _layout(preset, gpu, count, pick)
    itl_a = _itl_ms(_realtime(preset, a, in95, out), gpu, count, layout)
    itl_b = _itl_ms(_realtime(preset, b, in95, out), gpu, count, layout)
    assert itl_a == itl_b


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(FULL_ATTENTION),
    st.integers(0, len(GPUS) - 1),
    st.sampled_from([1, 2, 8]),
    st.integers(1, 16_000),
    st.integers(1, 16_000),
    st.integers(1, 2_000),
    st.integers(0, 7),
)
def test_itl_at_concurrency_1_grows_only_by_the_kv_read(
    preset: str, gpu: int, count: int, a: int, b: int, out: int, pick: int
) -> None:
    """ITL(in=a) - ITL(in=b) is the time to read (a - b) more tokens of KV cache, nothing else
    (a pipeline reads each stage's share in turn, so its stages together read it all)."""
    layout = _layout(preset, gpu, count, pick)
    itl_a = _itl_ms(_realtime(preset, a, a, out), gpu, count, layout)
    itl_b = _itl_ms(_realtime(preset, b, b, out), gpu, count, layout)
    sm = serving_setup(
        PRESETS[preset], GPUS[gpu], layout.tp, Precision.BF16, Precision.BF16, 1.0, 1.0, layout
    ).sm
    kv_read_ms = (a - b) * sm.kv_per_token * sm.pp / sm.bandwidth * 1e3
    assert math.isclose(itl_a - itl_b, kv_read_ms, rel_tol=1e-6, abs_tol=1e-9)


MOE = sorted(k for k in DECODERS if PRESETS[k].experts > PRESETS[k].active_experts)


@given(st.floats(0.01, 1e6), st.floats(0.01, 1e6))
def test_grouped_gemm_efficiency_rises_with_rows_per_expert(a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    tile = float(c.GROUPED_GEMM_TILE_M)
    e_lo, e_hi = grouped_gemm_efficiency(lo, tile), grouped_gemm_efficiency(hi, tile)
    assert 0.0 < e_lo <= e_hi <= 1.0
    if lo < tile:  # an expert with fewer tokens than one block pays for the whole block
        assert e_lo <= lo / tile


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MOE), st.integers(0, len(GPUS) - 1), st.integers(1, 512))
def test_moe_experts_run_below_the_dense_rate_at_small_batches(
    preset: str, gpu: int, batch: int
) -> None:
    """With under half a block of tokens per expert (batch x k / experts touched), the routed
    experts' grouped GEMM runs below a dense GEMM's rate: the step's compute exceeds the active
    parameters' FLOPs at the dense decode rate."""
    model = PRESETS[preset]
    half_block = model.experts / model.active_experts * c.GROUPED_GEMM_TILE_M / 2
    batch = max(1, min(batch, int(half_block)))
    sm = serving_setup(model, GPUS[gpu], 1, Precision.BF16, Precision.BF16, 1.0, 1.0).sm
    dense_rate_s = batch * 2.0 * flop_params(model) / sm.decode_rate
    assert sm.step(decode_seqs=batch, context=0.0).compute_s > dense_rate_s


def test_an_moe_step_pays_the_router_on_every_layer() -> None:
    model = PRESETS[next(k for k in MOE if not PRESETS[k].is_mla)]
    sm = serving_setup(model, GPUS[0], 1, Precision.BF16, Precision.BF16, 1.0, 1.0).sm
    per_layer = c.DECODE_OVERHEAD_S_PER_LAYER + c.MOE_ROUTING_OVERHEAD_S_PER_LAYER
    assert math.isclose(sm.step_overhead_s, model.layers * per_layer)


def test_an_mla_step_pays_its_extra_kernels_on_every_layer() -> None:
    model = PRESETS["deepseek-r1"]
    sm = serving_setup(
        model, _gpu("b200-sxm-180gb"), 8, Precision.BF16, Precision.BF16, 1.0, 1.0
    ).sm
    per_layer = (
        c.DECODE_OVERHEAD_S_PER_LAYER
        + c.MOE_ROUTING_OVERHEAD_S_PER_LAYER
        + c.MLA_DECODE_EXTRA_KERNELS * c.SMALL_KERNEL_S
    )
    assert math.isclose(sm.step_overhead_s, model.layers * per_layer)


def test_block_fp8_gemm_floor_is_charged_on_hopper_and_not_on_blackwell() -> None:
    """DeepSeek's block-scaled FP8 projections pay FP8_BLOCK_GEMM_FLOOR_S per GEMM (beyond the
    dense weight read) on Hopper; Blackwell has no published floor, so only the FP8
    activation-quantization kernels are added there."""
    model = PRESETS["deepseek-r1"]
    fp8 = Precision.FP8
    hopper = serving_setup(model, _gpu("h200-sxm-141gb"), 8, fp8, fp8, 1.0, 1.0).sm
    blackwell = serving_setup(model, _gpu("b200-sxm-180gb"), 8, fp8, fp8, 1.0, 1.0).sm
    base = (
        c.DECODE_OVERHEAD_S_PER_LAYER
        + c.MOE_ROUTING_OVERHEAD_S_PER_LAYER
        + (c.MLA_DECODE_EXTRA_KERNELS + c.FP8_QUANT_KERNELS_ATTENTION_MLA + c.FP8_QUANT_KERNELS_MLP)
        * c.SMALL_KERNEL_S
    )
    assert math.isclose(blackwell.step_overhead_s, model.layers * base)
    gemms = c.FP8_BLOCK_GEMMS_ATTENTION_MLA + c.FP8_BLOCK_GEMMS_MLP
    floor = gemms * c.FP8_BLOCK_GEMM_FLOOR_S["HOPPER"]
    read = hopper.dense_weight_bytes / model.layers / hopper.bandwidth
    assert math.isclose(hopper.step_overhead_s, model.layers * (base + floor - read))


def _gpu(slug: str) -> GpuSpec:
    return next(g for g in GPUS if g.slug == slug)


def _offline(preset: str, tokens: int, concurrency: int | None = None) -> EstimateRequest:
    return EstimateRequest(
        workload_type=WorkloadType.BATCH_INFERENCE,
        model=PRESETS[preset],
        weight_precision=Precision.BF16,
        kv_cache_precision=Precision.BF16,
        input_tokens_p50=tokens,
        input_tokens_p95=tokens,
        output_tokens_p50=tokens,
        output_tokens_p95=tokens,
        concurrency=concurrency,
    )


def _chosen_batch(notes: tuple[str, ...]) -> int:
    found = [re.match(r"batch chosen: (\d+) sequence", n) for n in notes]
    hits = [int(m.group(1)) for m in found if m]
    assert len(hits) == 1, notes
    return hits[0]


@pytest.mark.parametrize(
    ("slug", "max_seqs"),
    [
        ("a100-sxm4-80gb", 256),  # vLLM keeps the small defaults on A100 (PR #17885)
        ("l40s-48gb", 256),  # under 70 GiB
        ("h100-sxm5-80gb", 1024),
        ("mi300x-192gb", 1024),
    ],
)
def test_the_scheduler_limit_is_vllms_default_max_num_seqs(slug: str, max_seqs: int) -> None:
    assert scheduler_max_seqs(_gpu(slug)) == max_seqs


def test_an_offline_batch_stops_at_the_schedulers_limit_and_says_so() -> None:
    """A 1B model at 128/128 has KV room for thousands of sequences on an A100 80GB, but vLLM
    schedules at most 256 there: the batch is 256, reported in a note, and its throughput is
    the throughput of an explicit batch of 256."""
    gpu = _gpu("a100-sxm4-80gb")
    e = estimate_at(_offline("llama-3.2-1b", 128), gpu, 1)
    assert e.max_concurrency > 256
    assert _chosen_batch(e.notes) == 256
    assert any("--max-num-seqs on this GPU is 256" in n for n in e.notes)
    explicit = estimate_at(_offline("llama-3.2-1b", 128, concurrency=256), gpu, 1)
    assert e.performance.output_tokens_per_s == explicit.performance.output_tokens_per_s


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(DECODERS), st.integers(0, len(GPUS) - 1), st.integers(16, 32_000))
# Found by hypothesis: BF16 weights leave no sequence room at the default 90% (TIGHT), so the
# batch is sized at the share the TIGHT advice gives, not stuck at 1.
@example("gpt-oss-120b", [g.slug for g in GPUS].index("mi325x-256gb"), 16)
def test_an_offline_batch_fits_both_limits_and_beats_smaller_powers_of_two(
    preset: str, gpu: int, tokens: int
) -> None:
    e = estimate_at(_offline(preset, tokens), GPUS[gpu], 1)
    chosen = _chosen_batch(e.notes)
    limit = max(1, min(e.max_concurrency, scheduler_max_seqs(GPUS[gpu])))
    assert 1 <= chosen <= limit
    tok = e.performance.output_tokens_per_s
    assert tok is not None
    b = 1
    while b < limit:
        other = estimate_at(_offline(preset, tokens, concurrency=b), GPUS[gpu], 1)
        assert other.performance.output_tokens_per_s is not None
        assert tok >= other.performance.output_tokens_per_s * (1 - 1e-9)
        b *= 4


def test_narrow_experts_run_below_the_grouped_gemm_rate() -> None:
    """GROUPED_GEMM_SATURATION_WIDTH: an expert narrower than the saturation width (times the
    path's speed-up over BF16) runs at width / saturation of the grouped-GEMM rate, never below
    the narrowest measured point's factor; whole wide experts are not slowed."""
    h100 = _gpu("h100-sxm5-80gb")
    qwen = PRESETS["qwen3-30b-a3b"]
    bf16 = compute_path(h100, Precision.BF16)
    fp8 = compute_path(h100, Precision.FP8)
    sat = c.GROUPED_GEMM_SATURATION_WIDTH
    assert math.isclose(expert_width_efficiency(qwen, h100, bf16, 1), qwen.intermediate_size / sat)
    speedup = h100.fp8_tflops / h100.bf16_tflops
    assert math.isclose(
        expert_width_efficiency(qwen, h100, fp8, 1), qwen.intermediate_size / (sat * speedup)
    )
    deepseek = PRESETS["deepseek-r1"]
    assert expert_width_efficiency(deepseek, h100, bf16, 1) == 1.0
    assert expert_width_efficiency(deepseek, h100, fp8, 8) == c.GROUPED_GEMM_MIN_WIDTH_EFFICIENCY


def test_a_padded_block_is_not_charged_the_narrow_expert_factor_twice() -> None:
    first = c.GROUPED_GEMM_EFFICIENCY[0][1]
    tile = float(c.GROUPED_GEMM_TILE_M)
    assert math.isclose(grouped_gemm_efficiency(4.0, tile, 0.5), first * 4.0 / tile)
    assert math.isclose(grouped_gemm_efficiency(12.0, tile, 0.5), first * 0.5)
    assert math.isclose(grouped_gemm_efficiency(1024.0, tile, 0.5), 0.5 * 0.90)
    assert grouped_gemm_efficiency(64.0, tile) == first


def test_sglang_runs_prompts_as_passes_of_their_own() -> None:
    """SEPARATE_PREFILL_FRAMEWORKS: under SGLang a step is a decode pass plus, per arriving
    prompt (or per budget of prompt tokens when more arrive), a prompt-only pass; vLLM and
    TensorRT-LLM keep the prompt tokens mixed into the step."""
    model = PRESETS["llama-3.1-8b"]
    sm = serving_setup(model, GPUS[0], 1, Precision.BF16, Precision.BF16, 1.0, 1.0).sm
    for fw in (None, Framework.VLLM, Framework.TENSORRT_LLM):
        mixed = with_scheduler(sm, fw, 8192)
        assert mixed.prefill_pass_tokens == 0.0 and mixed.chunk_budget == 8192.0
    split = with_scheduler(sm, Framework.SGLANG, 8192)
    assert split.chunk_budget == 0.0
    assert with_scheduler(sm, Framework.SGLANG, 8192) is split  # memoised
    prompt = 1000.0
    # A quarter of a prompt a step: a quarter of a 1000-token prompt-only pass each step.
    got = split.seconds(64, 1500, 0.25 * prompt, prompt / 2)
    want = sm.seconds(64, 1500, 0.0, 0.0) + 0.25 * sm.seconds(0.0, 0.0, prompt, prompt / 2)
    assert math.isclose(got, want)
    # 20 prompts a step (20,000 tokens): budget-sized passes, 20000 / 8192 of them.
    got = split.seconds(64, 1500, 20 * prompt, prompt / 2)
    passes = 20 * prompt / 8192
    want = sm.seconds(64, 1500, 0.0, 0.0) + passes * sm.seconds(0.0, 0.0, 8192, prompt / 2)
    assert math.isclose(got, want)
    # Decode alone and a lone prompt are unchanged.
    assert split.seconds(64, 1500, 0.0, 0.0) == sm.seconds(64, 1500, 0.0, 0.0)
    assert split.prefill_seconds(prompt) == sm.prefill_seconds(prompt)


def test_the_eager_pass_factor_reproduces_its_measurement() -> None:
    """EAGER_PASS_FLOOR_FACTOR is SGLang PR #12160's eager DeepSeek-V3 forward (82.6 ms for one
    new token, 61 layers) over the engine's graphed per-layer kernel cost for that model at FP8:
    the floor it gives DeepSeek-V3 on an FP8 part is that measurement."""
    model = PRESETS["deepseek-v3"]
    h100 = next(g for g in GPUS if g.slug == "h100-sxm5-80gb")
    assert model.layers == c.EAGER_PASS_MEASURED_LAYERS
    sm = serving_setup(model, h100, 8, Precision.FP8, Precision.FP8, 1.0, 1.0).sm
    floor = with_scheduler(sm, Framework.SGLANG, 8192).prompt_pass_floor_s
    assert math.isclose(floor, c.EAGER_PASS_MEASURED_S, rel_tol=0.01)


def test_sglang_prompt_passes_pay_the_eager_host_floor() -> None:
    """SGLang's prompt-only passes run outside CUDA graphs: a short prompt's pass takes the host
    floor (EAGER_PASS_FLOOR_FACTOR x the layers' graphed kernel cost) where its GPU time is
    shorter, a long prompt's pass is unchanged, and decode steps and vLLM's mixed steps never pay
    it."""
    model = PRESETS["deepseek-r1"]
    b200 = next(g for g in GPUS if g.slug == "b200-sxm-180gb")
    sm = serving_setup(model, b200, 8, Precision.FP8, Precision.BF16, 1.0, 1.0).sm
    split = with_scheduler(sm, Framework.SGLANG, 16384)
    floor = split.prompt_pass_floor_s
    assert floor == pytest.approx(c.EAGER_PASS_FLOOR_FACTOR * sm.graphed_overhead_s)
    assert sm.prefill_seconds(500) < floor  # the GPU work of a 500-token pass is shorter
    assert split.prefill_seconds(500) == floor
    assert split.prefill_seconds(16384) == sm.prefill_seconds(16384) > floor
    assert split.seconds(100, 750, 0.0, 0.0) == sm.seconds(100, 750, 0.0, 0.0)
    # A fifth of a 1000-token prompt a step: a fifth of a floored pass on top of the decode pass.
    got = split.seconds(100, 750, 0.2 * 1000, 500)
    assert math.isclose(got, sm.seconds(100, 750, 0.0, 0.0) + 0.2 * floor)
    mixed = with_scheduler(sm, Framework.VLLM, 8192)
    assert mixed.prompt_pass_floor_s == 0.0
    assert mixed.prefill_seconds(500) == sm.prefill_seconds(500)


class TestChunkedPrefillUnderTheTokenBudget:
    """vLLM / TensorRT-LLM mix prompts into the decode steps as whole prompts or chunks of the
    token budget left after the decode tokens (ServingModel._chunked), not spread evenly."""

    def _models(self) -> tuple:  # type: ignore[type-arg]
        model = PRESETS["qwen3-30b-a3b"]  # MoE: a chunk's cost is not linear in its tokens
        sm = serving_setup(model, GPUS[0], 1, Precision.BF16, Precision.BF16, 1.0, 1.0).sm
        return sm, with_scheduler(sm, Framework.VLLM, 8192)

    def test_a_quarter_of_a_prompt_a_step_is_a_whole_prompt_in_a_quarter_of_the_steps(
        self,
    ) -> None:
        sm, mixed = self._models()
        prompt = 1000.0
        got = mixed.seconds(64, 1500, 0.25 * prompt, prompt / 2)
        want = 0.25 * sm.seconds(64, 1500, prompt, prompt / 2) + 0.75 * sm.seconds(
            64, 1500, 0.0, 0.0
        )
        assert math.isclose(got, want)
        # ...which for an MoE model differs from a quarter-prompt in every step
        assert not math.isclose(got, sm.seconds(64, 1500, 0.25 * prompt, prompt / 2))

    def test_a_prompt_longer_than_the_budget_comes_in_budget_sized_chunks(self) -> None:
        sm, mixed = self._models()
        prompt, carried = 32000.0, 100.0
        room = 8192.0 - 64
        got = mixed.seconds(64, 1500, carried, prompt / 2)
        share = carried / room
        want = share * sm.seconds(64, 1500, room, prompt / 2) + (1 - share) * sm.seconds(
            64, 1500, 0.0, 0.0
        )
        assert math.isclose(got, want)

    def test_more_prompt_tokens_than_one_chunk_holds_stay_spread_over_the_steps(self) -> None:
        sm, mixed = self._models()
        prompt = 1000.0
        assert math.isclose(
            mixed.seconds(64, 1500, 20 * prompt, prompt / 2),
            sm.seconds(64, 1500, 20 * prompt, prompt / 2),
        )

    def test_a_dense_step_is_linear_in_its_prompt_tokens_so_the_shortcut_is_exact(self) -> None:
        """chunk_lumpy is off for a dense model: its chunked mean equals the even spread."""
        from dataclasses import replace

        model = PRESETS["llama-3.1-70b"]
        sm = serving_setup(model, GPUS[0], 4, Precision.FP8, Precision.FP8, 1.0, 1.0).sm
        mixed = with_scheduler(sm, Framework.VLLM, 8192)
        assert not mixed.chunk_lumpy
        forced = replace(mixed, chunk_lumpy=True)
        for decode, carried, prompt in ((64, 250.0, 1000.0), (8, 10.0, 32000.0)):
            assert math.isclose(
                forced.seconds(decode, 1500, carried, prompt / 2),
                mixed.seconds(decode, 1500, carried, prompt / 2),
                rel_tol=1e-9,
            )

    def test_decode_alone_and_a_lone_prompt_are_unchanged(self) -> None:
        sm, mixed = self._models()
        assert mixed.seconds(64, 1500, 0.0, 0.0) == sm.seconds(64, 1500, 0.0, 0.0)
        assert mixed.prefill_seconds(4000) == sm.prefill_seconds(4000)


def test_vllm_serve_budgets_8192_tokens_on_large_gpus_and_2048_on_the_rest() -> None:
    """EngineArgs.get_batch_defaults for the OpenAI server: >= 70 GiB and not an A100: 8192."""
    from apps.engine.frameworks import scheduler_limits

    large = next(g for g in GPUS if g.slug == "h100-sxm5-80gb")
    for slug in ("a100-sxm4-80gb", "l4-24gb"):
        small = next(g for g in GPUS if g.slug == slug)
        assert scheduler_limits(small).max_batched_tokens == c.VLLM_MAX_NUM_BATCHED_TOKENS == 2048
    assert scheduler_limits(large).max_batched_tokens == 8192


class TestMeasuredMoeShape:
    """Where AIConfigurator measured the model's exact expert shape, the fused MoE op's latency
    by tokens is a floor under the width x rows table (kernel_tables.moe_shape_points)."""

    def test_gpt_oss_on_h100_carries_the_measured_op_and_its_one_token_floor(self) -> None:
        from apps.engine.kernel_tables import moe_op_seconds, moe_shape_points, tables_for

        oss = PRESETS["gpt-oss-120b"]
        h100 = next(g for g in GPUS if g.slug == "h100-sxm5-80gb")
        sm = serving_setup(oss, h100, 1, Precision.FP4, Precision.BF16, 1.0, 1.0).sm
        assert sm.moe_op_points
        per_layer = moe_shape_points(tables_for(h100.slug), "w4a16_mxfp4", oss, 1)  # type: ignore[arg-type]
        assert per_layer is not None
        layers = sm.moe_op_points[0][1] / per_layer[0][1]
        assert 35.5 < layers < 36.5  # the model's 36 MoE layers, from its routed-expert FLOPs
        # one token: the step pays at least the measured op on every layer
        assert sm.seconds(1, 1024, 0.0, 0.0) > moe_op_seconds(sm.moe_op_points, 1.0)

    def test_interpolation_is_exact_at_the_points_and_linear_beyond_the_last(self) -> None:
        from apps.engine.kernel_tables import moe_op_seconds

        pts = ((1.0, 1e-5), (4.0, 4e-5), (16.0, 8e-5))
        assert moe_op_seconds(pts, 0.5) == 1e-5
        assert math.isclose(moe_op_seconds(pts, 4.0), 4e-5)
        assert math.isclose(moe_op_seconds(pts, 2.0), 2e-5)  # log-log: y ~ x between 1 and 4
        assert math.isclose(moe_op_seconds(pts, 32.0), 16e-5)

    def test_a_gpu_without_measured_tables_has_no_op_curve(self) -> None:
        mi300x = next(g for g in GPUS if g.slug == "mi300x-192gb")
        oss = PRESETS["gpt-oss-120b"]
        sm = serving_setup(oss, mi300x, 1, Precision.FP4, Precision.BF16, 1.0, 1.0).sm
        assert sm.moe_op_points == ()


def test_tensor_parallel_moe_pays_the_measured_routing_skew_only_at_its_measured_sizes() -> None:
    """MOE_SKEW_UNDER_TP: AIConfigurator's power-law / balanced ratio (moe_ep_size 1) is charged
    on a TP GPU from MOE_SKEW_MIN_TOKENS tokens a pass; a smaller pass pays none."""
    from dataclasses import replace

    model = PRESETS["deepseek-r1"]
    h200 = next(g for g in GPUS if g.slug == "h200-sxm-141gb")
    sm = serving_setup(model, h200, 8, Precision.FP8, Precision.FP8, 1.0, 1.0).sm
    assert sm.skew_imbalance > 1.0 and sm.expert_imbalance == 1.0
    even = replace(sm, skew_imbalance=1.0)
    small = c.MOE_SKEW_MIN_TOKENS // 2
    assert sm.seconds(small, 2000, 0.0, 0.0) == even.seconds(small, 2000, 0.0, 0.0)
    big = c.MOE_SKEW_MIN_TOKENS * 2
    assert sm.seconds(big, 2000, 0.0, 0.0) > even.seconds(big, 2000, 0.0, 0.0)


def test_prompt_tokens_run_the_lm_head_only_where_sampled() -> None:
    """LM_HEAD_ON_SAMPLED_POSITIONS_ONLY: a prompt of n tokens runs the LM head (2 x vocab x
    hidden FLOPs, split over the tensor-parallel ranks) once, at its last position, where a
    decode token runs it every step."""
    model = PRESETS["llama-3.1-8b"]
    h100 = next(g for g in GPUS if g.slug == "h100-sxm5-80gb")
    for tp in (1, 2):
        sm = serving_setup(model, h100, tp, Precision.BF16, Precision.BF16, 1.0, 1.0).sm
        head = 2.0 * model.vocab_size * model.hidden_size / tp
        assert sm.head_flops_per_token == pytest.approx(head)
        every = dataclasses.replace(sm, head_flops_per_token=0.0)  # the head on every position
        n = 4096.0
        saved = every.times(0.0, 0.0, n, n / 2)[2] - sm.times(0.0, 0.0, n, n / 2)[2]
        assert saved == pytest.approx((n - 1.0) * head / sm.rate)
        assert sm.times(32, 2000, 0.0, 0.0) == every.times(32, 2000, 0.0, 0.0)


def test_an_sglang_estimate_says_when_a_prompt_pass_takes_the_eager_floor() -> None:
    """The estimate names the eager floor where it sets the prompt's pass (a short DeepSeek-R1
    prompt under SGLang on 8 x B200), and not where the GPU work is longer or under vLLM."""
    b200 = next(g for g in GPUS if g.slug == "b200-sxm-180gb")

    def notes(framework: Framework, prompt: int) -> list[str]:
        req = EstimateRequest(
            workload_type=WorkloadType.REALTIME_INFERENCE,
            model=PRESETS["deepseek-r1"],
            weight_precision=Precision.FP8,
            kv_cache_precision=Precision.BF16,
            input_tokens_p50=prompt,
            input_tokens_p95=prompt,
            output_tokens_p50=500,
            output_tokens_p95=500,
            framework=framework,
        )
        return estimate_at(req, b200, 8, layout=Layout(tp=8)).notes

    def eager(ns: list[str]) -> list[str]:
        return [n for n in ns if "outside CUDA graphs" in n]

    short = eager(notes(Framework.SGLANG, 500))
    assert len(short) == 1 and "500-token prompt" in short[0] and "SGLang" in short[0]
    assert not eager(notes(Framework.SGLANG, 16000))
    assert not eager(notes(Framework.VLLM, 500))
