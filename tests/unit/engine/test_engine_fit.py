"""Capacity (driver-reported MiB, else datasheet GB) and the FITS / TIGHT / NO verdict."""

from __future__ import annotations

import dataclasses

import pytest
from engine_catalog import gpu

from apps.engine import (
    PRESETS,
    EstimateRequest,
    Fit,
    Precision,
    TrainingSpec,
    WorkloadType,
    estimate,
    estimate_at,
    estimate_to_dict,
)
from apps.engine import constants as c
from apps.engine.memory import (
    gpu_capacity_bytes,
    gpu_capacity_source,
    memory_fit,
    training_fit,
)
from apps.engine.types import Framework


def _serving(
    preset: str, precision: Precision, *, tokens_in: int, tokens_out: int, conc: int
) -> EstimateRequest:
    return EstimateRequest(
        workload_type=WorkloadType.REALTIME_INFERENCE,
        model=PRESETS[preset],
        weight_precision=precision,
        input_tokens_p50=tokens_in,
        input_tokens_p95=tokens_in,
        output_tokens_p50=tokens_out,
        output_tokens_p95=tokens_out,
        concurrency=conc,
    )


def _training(workload: WorkloadType, *, seq: int, micro: int = 1) -> EstimateRequest:
    return EstimateRequest(
        workload_type=workload,
        model=PRESETS["llama-3.1-8b"],
        weight_precision=Precision.BF16,
        training=TrainingSpec(sequence_length=seq, micro_batch_sequences=micro),
    )


class TestCapacity:
    def test_is_the_driver_reported_mib_where_the_catalog_has_it(self) -> None:
        h100 = gpu("h100-sxm5-80gb")
        assert gpu_capacity_bytes(h100) == 81_559 * 2**20
        assert gpu_capacity_source(h100) == "device (nvidia-smi MiB)"
        assert gpu_capacity_source(gpu("mi300x-192gb")) == "device (amd-smi MiB)"

    def test_is_the_datasheet_gb_where_it_does_not(self) -> None:
        for slug, gb in (
            ("gb200-nvl72-186gb", 186),
            ("b300-sxm-288gb", 288),
            ("mi355x-288gb", 288),
        ):
            assert gpu(slug).device_memory_mib is None
            assert gpu_capacity_bytes(gpu(slug)) == gb * 1e9
            assert gpu_capacity_source(gpu(slug)) == "datasheet"

    def test_every_estimate_reports_its_capacity_per_gpu_in_gb(self) -> None:
        req = _serving("llama-3.1-8b", Precision.BF16, tokens_in=512, tokens_out=128, conc=1)
        e = estimate_at(req, gpu("h100-sxm5-80gb"), 2)
        assert e.memory_capacity_gb == pytest.approx(85.52, abs=0.01)
        assert e.memory.capacity_gb == pytest.approx(2 * e.memory_capacity_gb)
        d = estimate_to_dict(e)
        assert d["memory_capacity_gb"] == 85.52
        assert d["memory_capacity_source"] == "device (nvidia-smi MiB)"
        assert (d["fit"], d["fit_advice"], d["fits"]) == ("FITS", None, True)


class TestVerdictBoundaries:
    @pytest.mark.parametrize(
        ("share", "verdict"),
        [(0.5, Fit.FITS), (0.9, Fit.FITS), (0.91, Fit.TIGHT), (0.95, Fit.TIGHT), (0.951, Fit.NO)],
    )
    def test_fits_within_0_9_tight_within_0_95_else_no(self, share: float, verdict: Fit) -> None:
        assert memory_fit(share * 100e9, 100e9) is verdict


class TestServingVerdict:
    def test_tight_when_only_a_larger_memory_share_fits(self) -> None:
        # 70B FP8 at an 8K context: 78.0 GB of 85.5 GB = 92%, over vLLM's default 0.9.
        req = _serving("llama-3.1-70b", Precision.FP8, tokens_in=7000, tokens_out=1000, conc=1)
        e = estimate_at(req, gpu("h100-sxm5-80gb"), 1)
        assert e.fit is Fit.TIGHT and e.fits
        assert e.fit_advice is not None
        assert "--gpu-memory-utilization 0.92" in e.fit_advice
        # The figures describe the deployment as advised: one sequence fits at 0.92.
        assert e.max_concurrency >= 1 and e.max_context_tokens >= 8000
        # ... and a shorter context at the default share is offered too (it keeps > half).
        assert "--max-model-len 4735" in e.fit_advice

    @pytest.mark.parametrize(
        ("framework", "share", "context"),
        [
            (Framework.VLLM, "vLLM --gpu-memory-utilization 0.92", "vLLM --max-model-len 4735"),
            (
                Framework.SGLANG,
                "SGLang --mem-fraction-static 0.92",
                "SGLang --context-length 4735",
            ),
            (
                Framework.TENSORRT_LLM,
                "a larger TensorRT-LLM kv_cache_config.free_gpu_memory_fraction",
                "TensorRT-LLM max_seq_len 4735",
            ),
        ],
    )
    def test_tight_advice_names_the_briefs_framework_settings(
        self, framework: Framework, share: str, context: str
    ) -> None:
        req = _serving("llama-3.1-70b", Precision.FP8, tokens_in=7000, tokens_out=1000, conc=1)
        e = estimate_at(dataclasses.replace(req, framework=framework), gpu("h100-sxm5-80gb"), 1)
        assert e.fit is Fit.TIGHT and e.fit_advice is not None
        assert share in e.fit_advice and context in e.fit_advice
        own = {Framework.VLLM: "vLLM", Framework.SGLANG: "SGLang"}.get(framework, "TensorRT-LLM")
        for other in {"vLLM", "SGLang", "TensorRT-LLM"} - {own}:
            assert other not in e.fit_advice

    def test_tight_when_a_smaller_batch_fits_and_says_how_small(self) -> None:
        req = _serving("llama-3.1-8b", Precision.BF16, tokens_in=1000, tokens_out=200, conc=32)
        e = estimate_at(req, gpu("l4-24gb"), 1)
        assert e.fit is Fit.TIGHT and e.fits
        assert e.fit_advice is not None
        # vLLM serves an L4 (< 70 GiB) with a 2048-token step budget, whose activations leave
        # room for 25 sequences at the default share and all 32 at the advised 95%
        assert "at most 25 sequences" in e.fit_advice and "--max-num-seqs 25" in e.fit_advice
        assert e.capacity is not None and e.capacity.replicas == 1

    def test_tight_when_a_shorter_context_fits(self) -> None:
        # 8B BF16 on an L4 (24.2 GB): 18.3 GB before the KV cache, 131,072 KV bytes per token;
        # 40K tokens need over 95%, but ~26K fit in the default 90%.
        req = _serving("llama-3.1-8b", Precision.BF16, tokens_in=36000, tokens_out=4000, conc=1)
        e = estimate_at(req, gpu("l4-24gb"), 1)
        assert e.fit is Fit.TIGHT and e.fits
        assert e.fit_advice is not None
        assert e.fit_advice.startswith("fits at a context of at most")
        assert "(asked 40000 at p95)" in e.fit_advice
        assert 20_000 <= e.max_context_tokens < 40_000

    def test_no_when_the_cut_would_be_more_than_half(self) -> None:
        req = _serving("llama-3.1-70b", Precision.FP8, tokens_in=30000, tokens_out=2000, conc=1)
        e = estimate_at(req, gpu("h100-sxm5-80gb"), 1)
        assert e.fit is Fit.NO and not e.fits and e.fit_advice is None
        assert any(note.startswith("does not fit") for note in e.notes)


class TestTrainingVerdict:
    def test_training_has_no_serving_memory_fraction(self) -> None:
        cap = 40e9
        head = c.TRAINING_ALLOCATOR_HEADROOM_GB_PER_GPU * c.GB
        assert training_fit(cap - head, cap) is Fit.FITS  # well past serving's 90 %
        assert training_fit(cap - head / 2, cap) is Fit.TIGHT
        assert training_fit(cap + 1, cap) is Fit.NO

    def test_tight_when_only_the_allocator_headroom_is_short(self) -> None:
        g = gpu("a100-sxm4-40gb")
        cap = gpu_capacity_bytes(g)
        head = c.TRAINING_ALLOCATOR_HEADROOM_GB_PER_GPU * c.GB
        for seq in range(1024, 32769, 128):
            e = estimate_at(_training(WorkloadType.LORA_FINETUNE, seq=seq), g, 1)
            if e.fit is Fit.TIGHT and "expandable_segments" in (e.fit_advice or ""):
                break
        else:
            pytest.fail("no sequence length lands inside the allocator headroom")
        assert e.fits
        assert cap - head < e.memory.total_gb * c.GB <= cap

    def test_tight_at_a_smaller_micro_batch(self) -> None:
        e = estimate_at(
            _training(WorkloadType.QLORA_FINETUNE, seq=2048, micro=2), gpu("l4-24gb"), 1
        )
        assert e.fit is Fit.TIGHT
        assert e.fit_advice == "fits with a micro-batch of at most 1 sequence (asked 2)"

    def test_tight_at_a_shorter_sequence(self) -> None:
        e = estimate_at(_training(WorkloadType.QLORA_FINETUNE, seq=4096), gpu("l4-24gb"), 1)
        assert e.fit is Fit.TIGHT
        assert e.fit_advice is not None
        assert e.fit_advice.startswith("fits at a sequence length of at most")


class TestCountChoice:
    def test_a_count_that_fits_is_preferred_to_a_smaller_tight_one(self) -> None:
        req = _serving("llama-3.1-70b", Precision.FP8, tokens_in=7000, tokens_out=1000, conc=1)
        assert estimate_at(req, gpu("h100-sxm5-80gb"), 1).fit is Fit.TIGHT
        (e,) = estimate(req, (gpu("h100-sxm5-80gb"),))
        assert (e.gpu_count, e.fit) == (2, Fit.FITS)

    def test_a_tight_count_is_chosen_when_none_fits_outright(self) -> None:
        req = _serving("llama-3.1-70b", Precision.FP8, tokens_in=7000, tokens_out=1000, conc=1)
        one_per_node = dataclasses.replace(gpu("h100-sxm5-80gb"), max_gpus_per_node=1)
        (e,) = estimate(req, (one_per_node,))
        assert (e.gpu_count, e.fit, e.fits) == (1, Fit.TIGHT, True)


class TestNoBf16OnVoltaAndTuring:
    """Volta and Turing have no BF16: their 16-bit path is FP16, and BF16 weights are refused."""

    def test_bf16_weights_on_a_t4_are_refused_saying_why(self) -> None:
        req = _serving("llama-3.1-8b", Precision.BF16, tokens_in=512, tokens_out=128, conc=1)
        e = estimate_at(req, gpu("t4-16gb"), 2)
        assert (e.fits, e.fit) == (False, Fit.NO)
        assert e.fit_advice is not None
        assert e.fit_advice.startswith("NVIDIA T4 (Turing) has no BF16")
        assert "choose FP16 weights" in e.fit_advice
        assert e.notes[0] == e.fit_advice

    def test_fp16_weights_on_the_same_t4_fit_at_the_fp16_rate(self) -> None:
        req = _serving("llama-3.1-8b", Precision.FP16, tokens_in=512, tokens_out=128, conc=1)
        e = estimate_at(req, gpu("t4-16gb"), 2)
        assert e.fit is Fit.FITS
        assert not any("no BF16" in n for n in e.notes)

    def test_volta_refuses_bf16_training_too(self) -> None:
        e = estimate_at(_training(WorkloadType.LORA_FINETUNE, seq=512), gpu("v100-sxm2-32gb"), 1)
        assert e.fit is Fit.NO
        assert e.fit_advice is not None and "(Volta) has no BF16" in e.fit_advice

    def test_ampere_keeps_bf16(self) -> None:
        req = _serving("llama-3.1-8b", Precision.BF16, tokens_in=512, tokens_out=128, conc=1)
        assert estimate_at(req, gpu("a10g-24gb"), 1).fit is Fit.FITS

    def test_the_per_gpu_answer_is_the_refusal_at_the_smallest_count(self) -> None:
        req = _serving("llama-3.1-8b", Precision.BF16, tokens_in=512, tokens_out=128, conc=1)
        (e,) = estimate(dataclasses.replace(req, gpus=("v100-sxm2-16gb",)), [gpu("v100-sxm2-16gb")])
        assert e.fit is Fit.NO and e.gpu_count == 1
