"""parse_estimate_request and model_from_hf_config: bad input names its field, nothing else
raises."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.engine import (
    PRESETS,
    EngineInputError,
    Precision,
    WorkloadType,
    model_from_hf_config,
    parse_estimate_request,
)

KNOWN = {"h100-sxm5-80gb", "l40s-48gb"}


def body(**overrides: Any) -> dict[str, Any]:
    b: dict[str, Any] = {
        "workload_type": "REALTIME_INFERENCE",
        "model": {"preset": "llama-3.1-8b"},
        "weight_precision": "FP8",
        "kv_cache_precision": "FP8",
        "input_tokens": {"p50": 1000, "p95": 4000},
        "output_tokens": {"p50": 200, "p95": 800},
        "concurrency": 32,
        "latency_target": {"ttft_p95_ms": 500, "itl_p95_ms": 50},
        "gpus": ["h100-sxm5-80gb", "l40s-48gb"],
        "gpu_count": 2,
    }
    b.update(overrides)
    return {k: v for k, v in b.items() if v is not ...}


class TestParseEstimateRequest:
    def test_parses_the_design_example(self) -> None:
        r = parse_estimate_request(body(), known_gpus=KNOWN)
        assert r.workload_type is WorkloadType.REALTIME_INFERENCE
        assert r.model is PRESETS["llama-3.1-8b"]
        assert r.weight_precision is Precision.FP8
        assert (r.input_tokens_p50, r.input_tokens_p95) == (1000, 4000)
        assert r.gpus == ("h100-sxm5-80gb", "l40s-48gb") and r.gpu_count == 2
        assert r.ttft_p95_ms == 500 and r.itl_p95_ms == 50

    def test_parses_a_training_block(self) -> None:
        r = parse_estimate_request(
            body(
                workload_type="LORA_FINETUNE",
                training={
                    "sequence_length": 2048,
                    "tokens": 1e8,
                    "optimizer": "ADAMW",
                    "sharding": "ZERO3",
                    "activation_checkpointing": True,
                    "lora_rank": 16,
                },
            ),
            known_gpus=KNOWN,
        )
        assert r.training is not None and r.training.lora_rank == 16

    @pytest.mark.parametrize(
        ("overrides", "field"),
        [
            ({"model": {"preset": "llama-9"}}, "model.preset"),
            ({"model": {"hf_config": "nope"}}, "model.hf_config"),
            ({"model": {"hf_config": {"model_type": "llama"}}}, "model.hf_config"),
            ({"model": 3}, "model"),
            ({"input_tokens": {"p50": 1000, "p95": 10}}, "input_tokens.p95"),
            ({"input_tokens": {"p50": -5, "p95": 10}}, "input_tokens.p50"),
            ({"input_tokens": {"p50": 0}}, "input_tokens.p50"),
            ({"output_tokens": {"p50": 20_000_000}}, "output_tokens.p50"),
            ({"input_tokens": {"p50": "many"}}, "input_tokens.p50"),
            ({"input_tokens": ...}, "input_tokens"),
            ({"workload_type": "DREAMING"}, "workload_type"),
            ({"workload_type": ...}, "workload_type"),
            ({"weight_precision": "FP3"}, "weight_precision"),
            ({"gpus": ["h100-sxm5-80gb", "tpu-v5"]}, "gpus[1]"),
            ({"gpus": []}, "gpus"),
            ({"gpu_count": 0}, "gpu_count"),
            ({"gpu_count": 10_000}, "gpu_count"),
            ({"gpu_count": True}, "gpu_count"),
            ({"concurrency": 1.5}, "concurrency"),
            ({"latency_target": {"ttft_p95_ms": -1}}, "latency_target.ttft_p95_ms"),
            ({"training": {"sequence_length": 2048}}, "training"),
            ({"workload_type": "TRAINING"}, "training"),
            (
                {"workload_type": "TRAINING", "training": {"optimizer": "MAGIC"}},
                "training.optimizer",
            ),
            ({"requests_per_second": float("nan")}, "requests_per_second"),
            ({"workload_type": "IMAGE_GENERATION"}, "model"),
            ({"framework_version": "latest"}, "framework_version"),
            ({"framework_version": 11}, "framework_version"),
            ({"framework_version": "0.11.0; rm"}, "framework_version"),
            ({"framework_version": "1" * 40}, "framework_version"),
        ],
    )
    def test_bad_input_names_the_field(self, overrides: dict[str, Any], field: str) -> None:
        with pytest.raises(EngineInputError) as err:
            parse_estimate_request(body(**overrides), known_gpus=KNOWN)
        assert err.value.field == field

    @pytest.mark.parametrize(
        ("given", "kept"),
        [
            ("0.11.0", "0.11.0"),
            ("v0.10.2", "0.10.2"),
            ("1.3.0rc20", "1.3.0rc20"),
            ("0.5.6.post2", "0.5.6.post2"),
            ("0.7.4.dev181+gf35f8e22", "0.7.4.dev181+gf35f8e22"),
        ],
    )
    def test_framework_version_is_kept_as_a_release(self, given: str, kept: str) -> None:
        r = parse_estimate_request(body(framework_version=given), known_gpus=KNOWN)
        assert r.framework_version == kept
        assert parse_estimate_request(body(), known_gpus=KNOWN).framework_version is None

    def test_non_dict_body_is_rejected(self) -> None:
        with pytest.raises(EngineInputError) as err:
            parse_estimate_request([1, 2], known_gpus=KNOWN)
        assert err.value.field == "body"

    @settings(max_examples=300, deadline=None)
    @given(
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
            lambda children: (
                st.lists(children, max_size=4)
                | st.dictionaries(st.text(max_size=12), children, max_size=4)
            ),
            max_leaves=20,
        )
    )
    def test_random_json_raises_only_engine_input_error(self, data: Any) -> None:
        with contextlib.suppress(EngineInputError):
            parse_estimate_request(data, known_gpus=KNOWN)

    @settings(max_examples=300, deadline=None)
    @given(
        st.dictionaries(
            st.sampled_from(
                [
                    "workload_type",
                    "model",
                    "weight_precision",
                    "input_tokens",
                    "output_tokens",
                    "concurrency",
                    "gpus",
                    "gpu_count",
                    "training",
                    "latency_target",
                    "image",
                    "video",
                    "hours_per_month",
                ]
            ),
            st.recursive(
                st.none()
                | st.booleans()
                | st.integers()
                | st.floats()
                | st.text(max_size=12)
                | st.sampled_from(["REALTIME_INFERENCE", "TRAINING", "FP8", "llama-3.1-8b"]),
                lambda ch: (
                    st.lists(ch, max_size=3)
                    | st.dictionaries(
                        st.sampled_from(
                            ["p50", "p95", "preset", "hf_config", "layers", "width", "tokens"]
                        ),
                        ch,
                        max_size=3,
                    )
                ),
                max_leaves=10,
            ),
        )
    )
    def test_near_valid_json_raises_only_engine_input_error(self, data: Any) -> None:
        with contextlib.suppress(EngineInputError):
            parse_estimate_request(data, known_gpus=KNOWN)


class TestModelFromHfConfig:
    LLAMA_3_1_8B = {
        "model_type": "llama",
        "num_hidden_layers": 32,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "intermediate_size": 14336,
        "vocab_size": 128256,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": False,
    }

    def test_llama_config_matches_the_preset(self) -> None:
        m = model_from_hf_config(self.LLAMA_3_1_8B)
        assert m.params_billion == pytest.approx(PRESETS["llama-3.1-8b"].params_billion)
        assert m.kv_heads == 8

    def test_mixtral_config_counts_experts(self) -> None:
        m = model_from_hf_config(
            {
                **self.LLAMA_3_1_8B,
                "model_type": "mixtral",
                "vocab_size": 32000,
                "num_local_experts": 8,
                "num_experts_per_tok": 2,
            }
        )
        assert m.params_billion == pytest.approx(46.7, abs=0.1)
        assert m.active_params / 1e9 == pytest.approx(12.9, abs=0.1)

    def test_deepseek_v3_config_uses_mla(self) -> None:
        cfg = {
            "model_type": "deepseek_v3",
            "num_hidden_layers": 61,
            "hidden_size": 7168,
            "num_attention_heads": 128,
            "num_key_value_heads": 128,
            "intermediate_size": 18432,
            "moe_intermediate_size": 2048,
            "n_routed_experts": 256,
            "num_experts_per_tok": 8,
            "n_shared_experts": 1,
            "first_k_dense_replace": 3,
            "q_lora_rank": 1536,
            "kv_lora_rank": 512,
            "qk_rope_head_dim": 64,
            "qk_nope_head_dim": 128,
            "v_head_dim": 128,
            "vocab_size": 129280,
        }
        m = model_from_hf_config(cfg)
        assert m.params_billion == pytest.approx(671, abs=1) and m.kv_lora_rank == 512

    def test_gptj_and_bert_configs(self) -> None:
        gptj = model_from_hf_config(
            {
                "model_type": "gptj",
                "n_layer": 28,
                "n_embd": 4096,
                "n_head": 16,
                "vocab_size": 50400,
                "n_positions": 2048,
            }
        )
        assert gptj.params_billion == pytest.approx(6.05, abs=0.05)
        bert = model_from_hf_config(
            {
                "model_type": "bert",
                "num_hidden_layers": 24,
                "hidden_size": 1024,
                "num_attention_heads": 16,
                "intermediate_size": 4096,
                "vocab_size": 30522,
                "max_position_embeddings": 512,
            }
        )
        assert bert.params_billion == pytest.approx(0.335, abs=0.01)

    def test_bad_value_names_the_key(self) -> None:
        with pytest.raises(EngineInputError) as err:
            model_from_hf_config({**self.LLAMA_3_1_8B, "hidden_size": "big"})
        assert err.value.field == "hf_config.hidden_size"
