"""Training, fine-tuning, embeddings, media and the estimate() driver."""

from __future__ import annotations

import json

import pytest
from engine_catalog import gpu, load_gpus

from apps.engine import (
    PRESETS,
    EstimateRequest,
    Precision,
    Sharding,
    TrainingSpec,
    WorkloadType,
    estimate,
    estimate_at,
    estimate_to_dict,
)


def _train(wt: WorkloadType, preset: str, **kw: object) -> EstimateRequest:
    return EstimateRequest(
        workload_type=wt,
        model=PRESETS[preset],
        training=TrainingSpec(sequence_length=4096, tokens=1e9, **kw),  # type: ignore[arg-type]
    )


class TestTraining:
    def test_full_finetune_8b_adam_needs_16_bytes_per_param_unsharded(self) -> None:
        e = estimate_at(
            _train(WorkloadType.FULL_FINETUNE, "llama-3.1-8b"), gpu("h100-sxm5-80gb"), 1
        )
        m = e.memory
        assert m.weights_gb + m.gradients_gb + m.optimizer_gb == pytest.approx(16 * 8.03, rel=0.01)
        assert not e.fits

    def test_zero3_shards_everything_over_data_parallel_gpus(self) -> None:
        req = _train(WorkloadType.FULL_FINETUNE, "llama-3.1-8b", sharding=Sharding.ZERO3)
        e = estimate_at(req, gpu("h100-sxm5-80gb"), 8)
        assert e.fits
        assert e.memory.optimizer_gb == pytest.approx(12 * 8.03, rel=0.01)  # total over 8 GPUs

    def test_lora_is_cheaper_than_full_and_qlora_cheaper_still(self) -> None:
        h100 = gpu("h100-sxm5-80gb")
        full = estimate_at(_train(WorkloadType.FULL_FINETUNE, "llama-3.1-8b"), h100, 1)
        lora = estimate_at(
            _train(WorkloadType.LORA_FINETUNE, "llama-3.1-8b", lora_rank=16), h100, 1
        )
        qlora = estimate_at(
            _train(WorkloadType.QLORA_FINETUNE, "llama-3.1-8b", lora_rank=16), h100, 1
        )
        assert qlora.memory.total_gb < lora.memory.total_gb < full.memory.total_gb
        assert lora.fits and qlora.fits
        assert lora.training is not None and lora.training.checkpoint_size_gb < 1

    def test_qlora_base_is_nf4_with_double_quant(self) -> None:
        e = estimate_at(
            _train(WorkloadType.QLORA_FINETUNE, "llama-3.1-70b"), gpu("a100-sxm4-80gb"), 1
        )
        # 70.55B params: 68.45B at 4.127 bits + 2.10B embeddings at 16 bits = 35.3 + 4.2 GB
        assert e.memory.weights_gb == pytest.approx(39.5, abs=0.3)

    def test_time_to_train_follows_tokens_per_second(self) -> None:
        e = estimate_at(
            _train(WorkloadType.TRAINING, "llama-3.1-8b", sharding=Sharding.FSDP),
            gpu("h100-sxm5-80gb"),
            8,
        )
        assert e.training is not None and e.training.time_to_train_hours is not None
        assert (
            e.training.time_to_train_hours * 3600 * e.training.tokens_per_s_total
            == pytest.approx(1e9)
        )


class TestOtherWorkloads:
    def test_embeddings_report_records_per_second(self) -> None:
        req = EstimateRequest(
            workload_type=WorkloadType.EMBEDDINGS,
            model=PRESETS["bge-large-en-v1.5"],
            input_tokens_p50=256,
            input_tokens_p95=512,
        )
        e = estimate_at(req, gpu("l4-24gb"), 1)
        assert e.fits and (e.performance.records_per_s or 0) > 100

    def test_image_generation_reports_images_per_hour(self) -> None:
        req = EstimateRequest(workload_type=WorkloadType.IMAGE_GENERATION, model=PRESETS["sdxl"])
        e = estimate_at(req, gpu("h100-sxm5-80gb"), 2)
        assert (e.performance.images_per_hour or 0) > 0

    def test_video_costs_more_than_an_image(self) -> None:
        img = EstimateRequest(
            workload_type=WorkloadType.IMAGE_GENERATION, model=PRESETS["flux.1-dev"]
        )
        vid = EstimateRequest(
            workload_type=WorkloadType.VIDEO_GENERATION, model=PRESETS["flux.1-dev"]
        )
        h = gpu("h200-sxm-141gb")
        assert (estimate_at(vid, h, 1).performance.e2e_latency_s or 0) > (
            estimate_at(img, h, 1).performance.e2e_latency_s or 0
        )


class TestEstimateDriver:
    def _req(self, **kw: object) -> EstimateRequest:
        base: dict[str, object] = dict(
            workload_type=WorkloadType.REALTIME_INFERENCE,
            model=PRESETS["llama-3.1-70b"],
            weight_precision=Precision.BF16,
            input_tokens_p50=1000,
            input_tokens_p95=4000,
            output_tokens_p50=200,
            output_tokens_p95=800,
            concurrency=16,
        )
        base.update(kw)
        return EstimateRequest(**base)  # type: ignore[arg-type]

    def test_picks_smallest_count_that_fits(self) -> None:
        # 8B BF16 (16.1 GB) + 16 x 4800 tokens x 131 kB KV (10 GB) > 21.6 GB usable on one L4.
        req = self._req(model=PRESETS["llama-3.1-8b"], gpus=("l4-24gb",))
        (e,) = estimate(req, load_gpus())
        assert e.fits and e.gpu_count == 2

    def test_forced_count_is_used_as_given(self) -> None:
        (e,) = estimate(self._req(gpus=("l4-24gb",), gpu_count=1), load_gpus())
        assert e.gpu_count == 1 and not e.fits

    def test_none_fit_returns_largest_count(self) -> None:
        """Serving tries whole nodes beyond one (2 and 4 x 8 L4) when nothing in a node fits."""
        req = self._req(model=PRESETS["llama-3.1-405b"], gpus=("l4-24gb",))
        (e,) = estimate(req, load_gpus())
        assert not e.fits and e.gpu_count == 32

    def test_nvl72_tries_rack_scale_counts(self) -> None:
        req = self._req(
            model=PRESETS["deepseek-v3"],
            weight_precision=Precision.BF16,
            gpus=("gb200-nvl72-186gb",),
        )
        (e,) = estimate(req, load_gpus())
        assert e.fits and e.gpu_count == 16

    def test_capacity_uses_littles_law_for_request_rate(self) -> None:
        req = self._req(concurrency=None, requests_per_second=10.0, ttft_p95_ms=2000, itl_p95_ms=60)
        e = estimate_at(req, gpu("h200-sxm-141gb"), 4)
        assert e.capacity is not None and e.capacity.replicas is not None
        assert e.capacity.gpu_hours_per_month == e.capacity.replicas * 4 * 730

    def test_dict_has_the_contract_keys_and_is_json(self) -> None:
        (e,) = estimate(
            self._req(gpus=("h100-sxm5-80gb",), ttft_p95_ms=500, itl_p95_ms=50), load_gpus()
        )
        d = estimate_to_dict(e)
        json.dumps(d, allow_nan=False)
        assert {
            "gpu",
            "gpu_count",
            "fits",
            "memory",
            "max_concurrency",
            "performance",
            "meets_latency_target",
            "basis",
            "notes",
        } <= d.keys()
        assert {
            "weights_gb",
            "kv_cache_gb",
            "activations_gb",
            "optimizer_gb",
            "overhead_gb",
            "total_gb",
            "capacity_gb",
            "headroom_gb",
        } <= d["memory"].keys()
        assert {
            "output_tokens_per_s",
            "output_tokens_per_s_per_gpu",
            "ttft_ms",
            "itl_ms",
            "e2e_latency_s",
            "bound",
            "training_tokens_per_s_per_gpu",
        } <= d["performance"].keys()
        assert d["basis"] == "ESTIMATED"
