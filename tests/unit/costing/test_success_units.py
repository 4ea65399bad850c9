"""The success units the seed asks for, how each is counted, and the scale its table reads in."""

from __future__ import annotations

from decimal import Decimal as D

import pytest

from apps.engine.costing import (
    ApiRouteTerms,
    CapacityFigures,
    Demand,
    SuccessUnit,
    cost_api_candidate,
    cost_gpu_candidate,
)
from apps.engine.types import WorkloadType
from apps.engine.units import TABLE_UNITS, scale_text, table_unit, unit_applies
from tests.unit.costing.builders import finance, quote, realtime_capacity, realtime_demand


def video(unit: SuccessUnit, seconds: str = "8") -> Demand:
    return Demand(
        workload_type=WorkloadType.VIDEO_GENERATION,
        success_unit=unit,
        hours_per_month=D(200),
        requests_per_month=D(1000),
        clip_seconds=D(seconds),
        storage_tb=D(1),
    )


VIDEO_CAPACITY = CapacityFigures(
    gpu_count=1, replicas=1, gpu_hours_per_month=D(200), fits=True,
    items_per_hour_per_replica=D(10),
)  # fmt: skip


def training(workload: WorkloadType, unit: SuccessUnit) -> Demand:
    return Demand(workload_type=workload, success_unit=unit, hours_per_month=D(10))


TRAINING_CAPACITY = CapacityFigures(
    gpu_count=1, replicas=1, gpu_hours_per_month=D(10), fits=True,
    time_to_train_hours=D(10), gpus_total=1,
)  # fmt: skip


class TestTableUnits:
    def test_every_success_unit_has_a_table_unit(self):
        assert set(TABLE_UNITS) == set(SuccessUnit)

    @pytest.mark.parametrize(
        ("unit", "label", "scale"),
        [
            (SuccessUnit.TOKEN, "per 1M accepted tokens", 1_000_000),
            (SuccessUnit.REQUEST, "per 1k accepted requests", 1_000),
            (SuccessUnit.RECORD, "per 1k processed records", 1_000),
            (SuccessUnit.IMAGE, "per 1k accepted images", 1_000),
            (SuccessUnit.CLIP, "per accepted clip", 1),
            (SuccessUnit.VIDEO_SECOND, "per accepted second of video", 1),
            (SuccessUnit.PATCH, "per accepted patch or task", 1),
            (SuccessUnit.CHECKPOINT, "per accepted fine-tuned checkpoint", 1),
            (SuccessUnit.TRAINING_RUN, "per completed training run", 1),
            (SuccessUnit.EVALUATION, "per completed evaluation", 1),
        ],
    )
    def test_each_unit_reads_at_its_scale(self, unit, label, scale):
        assert (table_unit(unit).label, table_unit(unit).scale) == (label, scale)

    def test_scaling_is_exact(self):
        assert table_unit("TOKEN").scaled(D("0.000004851234")) == D("4.851234")

    @pytest.mark.parametrize(
        ("scale", "text"), [(1_000_000, "1M"), (1_000, "1k"), (10_000, "10k"), (250, "250")]
    )
    def test_scale_text(self, scale, text):
        assert scale_text(scale) == text


class TestVideoSeconds:
    def test_a_clip_counts_its_seconds(self):
        per_clip = cost_gpu_candidate(
            demand=video(SuccessUnit.CLIP), capacity=VIDEO_CAPACITY, quote=quote(),
            finance=finance(),
        )  # fmt: skip
        per_second = cost_gpu_candidate(
            demand=video(SuccessUnit.VIDEO_SECOND), capacity=VIDEO_CAPACITY, quote=quote(),
            finance=finance(),
        )  # fmt: skip

        assert per_second.monthly_cost == per_clip.monthly_cost
        assert per_second.generated_outputs_per_month == 8 * per_clip.generated_outputs_per_month
        assert per_second.meets_constraints
        ratio = per_clip.effective_unit_cost / per_second.effective_unit_cost
        assert abs(ratio - 8) < D("1e-8")

    def test_seconds_of_video_do_not_apply_to_images(self):
        demand = Demand(
            workload_type=WorkloadType.IMAGE_GENERATION,
            success_unit=SuccessUnit.VIDEO_SECOND,
            hours_per_month=D(200),
            requests_per_month=D(1000),
        )
        row = cost_gpu_candidate(
            demand=demand, capacity=VIDEO_CAPACITY, quote=quote(), finance=finance()
        )

        assert row.effective_unit_cost is None
        assert row.why_not == (
            "success unit VIDEO_SECOND does not apply to IMAGE_GENERATION (no outputs counted)",
        )


class TestPatches:
    def test_a_code_agents_task_is_one_request_accepted_at_the_acceptance_rate(self):
        """Token counts per request are the whole task's; 2M tasks a month, 35% accepted."""
        demand = realtime_demand(success_unit=SuccessUnit.PATCH, acceptance_rate=D("0.35"))
        requests = realtime_demand(success_unit=SuccessUnit.REQUEST, acceptance_rate=D("0.35"))

        patch = cost_gpu_candidate(
            demand=demand, capacity=realtime_capacity(), quote=quote(), finance=finance()
        )
        request = cost_gpu_candidate(
            demand=requests, capacity=realtime_capacity(), quote=quote(), finance=finance()
        )

        assert patch.meets_constraints
        assert patch.generated_outputs_per_month == D(2_000_000)
        assert patch.accepted_outputs_per_month == D(2_000_000) * D("0.99") * D("0.35")
        assert (patch.monthly_cost, patch.effective_unit_cost) == (
            request.monthly_cost,
            request.effective_unit_cost,
        )

    def test_an_api_route_serves_patches_too(self):
        route = ApiRouteTerms(input_price_per_mtok=D(3), output_price_per_mtok=D(15))

        row = cost_api_candidate(
            demand=realtime_demand(success_unit=SuccessUnit.PATCH), route=route, finance=finance()
        )

        assert row.meets_constraints and row.effective_unit_cost is not None


class TestCheckpoints:
    @pytest.mark.parametrize(
        "workload",
        [WorkloadType.FULL_FINETUNE, WorkloadType.LORA_FINETUNE, WorkloadType.QLORA_FINETUNE],
    )
    def test_a_fine_tune_leaves_one_checkpoint_a_run(self, workload):
        checkpoint = cost_gpu_candidate(
            demand=training(workload, SuccessUnit.CHECKPOINT), capacity=TRAINING_CAPACITY,
            quote=quote(), finance=finance(),
        )  # fmt: skip
        run = cost_gpu_candidate(
            demand=training(workload, SuccessUnit.TRAINING_RUN), capacity=TRAINING_CAPACITY,
            quote=quote(), finance=finance(),
        )  # fmt: skip

        assert checkpoint.meets_constraints
        assert checkpoint.accepted_outputs_per_month == run.accepted_outputs_per_month
        assert checkpoint.effective_unit_cost == run.effective_unit_cost

    def test_pre_training_leaves_no_fine_tuned_checkpoint(self):
        row = cost_gpu_candidate(
            demand=training(WorkloadType.TRAINING, SuccessUnit.CHECKPOINT),
            capacity=TRAINING_CAPACITY, quote=quote(), finance=finance(),
        )  # fmt: skip

        assert row.effective_unit_cost is None and row.why_not


class TestWhichUnitsApply:
    @pytest.mark.parametrize(
        ("unit", "workload", "applies"),
        [
            (SuccessUnit.PATCH, WorkloadType.REALTIME_INFERENCE, True),
            (SuccessUnit.PATCH, WorkloadType.BATCH_INFERENCE, True),
            (SuccessUnit.PATCH, WorkloadType.IMAGE_GENERATION, False),
            (SuccessUnit.CHECKPOINT, WorkloadType.LORA_FINETUNE, True),
            (SuccessUnit.CHECKPOINT, WorkloadType.REALTIME_INFERENCE, False),
            (SuccessUnit.VIDEO_SECOND, WorkloadType.VIDEO_GENERATION, True),
            (SuccessUnit.TRAINING_RUN, WorkloadType.QLORA_FINETUNE, True),
            (SuccessUnit.TOKEN, WorkloadType.EMBEDDINGS, True),
            (SuccessUnit.EVALUATION, WorkloadType.BATCH_INFERENCE, False),
        ],
    )
    def test_unit_applies(self, unit, workload, applies):
        assert unit_applies(unit, workload) is applies
