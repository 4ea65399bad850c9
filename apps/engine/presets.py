"""Real model architectures, keyed by their common name (lowercase, dashes).

Shapes are copied from each model's Hugging Face config.json (repository named per entry);
parameter counts are computed from those shapes by `shapes.count_params`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from apps.engine.constants import DIFFUSION_FLOPS_PER_STEP_1MP
from apps.engine.quantization import checkpoint_weights, scheme_from_config
from apps.engine.shapes import (
    Shape,
    attention_layout,
    count_params,
    gated_deltanet,
    group_layer_counts,
    lora_in_out,
    param_groups,
    vit_params,
)
from apps.engine.types import CheckpointWeights, ModelKind, ModelSpec, Precision


def decoder(
    name: str,
    shape: Shape,
    *,
    max_context: int,
    checkpoint: CheckpointWeights | None = None,
    native_precision: Precision | None = None,
    notes: tuple[str, ...] = (),
) -> ModelSpec:
    total, active = count_params(shape)
    return ModelSpec(
        name=name,
        params_billion=total / 1e9,
        active_params_billion=active / 1e9,
        layers=shape.layers,
        hidden_size=shape.hidden,
        attention_heads=shape.heads,
        kv_heads=shape.kv_heads,
        head_dim=shape.head_dim,
        vocab_size=shape.vocab,
        intermediate_size=shape.moe_intermediate or shape.intermediate,
        experts=shape.experts,
        active_experts=shape.active_experts,
        tied_embeddings=shape.tied_embeddings,
        kv_lora_rank=shape.kv_lora_rank,
        qk_rope_head_dim=shape.qk_rope_head_dim if shape.kv_lora_rank is not None else None,
        max_context_tokens=max_context,
        kind=ModelKind.DECODER,
        attention=attention_layout(shape),
        checkpoint=checkpoint,
        native_precision=native_precision,
        notes=notes,
        lora_in_out=lora_in_out(shape),
    )


def _llama(
    layers: int, hidden: int, heads: int, kv: int, inter: int, vocab: int, **kw: object
) -> Shape:
    head_dim = kw.pop("head_dim", hidden // heads)
    return Shape(
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv,
        head_dim=int(head_dim),  # type: ignore[call-overload]
        vocab=vocab,
        intermediate=inter,
        **kw,  # type: ignore[arg-type]
    )


def _checkpoint(shape: Shape, quantization_config: dict[str, Any]) -> CheckpointWeights:
    """A published checkpoint's stored weights, from its config.json quantization_config."""
    scheme = scheme_from_config(quantization_config, "quantization_config")
    assert scheme is not None  # noqa: S101 - the presets use methods the engine reads
    return checkpoint_weights(param_groups(shape), scheme, group_layer_counts(shape))


_DEEPSEEK_V3 = Shape(
    layers=61,
    hidden=7168,
    heads=128,
    kv_heads=128,
    head_dim=192,
    vocab=129280,
    intermediate=18432,
    experts=256,
    active_experts=8,
    moe_intermediate=2048,
    shared_experts=1,
    first_dense_layers=3,
    q_lora_rank=1536,
    kv_lora_rank=512,
    qk_rope_head_dim=64,
    qk_nope_head_dim=128,
    v_head_dim=128,
)
_DEEPSEEK_FP8 = _checkpoint(
    _DEEPSEEK_V3, {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}
)


def _gpt_oss(layers: int, experts: int) -> Shape:
    # openai/gpt-oss-{20b,120b} config.json: hidden 2880, 64 query heads x 64, 8 KV heads,
    # experts of width 2880, top-4, vocab 201088; layer_types alternate sliding_attention
    # (sliding_window 128) and full_attention, starting with sliding.
    return Shape(
        layers=layers,
        hidden=2880,
        heads=64,
        kv_heads=8,
        head_dim=64,
        vocab=201088,
        intermediate=2880,
        experts=experts,
        active_experts=4,
        moe_intermediate=2880,
        window=128,
        window_layers=(layers + 1) // 2,
    )


# gpt-oss config.json quantization_config: MXFP4 experts; attention, router, embeddings and
# lm_head left unquantized.
_GPT_OSS_MXFP4: dict[str, Any] = {
    "quant_method": "mxfp4",
    "modules_to_not_convert": [
        "model.layers.*.self_attn",
        "model.layers.*.mlp.router",
        "model.embed_tokens",
        "lm_head",
    ],
}
_GPT_OSS_20B = _gpt_oss(24, 32)
_GPT_OSS_120B = _gpt_oss(36, 128)

# Qwen/Qwen3-Next-80B-A3B-Instruct config.json: 48 layers, hidden 2048, full attention (16 query
# heads x 256, gated, 2 KV heads) every full_attention_interval=4 layers, Gated DeltaNet on the
# other 36 (16 key heads x 128, 32 value heads x 128, conv kernel 4); 512 experts of 512, top-10,
# one shared expert of 512; vocab 151936; 262144 positions.
_QWEN3_NEXT_LINEAR = gated_deltanet(2048, 16, 32, 128, 128, 4)
_QWEN3_NEXT = Shape(
    layers=48,
    hidden=2048,
    heads=16,
    kv_heads=2,
    head_dim=256,
    vocab=151936,
    intermediate=5120,
    experts=512,
    active_experts=10,
    moe_intermediate=512,
    shared_experts=1,
    shared_intermediate=512,
    q_gate=True,
    linear_layers=36,
    linear_params=_QWEN3_NEXT_LINEAR[0],
    linear_state=_QWEN3_NEXT_LINEAR[1],
)


def _llama4(experts: int, moe_layers: int) -> Shape:
    # meta-llama/Llama-4-{Scout-17B-16E,Maverick-17B-128E}-Instruct config.json text_config:
    # 48 layers, hidden 5120, 40 query heads x 128, 8 KV heads, experts (and the one shared
    # expert) of intermediate_size 8192, top-1, dense layers of intermediate_size_mlp 16384
    # (Maverick: interleave_moe_layer_step 2, so 24 MoE layers), vocab 202048; chunked local
    # attention (attention_chunk_size 8192) on the RoPE layers, global attention on every 4th.
    # vision_config: 34 layers, hidden 1408, intermediate 5632, patch 14, output 4096.
    return Shape(
        layers=48,
        hidden=5120,
        heads=40,
        kv_heads=8,
        head_dim=128,
        vocab=202048,
        intermediate=16384,
        experts=experts,
        active_experts=1,
        moe_intermediate=8192,
        shared_experts=1,
        shared_intermediate=8192,
        moe_layers=moe_layers,
        window=8192,
        window_layers=36,
        vision_params=vit_params(1408, 34, 5632, 14, 4096, 5120),
    )


def _gemma3(
    layers: int, hidden: int, heads: int, kv: int, head_dim: int, inter: int, vision: bool
) -> Shape:
    # google/gemma-3-{4b,12b,27b}-it config.json text_config (vocab 262208 and tied embeddings
    # are Gemma3TextConfig defaults); sliding_window 1024 on 5 of every 6 layers (the 6th is
    # global). vision_config: SigLIP, 27 layers, hidden 1152, intermediate 4304, patch 14.
    return Shape(
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv,
        head_dim=head_dim,
        vocab=262208,
        intermediate=inter,
        tied_embeddings=True,
        window=1024,
        window_layers=layers - layers // 6,
        vision_params=vit_params(1152, 27, 4304, 14, 1152, hidden) if vision else 0.0,
    )


_DECODERS: dict[str, ModelSpec] = {
    # meta-llama/Llama-2-{7b,13b,70b}-hf config.json
    "llama-2-7b": decoder("Llama 2 7B", _llama(32, 4096, 32, 32, 11008, 32000), max_context=4096),
    "llama-2-13b": decoder("Llama 2 13B", _llama(40, 5120, 40, 40, 13824, 32000), max_context=4096),
    "llama-2-70b": decoder("Llama 2 70B", _llama(80, 8192, 64, 8, 28672, 32000), max_context=4096),
    # meta-llama/Meta-Llama-3-8B, Llama-3.1-{8B,70B,405B}, Llama-3.2-{1B,3B} config.json
    "llama-3-8b": decoder("Llama 3 8B", _llama(32, 4096, 32, 8, 14336, 128256), max_context=8192),
    "llama-3.1-8b": decoder(
        "Llama 3.1 8B", _llama(32, 4096, 32, 8, 14336, 128256), max_context=131072
    ),
    "llama-3.1-70b": decoder(
        "Llama 3.1 70B", _llama(80, 8192, 64, 8, 28672, 128256), max_context=131072
    ),
    "llama-3.1-405b": decoder(
        "Llama 3.1 405B", _llama(126, 16384, 128, 8, 53248, 128256), max_context=131072
    ),
    "llama-3.2-1b": decoder(
        "Llama 3.2 1B",
        _llama(16, 2048, 32, 8, 8192, 128256, head_dim=64, tied_embeddings=True),
        max_context=131072,
    ),
    "llama-3.2-3b": decoder(
        "Llama 3.2 3B",
        _llama(28, 3072, 24, 8, 8192, 128256, head_dim=128, tied_embeddings=True),
        max_context=131072,
    ),
    # mistralai/Mistral-7B-v0.1, Mixtral-8x7B-v0.1, Mixtral-8x22B-v0.1 config.json
    "mistral-7b": decoder("Mistral 7B", _llama(32, 4096, 32, 8, 14336, 32000), max_context=32768),
    "mixtral-8x7b": decoder(
        "Mixtral 8x7B",
        _llama(32, 4096, 32, 8, 14336, 32000, experts=8, active_experts=2),
        max_context=32768,
    ),
    "mixtral-8x22b": decoder(
        "Mixtral 8x22B",
        _llama(56, 6144, 48, 8, 16384, 32768, experts=8, active_experts=2),
        max_context=65536,
    ),
    # Qwen/Qwen2.5-{7B,32B,72B} config.json
    "qwen2.5-7b": decoder("Qwen2.5 7B", _llama(28, 3584, 28, 4, 18944, 152064), max_context=131072),
    "qwen2.5-32b": decoder(
        "Qwen2.5 32B", _llama(64, 5120, 40, 8, 27648, 152064), max_context=131072
    ),
    "qwen2.5-72b": decoder(
        "Qwen2.5 72B", _llama(80, 8192, 64, 8, 29568, 152064), max_context=131072
    ),
    # Qwen/Qwen3-{4B,8B,14B,32B,30B-A3B,235B-A22B} config.json
    "qwen3-8b": decoder(
        "Qwen3 8B", _llama(36, 4096, 32, 8, 12288, 151936, head_dim=128), max_context=40960
    ),
    "qwen3-4b": decoder(
        "Qwen3 4B",
        _llama(36, 2560, 32, 8, 9728, 151936, head_dim=128, tied_embeddings=True),
        max_context=40960,
    ),
    "qwen3-14b": decoder(
        "Qwen3 14B", _llama(40, 5120, 40, 8, 17408, 151936, head_dim=128), max_context=40960
    ),
    "qwen3-32b": decoder(
        "Qwen3 32B", _llama(64, 5120, 64, 8, 25600, 151936, head_dim=128), max_context=40960
    ),
    "qwen3-30b-a3b": decoder(
        "Qwen3 30B-A3B",
        _llama(
            48,
            2048,
            32,
            4,
            6144,
            151936,
            head_dim=128,
            experts=128,
            active_experts=8,
            moe_intermediate=768,
        ),
        max_context=40960,
    ),
    "qwen3-235b-a22b": decoder(
        "Qwen3 235B-A22B",
        _llama(
            94,
            4096,
            64,
            4,
            12288,
            151936,
            head_dim=128,
            experts=128,
            active_experts=8,
            moe_intermediate=1536,
        ),
        max_context=40960,
    ),
    # deepseek-ai/DeepSeek-V3 and DeepSeek-R1 config.json (MLA: kv_lora_rank 512,
    # qk_rope_head_dim 64; 256 routed experts, 8 active, 1 shared; first 3 layers dense). Both
    # ship FP8 weights in 128 x 128 blocks (quantization_config quant_method fp8,
    # weight_block_size [128, 128]). DeepSeek-V3 report arXiv:2412.19437.
    "deepseek-v3": decoder(
        "DeepSeek-V3", _DEEPSEEK_V3, max_context=163840, checkpoint=_DEEPSEEK_FP8
    ),
    "deepseek-r1": decoder(
        "DeepSeek-R1", _DEEPSEEK_V3, max_context=163840, checkpoint=_DEEPSEEK_FP8
    ),
    "gpt-oss-20b": decoder(
        "gpt-oss-20b",
        _GPT_OSS_20B,
        max_context=131072,
        checkpoint=_checkpoint(_GPT_OSS_20B, _GPT_OSS_MXFP4),
    ),
    "gpt-oss-120b": decoder(
        "gpt-oss-120b",
        _GPT_OSS_120B,
        max_context=131072,
        checkpoint=_checkpoint(_GPT_OSS_120B, _GPT_OSS_MXFP4),
    ),
    "qwen3-next-80b-a3b": decoder("Qwen3-Next 80B-A3B", _QWEN3_NEXT, max_context=262144),
    "llama-4-scout": decoder("Llama 4 Scout 17B-16E", _llama4(16, 48), max_context=10485760),
    "llama-4-maverick": decoder("Llama 4 Maverick 17B-128E", _llama4(128, 24), max_context=1048576),
    "gemma-3-4b": decoder(
        "Gemma 3 4B", _gemma3(34, 2560, 8, 4, 256, 10240, vision=True), max_context=131072
    ),
    "gemma-3-12b": decoder(
        "Gemma 3 12B", _gemma3(48, 3840, 16, 8, 256, 15360, vision=True), max_context=131072
    ),
    "gemma-3-27b": decoder(
        "Gemma 3 27B", _gemma3(62, 5376, 32, 16, 128, 21504, vision=True), max_context=131072
    ),
    # mistralai/Mistral-Small-24B-Instruct-2501 config.json (Mistral Small 3; sliding_window null)
    "mistral-small-3": decoder(
        "Mistral Small 3 24B",
        _llama(40, 5120, 32, 8, 32768, 131072, head_dim=128),
        max_context=32768,
    ),
    # google/gemma-2-{9b,27b} config.json (tied embeddings, head_dim 256 / 128)
    "gemma-2-9b": decoder(
        "Gemma 2 9B",
        _llama(42, 3584, 16, 8, 14336, 256000, head_dim=256, tied_embeddings=True),
        max_context=8192,
    ),
    "gemma-2-27b": decoder(
        "Gemma 2 27B",
        _llama(46, 4608, 32, 16, 36864, 256000, head_dim=128, tied_embeddings=True),
        max_context=8192,
    ),
    # microsoft/Phi-3-mini-4k-instruct and microsoft/phi-4 config.json
    "phi-3-mini": decoder("Phi-3 mini", _llama(32, 3072, 32, 32, 8192, 32064), max_context=4096),
    "phi-4": decoder("Phi-4", _llama(40, 5120, 40, 10, 17920, 100352), max_context=16384),
    # EleutherAI/gpt-j-6b config.json (n_embd 4096, n_head 16, rotary, GELU MLP 4x)
    "gpt-j-6b": decoder(
        "GPT-J 6B", _llama(28, 4096, 16, 16, 16384, 50400, gated_mlp=False), max_context=2048
    ),
    # tiiuae/falcon-40b config.json (new decoder architecture, 8 KV groups, GELU MLP 4x)
    "falcon-40b": decoder(
        "Falcon 40B",
        _llama(60, 8192, 128, 8, 32768, 65024, gated_mlp=False),
        max_context=2048,
    ),
    # mosaicml/mpt-30b config.json (d_model 7168, 64 heads, expansion 4, tied embeddings)
    "mpt-30b": decoder(
        "MPT 30B",
        _llama(48, 7168, 64, 64, 28672, 50432, gated_mlp=False, tied_embeddings=True),
        max_context=8192,
    ),
    # GPT-3 175B (Brown et al. 2020, arXiv:2005.14165 table 2.1): used by Megatron benchmarks.
    "gpt-3-175b": decoder(
        "GPT-3 175B",
        _llama(96, 12288, 96, 96, 49152, 50257, gated_mlp=False, tied_embeddings=True),
        max_context=2048,
    ),
}


def _bert_large(name: str) -> ModelSpec:
    # BERT-large shape (BAAI/bge-large-en-v1.5 and intfloat/e5-large-v2 config.json): 24 layers,
    # hidden 1024, 16 heads, intermediate 4096, vocab 30522, 512 positions, tied MLM head unused.
    shape = Shape(
        layers=24,
        hidden=1024,
        heads=16,
        kv_heads=16,
        head_dim=64,
        vocab=30522,
        intermediate=4096,
        gated_mlp=False,
        tied_embeddings=True,
        extra_params=512 * 1024 + 2 * 1024 + 1024 * 1024,
    )
    total, _ = count_params(shape)
    return ModelSpec(
        name=name,
        params_billion=total / 1e9,
        layers=24,
        hidden_size=1024,
        attention_heads=16,
        kv_heads=16,
        head_dim=64,
        vocab_size=30522,
        intermediate_size=4096,
        kind=ModelKind.ENCODER,
        tied_embeddings=True,
        max_context_tokens=512,
    )


_OTHERS: dict[str, ModelSpec] = {
    "bge-large-en-v1.5": _bert_large("BGE large en v1.5"),
    "e5-large": _bert_large("E5 large v2"),
    # stabilityai/stable-diffusion-xl-base-1.0: UNet 2.567B + CLIP-L 123M + OpenCLIP-G 695M + VAE
    # 84M = 3.47B parameters (Podell et al. 2023, arXiv:2307.01952).  40 steps (diffusers default
    # for the base model's refiner-free use is 50; SDXL model card examples use 40).
    "sdxl": ModelSpec(
        name="Stable Diffusion XL 1.0",
        params_billion=3.47,
        layers=70,
        hidden_size=2048,
        attention_heads=32,
        kv_heads=32,
        head_dim=64,
        vocab_size=49408,
        intermediate_size=8192,
        kind=ModelKind.DIFFUSION,
        max_context_tokens=77,
        diffusion_flops_per_step_1mp=DIFFUSION_FLOPS_PER_STEP_1MP["sdxl"],
        diffusion_steps=40,
    ),
    # black-forest-labs/FLUX.1-dev: 12B rectified-flow transformer (19 double + 38 single blocks,
    # hidden 3072) + T5-XXL encoder 4.76B + CLIP-L 123M + VAE 84M; 28 steps (model card default
    # num_inference_steps in the diffusers example is 50; BFL reference uses 28-50).
    "flux.1-dev": ModelSpec(
        name="FLUX.1 [dev]",
        params_billion=16.97,
        active_params_billion=12.0,
        layers=57,
        hidden_size=3072,
        attention_heads=24,
        kv_heads=24,
        head_dim=128,
        vocab_size=32128,
        intermediate_size=12288,
        kind=ModelKind.DIFFUSION,
        max_context_tokens=512,
        diffusion_flops_per_step_1mp=DIFFUSION_FLOPS_PER_STEP_1MP["flux.1-dev"],
        diffusion_steps=50,
    ),
}

PRESETS: Mapping[str, ModelSpec] = MappingProxyType({**_DECODERS, **_OTHERS})
