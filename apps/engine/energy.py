"""Energy: a GPU candidate's average power, kWh a month, energy per accepted output and CO2e.

The model, per GPU (each share is a named constant below, with its source):
- busy hours draw TDP x a busy share that rises with the sequences in flight, log-linear in the
  batch between ML.ENERGY's two anchors (0.43 of TDP at batch 1, 0.86 at batch 128, H100 SXM
  under vLLM decode); compute-bound work (training, image and video generation) draws the
  saturated share;
- paid hours with no work (a committed term's idle capacity) draw TDP x IDLE_POWER_SHARE;
- the host's share of the server (CPUs, memory, switches, fans: `HOST_KW_PER_GPU`) draws its
  full figure on every paid hour (no source splits it by load; the figure errs high).

kWh a month = (GPU energy + host energy) x PUE; J per accepted output = that energy in joules /
accepted outputs; kg CO2e a month = kWh x the grid's carbon intensity, when finance gives one.
Pay-per-use terms pay only for the hours the work runs, so they have no idle hours.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from apps.engine.costing_constants import HOST_KW_PER_GPU, WATTS_PER_KW

# GPU power while serving, as a share of TDP. ML.ENERGY Benchmark v3.0 (Chung et al., "The
# ML.ENERGY Benchmark", arXiv 2505.06371, and "Where Do the Joules Go?", arXiv 2601.22076), as
# tabulated by vLLM semantic-router's fleet-sim power model (docs/fleet-sim/power-model.md):
# H100 SXM (700 W TDP) under vLLM decode draws ~300 W at batch 1 (0.43) and ~600 W at batch 128
# (0.86). A100 SXM at 32 concurrent: 373 W of 400 W (Sada et al., arXiv 2507.00418, Table 1),
# well above this line's 0.74 at batch 32: the line errs low on A100 by ~0.2 of TDP.
BUSY_POWER_SHARE_BATCH_1 = Decimal("0.43")
BUSY_POWER_SHARE_SATURATED = Decimal("0.86")
# The batch at which the saturated share is reached (ML.ENERGY's upper anchor). Between the
# anchors the share is linear in log2(batch): Hassan et al.'s logistic fit of H100 power against
# log2(batch) (arXiv 2602.05116, Eq. 2: ~304 W at 1, ~435 W at 16, ~583 W at 128) is close to
# linear in log2(batch) over this range.
SATURATION_BATCH = 128
# A GPU that is powered, holds the model and serves nothing. A parked H200 reads ~80 W of 700 W
# (0.11; a vendor's measurement page, low authority), and holding a CUDA context adds 26-50 W
# over bare idle on HBM GPUs (Vadari, "The Model Parking Tax", arXiv 2605.23918): ~0.15 of TDP.
IDLE_POWER_SHARE = Decimal("0.15")

JOULES_PER_KWH = Decimal(3_600_000)
_LOG2_SATURATION = math.log2(SATURATION_BATCH)


@dataclass(frozen=True, kw_only=True, slots=True)
class EnergyFigures:
    """One candidate's energy for a month (every figure of the candidate's GPUs together)."""

    busy_w_per_gpu: Decimal  # GPU draw while working
    idle_w_per_gpu: Decimal  # GPU draw on paid hours without work
    average_kw_per_gpu: Decimal  # GPU + host share, over the paid hours, before PUE
    kwh_per_month: Decimal  # at the facility meter: (GPU + host) x PUE
    j_per_output: Decimal | None  # per accepted output; None when nothing is accepted
    kg_co2e_per_month: Decimal | None  # None without a carbon intensity


def busy_power_share(batch: int | None, *, compute_bound: bool = False) -> Decimal:
    """The share of TDP a GPU draws while working with ``batch`` sequences in flight (the
    saturated share for compute-bound work or an unknown batch)."""
    if compute_bound or batch is None or batch >= SATURATION_BATCH:
        return BUSY_POWER_SHARE_SATURATED
    if batch <= 1:
        return BUSY_POWER_SHARE_BATCH_1
    rise = Decimal(repr(math.log2(batch) / _LOG2_SATURATION))
    return BUSY_POWER_SHARE_BATCH_1 + (BUSY_POWER_SHARE_SATURATED - BUSY_POWER_SHARE_BATCH_1) * rise


def candidate_energy(
    *,
    tdp_w: Decimal,
    busy_gpu_hours: Decimal,
    paid_gpu_hours: Decimal,
    batch: int | None,
    pue: Decimal,
    accepted_outputs: Decimal,
    compute_bound: bool = False,
    carbon_kg_per_kwh: Decimal | None = None,
) -> EnergyFigures:
    """The month's energy of a candidate that pays for ``paid_gpu_hours`` GPU-hours and works
    ``busy_gpu_hours`` of them (busy hours beyond the paid ones count as paid: a pay-per-use
    term pays for exactly the hours it works)."""
    paid = max(paid_gpu_hours, busy_gpu_hours)
    busy_w = tdp_w * busy_power_share(batch, compute_bound=compute_bound)
    idle_w = tdp_w * IDLE_POWER_SHARE
    gpu_wh = busy_w * busy_gpu_hours + idle_w * (paid - busy_gpu_hours)
    host_wh = HOST_KW_PER_GPU * WATTS_PER_KW * paid
    it_kwh = (gpu_wh + host_wh) / WATTS_PER_KW
    kwh = it_kwh * pue
    joules = kwh * JOULES_PER_KWH
    return EnergyFigures(
        busy_w_per_gpu=busy_w,
        idle_w_per_gpu=idle_w,
        average_kw_per_gpu=it_kwh / paid if paid > 0 else HOST_KW_PER_GPU + tdp_w / WATTS_PER_KW,
        kwh_per_month=kwh,
        j_per_output=joules / accepted_outputs if accepted_outputs > 0 else None,
        kg_co2e_per_month=None if carbon_kg_per_kwh is None else kwh * carbon_kg_per_kwh,
    )


# Outputs small enough to read their energy in joules (a token, an embedded record); the rest
# (an image, a clip, a request, a run) read in watt-hours.
JOULE_UNITS = frozenset({"TOKEN", "RECORD"})
JOULES_PER_WH = Decimal(3600)


def energy_per_output(j_per_output: Decimal, success_unit: str) -> tuple[Decimal, str]:
    """(figure, "J" or "Wh") of an energy per accepted output, as the pages and PDF show it."""
    if success_unit in JOULE_UNITS:
        return j_per_output, "J"
    return j_per_output / JOULES_PER_WH, "Wh"
