"""Finance assumptions: organisation defaults, per-brief overrides, and what the engine gets."""

from decimal import Decimal

from django.db.models import OuterRef, Subquery

from apps.briefs.models import WorkloadBrief
from apps.engine import costing_constants as k
from apps.engine.costing import FinanceAssumptions as EngineFinance
from apps.engine.costing import LabourAllocation

from .fx import fx_rates_applied
from .models import ORGANISATION_ONLY, CandidateRow, CandidateTable, FinanceAssumptions
from .state import Assumptions

# Used where the organisation has not set a default (each constant cites its source).
# A finance assumption's value: an amount, a share or a count as a Decimal, a code (the
# reporting currency, the labour allocation) as a str, or None where it is not set.
AssumptionValue = Decimal | str | None

FALLBACKS: dict[str, AssumptionValue] = {
    "reporting_currency": "USD",
    "labour_rate_per_hour": k.DEFAULT_LABOUR_RATE_PER_HOUR,
    "observability_share": k.DEFAULT_OBSERVABILITY_SHARE,
    "retry_rate": Decimal("0.02"),  # engine choice: 2% of requests retried, no public survey
    "failure_rate": Decimal("0.01"),  # engine choice: 1% of requests fail outright
    "acceptance_rate": Decimal("1"),  # everything generated is accepted unless told otherwise
    # Owned hardware (BUY), for owned quotes that do not give their own figure.
    "power_price_per_kwh": k.DEFAULT_POWER_PRICE_PER_KWH,
    "pue": k.DEFAULT_PUE,
    "hosting_per_kw_month": k.DEFAULT_COLOCATION_PER_KW_MONTH,
    "ops_hours_per_gpu_month": k.HARDWARE_OPS_HOURS_PER_GPU_MONTH,
    # Platform labour (apps.engine.costing_labour): per deployment unless finance shares the
    # platform team's pool by GPU-hours, which needs the two organisation figures below.
    "platform_hours_self_managed": k.PLATFORM_LABOUR_HOURS_SELF_MANAGED,
    "labour_allocation": LabourAllocation.PER_DEPLOYMENT.value,
    "platform_labour_pool_hours": None,
    "self_managed_gpu_hours_per_month": None,
    "carbon_kg_per_kwh": None,  # no CO2e figure unless finance gives the grid's intensity
    # The cost lines of serving and media (apps.engine.costing_constants cites each).
    "serving_stack_share": k.SERVING_STACK_SHARE,
    "queue_overhead_share": k.QUEUE_OVERHEAD_SHARE,
    "moderation_cost_per_image": k.MODERATION_COST_PER_IMAGE,
    "moderation_cost_per_video_minute": k.MODERATION_COST_PER_VIDEO_MINUTE,
    "operator_review_share": k.OPERATOR_REVIEW_SHARE,
    "operator_review_minutes_per_image": k.OPERATOR_REVIEW_MINUTES_PER_IMAGE,
    "operator_review_minutes_per_clip": k.OPERATOR_REVIEW_MINUTES_PER_CLIP,
    "operator_review_rate_per_hour": None,  # blank: the labour rate
}
FIELDS = tuple(FALLBACKS)


def organisation_defaults() -> FinanceAssumptions | None:
    return FinanceAssumptions.objects.filter(is_default=True).first()


def resolved_assumptions(brief: WorkloadBrief) -> Assumptions:
    """The assumptions the brief's table is costed with: each value from the brief's overrides,
    else the organisation defaults, else the built-in fallback (``sources`` says which:
    "brief", "organisation" or "built-in"); the brief's own acceptance rate wins over both.
    With the FX rates that apply and the versions of the rows read."""
    default = organisation_defaults()
    override = FinanceAssumptions.objects.filter(brief=brief).first()
    values: dict[str, object] = {}
    sources: dict[str, str] = {}
    for name in FIELDS:
        rows: tuple[tuple[str, FinanceAssumptions | None], ...] = (
            ("brief", override),
            ("organisation", default),
        )
        if name in ORGANISATION_ONLY:
            rows = (("organisation", default),)
        for source, row in rows:
            value = getattr(row, name, None) if row is not None else None
            if value not in (None, ""):
                values[name], sources[name] = value, source
                break
        else:
            values[name], sources[name] = FALLBACKS[name], "built-in"
    if brief.acceptance_rate is not None:
        values["acceptance_rate"], sources["acceptance_rate"] = brief.acceptance_rate, "brief"
    values["labour_allocation"] = LabourAllocation(str(values["labour_allocation"]))
    versions = tuple(
        sorted(
            v for v in (getattr(default, "version", None), getattr(override, "version", None)) if v
        )
    )
    return Assumptions(
        finance=EngineFinance(**values),  # type: ignore[arg-type]
        sources=sources,
        fx_rates=fx_rates_applied(),  # one set for every brief (apps.finance.fx)
        versions=versions,
    )


def assumption_values(assumptions: Assumptions) -> dict[str, AssumptionValue]:
    """Every assumption's value as the table is costed with it, by field name (for the pages
    and a decision snapshot)."""
    return {name: getattr(assumptions.finance, name) for name in FIELDS}


def assumptions_version(brief: WorkloadBrief) -> list[int]:
    rows = FinanceAssumptions.objects.filter(is_default=True) | FinanceAssumptions.objects.filter(
        brief=brief
    )
    return sorted(rows.values_list("version", flat=True))


def self_managed_gpu_hours_now() -> tuple[int, Decimal]:
    """(briefs, GPU-hours a month): what the cheapest GPU candidate that meets each computed
    brief pays for, summed over the briefs. Shown beside the shared-labour figures as a starting
    point for the expected total; it is read when the page is, and changes nothing by itself
    (the tables are costed from the total finance sets, never from each other)."""
    best = (
        CandidateRow.objects.filter(
            table=OuterRef("pk"),
            candidate_kind="GPU",
            meets_constraints=True,
            effective_unit_cost__isnull=False,
        )
        .order_by("effective_unit_cost", "pk")
        .values("paid_gpu_hours_per_month")[:1]
    )
    hours = [
        h
        for h in CandidateTable.objects.annotate(hours=Subquery(best)).values_list(
            "hours", flat=True
        )
        if h is not None
    ]
    return len(hours), sum(hours, Decimal(0))
