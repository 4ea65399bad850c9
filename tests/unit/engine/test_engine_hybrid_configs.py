"""Configs as published (issue 25): nemotron_h hybrid Mamba-2 / attention / MoE stacks, the
Infinity / NaN literals Hugging Face writes, NVIDIA ModelOpt's hf_quant_config.json, and the
active-parameter convention of the model cards (tests/data/hf_configs, see SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from apps.engine import EngineInputError, estimate, parse_estimate_request, request_model_to_dict
from apps.engine.hf_config import model_from_hf_config
from apps.engine.memory import kv_bytes_per_token
from apps.engine.model_summary import model_summary
from apps.engine.types import Precision
from tests.unit.engine.engine_catalog import load_gpus

CONFIGS = Path(__file__).resolve().parents[2] / "data" / "hf_configs"
GPUS = load_gpus()
KNOWN = {g.slug for g in GPUS}


def config(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CONFIGS / f"{name}.json").read_text())
    return loaded


def body(model: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "workload_type": "BATCH_INFERENCE",
        "model": model,
        "input_tokens": {"p50": 1000},
        "output_tokens": {"p50": 1000},
        **extra,
    }


class TestNemotronHybrid:
    def test_nano_is_read_at_the_cards_31_6b_total_and_3_2b_active(self) -> None:
        m = model_from_hf_config(config("nemotron-3-nano-30b-a3b-bf16"))
        summary = model_summary(m, Precision.BF16, Precision.BF16)
        assert summary.total_params_billion == pytest.approx(31.6, abs=0.05)
        assert summary.active_params_billion == pytest.approx(3.2, abs=0.05)
        assert summary.active_params_with_embeddings_billion == pytest.approx(3.6, abs=0.05)

    def test_nano_counts_only_its_six_attention_layers_in_the_kv_cache(self) -> None:
        m = model_from_hf_config(config("nemotron-3-nano-30b-a3b-bf16"))
        assert m.attention is not None
        assert (m.attention.full_layers, m.attention.linear_layers) == (6, 23)
        assert m.attention.mixer_free_layers == 23
        # 6 layers x 2 (K, V) x 2 KV heads x 128 x 2 bytes
        assert kv_bytes_per_token(m, Precision.BF16) == 6 * 2 * 2 * 128 * 2

    def test_nano_weighs_about_63_gb_at_bf16_not_242(self) -> None:
        req = parse_estimate_request(
            body({"hf_config": config("nemotron-3-nano-30b-a3b-bf16")}), known_gpus=KNOWN
        )
        assert req.weight_precision is Precision.BF16
        assert request_model_to_dict(req)["weights_gb"] == pytest.approx(63.2, abs=0.2)

    def test_the_mamba_state_is_constant_per_sequence_at_the_configs_float32_cache(self) -> None:
        m = model_from_hf_config(config("nemotron-3-nano-30b-a3b-bf16"))
        assert m.attention is not None
        # 23 layers x (64 heads x 64 x 128 SSM state at 4 bytes + conv window 3 x 6144 at 2)
        assert m.attention.state_bytes == 23 * (64 * 64 * 128 * 4 + 3 * 6144 * 2)

    def test_nemotron_h_56b_with_its_infinity_literal_is_read_at_56b(self) -> None:
        cfg = config("nemotron-h-56b-base-8k")
        assert cfg["time_step_limit"][1] == float("inf")
        m = model_from_hf_config(cfg)
        assert m.params_billion == pytest.approx(56.3, abs=0.1)
        assert m.attention is not None and m.attention.full_layers == 10

    def test_latent_moe_super_is_read_at_the_cards_120b(self) -> None:
        m = model_from_hf_config(config("nemotron-3-super-120b-a12b-nvfp4"))
        assert m.params_billion == pytest.approx(120.7, abs=0.3)
        summary = model_summary(m, Precision.BF16, Precision.BF16)
        assert summary.active_params_billion == pytest.approx(12.4, abs=0.3)

    def test_a_pattern_of_the_wrong_length_is_refused_naming_the_field(self) -> None:
        cfg = config("nemotron-3-nano-30b-a3b-bf16") | {"hybrid_override_pattern": "M*E"}
        with pytest.raises(EngineInputError) as exc:
            model_from_hf_config(cfg)
        assert exc.value.field == "hf_config.hybrid_override_pattern"

    def test_an_unknown_block_type_is_refused(self) -> None:
        cfg = config("nemotron-3-nano-30b-a3b-bf16")
        cfg["hybrid_override_pattern"] = "Q" + cfg["hybrid_override_pattern"][1:]
        with pytest.raises(EngineInputError, match="unknown block type"):
            model_from_hf_config(cfg)

    def test_the_nano_estimates_on_one_h100(self) -> None:
        req = parse_estimate_request(
            body({"hf_config": config("nemotron-3-nano-30b-a3b-bf16")}, gpus=["h100-sxm5-80gb"]),
            known_gpus=KNOWN,
        )
        (e,) = estimate(req, GPUS)
        assert e.fits and e.gpu_count == 1
        assert e.performance.output_tokens_per_s and e.performance.output_tokens_per_s > 0


class TestModelOptHfQuantConfig:
    def test_llama_70b_fp8_is_sized_fp8_from_its_hf_quant_config(self) -> None:
        model = {
            "hf_config": config("llama-3.1-70b-instruct-fp8"),
            "hf_quant_config": config("llama-3.1-70b-instruct-fp8.hf_quant_config"),
        }
        req = parse_estimate_request(body(model), known_gpus=KNOWN)
        assert req.weight_precision is Precision.FP8
        summary = request_model_to_dict(req)
        # 68.5B linear weights at FP8 + 2 x 1.05B embedding / lm_head at BF16: ~72.7 GB
        assert summary["weights_gb"] == pytest.approx(72.7, abs=0.3)
        assert summary["weights_by_tensor_group"]["attention"] == "FP8"
        assert summary["weights_by_tensor_group"]["lm_head"] == "BF16"

    def test_without_it_the_same_config_is_sized_at_its_bf16_dtype(self) -> None:
        req = parse_estimate_request(
            body({"hf_config": config("llama-3.1-70b-instruct-fp8")}), known_gpus=KNOWN
        )
        assert req.weight_precision is Precision.BF16

    def test_pasted_together_under_one_key_it_is_found(self) -> None:
        cfg = config("llama-3.1-70b-instruct-fp8") | {
            "hf_quant_config": config("llama-3.1-70b-instruct-fp8.hf_quant_config")
        }
        m = model_from_hf_config(cfg)
        assert m.checkpoint is not None and m.checkpoint.precision is Precision.FP8

    def test_nano_nvfp4_keeps_only_the_listed_mamba_layers_16_bit(self) -> None:
        m = model_from_hf_config(
            config("nemotron-3-nano-30b-a3b-nvfp4"),
            hf_quant_config=config("nemotron-3-nano-30b-a3b-nvfp4.hf_quant_config"),
        )
        assert m.checkpoint is not None and m.checkpoint.precision is Precision.FP4
        groups = dict(m.checkpoint.group_precisions)
        assert groups["attention"] == "BF16"
        assert groups["linear_attention"] == "FP4 (BF16 in 6 of 23 layers)"
        assert groups["experts"] == "FP4"
        assert m.checkpoint.weight_bytes / 1e9 == pytest.approx(19.3, abs=0.2)

    def test_an_hf_quant_config_without_a_config_is_refused(self) -> None:
        model = {"hf_quant_config": config("llama-3.1-70b-instruct-fp8.hf_quant_config")}
        with pytest.raises(EngineInputError) as exc:
            parse_estimate_request(body(model | {"preset": "llama-3.1-70b"}), known_gpus=KNOWN)
        assert exc.value.field == "model.hf_quant_config"


class TestActiveParameterConvention:
    def test_gpt_oss_120b_reproduces_the_cards_5_13b(self) -> None:
        m = model_from_hf_config(config("gpt-oss-120b"))
        summary = model_summary(m, Precision.FP4, Precision.BF16)
        assert summary.active_params_billion == pytest.approx(5.13, abs=0.01)
        assert summary.active_params_with_embeddings_billion == pytest.approx(5.71, abs=0.01)


class TestLayoutAsked:
    def test_an_asked_layout_is_the_one_evaluated(self) -> None:
        req = parse_estimate_request(
            body(
                {"preset": "deepseek-r1"},
                weight_precision="FP8",
                layout="DEP8",
                gpus=["h200-sxm-141gb"],
            ),
            known_gpus=KNOWN,
        )
        (e,) = estimate(req, GPUS)
        assert e.layout == "DEP8" and e.gpu_count == 8
        assert any("as the request asked" in n for n in e.notes)

    def test_a_layout_the_model_cannot_use_is_refused_naming_layout(self) -> None:
        req = parse_estimate_request(
            body({"preset": "llama-3.1-70b"}, layout="DEP8"), known_gpus=KNOWN
        )
        with pytest.raises(EngineInputError) as exc:
            estimate(req, GPUS)
        assert exc.value.field == "layout"

    @pytest.mark.parametrize("text", ["TP3x", "XX8", "TP2xDEP4"])
    def test_a_malformed_layout_is_refused(self, text: str) -> None:
        with pytest.raises(EngineInputError) as exc:
            parse_estimate_request(body({"preset": "llama-3.1-8b"}, layout=text), known_gpus=KNOWN)
        assert exc.value.field == "layout"

    def test_a_layout_and_a_different_gpu_count_are_refused(self) -> None:
        with pytest.raises(EngineInputError, match="gpu_count"):
            parse_estimate_request(
                body({"preset": "llama-3.1-8b"}, layout="TP2", gpu_count=4), known_gpus=KNOWN
            )


class TestKernelBasis:
    def _notes(self, slug: str) -> tuple[str, ...]:
        req = parse_estimate_request(
            body({"preset": "qwen3-30b-a3b"}, gpus=[slug], gpu_count=1), known_gpus=KNOWN
        )
        (e,) = estimate(req, GPUS)
        return e.notes

    def test_a_gpu_with_measured_kernels_says_so_naming_the_source(self) -> None:
        notes = self._notes("h100-sxm5-80gb")
        assert any("measured (NVIDIA AIConfigurator" in n and "h100_sxm" in n for n in notes)

    def test_a_gpu_without_them_says_it_uses_the_architecture_constants(self) -> None:
        notes = self._notes("l4-24gb")
        assert any("per-architecture constants (ADA" in n for n in notes)
