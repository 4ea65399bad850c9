"""Platform labour: the organisation's cost of people running the stack, as finance allocates it.

Every candidate carries a `platform_labour` line, its own line in the table and the cost
breakdown. Its hours depend on who runs the stack (`OperatingModel`) and, for self-managed
GPUs, on how finance allocates the platform team (`LabourAllocation`, organisation-level):

- PER_DEPLOYMENT (the default): each self-managed deployment bears
  `platform_hours_self_managed` hours a month (40 h, about a quarter of an FTE, house judgement
  in `costing_constants`). It needs nothing but the brief, so it is the default: it is what one
  more deployment costs a team that staffs per workload, and it is always computable. Its
  weakness is small workloads: an 8B LoRA fine-tune's 45 USD of GPU compute carries
  4,600 USD of labour, which the finance page then flags as more than half the cost.
- SHARED_BY_GPU_HOURS: the platform team is a fixed pool (`platform_labour_pool_hours` a
  month) shared by every self-managed deployment in proportion to the GPU-hours it holds:
  hours = pool x min(1, paid GPU-hours / `self_managed_gpu_hours_per_month`). Finance sets
  the pool and the expected total of self-managed GPU-hours on the organisation assumptions,
  so a table is costed from its own inputs (no read of other briefs' tables): changing either
  figure recomputes every table, as any organisation assumption does. The GPU-hours are the
  paid ones (committed capacity holds its idle GPUs too, which still need the team).

Managed endpoints and model APIs keep their per-deployment hours (10 h and 4 h) in both modes:
they are not the platform team's GPU fleet. An owned GPU's datacentre hands-on hours are not
here: they are the "operations" part of its GPU-month (`costing_rates.owned_gpu_month`).
"""

from __future__ import annotations

from decimal import Decimal

from apps.engine.costing_types import (
    ONE,
    ZERO,
    FinanceAssumptions,
    LabourAllocation,
    OperatingModel,
)

_WHO = {
    OperatingModel.SELF_MANAGED: "self-managed",
    OperatingModel.MANAGED_ENDPOINT: "managed-endpoint",
    OperatingModel.API: "model API",
}


def platform_labour_hours(
    *,
    finance: FinanceAssumptions,
    operating_model: OperatingModel,
    paid_gpu_hours: Decimal,
) -> tuple[Decimal, str]:
    """(platform labour hours a month, a note saying how they were allocated)."""
    rate = f"{finance.labour_rate_per_hour} {finance.reporting_currency}/h"
    shared = (
        operating_model is OperatingModel.SELF_MANAGED
        and finance.labour_allocation is LabourAllocation.SHARED_BY_GPU_HOURS
    )
    if shared:
        pool = finance.platform_labour_pool_hours or ZERO
        total = finance.self_managed_gpu_hours_per_month or ONE
        share = min(ONE, paid_gpu_hours / total)
        hours = pool * share
        note = (
            f"platform labour: {share:.2%} of the organisation's {pool} h pool a month "
            f"(this deployment's {paid_gpu_hours:.2f} of {total} self-managed GPU-hours) "
            f"= {hours:.2f} h x {rate}"
        )
        if paid_gpu_hours > total:
            note += "; it alone holds more GPU-hours than the expected total (share capped at 1)"
    else:
        hours = finance.platform_hours(operating_model)
        note = f"platform labour: {hours} h a month per {_WHO[operating_model]} deployment x {rate}"
    return hours, note
