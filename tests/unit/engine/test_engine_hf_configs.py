"""Today's models read from their published config.json (tests/data/hf_configs, see SOURCES.md):
quantized checkpoints, per-layer attention types, MoE layouts, nested multimodal configs."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.engine import PRESETS, EngineInputError, estimate, parse_estimate_request
from apps.engine.hf_config import model_from_hf_config
from apps.engine.memory import KvCost, kv_bytes_per_token, kv_cost
from apps.engine.performance import model_coefficients
from apps.engine.precision import weight_bytes
from apps.engine.quantization import checkpoint_bytes, scheme_from_config
from apps.engine.shapes import Shape, param_groups
from apps.engine.types import ModelSpec, Precision
from tests.unit.engine.engine_catalog import load_gpus

CONFIGS = Path(__file__).resolve().parents[2] / "data" / "hf_configs"
KNOWN = {g.slug for g in load_gpus()}
GB = 1e9


@cache
def _raw(name: str) -> str:
    return (CONFIGS / f"{name}.json").read_text()


def config(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(_raw(name))
    return loaded


def model(name: str) -> ModelSpec:
    return model_from_hf_config(config(name))


def request(cfg: dict[str, Any], **extra: Any) -> Any:
    body = {
        "workload_type": "REALTIME_INFERENCE",
        "model": {"hf_config": cfg},
        "input_tokens": {"p50": 2000},
        "output_tokens": {"p50": 500},
        **extra,
    }
    return parse_estimate_request(body, known_gpus=KNOWN)


class TestQuantizedCheckpoints:
    def test_deepseek_r1_without_weight_precision_is_sized_fp8(self) -> None:
        req = request(config("deepseek-r1"))
        assert req.weight_precision is Precision.FP8
        # 669B quantized linear weights at 1 byte + an FP32 scale per 128x128 block, plus
        # 1.85B embedding/lm_head and the routers at 16 bits: ~673 GB (was 1,342 GB).
        assert weight_bytes(req.model, req.weight_precision) / GB == pytest.approx(673, rel=0.01)
        assert any("quantization_config" in n and "FP8" in n for n in req.model.notes)

    def test_explicit_weight_precision_wins_and_is_noted(self) -> None:
        req = request(config("deepseek-r1"), weight_precision="BF16")
        assert req.weight_precision is Precision.BF16
        assert weight_bytes(req.model, Precision.BF16) / GB == pytest.approx(1342, rel=0.01)
        assert any("overrides the checkpoint" in n for n in req.model.notes)

    def test_gpt_oss_120b_mxfp4_keeps_attention_router_embeddings_16bit(self) -> None:
        req = request(config("gpt-oss-120b"))
        assert req.weight_precision is Precision.FP4
        m = req.model
        # experts 114.7B x 4.25 bits = 60.9 GB; attention 0.96B, embeddings + lm_head 1.16B,
        # router and norms at 16 bits = 4.3 GB: ~65 GB (was 234 GB at BF16).
        assert weight_bytes(m, Precision.FP4) / GB == pytest.approx(65.2, rel=0.01)
        assert m.checkpoint is not None and "attention" in m.checkpoint.label

    def test_decode_reads_each_group_at_its_own_precision(self) -> None:
        m = model("gpt-oss-120b")
        mc = model_coefficients(m, Precision.FP4, Precision.BF16)
        # streamed every step: attention 0.96B + lm_head 0.58B + router/norms, all BF16
        assert mc.dense_bytes / GB == pytest.approx(3.1, rel=0.03)
        # one routed expert across the 36 layers: 36 x 3 x 2880^2 weights at 4.25 bits
        assert mc.expert_bytes == pytest.approx(36 * 3 * 2880**2 * (0.5 + 1 / 32), rel=1e-9)

    def test_torch_dtype_is_used_without_either_and_said(self) -> None:
        cfg = {**config("qwen3-30b-a3b"), "torch_dtype": "float32"}
        req = request(cfg)
        assert req.weight_precision is Precision.FP32
        assert any("torch_dtype" in n or "dtype" in n for n in req.model.notes)

    def test_the_estimate_carries_the_notes(self) -> None:
        req = request(config("gpt-oss-120b"), gpus=["h100-sxm5-80gb"])
        (e,) = estimate(req, load_gpus())
        assert e.fits and e.gpu_count == 1
        assert any("MXFP4" in n for n in e.notes)
        assert any("18 windowed (128 tokens)" in n for n in e.notes)

    @pytest.mark.parametrize(
        ("q", "precision", "bytes_per_param"),
        [
            ({"quant_method": "fp8"}, Precision.FP8, 1.0),
            (
                {"quant_method": "fp8", "weight_block_size": [128, 128]},
                Precision.FP8,
                1 + 4 / 16384,
            ),
            ({"quant_method": "mxfp4"}, Precision.FP4, 0.5 + 1 / 32),
            ({"quant_method": "modelopt", "quant_algo": "NVFP4"}, Precision.FP4, 0.5 + 1 / 16),
            ({"quant_algo": "FP8", "exclude_modules": ["lm_head"]}, Precision.FP8, 1.0),
            (
                {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True},
                Precision.INT4,
                0.5 + 2.5 / 128,
            ),
            (
                {"quant_method": "gptq", "bits": 4, "group_size": 32},
                Precision.INT4,
                0.5 + 2.5 / 32,
            ),
            ({"quant_method": "gptq", "bits": 8, "group_size": -1}, Precision.INT8, 1.0),
            (
                {
                    "quant_method": "compressed-tensors",
                    "config_groups": {
                        "group_0": {
                            "targets": ["Linear"],
                            "weights": {"num_bits": 8, "type": "float", "strategy": "channel"},
                        }
                    },
                    "ignore": ["lm_head"],
                },
                Precision.FP8,
                1.0,
            ),
            (
                {
                    "quant_method": "compressed-tensors",
                    "config_groups": {
                        "group_0": {
                            "weights": {
                                "num_bits": 4,
                                "type": "float",
                                "strategy": "tensor_group",
                                "group_size": 16,
                            }
                        }
                    },
                },
                Precision.FP4,
                0.5 + 1 / 16,
            ),
            (
                {
                    "quant_method": "compressed-tensors",
                    "config_groups": {
                        "group_0": {
                            "weights": {
                                "num_bits": 4,
                                "type": "int",
                                "strategy": "group",
                                "group_size": 128,
                                "symmetric": True,
                            }
                        }
                    },
                },
                Precision.INT4,
                0.5 + 2 / 128,
            ),
            (
                {"quant_method": "bitsandbytes", "load_in_4bit": True},
                Precision.INT4,
                (4 + 32 / 64) / 8,
            ),
            ({"quant_method": "bitsandbytes", "load_in_8bit": True}, Precision.INT8, 1.0),
        ],
    )
    def test_each_scheme_stores_its_bits_plus_scales(
        self, q: dict[str, Any], precision: Precision, bytes_per_param: float
    ) -> None:
        scheme = scheme_from_config(q, "q")
        assert scheme is not None
        assert scheme.precision is precision
        assert scheme.bytes_per_param == pytest.approx(bytes_per_param)

    def test_ignored_modules_stay_16bit(self) -> None:
        base = {"quant_method": "fp8"}
        plain = model_from_hf_config({**config("qwen3-30b-a3b"), "quantization_config": base})
        attn_kept = model_from_hf_config(
            {
                **config("qwen3-30b-a3b"),
                "quantization_config": {**base, "ignored_layers": ["re:.*self_attn.*"]},
            }
        )
        assert plain.checkpoint is not None and attn_kept.checkpoint is not None
        groups = param_groups(_QWEN3_30B_SHAPE)
        # Attention moves from 1 byte to 2 bytes per weight.
        extra = attn_kept.checkpoint.weight_bytes - plain.checkpoint.weight_bytes
        assert extra == pytest.approx(groups.attention, rel=1e-6)

    def test_unknown_method_is_noted_not_guessed(self) -> None:
        m = model_from_hf_config(
            {**config("qwen3-30b-a3b"), "quantization_config": {"quant_method": "hqq"}}
        )
        assert m.checkpoint is None
        assert any("'hqq' is not read" in n for n in m.notes)


_QWEN3_30B_SHAPE = Shape(
    layers=48,
    hidden=2048,
    heads=32,
    kv_heads=4,
    head_dim=128,
    vocab=151936,
    intermediate=6144,
    experts=128,
    active_experts=8,
    moe_intermediate=768,
)


class TestAttentionPerLayer:
    def test_gpt_oss_half_its_layers_hold_128_tokens(self) -> None:
        m = model("gpt-oss-120b")
        # 18 full layers x 2 x 8 KV heads x 64 x 2 bytes (was all 36 layers: 73.7 KB)
        assert kv_bytes_per_token(m, Precision.BF16) == 18 * 2 * 8 * 64 * 2 == 36_864
        kv = kv_cost(m, Precision.BF16, 1)
        assert kv.sequence_bytes(100_000) == pytest.approx(36_864 * 100_000 + 36_864 * 128)

    def test_gemma_3_27b_is_read_from_its_nested_config(self) -> None:
        m = model("gemma-3-27b-it")
        assert m.vocab_size == 262_208 and m.tied_embeddings  # Gemma3TextConfig defaults
        layout = m.attention
        assert layout is not None and layout == PRESETS["gemma-3-27b"].attention
        assert (layout.full_layers, layout.window_layers, layout.window) == (10, 52, 1024)
        per_layer = 2 * 16 * 128 * 2
        kv = kv_cost(m, Precision.BF16, 1)
        assert kv.sequence_bytes(32_768) == 10 * per_layer * 32_768 + 52 * per_layer * 1024
        # 27.0B text + ~0.4B SigLIP vision tower
        assert m.params_billion == pytest.approx(27.4, abs=0.3)

    def test_llama_4_chunked_layers_hold_one_chunk(self) -> None:
        m = model("llama-4-scout-17b-16e-instruct")
        assert m.attention is not None
        assert (m.attention.full_layers, m.attention.window_layers) == (12, 36)
        assert m.attention.window == 8192

    def test_qwen3_next_kv_only_for_its_12_full_attention_layers(self) -> None:
        m = model("qwen3-next-80b-a3b-instruct")
        assert m.attention is not None
        assert (m.attention.full_layers, m.attention.linear_layers) == (12, 36)
        assert kv_bytes_per_token(m, Precision.BF16) == 12 * 2 * 2 * 256 * 2
        # Gated DeltaNet state: 32 value heads x 128 x 128 + conv 8192 x 3, at 16 bits
        assert m.attention.state_bytes == 36 * (32 * 128 * 128 + 8192 * 3) * 2

    def test_longest_context_and_decode_read_follow_the_layers(self) -> None:
        body = {"gpus": ["h100-sxm5-80gb"], "gpu_count": 1, "weight_precision": "FP4"}
        windowed = request(config("gpt-oss-120b"), **body)
        all_full_cfg = {**config("gpt-oss-120b")}
        all_full_cfg["layer_types"] = ["full_attention"] * 36
        all_full = request(all_full_cfg, **body)
        (w,) = estimate(windowed, load_gpus())
        (f,) = estimate(all_full, load_gpus())
        assert w.memory.kv_cache_gb < f.memory.kv_cache_gb
        assert w.max_concurrency > f.max_concurrency
        assert w.performance.itl_ms is not None and f.performance.itl_ms is not None
        assert w.performance.itl_ms <= f.performance.itl_ms

    def test_qwen2_sliding_window_from_max_window_layers(self) -> None:
        cfg = {
            **config("qwen2-57b-a14b"),
            "use_sliding_window": True,
            "sliding_window": 4096,
            "max_window_layers": 20,
        }
        m = model_from_hf_config(cfg)
        assert m.attention is not None and m.attention.window_layers == 8


class TestMoeLayouts:
    # Model cards: DeepSeek-V3 report (671B / 37B); gpt-oss model card (116.8B / 5.13B and
    # 20.9B / 3.61B, active counted without the input embedding); Meta Llama 4 card (109B / 17B,
    # 400B / 17B); Qwen3 (30.5B / 3.3B, 235B / 22B); Qwen2 (57B / 14B); Qwen3-Next (80B / 3B).
    @pytest.mark.parametrize(
        ("name", "total", "active"),
        [
            ("deepseek-r1", 671, 37),
            ("llama-4-scout-17b-16e-instruct", 109, 17),
            ("llama-4-maverick-17b-128e-instruct", 400, 17),
            ("qwen3-30b-a3b", 30.5, 3.3),
            ("qwen3-235b-a22b", 235, 22),
            ("qwen2-57b-a14b", 57, 14),
        ],
    )
    def test_total_and_active_match_the_model_card(
        self, name: str, total: float, active: float
    ) -> None:
        m = model(name)
        assert m.params_billion == pytest.approx(total, rel=0.03)
        assert m.active_params / GB == pytest.approx(active, rel=0.03)

    @pytest.mark.parametrize(
        ("name", "total", "active"), [("gpt-oss-120b", 116.8, 5.13), ("gpt-oss-20b", 20.9, 3.61)]
    )
    def test_gpt_oss_matches_the_card_which_leaves_out_the_input_embedding(
        self, name: str, total: float, active: float
    ) -> None:
        m = model(name)
        assert m.params_billion == pytest.approx(total, rel=0.02)
        input_embedding = m.vocab_size * m.hidden_size
        assert (m.active_params - input_embedding) / GB == pytest.approx(active, rel=0.02)

    def test_qwen3_next_80b_a3b(self) -> None:
        m = model("qwen3-next-80b-a3b-instruct")
        assert m.params_billion == pytest.approx(80, rel=0.03)
        # "A3B" is rounded: 3.25B active without the embeddings, 3.87B with both.
        embeddings = 2 * m.vocab_size * m.hidden_size
        assert (m.active_params - embeddings) / GB == pytest.approx(3.0, rel=0.1)

    def test_jamba_mamba_hybrid(self) -> None:
        # ai21labs/Jamba-v0.1 config.json: attention on 1 layer in 8, MoE on every other layer;
        # model card: 52B total, 12B active.
        m = model_from_hf_config(
            {
                "model_type": "jamba",
                "hidden_size": 4096,
                "intermediate_size": 14336,
                "num_hidden_layers": 32,
                "num_attention_heads": 32,
                "num_key_value_heads": 8,
                "num_experts": 16,
                "num_experts_per_tok": 2,
                "attn_layer_period": 8,
                "attn_layer_offset": 4,
                "expert_layer_period": 2,
                "expert_layer_offset": 1,
                "mamba_d_state": 16,
                "mamba_d_conv": 4,
                "mamba_expand": 2,
                "mamba_dt_rank": 256,
                "vocab_size": 65536,
                "tie_word_embeddings": False,
                "max_position_embeddings": 262144,
            }
        )
        assert m.params_billion == pytest.approx(52, rel=0.03)
        assert m.active_params / GB == pytest.approx(12, rel=0.03)
        assert m.attention is not None
        assert (m.attention.full_layers, m.attention.linear_layers) == (4, 28)
        # Mamba state: d_inner 8192 x (d_state 16 + conv 3) per layer, 16-bit
        assert m.attention.state_bytes == 28 * 8192 * (16 + 3) * 2

    def test_maverick_interleaves_dense_and_moe_layers(self) -> None:
        cfg = config("llama-4-maverick-17b-128e-instruct")
        listed = {
            **cfg,
            "text_config": {**cfg["text_config"], "moe_layers": list(range(1, 48, 2))},
        }
        assert model_from_hf_config(listed).params_billion == pytest.approx(
            model_from_hf_config(cfg).params_billion
        )

    def test_deepseek_first_dense_layers_and_layer_freq(self) -> None:
        every_other = model_from_hf_config({**config("deepseek-r1"), "moe_layer_freq": 2})
        assert every_other.params_billion < model("deepseek-r1").params_billion * 0.6

    def test_mlp_only_layers_are_dense(self) -> None:
        cfg = {**config("qwen3-30b-a3b"), "mlp_only_layers": [0, 1]}
        assert model_from_hf_config(cfg).params_billion < model("qwen3-30b-a3b").params_billion


class TestConfigsAsPublished:
    def test_unknown_model_type_with_enough_numbers_works(self) -> None:
        cfg = {**config("mistral-small-24b-instruct-2501"), "model_type": "brand_new_lm"}
        m = model_from_hf_config(cfg)
        assert m.params_billion == pytest.approx(23.6, abs=0.1)

    @pytest.mark.parametrize(
        ("change", "field"),
        [
            (
                {"quantization_config": {"quant_method": "fp8", "weight_block_size": [128]}},
                "hf_config.quantization_config.weight_block_size",
            ),
            (
                {"quantization_config": {"quant_method": "awq", "bits": "four"}},
                "hf_config.quantization_config.bits",
            ),
            (
                {"quantization_config": {"quant_method": "gptq", "bits": 3}},
                "hf_config.quantization_config.bits",
            ),
            (
                {"quantization_config": {"quant_method": "fp8", "ignore": "lm_head"}},
                "hf_config.quantization_config.ignore",
            ),
            ({"quantization_config": "fp8"}, "hf_config.quantization_config"),
            ({"layer_types": ["full_attention"] * 3}, "hf_config.layer_types"),
            ({"layer_types": ["mystery"] * 48}, "hf_config.layer_types[0]"),
            ({"mlp_only_layers": "none"}, "hf_config.mlp_only_layers"),
            ({"torch_dtype": "float7"}, "hf_config.torch_dtype"),
            ({"vocab_size": None}, "hf_config"),
        ],
    )
    def test_bad_fields_are_named(self, change: dict[str, Any], field: str) -> None:
        cfg = {**config("qwen3-30b-a3b"), **change}
        if change.get("vocab_size", 0) is None:
            cfg["model_type"] = "brand_new_lm"  # no per-model_type default to fall back on
        with pytest.raises(EngineInputError) as err:
            model_from_hf_config(cfg)
        assert err.value.field == field

    def test_nested_config_without_layers_names_it(self) -> None:
        cfg = config("gemma-3-27b-it")
        broken = {
            **cfg,
            "text_config": {
                k: v for k, v in cfg["text_config"].items() if k != "num_hidden_layers"
            },
        }
        with pytest.raises(EngineInputError) as err:
            model_from_hf_config(broken)
        assert "num_hidden_layers" in err.value.message


class TestPresets:
    @pytest.mark.parametrize(
        ("preset", "fixture"),
        [
            ("deepseek-r1", "deepseek-r1"),
            ("gpt-oss-20b", "gpt-oss-20b"),
            ("gpt-oss-120b", "gpt-oss-120b"),
            ("qwen3-next-80b-a3b", "qwen3-next-80b-a3b-instruct"),
            ("llama-4-scout", "llama-4-scout-17b-16e-instruct"),
            ("llama-4-maverick", "llama-4-maverick-17b-128e-instruct"),
            ("gemma-3-27b", "gemma-3-27b-it"),
            ("mistral-small-3", "mistral-small-24b-instruct-2501"),
            ("qwen3-30b-a3b", "qwen3-30b-a3b"),
            ("qwen3-235b-a22b", "qwen3-235b-a22b"),
        ],
    )
    def test_preset_equals_its_published_config(self, preset: str, fixture: str) -> None:
        p, m = PRESETS[preset], model(fixture)
        assert p.params_billion == pytest.approx(m.params_billion, rel=1e-9)
        assert p.active_params == pytest.approx(m.active_params, rel=1e-9)
        assert p.attention == m.attention
        for precision in (Precision.BF16, Precision.FP8, Precision.FP4):
            assert weight_bytes(p, precision) == pytest.approx(weight_bytes(m, precision))

    def test_phi_4_and_qwen3_dense_presets_exist(self) -> None:
        assert {"phi-4", "qwen3-4b", "qwen3-8b", "qwen3-14b", "qwen3-32b"} <= set(PRESETS)
        assert PRESETS["qwen3-14b"].params_billion == pytest.approx(14.8, abs=0.1)


# --- Properties ----------------------------------------------------------------------------------

_shapes = st.builds(
    lambda layers, hidden, heads_pow, kv_div, experts, window_frac, linear_frac, window: Shape(
        layers=layers,
        hidden=hidden * 64,
        heads=2**heads_pow,
        kv_heads=max(1, 2**heads_pow // kv_div),
        head_dim=128,
        vocab=32000,
        intermediate=hidden * 64 * 3,
        experts=experts,
        active_experts=min(2, experts),
        window=window,
        window_layers=int(layers * window_frac),
        linear_layers=int((layers - int(layers * window_frac)) * linear_frac),
        linear_params=float(hidden * 64 * hidden * 64 * 4),
        linear_state=float(32 * 128 * 128),
    ),
    st.integers(1, 96),
    st.integers(8, 128),
    st.integers(2, 7),
    st.sampled_from([1, 2, 4, 8]),
    st.sampled_from([1, 8, 64]),
    st.floats(0, 1),
    st.floats(0, 1),
    st.integers(1, 65536),
)


def _all_full(s: Shape) -> Shape:
    return Shape(
        layers=s.layers,
        hidden=s.hidden,
        heads=s.heads,
        kv_heads=s.kv_heads,
        head_dim=s.head_dim,
        vocab=s.vocab,
        intermediate=s.intermediate,
        experts=s.experts,
        active_experts=s.active_experts,
    )


def _spec(s: Shape) -> ModelSpec:
    from apps.engine.presets import decoder

    return decoder("p", s, max_context=1_000_000)


@settings(max_examples=150, deadline=None)
@given(_shapes, st.integers(1, 2_000_000), st.sampled_from([1, 2, 8]))
def test_a_window_never_increases_kv(s: Shape, context: int, tp: int) -> None:
    windowed = kv_cost(_spec(s), Precision.BF16, tp)
    full = kv_cost(_spec(_all_full(s)), Precision.BF16, tp)
    if s.linear_layers == 0:  # a linear layer trades a growing cache for a constant state
        assert windowed.sequence_bytes(context) <= full.sequence_bytes(context) + 1e-6
        room = full.sequence_bytes(context)
        assert windowed.max_context(room) >= context * (1 - 1e-9)
    # the inverse: the longest context that fits in `room` does fit, and one more token does not
    room = windowed.sequence_bytes(context)
    longest = windowed.max_context(room)
    assert longest >= context * (1 - 1e-9)
    if longest != float("inf"):
        assert windowed.sequence_bytes(longest) <= room * (1 + 1e-9)


def test_a_cache_of_windowed_layers_only_is_bounded_from_a_full_window_on() -> None:
    # Found by hypothesis: with room for exactly one full window, every longer context fits.
    kv = KvCost(per_token=0.0, window=1.0, window_per_token=8.0, per_sequence=0.0)
    assert kv.sequence_bytes(2) == 8.0
    assert kv.max_context(8.0) == float("inf")
    assert kv.max_context(4.0) == 0.5


_schemes = st.sampled_from(
    [
        {"quant_method": "fp8"},
        {"quant_method": "fp8", "weight_block_size": [128, 128]},
        {"quant_method": "mxfp4", "modules_to_not_convert": ["self_attn", "lm_head"]},
        {"quant_method": "modelopt", "quant_algo": "NVFP4"},
        {"quant_method": "awq", "bits": 4, "group_size": 32},
        {"quant_method": "gptq", "bits": 8, "group_size": 128},
        {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_use_double_quant": True},
        {"quant_method": "fbgemm_fp8", "modules_to_not_convert": ["re:.*experts.*"]},
    ]
)


@settings(max_examples=150, deadline=None)
@given(_shapes, _schemes)
def test_quantizing_never_increases_weights(s: Shape, q: dict[str, Any]) -> None:
    scheme = scheme_from_config(q, "q")
    assert scheme is not None
    groups = param_groups(s)
    stored = checkpoint_bytes(groups, scheme)
    assert stored <= groups.total * 2.0 * (1 + 1e-12)
    assert stored >= groups.total * 0.5  # nothing is stored below 4 bits
