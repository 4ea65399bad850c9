"""missing_fields() decides whether a brief can be ranked; it needs no database."""

from decimal import Decimal

import pytest

from apps.briefs.models import WorkloadBrief

COMPLETE_REALTIME = {
    "workload_type": "REALTIME_INFERENCE",
    "model_preset": "llama-3.1-8b",
    "weight_precision": "FP8",
    "kv_cache_precision": "FP8",
    "input_tokens_p50": 1000,
    "input_tokens_p95": 4000,
    "output_tokens_p50": 200,
    "output_tokens_p95": 800,
    "concurrency": 32,
    "success_unit": "TOKEN",
    "acceptance_rate": Decimal("0.95"),
    "latency_percentile": "P95",
    "ttft_target_ms": 500,
    "duty_cycle": "ALWAYS_ON",
    "hours_per_month": Decimal("730"),
    "operating_boundary": "PUBLIC_CLOUD",
}

COMPLETE_LORA = {
    "workload_type": "LORA_FINETUNE",
    "model_preset": "llama-3.1-8b",
    "weight_precision": "BF16",
    "success_unit": "TRAINING_RUN",
    "acceptance_rate": Decimal("0.9"),
    "duty_cycle": "EXPERIMENTAL",
    "hours_per_month": Decimal("80"),
    "operating_boundary": "PUBLIC_CLOUD",
    "training_tokens": 10**9,
    "sequence_length": 4096,
    "global_batch_tokens": 2**18,
    "optimizer": "ADAMW",
    "sharding": "NONE",
    "lora_rank": 16,
    "checkpoint_interval_minutes": 30,
}


class TestMissingFields:
    def test_a_complete_realtime_brief_misses_nothing(self):
        brief = WorkloadBrief(**COMPLETE_REALTIME)
        assert brief.missing_fields() == []
        assert brief.is_complete

    def test_a_complete_lora_brief_misses_nothing(self):
        assert WorkloadBrief(**COMPLETE_LORA).missing_fields() == []

    def test_an_empty_brief_names_the_basics(self):
        missing = WorkloadBrief().missing_fields()
        assert missing[:2] == ["workload_type", "model"]
        assert "weight_precision" not in missing  # blank: as the checkpoint ships
        assert "acceptance_rate" in missing

    @pytest.mark.parametrize(
        ("field", "expected"),
        [
            ("input_tokens_p95", "input_tokens_p95"),
            ("kv_cache_precision", "kv_cache_precision"),
            ("acceptance_rate", "acceptance_rate"),
            ("hours_per_month", "hours_per_month"),
        ],
    )
    def test_removing_one_field_reports_exactly_that_field(self, field, expected):
        brief = WorkloadBrief(**{**COMPLETE_REALTIME, field: None})
        assert brief.missing_fields() == [expected]

    def test_realtime_needs_demand(self):
        brief = WorkloadBrief(**{**COMPLETE_REALTIME, "concurrency": None})
        assert brief.missing_fields() == ["concurrency or requests_per_second"]
        brief.requests_per_second = Decimal("5")
        assert brief.missing_fields() == []

    def test_realtime_needs_a_latency_target_unless_offline(self):
        brief = WorkloadBrief(**{**COMPLETE_REALTIME, "ttft_target_ms": None})
        assert brief.missing_fields() == ["latency target"]
        brief.latency_percentile = "OFFLINE"
        assert brief.missing_fields() == []

    def test_a_model_can_be_given_by_explicit_numbers(self):
        explicit = {"params_billion": Decimal("7"), "layers": 32, "hidden_size": 4096}
        brief = WorkloadBrief(**{**COMPLETE_REALTIME, "model_preset": "", **explicit})
        assert brief.missing_fields() == ["model"]  # attention_heads still missing
        brief.attention_heads = 32
        assert brief.missing_fields() == []

    def test_lora_needs_a_rank_but_inference_does_not(self):
        assert WorkloadBrief(**{**COMPLETE_LORA, "lora_rank": None}).missing_fields() == [
            "lora_rank"
        ]
        assert "lora_rank" not in WorkloadBrief(**COMPLETE_REALTIME).missing_fields()

    def test_training_fields_are_asked_only_of_training(self):
        missing = WorkloadBrief(**{**COMPLETE_LORA, "workload_type": "TRAINING"}).missing_fields()
        assert missing == []
        stripped = {**COMPLETE_LORA, "training_tokens": None, "optimizer": ""}
        assert WorkloadBrief(**stripped).missing_fields() == ["training_tokens", "optimizer"]
