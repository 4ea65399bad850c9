"""Training memory on its own rules: optimizer states, LoRA/QLoRA adapters, checkpointing, and
published recipes that fit (or not) where their authors ran them."""

from __future__ import annotations

import pytest
from engine_catalog import gpu
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.engine import (
    PRESETS,
    EstimateRequest,
    ModelSpec,
    Optimizer,
    Precision,
    Sharding,
    TrainingSpec,
    WorkloadType,
    estimate_at,
)
from apps.engine import constants as c
from apps.engine.memory import (
    lora_adapter_params,
    training_activation_bytes,
    training_memory,
)
from apps.engine.presets import decoder
from apps.engine.shapes import Shape

# LLaMA-65B (Touvron et al. 2023, arXiv:2302.13971, table 2: 80 layers, d_model 8192, 64 heads;
# Hugging Face config: intermediate_size 22016, vocab 32000, untied embeddings).
LLAMA_65B = decoder(
    "LLaMA 65B",
    Shape(
        layers=80,
        hidden=8192,
        heads=64,
        kv_heads=64,
        head_dim=128,
        vocab=32000,
        intermediate=22016,
    ),
    max_context=2048,
)


def _guanaco_65b(optimizer: Optimizer) -> EstimateRequest:
    """artidoro/qlora scripts/finetune_guanaco_65b.sh: --lora_r 64 --lora_modules all
    --double_quant --quant_type nf4 --bf16 --gradient_checkpointing
    --per_device_train_batch_size 4 --source_max_len 16 --target_max_len 512 (528 tokens);
    qlora.py's default optimizer is paged_adamw_32bit."""
    return EstimateRequest(
        workload_type=WorkloadType.QLORA_FINETUNE,
        model=LLAMA_65B,
        training=TrainingSpec(
            sequence_length=16 + 512,
            micro_batch_sequences=4,
            activation_checkpointing=True,
            lora_rank=64,
            optimizer=optimizer,
        ),
    )


class TestQloraPaperRecipe:
    """QLoRA (Dettmers et al. 2023, arXiv:2305.14314, abstract): "finetune a 65B parameter model
    on a single 48GB GPU". The paper used an RTX A6000 48 GB; the catalog's 48 GB GPU is the
    L40S."""

    @pytest.mark.parametrize("optimizer", [Optimizer.PAGED_ADAMW, Optimizer.PAGED_ADAMW_8BIT])
    def test_llama_65b_guanaco_fits_one_48gb_gpu(self, optimizer: Optimizer) -> None:
        e = estimate_at(_guanaco_65b(optimizer), gpu("l40s-48gb"), 1)
        assert e.fits
        m = e.memory
        # NF4 + double quant: 64.76B params at 4.127 bits + 0.52B embeddings x 2 = 34.5 GB.
        assert m.weights_gb == pytest.approx(34.46, abs=0.05)
        # r=64 on q,k,v,o (4 x 64 x 16384) and gate,up,down (3 x 64 x 30208) over 80 layers
        # = 799.5M adapter parameters, BF16 (qlora.py casts LoraLayer to bfloat16 under --bf16).
        assert m.adapters_gb == pytest.approx(0.7995e9 * 2 / 1e9, rel=1e-3)
        assert m.gradients_gb == pytest.approx(m.adapters_gb)
        # Paged: states live in unified memory; only a page-in buffer stays on the GPU.
        assert m.optimizer_gb < 0.05
        assert m.total_gb + m.safety_margin_gb <= 48.0
        assert any("paged optimizer" in n for n in e.notes)

    def test_unpaged_32bit_adamw_does_not_fit_the_same_gpu(self) -> None:
        # 799.5M x 8 bytes of FP32 moments = 6.4 GB more on the GPU: over 48 GB.
        e = estimate_at(_guanaco_65b(Optimizer.ADAMW), gpu("l40s-48gb"), 1)
        assert e.memory.optimizer_gb == pytest.approx(6.40, abs=0.01)
        assert not e.fits

    def test_8bit_adamw_states_are_2_bytes_per_adapter_param(self) -> None:
        e = estimate_at(_guanaco_65b(Optimizer.ADAMW_8BIT), gpu("l40s-48gb"), 1)
        # bitsandbytes: 2 bytes of states per parameter (+ one FP32 absmax per 2048 values).
        assert e.memory.optimizer_gb == pytest.approx(0.7995 * 2 * (1 + 4 / 2048), rel=1e-3)
        assert e.fits


class TestPublishedFullFinetunes:
    def test_alpaca_7b_fsdp_on_4_a100_80gb(self) -> None:
        """tatsu-lab/stanford_alpaca README: "fine-tunes LLaMA-7B ... on a machine with 4 A100
        80G GPUs in FSDP full_shard mode": --bf16 --per_device_train_batch_size 4, max length
        512, no gradient checkpointing. Llama 2 7B has LLaMA-7B's shape."""
        req = EstimateRequest(
            workload_type=WorkloadType.FULL_FINETUNE,
            model=PRESETS["llama-2-7b"],
            training=TrainingSpec(
                sequence_length=512, micro_batch_sequences=4, sharding=Sharding.FSDP
            ),
        )
        a100 = gpu("a100-sxm4-80gb")
        on_four = estimate_at(req, a100, 4)
        assert on_four.fits
        # 16 bytes / param (ZeRO paper) over 4 GPUs: 6.74B x 16 / 4 = 27 GB per GPU.
        m = on_four.memory
        per_gpu_states = (m.weights_gb + m.gradients_gb + m.optimizer_gb) / 4
        assert per_gpu_states == pytest.approx(6.738 * 16 / 4, rel=0.01)
        # The same run unsharded on one GPU needs ~108 GB of states alone.
        unsharded = EstimateRequest(
            workload_type=WorkloadType.FULL_FINETUNE,
            model=PRESETS["llama-2-7b"],
            training=TrainingSpec(sequence_length=512, micro_batch_sequences=4),
        )
        assert not estimate_at(unsharded, a100, 1).fits

    def test_zephyr_7b_sft_zero3_on_8_a100_80gb(self) -> None:
        """huggingface/alignment-handbook recipes/zephyr-7b-beta: "You will require 8 GPUs (80GB
        of VRAM) to train the full model", DeepSpeed ZeRO-3 (accelerate deepspeed_zero3.yaml);
        sft/config_full.yaml: Mistral-7B-v0.1, bf16, per_device_train_batch_size 16,
        max_seq_length 2048, gradient_checkpointing."""
        req = EstimateRequest(
            workload_type=WorkloadType.FULL_FINETUNE,
            model=PRESETS["mistral-7b"],
            training=TrainingSpec(
                sequence_length=2048,
                micro_batch_sequences=16,
                activation_checkpointing=True,
                sharding=Sharding.ZERO3,
            ),
        )
        e = estimate_at(req, gpu("a100-sxm4-80gb"), 8)
        assert e.fits
        # Per GPU: 7.24B x 16 / 8 = 14.5 GB of states, ~17 GB of checkpointed activations and
        # logits, 2.5 GB runtime: ~34 GB of 80.
        assert e.memory.total_gb / 8 == pytest.approx(34.1, abs=1.0)


class TestOptimizerStates:
    def _full(self, opt: Optimizer, precision: Precision = Precision.BF16) -> float:
        tm = training_memory(
            PRESETS["llama-3.1-8b"],
            WorkloadType.FULL_FINETUNE,
            TrainingSpec(sequence_length=2048, optimizer=opt),
            1,
            precision,
        )
        return tm.optimizer / PRESETS["llama-3.1-8b"].total_params

    @pytest.mark.parametrize(
        ("opt", "per_param"),
        [
            (Optimizer.ADAMW, 12.0),  # ZeRO paper K = 12: master 4 + m 4 + v 4
            (Optimizer.ADAMW_8BIT, 4.0 + 2.0 * (1 + 4 / 2048)),  # master + 2 x 8-bit states
            (Optimizer.ADAM_8BIT, 4.0 + 2.0 * (1 + 4 / 2048)),
            (Optimizer.SGD, 8.0),  # master + FP32 momentum
            (Optimizer.LION, 8.0),
        ],
    )
    def test_full_training_bytes_per_param(self, opt: Optimizer, per_param: float) -> None:
        assert self._full(opt) == pytest.approx(per_param, rel=1e-6)

    def test_fp32_training_has_no_master_copy(self) -> None:
        assert self._full(Optimizer.ADAMW, Precision.FP32) == pytest.approx(8.0)

    def test_adafactor_keeps_factored_second_moment_only(self) -> None:
        # Master 4 bytes + (rows + cols) x 4 bytes per matrix: a few MB over an 8B model.
        per_param = self._full(Optimizer.ADAFACTOR)
        assert 4.0 < per_param < 4.01

    def test_paged_optimizer_states_are_not_counted_on_the_gpu(self) -> None:
        paged = training_memory(
            PRESETS["llama-3.1-8b"],
            WorkloadType.FULL_FINETUNE,
            TrainingSpec(sequence_length=2048, optimizer=Optimizer.PAGED_ADAMW_8BIT),
            1,
            Precision.BF16,
        )
        n = PRESETS["llama-3.1-8b"].total_params
        # Only the largest tensor's states (embedding 128256 x 4096) stay as a page-in buffer.
        assert paged.optimizer == pytest.approx(n * 4.0 + 128256 * 4096 * 2 * (1 + 4 / 2048))
        assert paged.paged_optimizer == pytest.approx(
            n * 2 * (1 + 4 / 2048) - 128256 * 4096 * 2 * (1 + 4 / 2048)
        )

    def test_training_is_not_held_to_the_serving_cap(self) -> None:
        """QLoRA 65B with paged AdamW uses ~43.8 GB of the 48: it fits under training's 2 GB
        headroom, and would not under vLLM's 90% (43.2 GB) serving cap."""
        e = estimate_at(_guanaco_65b(Optimizer.PAGED_ADAMW), gpu("l40s-48gb"), 1)
        assert e.fits
        assert e.memory.total_gb > 48.0 * c.USABLE_MEMORY_FRACTION
        assert e.memory.safety_margin_gb == c.TRAINING_ALLOCATOR_HEADROOM_GB_PER_GPU


class TestLoraAdapters:
    def test_dense_llama_adapters_cover_q_k_v_o_gate_up_down(self) -> None:
        m = PRESETS["llama-3.1-8b"]  # 32 layers, h 4096, 32 q heads, 8 kv heads x 128, 14336
        per_layer = (4096 + 4096) * 2 + (4096 + 1024) * 2 + 3 * (4096 + 14336)
        assert lora_adapter_params(m, 16) == 16 * 32 * per_layer  # 41.9M (PEFT prints 41.9M)

    def test_moe_adapters_follow_the_real_layout(self) -> None:
        """DeepSeek-V3: MLA projections, 3 dense layers, 58 MoE layers of 256 routed + 1 shared
        expert (moe_intermediate 2048); the legacy formula would treat every layer as MoE with
        GQA-shaped attention."""
        m = PRESETS["deepseek-v3"]
        h, q_lora, kv_lora, rope, nope, v, heads = 7168, 1536, 512, 64, 128, 128, 128
        attn = (
            (h + q_lora)
            + (q_lora + heads * (nope + rope))
            + (h + kv_lora + rope)
            + (kv_lora + heads * (nope + v))
            + (heads * v + h)
        )
        dense = 3 * 3 * (h + 18432)
        moe = 58 * (256 + 1) * 3 * (h + 2048)
        assert m.lora_in_out == 61 * attn + dense + moe

    def test_lora_adapters_fp32_and_qlora_bf16(self) -> None:
        spec = TrainingSpec(sequence_length=2048, lora_rank=16)
        m = PRESETS["llama-3.1-8b"]
        n_a = lora_adapter_params(m, 16)
        lora = training_memory(m, WorkloadType.LORA_FINETUNE, spec, 1, Precision.BF16)
        qlora = training_memory(m, WorkloadType.QLORA_FINETUNE, spec, 1, Precision.BF16)
        # PEFT autocasts adapters to FP32; qlora.py casts them to BF16. AdamW: 8 B of states.
        assert (lora.adapters, lora.gradients, lora.optimizer) == pytest.approx(
            (n_a * 4, n_a * 4, n_a * 8)
        )
        assert (qlora.adapters, qlora.gradients, qlora.optimizer) == pytest.approx(
            (n_a * 2, n_a * 2, n_a * 8)
        )
        # The base is frozen at its precision: BF16 weights (embeddings included) for LoRA.
        assert lora.weights == pytest.approx(m.total_params * 2)


class TestGradientCheckpointing:
    def test_keeps_one_layer_plus_one_hidden_state_per_layer(self) -> None:
        m = PRESETS["llama-3.1-8b"]
        t = TrainingSpec(sequence_length=4096, activation_checkpointing=True)
        logits = 4096 * 128256 * 4
        # 32 checkpoints x 2 bytes + one recomputed layer's 34 bytes less its own input (2).
        assert training_activation_bytes(m, t) == 4096 * 4096 * (2 * 32 + 32) + logits


_MODELS = st.builds(
    lambda layers, hidden, heads_pow, inter, vocab: ModelSpec(
        name="m",
        params_billion=(12 * layers * hidden * hidden + 2 * vocab * hidden) / 1e9,
        layers=layers,
        hidden_size=hidden,
        attention_heads=2**heads_pow,
        kv_heads=2**heads_pow,
        head_dim=max(hidden // 2**heads_pow, 1),
        vocab_size=vocab,
        intermediate_size=inter,
    ),
    st.integers(1, 128),
    st.sampled_from([256, 1024, 4096, 8192]),
    st.integers(0, 6),
    st.integers(256, 65536),
    st.integers(1000, 256000),
)
_SPECS = st.builds(
    TrainingSpec,
    sequence_length=st.integers(1, 32768),
    micro_batch_sequences=st.integers(1, 64),
    lora_rank=st.integers(1, 256),
    sharding=st.sampled_from(list(Sharding)),
)
_TRAINING = st.sampled_from(
    [
        WorkloadType.FULL_FINETUNE,
        WorkloadType.TRAINING,
        WorkloadType.LORA_FINETUNE,
        WorkloadType.QLORA_FINETUNE,
    ]
)


@settings(max_examples=200, deadline=None)
@given(model=_MODELS, spec=_SPECS, wt=_TRAINING, gpus=st.integers(1, 64))
def test_8bit_optimizer_never_uses_more_memory_than_fp32_adamw(
    model: ModelSpec, spec: TrainingSpec, wt: WorkloadType, gpus: int
) -> None:
    def peak(opt: Optimizer) -> float:
        t = TrainingSpec(
            sequence_length=spec.sequence_length,
            micro_batch_sequences=spec.micro_batch_sequences,
            lora_rank=spec.lora_rank,
            sharding=spec.sharding,
            optimizer=opt,
        )
        return training_memory(model, wt, t, gpus, Precision.BF16).total

    adamw = peak(Optimizer.ADAMW)
    for opt in (
        Optimizer.ADAMW_8BIT,
        Optimizer.PAGED_ADAMW_8BIT,
        Optimizer.PAGED_ADAMW,
        Optimizer.ADAFACTOR,
        Optimizer.SGD,
    ):
        assert peak(opt) <= adamw * (1 + 1e-12)


@settings(max_examples=200, deadline=None)
@given(model=_MODELS, spec=_SPECS)
def test_gradient_checkpointing_never_increases_activation_memory(
    model: ModelSpec, spec: TrainingSpec
) -> None:
    def act(ckpt: bool) -> float:
        t = TrainingSpec(
            sequence_length=spec.sequence_length,
            micro_batch_sequences=spec.micro_batch_sequences,
            activation_checkpointing=ckpt,
        )
        return training_activation_bytes(model, t)

    assert act(True) <= act(False)
