"""Properties that hold for every costed row."""

from __future__ import annotations

import dataclasses
from decimal import Decimal as D

from hypothesis import given, settings
from hypothesis import strategies as st

from apps.engine.costing import (
    ApiRouteTerms,
    CapacityFigures,
    Demand,
    PricingTerm,
    QuoteTerms,
    SuccessUnit,
    cost_api_candidate,
    cost_gpu_candidate,
)
from apps.engine.types import WorkloadType
from tests.unit.costing.builders import finance


def dec(low: str, high: str, places: int = 2) -> st.SearchStrategy[D]:
    return st.decimals(
        min_value=D(low), max_value=D(high), places=places, allow_nan=False, allow_infinity=False
    )


UNITS = {
    WorkloadType.TRAINING: SuccessUnit.TRAINING_RUN,
    WorkloadType.FULL_FINETUNE: SuccessUnit.TRAINING_RUN,
    WorkloadType.LORA_FINETUNE: SuccessUnit.TRAINING_RUN,
    WorkloadType.QLORA_FINETUNE: SuccessUnit.TRAINING_RUN,
    WorkloadType.REALTIME_INFERENCE: SuccessUnit.TOKEN,
    WorkloadType.BATCH_INFERENCE: SuccessUnit.TOKEN,
    WorkloadType.EVALUATION: SuccessUnit.EVALUATION,
    WorkloadType.EMBEDDINGS: SuccessUnit.RECORD,
    WorkloadType.IMAGE_GENERATION: SuccessUnit.IMAGE,
    WorkloadType.VIDEO_GENERATION: SuccessUnit.CLIP,
}

demands = st.builds(
    lambda wt, hours, tin, tout, reqs, records, jobs, interval: Demand(
        workload_type=wt,
        success_unit=UNITS[wt],
        hours_per_month=hours,
        input_tokens_mean=tin,
        output_tokens_mean=tout,
        requests_per_month=reqs,
        records_per_job=records,
        jobs_per_month=jobs,
        checkpoint_interval_minutes=interval,
    ),
    st.sampled_from(list(WorkloadType)),
    dec("1", "730", 1),
    dec("1", "8000", 0),
    dec("1", "2000", 0),
    st.one_of(st.none(), dec("1", "100000000", 0)),
    st.one_of(st.none(), dec("1", "10000000", 0)),
    dec("0.5", "30", 1),
    st.one_of(st.none(), dec("5", "240", 0)),
)

capacities = st.builds(
    lambda gpus, replicas, hours, tok_s, train_h, ckpt_s, items, recs, fits, batch: CapacityFigures(
        gpu_count=gpus,
        replicas=replicas,
        gpu_hours_per_month=hours,
        fits=fits,
        output_tokens_per_s_per_replica=tok_s,
        time_to_train_hours=train_h,
        checkpoint_write_s=ckpt_s,
        items_per_hour_per_replica=items,
        records_per_s_per_replica=recs,
        batch_per_replica=batch,
    ),
    st.sampled_from([1, 2, 4, 8]),
    st.integers(1, 8),
    dec("0", "20000", 1),
    st.one_of(st.none(), dec("1", "50000", 1)),
    st.one_of(st.none(), dec("0.1", "2000", 1)),
    st.one_of(st.none(), dec("1", "600", 0)),
    st.one_of(st.none(), dec("1", "5000", 1)),
    st.one_of(st.none(), dec("1", "20000", 1)),
    st.booleans(),
    st.one_of(st.none(), st.integers(1, 512)),
)

quotes = st.builds(
    lambda term, price, storage, egress, capex: QuoteTerms(
        pricing_term=term,
        hourly_price_per_gpu=price,
        storage_price_per_tb_month=storage,
        egress_price_per_gb=egress,
        capex_per_gpu=capex if term is PricingTerm.OWNED else None,
        depreciation_months=60 if term is PricingTerm.OWNED and capex is not None else None,
        gpu_tdp_w=D(700),
    ),
    st.sampled_from(list(PricingTerm)),
    dec("0.01", "20", 3),
    dec("0", "50", 2),
    dec("0", "0.2", 3),
    st.one_of(st.none(), dec("1000", "60000", 0)),
)

finances = st.builds(
    lambda retry, failure, acceptance, obs: finance(
        retry_rate=retry, failure_rate=failure, acceptance_rate=acceptance, observability_share=obs
    ),
    dec("0", "0.5", 3),
    dec("0", "0.5", 3),
    dec("0.05", "1", 3),
    dec("0", "0.3", 3),
)

routes = st.builds(
    lambda p_in, p_out, discount: ApiRouteTerms(
        input_price_per_mtok=p_in, output_price_per_mtok=p_out, batch_discount=discount
    ),
    dec("0", "30", 2),
    dec("0", "100", 2),
    dec("0", "0.9", 2),
)


def assert_consistent(row):
    assert sum(row.cost_lines.values(), D(0)) == row.monthly_cost
    assert all(v >= 0 for v in row.cost_lines.values())
    assert row.accepted_outputs_per_month <= row.generated_outputs_per_month
    if row.effective_unit_cost is None:
        assert row.accepted_outputs_per_month == 0
    else:
        exact = row.monthly_cost / row.accepted_outputs_per_month
        assert abs(exact - row.effective_unit_cost) <= exact * D("1e-9")


class TestEveryRow:
    @settings(max_examples=300, deadline=None)
    @given(demand=demands, capacity=capacities, quote=quotes, fin=finances)
    def test_gpu_lines_sum_to_the_monthly_cost_and_divide_to_the_unit_cost(
        self, demand, capacity, quote, fin
    ):
        row = cost_gpu_candidate(demand=demand, capacity=capacity, quote=quote, finance=fin)

        assert_consistent(row)
        assert 0 <= row.utilization <= 1

    @settings(max_examples=200, deadline=None)
    @given(demand=demands, route=routes, fin=finances)
    def test_api_lines_sum_to_the_monthly_cost_and_divide_to_the_unit_cost(
        self, demand, route, fin
    ):
        row = cost_api_candidate(demand=demand, route=route, finance=fin)

        assert_consistent(row)


class TestMonotonic:
    @settings(max_examples=200, deadline=None)
    @given(
        demand=demands,
        capacity=capacities,
        quote=quotes,
        fin=finances,
        factor=dec("1", "5", 2),
    )
    def test_raising_the_price_never_lowers_the_unit_cost(
        self, demand, capacity, quote, fin, factor
    ):
        dearer = dataclasses.replace(
            quote,
            hourly_price_per_gpu=quote.hourly_price_per_gpu * factor,
            capex_per_gpu=None if quote.capex_per_gpu is None else quote.capex_per_gpu * factor,
        )

        before = cost_gpu_candidate(demand=demand, capacity=capacity, quote=quote, finance=fin)
        after = cost_gpu_candidate(demand=demand, capacity=capacity, quote=dearer, finance=fin)

        assert after.monthly_cost >= before.monthly_cost
        if before.effective_unit_cost is not None:
            assert after.effective_unit_cost >= before.effective_unit_cost

    @settings(max_examples=200, deadline=None)
    @given(
        demand=demands,
        capacity=capacities,
        quote=quotes,
        fin=finances,
        lower=dec("0.01", "1", 3),
    )
    def test_lowering_acceptance_never_lowers_the_unit_cost(
        self, demand, capacity, quote, fin, lower
    ):
        worse = dataclasses.replace(fin, acceptance_rate=fin.acceptance_rate * lower)

        before = cost_gpu_candidate(demand=demand, capacity=capacity, quote=quote, finance=fin)
        after = cost_gpu_candidate(demand=demand, capacity=capacity, quote=quote, finance=worse)

        if after.effective_unit_cost is not None and before.effective_unit_cost is not None:
            assert after.effective_unit_cost >= before.effective_unit_cost


class TestReservedAtFullUtilization:
    @settings(max_examples=100, deadline=None)
    @given(
        gpus=st.sampled_from([1, 2, 4, 8]),
        replicas=st.integers(1, 16),
        term=st.sampled_from(
            [PricingTerm.RESERVED_1Y, PricingTerm.RESERVED_3Y, PricingTerm.DEDICATED_CLUSTER]
        ),
        price=dec("0.1", "10", 2),
        retry=dec("0", "0.3", 3),
    )
    def test_an_always_busy_reservation_has_no_idle_capacity(
        self, gpus, replicas, term, price, retry
    ):
        demand = Demand(
            workload_type=WorkloadType.REALTIME_INFERENCE,
            success_unit=SuccessUnit.TOKEN,
            hours_per_month=D(730),
            output_tokens_mean=D(100),
            requests_per_month=D(1000),
        )
        capacity = CapacityFigures(
            gpu_count=gpus,
            replicas=replicas,
            gpu_hours_per_month=D(730) * gpus * replicas,
            fits=True,
        )
        quote = QuoteTerms(pricing_term=term, hourly_price_per_gpu=price)

        row = cost_gpu_candidate(
            demand=demand, capacity=capacity, quote=quote, finance=finance(retry_rate=retry)
        )

        assert row.cost_lines["idle_capacity"] == 0
        assert row.utilization == 1
