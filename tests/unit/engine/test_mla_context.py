"""vLLM's measured MLA prefill module (issue 25, item 1): prompt tokens of a DeepSeek-V3-shaped
MLA pay AIConfigurator's mla_context_module latency in place of the projection and attention
FLOPs, on the GPUs it measured; other models and GPUs keep the FLOPs."""

from __future__ import annotations

from dataclasses import replace

import pytest
from engine_catalog import gpu

from apps.engine import PRESETS, Precision
from apps.engine import kernel_tables_data as data
from apps.engine.kernel_tables import (
    MLA_MODULE_PROJECTION_PARAMS,
    mla_context_points,
    mla_context_seconds,
    mla_module_shape,
    tables_for,
)
from apps.engine.performance import serving_model
from apps.engine.precision import compute_path

H200 = "h200-sxm-141gb"
R1 = PRESETS["deepseek-r1"]


def _sm(model=R1, slug=H200, tp=8, weights=Precision.FP8, kv=Precision.BF16):  # type: ignore[no-untyped-def]
    g = gpu(slug)
    return serving_model(
        model, g, tp, weight_precision=weights, kv_precision=kv, path=compute_path(g, weights)
    )


def test_the_projection_parameters_are_deepseek_v3s() -> None:
    # q_a 7168x1536, q_b 1536x(128x192), kv_a 7168x576, kv_b 512x(128x256), o 128x128x7168
    assert MLA_MODULE_PROJECTION_PARAMS == 187_105_280


def test_only_deepseek_v3s_mla_shape_matches() -> None:
    assert mla_module_shape(PRESETS["deepseek-r1"])
    assert mla_module_shape(PRESETS["deepseek-v3"])
    assert not mla_module_shape(PRESETS["llama-3.1-70b"])
    assert not mla_module_shape(replace(R1, attention_heads=64))  # Kimi-style head count


def test_a_measured_point_is_returned_as_measured() -> None:
    t = tables_for(H200)
    assert t is not None
    points = mla_context_points(t, R1, "fp8_block", Precision.BF16, 8)
    assert points is not None
    curve = data.SYSTEMS["h200_sxm"]["mla_context_us"]["fp8_block/bfloat16"][16][2048]
    four = data.MLA_BATCH.index(4)
    # 4 prompts of 2048 tokens in one pass: the measured microseconds per layer
    assert mla_context_seconds(points, 4 * 2048, 2048) == pytest.approx(curve[four] * 1e-6)


def test_a_chunk_of_a_long_prompt_is_that_share_of_its_pass() -> None:
    t = tables_for(H200)
    assert t is not None
    points = mla_context_points(t, R1, "fp8_block", Precision.BF16, 8)
    assert points is not None
    whole = mla_context_seconds(points, 32768, 32768)
    assert mla_context_seconds(points, 8192, 32768) == pytest.approx(whole / 4)


def test_seconds_grow_with_tokens_and_with_prompt_length() -> None:
    t = tables_for(H200)
    assert t is not None
    points = mla_context_points(t, R1, "fp8_block", Precision.BF16, 8)
    assert points is not None
    by_tokens = [mla_context_seconds(points, n, 2048) for n in (2048, 4096, 8192, 16384)]
    assert by_tokens == sorted(by_tokens)
    by_prompt = [mla_context_seconds(points, 8192, p) for p in (1024, 1500, 2048, 4096, 8192)]
    assert by_prompt == sorted(by_prompt)


def test_no_table_where_the_dtype_or_heads_were_not_measured() -> None:
    t = tables_for(H200)
    assert t is not None
    assert mla_context_points(t, R1, None, Precision.BF16, 8) is None
    assert mla_context_points(t, R1, "fp8_block", Precision.BF16, 3) is None  # 128 % 3
    assert mla_context_points(t, PRESETS["llama-3.1-70b"], "bfloat16", Precision.BF16, 8) is None


def test_deepseek_prompt_chunk_pays_the_measured_module_on_h200() -> None:
    sm = _sm()
    assert sm.mla_prefill_points
    assert sm.mla_prefill_layers == R1.layers
    assert sm.mla_prefill_flops == pytest.approx(2.0 * MLA_MODULE_PROJECTION_PARAMS * 61 / 8)
    without = replace(sm, mla_prefill_points=(), mla_prefill_layers=0.0, mla_prefill_flops=0.0)
    chunk = 8192.0
    module = R1.layers * mla_context_seconds(sm.mla_prefill_points, chunk, 2048.0)
    flops = chunk * (sm.mla_prefill_flops + sm.prefill_attn_flops_per_position * 1024.0) / sm.rate
    got = sm.times(0.0, 0.0, chunk, 1024.0)[0] - without.times(0.0, 0.0, chunk, 1024.0)[0]
    # the module's measured seconds replace the FLOPs they cover, nothing else moves
    assert got == pytest.approx(module - flops, rel=1e-6)
    assert module > flops  # replicated down-projections and narrow TP8 slices cost more


def test_decode_steps_are_unchanged() -> None:
    sm = _sm()
    without = replace(sm, mla_prefill_points=(), mla_prefill_layers=0.0, mla_prefill_flops=0.0)
    assert sm.times(64.0, 2048.0, 0.0, 0.0) == without.times(64.0, 2048.0, 0.0, 0.0)


def test_other_models_and_gpus_keep_the_flops() -> None:
    assert not _sm(model=PRESETS["llama-3.1-70b"], weights=Precision.BF16).mla_prefill_points
    assert not _sm(slug="mi300x-192gb").mla_prefill_points  # no AIConfigurator system


def test_the_kernel_note_names_the_mla_table() -> None:
    t = tables_for(H200)
    assert t is not None
    assert "MLA prefill vLLM 0.24.0 MLA context module" in t.note
    a100 = tables_for("a100-sxm4-80gb")  # measured GEMM / MoE, no MLA module on Ampere
    assert a100 is not None
    assert "MLA prefill" not in a100.note
