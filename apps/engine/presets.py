"""Real model architectures, keyed by their common name (lowercase, dashes).

Shapes are copied from each model's Hugging Face config.json (repository named per entry);
parameter counts are computed from those shapes by `shapes.count_params`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from apps.engine.constants import DIFFUSION_FLOPS_PER_STEP_1MP
from apps.engine.shapes import Shape, attention_layout, count_params
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
    # Qwen/Qwen3-{8B,32B,30B-A3B,235B-A22B} config.json
    "qwen3-8b": decoder(
        "Qwen3 8B", _llama(36, 4096, 32, 8, 12288, 151936, head_dim=128), max_context=40960
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
    # deepseek-ai/DeepSeek-V3 config.json (MLA: kv_lora_rank 512, qk_rope_head_dim 64; 256 routed
    # experts, 8 active, 1 shared; first 3 layers dense). DeepSeek-V3 report arXiv:2412.19437.
    "deepseek-v3": decoder(
        "DeepSeek-V3",
        Shape(
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
        ),
        max_context=163840,
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
