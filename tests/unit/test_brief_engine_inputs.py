"""A stored brief becomes the engine's typed request in one place (apps.briefs.contract), with
no JSON in between, and it is exactly the request the API contract's body of the same brief
parses to: same fields, same values, and the same EngineInputError (field and words) when the
engine cannot estimate it yet."""

from decimal import Decimal

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from apps.briefs.contract import (
    demand_for_brief,
    estimate_body_for_brief,
    request_for_brief,
    requests_per_month,
)
from apps.engine import EngineInputError, parse_estimate_request
from apps.engine.costing import SuccessUnit
from tests.factories.briefs import BriefFactory

TRAINING = {
    "training_tokens": 2_000_000_000,
    "sequence_length": 4096,
    "global_batch_tokens": 1_048_576,
    "optimizer": "ADAMW_8BIT",
    "sharding": "ZERO3",
    "activation_checkpointing": True,
    "checkpoint_interval_minutes": 90,
    "input_tokens_p50": None,
    "input_tokens_p95": None,
    "output_tokens_p50": None,
    "output_tokens_p95": None,
    "concurrency": None,
    "latency_percentile": "OFFLINE",
    "success_unit": "TRAINING_RUN",
}
MEDIA = {
    "input_tokens_p50": None,
    "input_tokens_p95": None,
    "output_tokens_p50": None,
    "output_tokens_p95": None,
    "weight_precision": "BF16",
    "kv_cache_precision": "",
}

BRIEFS = {
    "real-time, the contract example": {},
    "real-time at p99 with an end-to-end target": {
        "latency_percentile": "P99",
        "ttft_target_ms": 800,
        "itl_target_ms": None,
        "e2e_target_ms": 12_000,
    },
    "real-time by request rate": {"concurrency": None, "requests_per_second": Decimal("12.5")},
    "weights as the checkpoint ships": {"weight_precision": "", "kv_cache_precision": ""},
    "explicit model numbers": {
        "model_preset": "",
        "params_billion": Decimal("6.7"),
        "layers": 32,
        "hidden_size": 4096,
        "attention_heads": 32,
        "kv_heads": 8,
        "vocab_size": 128256,
    },
    "offline batch": {
        "workload_type": "BATCH_INFERENCE",
        "concurrency": None,
        "records_per_job": 2_000_000,
        "latency_percentile": "OFFLINE",
        "duty_cycle": "SCHEDULED_BATCH",
        "hours_per_month": Decimal("120.5"),
        "success_unit": "RECORD",
    },
    "embeddings": {
        "workload_type": "EMBEDDINGS",
        "output_tokens_p50": None,
        "output_tokens_p95": None,
        "records_per_job": 10_000,
        "latency_percentile": "",
        "model_preset": "bge-large-en-v1.5",
    },
    "pre-training": {**TRAINING, "workload_type": "TRAINING"},
    "LoRA at the default rank": {**TRAINING, "workload_type": "LORA_FINETUNE", "sharding": ""},
    "QLoRA at rank 64, no checkpoints": {
        **TRAINING,
        "workload_type": "QLORA_FINETUNE",
        "lora_rank": 64,
        "checkpoint_interval_minutes": None,
        "activation_checkpointing": False,
        "optimizer": "",
    },
    "image generation": {
        **MEDIA,
        "workload_type": "IMAGE_GENERATION",
        "model_preset": "sdxl",
        "image_width": 1024,
        "image_height": 768,
        "success_unit": "IMAGE",
    },
    "image generation at its own step count": {
        **MEDIA,
        "workload_type": "IMAGE_GENERATION",
        "model_preset": "sdxl",
        "image_width": 1024,
        "image_height": 1024,
        "diffusion_steps": 25,
        "success_unit": "IMAGE",
    },
    "video generation": {
        **MEDIA,
        "workload_type": "VIDEO_GENERATION",
        "model_preset": "flux.1-dev",
        "image_width": 1280,
        "image_height": 720,
        "clip_seconds": Decimal("5.5"),
        "diffusion_steps": 30,
        "success_unit": "CLIP",
    },
    "too many diffusion steps": {
        **MEDIA,
        "workload_type": "IMAGE_GENERATION",
        "model_preset": "sdxl",
        "image_width": 1024,
        "image_height": 1024,
        "diffusion_steps": 5000,
    },
    # What the engine cannot estimate yet: the same field and words either way.
    "no workload type": {"workload_type": ""},
    "no model": {"model_preset": ""},
    "an unknown preset": {"model_preset": "no-such-model"},
    "a diffusion model serving tokens": {"model_preset": "sdxl"},
    "no input tokens": {"input_tokens_p50": None, "input_tokens_p95": None},
    "no concurrency of zero": {"concurrency": 0},
    "a zero latency target": {"ttft_target_ms": 0},
    "an image too small": {
        **MEDIA,
        "workload_type": "IMAGE_GENERATION",
        "model_preset": "sdxl",
        "image_width": 32,
        "image_height": 32,
    },
    "an image without a height": {
        **MEDIA,
        "workload_type": "IMAGE_GENERATION",
        "model_preset": "sdxl",
        "image_width": 512,
    },
    "a zero-second clip": {
        **MEDIA,
        "workload_type": "VIDEO_GENERATION",
        "model_preset": "flux.1-dev",
        "image_width": 512,
        "image_height": 512,
        "clip_seconds": Decimal("0"),
    },
    "a zero sequence length": {**TRAINING, "workload_type": "TRAINING", "sequence_length": 0},
}


def engine_answer(build):
    try:
        return build()
    except EngineInputError as exc:
        return ("EngineInputError", exc.field, exc.message)


def through_the_contract_body(brief):
    return parse_estimate_request(estimate_body_for_brief(brief), known_gpus=())


@pytest.mark.parametrize("fields", BRIEFS.values(), ids=BRIEFS.keys())
def test_the_typed_request_is_the_one_the_contract_body_parses_to(fields):
    brief = BriefFactory.build(**fields)

    typed = engine_answer(lambda: request_for_brief(brief))

    assert typed == engine_answer(lambda: through_the_contract_body(brief))


def test_the_typed_request_carries_the_briefs_values():
    brief = BriefFactory.build(**BRIEFS["real-time at p99 with an end-to-end target"])

    request = request_for_brief(brief)

    assert (request.ttft_p95_ms, request.itl_p95_ms, request.e2e_p95_s) == (800.0, None, 12.0)
    assert (request.input_tokens_p50, request.input_tokens_p95) == (1000, 4000)
    assert request.concurrency == 32
    assert request.gpus is None and request.gpu_count is None


@settings(max_examples=60, deadline=None)
@given(
    concurrency=st.one_of(st.none(), st.integers(0, 2_000_000)),
    rps=st.one_of(st.none(), st.decimals("0", "99999", places=3)),
    p50=st.one_of(st.none(), st.integers(0, 20_000_000)),
    extra=st.integers(0, 5000),
    ttft=st.one_of(st.none(), st.integers(0, 10**9)),
    hours=st.one_of(st.none(), st.decimals("0.1", "744", places=1)),
    acceptance=st.one_of(st.none(), st.decimals("0.0001", "1", places=4)),
    records=st.one_of(st.none(), st.integers(0, 10**13)),
)
# Two bad fields at once (found by hypothesis): both ways name the same one first.
@example(
    concurrency=None,
    rps=Decimal("0"),
    p50=5,
    extra=0,
    ttft=10**9,
    hours=None,
    acceptance=None,
    records=None,
)
def test_any_request_shape_is_read_alike_both_ways(
    concurrency, rps, p50, extra, ttft, hours, acceptance, records
):
    brief = BriefFactory.build(
        concurrency=concurrency,
        requests_per_second=rps,
        input_tokens_p50=p50,
        input_tokens_p95=None if p50 is None else p50 + extra,
        ttft_target_ms=ttft,
        hours_per_month=hours,
        acceptance_rate=acceptance,
        records_per_job=records,
    )

    typed = engine_answer(lambda: request_for_brief(brief))

    assert typed == engine_answer(lambda: through_the_contract_body(brief))


class TestDemandForBrief:
    def test_a_request_rate_is_the_demand_whatever_the_latencies(self):
        brief = BriefFactory.build(requests_per_second=Decimal("2"), hours_per_month=Decimal(100))

        assert requests_per_month(brief, [9.0]) == Decimal(2 * 3600 * 100)

    def test_concurrency_over_the_median_latency_of_the_gpus_that_fit(self):
        brief = BriefFactory.build(concurrency=10, hours_per_month=Decimal(730))

        demand = demand_for_brief(brief, [4.0, 1.0, 2.0])

        assert demand.requests_per_month == Decimal(10) / Decimal(2) * 3600 * 730
        assert demand.success_unit is SuccessUnit.TOKEN

    def test_no_latency_to_go_by_is_no_demand_yet(self):
        brief = BriefFactory.build(concurrency=10)

        assert requests_per_month(brief, []) is None


@pytest.mark.parametrize(
    ("fields", "conditions"),
    [
        ({}, {"input_tokens": 700, "output_tokens": 90, "concurrency": 4}),
        ({"input_tokens_p50": None, "input_tokens_p95": None}, {"input_tokens": 300}),
        ({"concurrency": None}, {"concurrency": 2_000_000}),
        ({}, {"output_tokens": 20_000_000}),
    ],
)
def test_a_runs_conditions_stand_in_for_the_briefs_as_in_the_contract_body(fields, conditions):
    brief = BriefFactory.build(**fields)
    body = estimate_body_for_brief(brief)
    for key in ("input_tokens", "output_tokens"):
        if key in conditions:
            body[key] = {"p50": conditions[key], "p95": conditions[key]}
    if "concurrency" in conditions:
        body["concurrency"] = conditions["concurrency"]

    typed = engine_answer(lambda: request_for_brief(brief, **conditions))

    assert typed == engine_answer(lambda: parse_estimate_request(body, known_gpus=()))


def test_a_media_briefs_diffusion_steps_reach_the_engine():
    """The brief's own step count (issue 27's field), else the preset's default."""
    fields = BRIEFS["image generation at its own step count"]
    assert request_for_brief(BriefFactory.build(**fields)).diffusion_steps == 25
    default = request_for_brief(BriefFactory.build(**{**fields, "diffusion_steps": None}))
    assert default.diffusion_steps is None  # the engine takes SDXL's 40
