"""Worked examples checked by hand."""

from __future__ import annotations

import dataclasses

import pytest
from engine_catalog import gpu

from apps.engine import PRESETS, EstimateRequest, Fit, Precision, WorkloadType, estimate_at
from apps.engine.memory import kv_bytes_per_token
from apps.engine.performance import flop_params
from apps.engine.precision import weight_bytes


def _serving(
    preset: str, precision: Precision, *, conc: int = 1, tokens: int = 1024
) -> EstimateRequest:
    return EstimateRequest(
        workload_type=WorkloadType.REALTIME_INFERENCE,
        model=PRESETS[preset],
        weight_precision=precision,
        kv_cache_precision=precision if precision is not Precision.INT4 else Precision.FP8,
        input_tokens_p50=tokens,
        input_tokens_p95=tokens,
        output_tokens_p50=128,
        output_tokens_p95=128,
        concurrency=conc,
    )


class TestWeights:
    def test_llama_3_1_8b_bf16_weights_are_16_06_gb(self) -> None:
        assert weight_bytes(PRESETS["llama-3.1-8b"], Precision.BF16) / 1e9 == pytest.approx(
            16.06, abs=0.01
        )

    def test_fp8_keeps_embeddings_and_lm_head_at_16_bit(self) -> None:
        # 8.03B params, 2 x 128256 x 4096 = 1.05B of them embeddings: 6.98 GB + 2.10 GB.
        assert weight_bytes(PRESETS["llama-3.1-8b"], Precision.FP8) / 1e9 == pytest.approx(
            9.08, abs=0.01
        )

    def test_int4_adds_group_scale_overhead(self) -> None:
        model = PRESETS["llama-3.1-70b"]
        plain = (model.total_params - 2 * 128256 * 8192) * 0.5
        assert weight_bytes(model, Precision.INT4) > plain


class TestKvCache:
    def test_llama_3_1_70b_bf16_kv_is_327680_bytes_per_token(self) -> None:
        assert kv_bytes_per_token(PRESETS["llama-3.1-70b"], Precision.BF16) == 2 * 80 * 8 * 128 * 2

    def test_deepseek_v3_mla_kv_is_576_values_per_layer(self) -> None:
        model = PRESETS["deepseek-v3"]
        assert kv_bytes_per_token(model, Precision.BF16) == (512 + 64) * 61 * 2

    def test_deepseek_v3_mla_is_far_smaller_than_mha_equivalent(self) -> None:
        mla = kv_bytes_per_token(PRESETS["deepseek-v3"], Precision.BF16)
        mha = 2 * 61 * 128 * 128 * 2  # 128 heads x (128 nope) K and V per layer
        assert mla * 50 < mha


class TestFit:
    def test_70b_fp8_on_one_80gb_datasheet_gpu_leaves_only_a_few_thousand_tokens(self) -> None:
        # 72.7 GB of FP8 weights (embeddings at BF16): over vLLM's default 90% budget of a
        # datasheet 80 GB, and the whole 80 GB leaves room for only ~20K tokens of FP8 KV cache
        # (163,840 bytes each).
        datasheet_h100 = dataclasses.replace(gpu("h100-sxm5-80gb"), device_memory_mib=None)
        e = estimate_at(_serving("llama-3.1-70b", Precision.FP8), datasheet_h100, 1)
        assert e.fit is not Fit.FITS
        spare = e.memory.capacity_gb - e.memory.weights_gb - e.memory.overhead_gb
        assert spare * 1e9 / 163_840 < 40_000
        h200 = estimate_at(_serving("llama-3.1-70b", Precision.FP8), gpu("h200-sxm-141gb"), 1)
        assert h200.fits and h200.max_context_tokens > 100_000

    def test_70b_fp8_at_4k_fits_one_h100_sized_by_its_81559_mib(self) -> None:
        # vLLM serves Llama-3.1-70B FP8 on one H100 SXM at 4K context: 0.9 x 85.5 GB = 77.0 GB
        # holds 72.7 GB of weights, 1.5 GB overhead, ~0.7 GB activations and 0.7 GB of KV.
        req = _serving("llama-3.1-70b", Precision.FP8, tokens=4096 - 128)
        e = estimate_at(req, gpu("h100-sxm5-80gb"), 1)
        assert e.fit is Fit.FITS and e.fits
        assert e.memory_capacity_gb == pytest.approx(81_559 * 2**20 / 1e9)
        assert e.memory_capacity_gb == pytest.approx(85.52, abs=0.01)
        assert e.max_concurrency >= 1 and e.max_context_tokens >= 4096

    def test_405b_bf16_does_not_fit_8x_h100_but_fits_8x_h200(self) -> None:
        req = _serving("llama-3.1-405b", Precision.BF16)
        assert weight_bytes(req.model, Precision.BF16) / 1e9 > 810
        assert not estimate_at(req, gpu("h100-sxm5-80gb"), 8).fits
        assert estimate_at(req, gpu("h200-sxm-141gb"), 8).fits

    def test_headroom_is_capacity_minus_total(self) -> None:
        e = estimate_at(_serving("llama-3.1-8b", Precision.BF16), gpu("h100-sxm5-80gb"), 2)
        m = e.memory
        assert m.capacity_gb == pytest.approx(2 * 81_559 * 2**20 / 1e9)
        assert m.headroom_gb == pytest.approx(m.capacity_gb - m.total_gb)


class TestMoe:
    def test_mixtral_memory_counts_all_experts_but_flops_only_active(self) -> None:
        model = PRESETS["mixtral-8x7b"]
        assert weight_bytes(model, Precision.BF16) / 1e9 == pytest.approx(93.4, abs=0.2)
        assert flop_params(model) / 1e9 == pytest.approx(12.75, abs=0.2)

    def test_deepseek_v3_is_671b_total_37b_active(self) -> None:
        model = PRESETS["deepseek-v3"]
        assert model.params_billion == pytest.approx(671, abs=1)
        assert model.active_params / 1e9 == pytest.approx(37.5, abs=1)


class TestFp8OnAmpere:
    def test_is_served_weight_only_with_a_note(self) -> None:
        e = estimate_at(_serving("llama-3.1-8b", Precision.FP8), gpu("a100-sxm4-80gb"), 1)
        assert any("weight-only" in n for n in e.notes)
        assert e.memory.weights_gb == pytest.approx(9.08, abs=0.01)

    def test_fp4_before_blackwell_notes_weight_only(self) -> None:
        e = estimate_at(_serving("llama-3.1-8b", Precision.FP4), gpu("mi300x-192gb"), 1)
        assert any("no FP4" in n for n in e.notes)
