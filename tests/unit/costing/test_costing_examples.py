"""Worked examples, computed by hand in each docstring, pinned to the exact Decimal result.

All use `builders.finance()`: labour $100/h, observability 5%, retries 2%, failures 1%,
acceptance 90%, so accepted = generated x 0.99 x 0.9 = generated x 0.891. Platform labour is the
self-managed default, 40 h x $100 = $4,000 (API: 4 h x $100 = $400).
"""

from __future__ import annotations

from decimal import Decimal as D

from apps.engine.costing import (
    ApiRouteTerms,
    CapacityFigures,
    Demand,
    PricingTerm,
    SuccessUnit,
    cost_api_candidate,
    cost_gpu_candidate,
)
from apps.engine.types import WorkloadType
from tests.unit.costing.builders import finance, quote, realtime_capacity, realtime_demand


class TestTrainingRunCost:
    def test_an_8b_full_finetune_on_8_gpus_costs_each_completed_run(self):
        """8B full fine-tune, 8 GPUs on demand at $2.50/GPU-h, 20 h a run, 2 runs a month,
        checkpoint every 60 min taking 36 s, 2 TB of storage at $20/TB.

        gpu_compute      = 20 h x 8 GPUs x 2 runs = 320 GPU-h x $2.50            = 800.0000
        checkpointing    = ceil(1,200 min / 60) = 20 saves x 36 s = 720 s = 0.2 h
                           x 8 GPUs x 2 runs = 3.2 GPU-h x $2.50                  =   8.0000
        failed_run_waste = 8 GPUs x 20 h x 0.0000197/GPU-h = 0.003152 interruptions a run,
                           each losing 60/2 + 15 = 45 min = 0.75 h on 8 GPUs:
                           0.003152 x 0.75 x 8 x 2 runs = 0.037824 GPU-h x $2.50
                           = 0.09456                                              ->  0.0946
        idle_capacity    = 0 (on demand)                                          =   0.0000
        storage          = 2 TB x $20                                             =  40.0000
        network_egress   = 0 (training has no egress by default)                  =   0.0000
        provider_extras  =                                                        =   0.0000
        observability    = 5% x (800 + 8 + 0.09456) = 40.404728                   ->  40.4047
        platform_labour  = 40 h x $100                                            = 4000.0000
        monthly cost                                                              = 4888.4993
        accepted runs    = 2 x (1 - 0.01) x 0.9 = 1.782
        unit cost        = 4888.4993 / 1.782 = 2743.2656004...                    -> 2743.265600
        """
        demand = Demand(
            workload_type=WorkloadType.FULL_FINETUNE,
            success_unit=SuccessUnit.TRAINING_RUN,
            hours_per_month=D(40),
            jobs_per_month=D(2),
            checkpoint_interval_minutes=D(60),
            storage_tb=D(2),
        )
        capacity = CapacityFigures(
            gpu_count=8,
            replicas=1,
            gpus_total=8,
            gpu_hours_per_month=D(320),
            fits=True,
            time_to_train_hours=D(20),
            checkpoint_write_s=D(36),
        )

        row = cost_gpu_candidate(
            demand=demand, capacity=capacity, quote=quote(price="2.50"), finance=finance()
        )

        assert row.cost_lines == {
            "gpu_compute": D("800.0000"),
            "checkpointing": D("8.0000"),
            "failed_run_waste": D("0.0946"),
            "idle_capacity": D("0.0000"),
            "storage": D("40.0000"),
            "network_egress": D("0.0000"),
            "provider_extras": D("0.0000"),
            "observability": D("40.4047"),
            "platform_labour": D("4000.0000"),
        }
        assert list(row.cost_lines) == [
            "gpu_compute",
            "checkpointing",
            "failed_run_waste",
            "idle_capacity",
            "storage",
            "network_egress",
            "provider_extras",
            "observability",
            "platform_labour",
        ]
        assert row.monthly_cost == D("4888.4993")
        assert row.generated_outputs_per_month == D("2.0000")
        assert row.accepted_outputs_per_month == D("1.7820")
        assert row.effective_unit_cost == D("2743.265600")
        assert row.success_unit is SuccessUnit.TRAINING_RUN
        assert row.meets_constraints is True
        assert row.utilization == D("1.0000")


class TestRealtimeInferenceCost:
    def test_reserved_replicas_busy_200_hours_show_their_idle_capacity(self):
        """2M requests x 250 output tokens = 500M tokens over 200 active h; two 1-GPU replicas
        reserved for a year at $2.00/GPU-h; network $50/month, extras $100/month, 100 GB egress.

        Demand check: 500M / 0.98 / (200 h x 3,600 s) = 708.6 tok/s <= 2 x 1,000 tok/s.
        Serving hours = 2 GPUs x 200 h = 400 GPU-h; the retried 2% of them = 8 GPU-h.
        gpu_compute     = (400 - 8) x $2                                          =  784.0000
        retry_waste     = 8 x $2                                                  =   16.0000
        idle_capacity   = (2 GPUs x 730 h = 1,460 - 400) = 1,060 GPU-h x $2       = 2120.0000
        GPU bill        = 784 + 16 + 2,120                                        = 2920
        serving_stack   = 5% x 2,920                                              =  146.0000
        storage         = 1 TB x $20                                              =   20.0000
        network_egress  = 100 GB x $0.05 + $50                                    =   55.0000
        provider_extras =                                                         =  100.0000
        observability   = 5% x 2,920                                              =  146.0000
        platform_labour = 40 h x $100                                             = 4000.0000
        monthly cost                                                              = 7387.0000
        accepted tokens = 500,000,000 x 0.891 = 445,500,000
        unit cost       = 7,387 / 445,500,000 = 0.0000165813692480...     -> 0.00001658136925
        utilization     = 400 / 1,460 = 0.27397                                   -> 0.2740
        """
        row = cost_gpu_candidate(
            demand=realtime_demand(),
            capacity=realtime_capacity(),
            quote=quote(
                PricingTerm.RESERVED_1Y,
                "2.00",
                network_monthly=D(50),
                monthly_extras=D(100),
            ),
            finance=finance(),
        )

        assert row.cost_lines == {
            "gpu_compute": D("784.0000"),
            "retry_waste": D("16.0000"),
            "serving_stack": D("146.0000"),
            "idle_capacity": D("2120.0000"),
            "storage": D("20.0000"),
            "network_egress": D("55.0000"),
            "provider_extras": D("100.0000"),
            "observability": D("146.0000"),
            "platform_labour": D("4000.0000"),
        }
        assert row.monthly_cost == D("7387.0000")
        assert row.accepted_outputs_per_month == D("445500000.0000")
        assert row.effective_unit_cost == D("0.00001658136925")
        assert row.utilization == D("0.2740")
        assert row.gpus_paid == 2
        assert row.paid_gpu_hours_per_month == D("1460.0000")
        assert row.meets_constraints is True
        assert any("idle capacity: RESERVED_1Y pays 1460 GPU-h" in n for n in row.notes)


class TestBatchInferenceCost:
    def test_four_jobs_of_a_million_records_on_demand(self):
        """4 jobs x 1M records x 450 output tokens = 1.8B tokens; 2-GPU replicas at 5,000 tok/s;
        on demand at $3.00/GPU-h; egress defaults to 4 bytes a token.

        GPU-hours       = 1.8e9 / (5,000 x 3,600) = 100 h x 2 GPUs = 200 GPU-h
        gpu_compute     = 200 x $3                                                =  600.0000
        retry_waste     = 600 x 0.02 / 0.98 = 12.244897...                        ->  12.2449
        idle_capacity   = 0 (on demand)                                           =    0.0000
        storage         = 1 TB x $20                                              =   20.0000
        network_egress  = 1.8e9 x 4 B = 7.2 GB x $0.05                            =    0.3600
        provider_extras =                                                         =    0.0000
        observability   = 5% x (600 + 12.244897...) = 30.612244...                ->  30.6122
        platform_labour = 40 h x $100                                             = 4000.0000
        monthly cost                                                              = 4663.2171
        accepted tokens = 1.8e9 x 0.891 = 1,603,800,000
        unit cost       = 4,663.2171 / 1,603,800,000 = 0.00000290760512...  -> 0.000002907605125
        """
        demand = Demand(
            workload_type=WorkloadType.BATCH_INFERENCE,
            success_unit=SuccessUnit.TOKEN,
            hours_per_month=D(100),
            input_tokens_mean=D(500),
            output_tokens_mean=D(450),
            records_per_job=D(1_000_000),
            jobs_per_month=D(4),
            storage_tb=D(1),
        )
        capacity = CapacityFigures(
            gpu_count=2,
            replicas=1,
            gpu_hours_per_month=D(0),
            fits=True,
            output_tokens_per_s_per_replica=D(5000),
        )

        row = cost_gpu_candidate(
            demand=demand, capacity=capacity, quote=quote(price="3.00"), finance=finance()
        )

        assert row.cost_lines == {
            "gpu_compute": D("600.0000"),
            "retry_waste": D("12.2449"),
            "idle_capacity": D("0.0000"),
            "storage": D("20.0000"),
            "network_egress": D("0.3600"),
            "provider_extras": D("0.0000"),
            "observability": D("30.6122"),
            "platform_labour": D("4000.0000"),
        }
        assert row.monthly_cost == D("4663.2171")
        assert row.accepted_outputs_per_month == D("1603800000.0000")
        assert row.effective_unit_cost == D("0.000002907605125")


class TestImageGenerationCost:
    def test_300k_images_on_one_gpu_with_moderation_and_review(self):
        """300,000 images a month at 600 images/h on one GPU at $1.00/GPU-h; defaults for
        moderation ($0.001/image), review (5% of renders, 0.5 min each), queue (3%) and
        egress (1.5 MB an image).

        GPU-hours       = 300,000 / 600 = 500 GPU-h x $1 = $500
        gpu_compute     = 500 x (1 - 0.01)                                        =   495.0000
        failed_renders  = 500 x 0.01                                              =     5.0000
        retry_waste     = 500 x 0.02 / 0.98 = 10.204081...                        ->   10.2041
        queue_overhead  = 3% x (500 + 10.204081...) = 15.306122...                ->   15.3061
        moderation      = 300,000 x 0.99 = 297,000 renders x $0.001               =   297.0000
        operator_review = 297,000 x 5% = 14,850 x 0.5 min = 123.75 h x $100       = 12375.0000
        idle_capacity   = 0 (on demand)                                           =     0.0000
        storage         = 1 TB x $20                                              =    20.0000
        network_egress  = 300,000 x 1.5 MB = 450 GB x $0.05                       =    22.5000
        provider_extras =                                                         =     0.0000
        observability   = 5% x 510.204081... = 25.510204...                       ->   25.5102
        platform_labour = 40 h x $100                                             =  4000.0000
        monthly cost                                                              = 17265.5204
        accepted images = 300,000 x 0.891 = 267,300
        unit cost       = 17,265.5204 / 267,300 = 0.0645922947998...              -> 0.06459229480
        """
        demand = Demand(
            workload_type=WorkloadType.IMAGE_GENERATION,
            success_unit=SuccessUnit.IMAGE,
            hours_per_month=D(730),
            requests_per_month=D(300_000),
            storage_tb=D(1),
        )
        capacity = CapacityFigures(
            gpu_count=1,
            replicas=1,
            gpu_hours_per_month=D(0),
            fits=True,
            items_per_hour_per_replica=D(600),
        )

        row = cost_gpu_candidate(
            demand=demand, capacity=capacity, quote=quote(price="1.00"), finance=finance()
        )

        assert row.cost_lines == {
            "gpu_compute": D("495.0000"),
            "failed_renders": D("5.0000"),
            "retry_waste": D("10.2041"),
            "queue_overhead": D("15.3061"),
            "moderation": D("297.0000"),
            "operator_review": D("12375.0000"),
            "idle_capacity": D("0.0000"),
            "storage": D("20.0000"),
            "network_egress": D("22.5000"),
            "provider_extras": D("0.0000"),
            "observability": D("25.5102"),
            "platform_labour": D("4000.0000"),
        }
        assert row.monthly_cost == D("17265.5204")
        assert row.accepted_outputs_per_month == D("267300.0000")
        assert row.effective_unit_cost == D("0.06459229480")


class TestApiRouteCost:
    def test_realtime_demand_on_a_model_api(self):
        """The real-time demand above on an API at $0.20/Mtok in, $0.80/Mtok out (its 50%
        batch discount does not apply to real-time), limit 200 requests a minute.

        api_input_tokens  = 2M x 1,000 = 2,000 Mtok x $0.20                       =  400.0000
        api_output_tokens = 2M x 250 = 500 Mtok x $0.80                           =  400.0000
        retry_waste       = 800 x 0.02 / 0.98 = 16.326530...                      ->  16.3265
        observability     = 5% x 816.326530... = 40.816326...                     ->  40.8163
        platform_labour   = 4 h x $100                                            =  400.0000
        monthly cost                                                              = 1257.1428
        rate limit: 2M / 0.98 / (200 h x 60) = 170.07 rpm <= 200: meets it
        unit cost         = 1,257.1428 / 445,500,000 = 0.00000282186935...  -> 0.000002821869360
        """
        route = ApiRouteTerms(
            input_price_per_mtok=D("0.20"),
            output_price_per_mtok=D("0.80"),
            batch_discount=D("0.5"),
            rate_limit_rpm=200,
        )

        row = cost_api_candidate(demand=realtime_demand(), route=route, finance=finance())

        assert row.cost_lines == {
            "api_input_tokens": D("400.0000"),
            "api_output_tokens": D("400.0000"),
            "retry_waste": D("16.3265"),
            "observability": D("40.8163"),
            "platform_labour": D("400.0000"),
        }
        assert row.monthly_cost == D("1257.1428")
        assert row.accepted_outputs_per_month == D("445500000.0000")
        assert row.effective_unit_cost == D("0.000002821869360")
        assert row.meets_constraints is True
        assert row.pricing_term is None
        assert row.utilization == D("1.0000")

    def test_batch_work_gets_the_batch_discount(self):
        """Batch: 1M records x (1,000 in, 250 out) = 1,000 Mtok x $0.20 x 0.5 = 100.0000 in,
        250 Mtok x $0.80 x 0.5 = 100.0000 out."""
        demand = realtime_demand(
            workload_type=WorkloadType.BATCH_INFERENCE,
            requests_per_month=None,
            records_per_job=D(1_000_000),
        )
        route = ApiRouteTerms(
            input_price_per_mtok=D("0.20"),
            output_price_per_mtok=D("0.80"),
            batch_discount=D("0.5"),
        )

        row = cost_api_candidate(demand=demand, route=route, finance=finance())

        assert row.cost_lines["api_input_tokens"] == D("100.0000")
        assert row.cost_lines["api_output_tokens"] == D("100.0000")
