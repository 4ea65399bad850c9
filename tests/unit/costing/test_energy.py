"""The energy model (apps.engine.energy) and a candidate's energy figures, against hand
calculations."""

from decimal import Decimal as D

from apps.engine.costing import PricingTerm, cost_gpu_candidate
from apps.engine.energy import (
    BUSY_POWER_SHARE_BATCH_1,
    BUSY_POWER_SHARE_SATURATED,
    busy_power_share,
    candidate_energy,
    energy_per_output,
)
from tests.unit.costing.builders import finance, quote, realtime_capacity, realtime_demand


class TestBusyShare:
    def test_the_share_runs_from_the_batch_1_anchor_to_the_saturated_one(self):
        assert busy_power_share(1) == BUSY_POWER_SHARE_BATCH_1 == D("0.43")
        assert busy_power_share(128) == busy_power_share(4096) == BUSY_POWER_SHARE_SATURATED
        # log2 8 / log2 128 = 3/7 of the way: 0.43 + 0.43 x 3/7 = 0.614286
        assert abs(busy_power_share(8) - D("0.6142857")) < D("1e-6")
        assert busy_power_share(2) < busy_power_share(8) < busy_power_share(64)

    def test_compute_bound_work_and_an_unknown_batch_draw_the_saturated_share(self):
        assert busy_power_share(1, compute_bound=True) == BUSY_POWER_SHARE_SATURATED
        assert busy_power_share(None) == BUSY_POWER_SHARE_SATURATED


class TestCandidateEnergy:
    def test_a_committed_candidate_draws_idle_power_on_the_hours_it_does_not_work(self):
        """2 H100s reserved (1,460 GPU-h paid), 400 busy at batch 128 (0.86 x 700 = 602 W),
        1,060 idle at 0.15 x 700 = 105 W, host 575 W on all 1,460: 240,800 + 111,300 + 839,500
        = 1,191,600 Wh = 1,191.6 kWh IT; x PUE 1.5 = 1,787.4 kWh; x 0.4 kg = 714.96 kg CO2e;
        over a billion accepted tokens: 1,787.4 x 3.6 MJ / 1e9 = 6.43464 J a token."""
        energy = candidate_energy(
            tdp_w=D(700),
            busy_gpu_hours=D(400),
            paid_gpu_hours=D(1460),
            batch=128,
            pue=D("1.5"),
            accepted_outputs=D(1_000_000_000),
            carbon_kg_per_kwh=D("0.4"),
        )
        assert energy.busy_w_per_gpu == D(602)
        assert energy.idle_w_per_gpu == D(105)
        assert energy.kwh_per_month == D("1787.4")
        assert energy.j_per_output == D("6.43464")
        assert energy.kg_co2e_per_month == D("714.96")
        assert abs(energy.average_kw_per_gpu - D("1191.6") / D(1460)) < D("1e-12")

    def test_a_pay_per_use_candidate_has_no_idle_hours(self):
        """400 GPU-h at batch 1: (0.43 x 700 + 575) W x 400 h = 876 W x 400 = 350.4 kWh; PUE 1."""
        energy = candidate_energy(
            tdp_w=D(700),
            busy_gpu_hours=D(400),
            paid_gpu_hours=D(400),
            batch=1,
            pue=D(1),
            accepted_outputs=D(0),
        )
        assert energy.kwh_per_month == D("350.4")
        assert energy.j_per_output is None  # nothing accepted
        assert energy.kg_co2e_per_month is None  # no carbon intensity given

    def test_energy_per_output_reads_in_joules_for_tokens_and_watt_hours_for_images(self):
        assert energy_per_output(D("0.5"), "TOKEN") == (D("0.5"), "J")
        assert energy_per_output(D(7200), "IMAGE") == (D(2), "Wh")


class TestTheCostingCarriesIt:
    def test_every_gpu_row_has_its_energy_and_the_pue_and_carbon_of_finance(self):
        """Two 1-GPU replicas on demand for 200 active hours (400 GPU-h, batch unknown: 0.86 x
        700 = 602 W + 575 W host = 1,177 W x 400 h = 470.8 kWh) x PUE 1.56 = 734.448 kWh."""
        row = cost_gpu_candidate(
            demand=realtime_demand(),
            capacity=realtime_capacity(),
            quote=quote(PricingTerm.ON_DEMAND, "2.00", gpu_tdp_w=D(700)),
            finance=finance(carbon_kg_per_kwh=D("0.25")),
        )
        assert row.energy is not None
        assert row.energy.kwh_per_month == D("734.448")
        assert row.energy.kg_co2e_per_month == D("183.612")
        # 734.448 kWh x 3.6 MJ over 500M x 0.99 x 0.9 accepted tokens
        expected = D("734.448") * 3_600_000 / D(445_500_000)
        assert abs(row.energy.j_per_output - expected) < D("1e-18")

    def test_a_reserved_candidate_uses_more_energy_than_on_demand_for_the_same_work(self):
        """The reservation pays for 730 h a GPU and idles through 1,060 of its 1,460 GPU-h."""
        on_demand, reserved = (
            cost_gpu_candidate(
                demand=realtime_demand(),
                capacity=realtime_capacity(),
                quote=quote(term, "2.00", gpu_tdp_w=D(700)),
                finance=finance(),
            )
            for term in (PricingTerm.ON_DEMAND, PricingTerm.RESERVED_1Y)
        )
        assert on_demand.energy and reserved.energy
        assert reserved.energy.kwh_per_month > on_demand.energy.kwh_per_month

    def test_a_quote_without_the_gpus_tdp_has_no_energy(self):
        row = cost_gpu_candidate(
            demand=realtime_demand(),
            capacity=realtime_capacity(),
            quote=quote(PricingTerm.ON_DEMAND, "2.00", gpu_tdp_w=None),
            finance=finance(),
        )
        assert row.energy is None
