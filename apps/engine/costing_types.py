"""The costing core's vocabulary: enums and frozen dataclasses in and out.

Re-exported by `apps.engine.costing`; import them from there. Every amount is a `Decimal` in the
finance assumptions' reporting currency (the caller converts quotes before costing); every share
is a `Decimal` in [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from apps.engine.costing_constants import (
    DEFAULT_CLIP_SECONDS,
    DEFAULT_COLOCATION_PER_KW_MONTH,
    DEFAULT_PUE,
    DEFAULT_STORAGE_TB,
    HARDWARE_OPS_HOURS_PER_GPU_MONTH,
    MODERATION_COST_PER_IMAGE,
    MODERATION_COST_PER_VIDEO_MINUTE,
    OPERATOR_REVIEW_MINUTES_PER_CLIP,
    OPERATOR_REVIEW_MINUTES_PER_IMAGE,
    OPERATOR_REVIEW_SHARE,
    PLATFORM_LABOUR_HOURS_API,
    PLATFORM_LABOUR_HOURS_MANAGED_ENDPOINT,
    PLATFORM_LABOUR_HOURS_SELF_MANAGED,
    QUEUE_OVERHEAD_SHARE,
    SERVING_STACK_SHARE,
)
from apps.engine.energy import EnergyFigures
from apps.engine.types import DutyCycle, EngineInputError, WorkloadType

ZERO = Decimal(0)
ONE = Decimal(1)


class PricingTerm(StrEnum):
    ON_DEMAND = "ON_DEMAND"
    SPOT = "SPOT"
    RESERVED_1Y = "RESERVED_1Y"
    RESERVED_3Y = "RESERVED_3Y"
    DEDICATED_CLUSTER = "DEDICATED_CLUSTER"
    MARKETPLACE = "MARKETPLACE"
    OWNED = "OWNED"


# Billed only for the GPU-hours the workload runs.
PAY_PER_USE_TERMS = frozenset({PricingTerm.ON_DEMAND, PricingTerm.SPOT, PricingTerm.MARKETPLACE})
# Billed for every hour of the month, busy or not.
COMMITTED_TERMS = frozenset(
    {
        PricingTerm.RESERVED_1Y,
        PricingTerm.RESERVED_3Y,
        PricingTerm.DEDICATED_CLUSTER,
        PricingTerm.OWNED,
    }
)


class SuccessUnit(StrEnum):
    """What a brief counts as one accepted output: the one home of this vocabulary (Django's
    choices, the words and the table's scale are derived from it in `apps.engine.units`)."""

    TOKEN = "TOKEN"  # noqa: S105 (a unit, not a secret)
    REQUEST = "REQUEST"
    RECORD = "RECORD"
    IMAGE = "IMAGE"
    CLIP = "CLIP"
    VIDEO_SECOND = "VIDEO_SECOND"  # a second of accepted generated video
    PATCH = "PATCH"  # an accepted patch / completed task of a code agent: one request or record
    CHECKPOINT = "CHECKPOINT"  # an accepted fine-tuned checkpoint: one fine-tuning run's output
    TRAINING_RUN = "TRAINING_RUN"
    EVALUATION = "EVALUATION"


class OperatingBoundary(StrEnum):
    PUBLIC_CLOUD = "PUBLIC_CLOUD"
    PRIVATE_NETWORK = "PRIVATE_NETWORK"
    DEDICATED_CLUSTER = "DEDICATED_CLUSTER"
    ON_PREM = "ON_PREM"
    DATA_RESIDENCY = "DATA_RESIDENCY"
    MANAGED_API = "MANAGED_API"


class OperatingModel(StrEnum):
    """Who runs the serving/training stack; sets the platform labour hours."""

    SELF_MANAGED = "SELF_MANAGED"
    MANAGED_ENDPOINT = "MANAGED_ENDPOINT"
    API = "API"


class LabourAllocation(StrEnum):
    """How finance allocates the platform team's hours to self-managed GPU candidates."""

    PER_DEPLOYMENT = "PER_DEPLOYMENT"  # each deployment bears platform_hours_self_managed
    SHARED_BY_GPU_HOURS = "SHARED_BY_GPU_HOURS"  # the organisation's pool, by GPU-hours held


class Basis(StrEnum):
    ESTIMATED = "ESTIMATED"
    CALIBRATED = "CALIBRATED"  # estimated with factors learnt from runs of the same model
    MEASURED = "MEASURED"


class CostKind(StrEnum):
    """Which family of cost lines a row gets (see `LINES_BY_KIND`)."""

    TRAINING = "TRAINING"
    REALTIME = "REALTIME"
    OFFLINE = "OFFLINE"  # batch inference, embeddings, evaluation
    MEDIA = "MEDIA"
    API = "API"


def cost_kind(workload_type: WorkloadType) -> CostKind:
    """The cost-line family of a workload type served on GPUs."""
    return _KIND_BY_WORKLOAD[workload_type]


_KIND_BY_WORKLOAD = {
    WorkloadType.TRAINING: CostKind.TRAINING,
    WorkloadType.FULL_FINETUNE: CostKind.TRAINING,
    WorkloadType.LORA_FINETUNE: CostKind.TRAINING,
    WorkloadType.QLORA_FINETUNE: CostKind.TRAINING,
    WorkloadType.REALTIME_INFERENCE: CostKind.REALTIME,
    WorkloadType.BATCH_INFERENCE: CostKind.OFFLINE,
    WorkloadType.EMBEDDINGS: CostKind.OFFLINE,
    WorkloadType.EVALUATION: CostKind.OFFLINE,
    WorkloadType.IMAGE_GENERATION: CostKind.MEDIA,
    WorkloadType.VIDEO_GENERATION: CostKind.MEDIA,
}

# The stable, ordered cost-line keys of each kind. A line of its kind is always present (zero
# when nothing is owed, e.g. idle_capacity on on-demand); lines of other kinds are omitted.
_GPU_TAIL = (
    "idle_capacity",
    "storage",
    "network_egress",
    "provider_extras",
    "observability",
    "platform_labour",
)
LINES_BY_KIND: dict[CostKind, tuple[str, ...]] = {
    CostKind.TRAINING: ("gpu_compute", "checkpointing", "failed_run_waste", *_GPU_TAIL),
    CostKind.REALTIME: ("gpu_compute", "retry_waste", "serving_stack", *_GPU_TAIL),
    CostKind.OFFLINE: ("gpu_compute", "retry_waste", *_GPU_TAIL),
    CostKind.MEDIA: (
        "gpu_compute",
        "failed_renders",
        "retry_waste",
        "queue_overhead",
        "moderation",
        "operator_review",
        *_GPU_TAIL,
    ),
    CostKind.API: (
        "api_input_tokens",
        "api_output_tokens",
        "retry_waste",
        "observability",
        "platform_labour",
    ),
}

# The lines a GPU provider bills (its GPU-hours at its rate, its storage, network and own
# extras): a row's vendor commitment, apart from the all-in cost's serving stack, observability,
# labour, moderation, review and queue lines, which the organisation bears itself.
VENDOR_LINES = frozenset(
    {
        "gpu_compute",
        "retry_waste",
        "checkpointing",
        "failed_run_waste",
        "idle_capacity",
        "failed_renders",
        "storage",
        "network_egress",
        "provider_extras",
    }
)

# Workload types whose API calls can use a provider's batch (asynchronous) discount.
BATCHABLE_WORKLOADS = frozenset(
    {WorkloadType.BATCH_INFERENCE, WorkloadType.EMBEDDINGS, WorkloadType.EVALUATION}
)


def _share(field: str, value: Decimal, *, upper_open: bool, lower_open: bool = False) -> None:
    low_ok = value > ZERO if lower_open else value >= ZERO
    high_ok = value < ONE if upper_open else value <= ONE
    if not (low_ok and high_ok):
        raise EngineInputError(
            field,
            f"must be in {'(' if lower_open else '['}0, 1{')' if upper_open else ']'}, got {value}",
        )


def _not_negative(field: str, value: Decimal | None) -> None:
    if value is not None and value < ZERO:
        raise EngineInputError(field, f"must not be negative, got {value}")


@dataclass(frozen=True, kw_only=True, slots=True)
class FinanceAssumptions:
    """The organisation's (or the brief's) finance assumptions, in the reporting currency.

    The first seven fields and the owned-hardware block mirror `apps.finance.FinanceAssumptions`;
    the rest default to the named constants in `costing_constants` (see there for sources).
    """

    reporting_currency: str
    labour_rate_per_hour: Decimal
    observability_share: Decimal  # of the GPU (or API token) bill
    retry_rate: Decimal  # share of requests sent again; [0, 1)
    failure_rate: Decimal  # share of requests/jobs/renders that fail outright; [0, 1)
    acceptance_rate: Decimal  # share of outputs passing the quality filter; (0, 1]
    power_price_per_kwh: Decimal  # electricity for owned GPUs
    # Owned hardware (BUY): defaults for owned quotes that do not give their own figure.
    pue: Decimal = DEFAULT_PUE
    hosting_per_kw_month: Decimal = DEFAULT_COLOCATION_PER_KW_MONTH  # colocation, per kW of IT
    ops_hours_per_gpu_month: Decimal = HARDWARE_OPS_HOURS_PER_GPU_MONTH  # datacentre hands-on
    storage_tb_default: Decimal = DEFAULT_STORAGE_TB
    moderation_cost_per_image: Decimal = MODERATION_COST_PER_IMAGE
    moderation_cost_per_video_minute: Decimal = MODERATION_COST_PER_VIDEO_MINUTE
    operator_review_share: Decimal = OPERATOR_REVIEW_SHARE
    operator_review_minutes_per_image: Decimal = OPERATOR_REVIEW_MINUTES_PER_IMAGE
    operator_review_minutes_per_clip: Decimal = OPERATOR_REVIEW_MINUTES_PER_CLIP
    # What an operator's review hour costs (None: the labour rate, as platform work).
    operator_review_rate_per_hour: Decimal | None = None
    serving_stack_share: Decimal = SERVING_STACK_SHARE  # real-time: of the GPU bill
    queue_overhead_share: Decimal = QUEUE_OVERHEAD_SHARE  # media: of the GPU bill
    platform_hours_self_managed: Decimal = PLATFORM_LABOUR_HOURS_SELF_MANAGED
    platform_hours_managed_endpoint: Decimal = PLATFORM_LABOUR_HOURS_MANAGED_ENDPOINT
    platform_hours_api: Decimal = PLATFORM_LABOUR_HOURS_API
    # Shared allocation (see `apps.engine.costing_labour`): the platform team's hours a month
    # for every self-managed deployment together, and the GPU-hours a month those deployments
    # are expected to hold in all; finance sets both.
    labour_allocation: LabourAllocation = LabourAllocation.PER_DEPLOYMENT
    platform_labour_pool_hours: Decimal | None = None
    self_managed_gpu_hours_per_month: Decimal | None = None
    # Grid carbon intensity, kg CO2e per kWh (None: no CO2e figure). A finance input: e.g. the
    # world average 0.436 (Ember, Global Electricity Review 2023, 2022 data) or a country's
    # figure from Our World in Data's carbon-intensity-electricity table.
    carbon_kg_per_kwh: Decimal | None = None

    def __post_init__(self) -> None:
        _share("observability_share", self.observability_share, upper_open=True)
        _share("retry_rate", self.retry_rate, upper_open=True)
        _share("failure_rate", self.failure_rate, upper_open=True)
        _share("acceptance_rate", self.acceptance_rate, upper_open=False, lower_open=True)
        _share("operator_review_share", self.operator_review_share, upper_open=False)
        _share("serving_stack_share", self.serving_stack_share, upper_open=True)
        _share("queue_overhead_share", self.queue_overhead_share, upper_open=True)
        if self.pue < ONE:
            raise EngineInputError("pue", "must be at least 1")
        for name in (
            "labour_rate_per_hour",
            "power_price_per_kwh",
            "hosting_per_kw_month",
            "ops_hours_per_gpu_month",
            "platform_hours_self_managed",
            "platform_hours_managed_endpoint",
            "platform_hours_api",
            "platform_labour_pool_hours",
            "carbon_kg_per_kwh",
            "operator_review_minutes_per_image",
            "operator_review_minutes_per_clip",
            "operator_review_rate_per_hour",
            "moderation_cost_per_image",
            "moderation_cost_per_video_minute",
        ):
            _not_negative(name, getattr(self, name))
        if self.labour_allocation is LabourAllocation.SHARED_BY_GPU_HOURS:
            if self.platform_labour_pool_hours is None:
                raise EngineInputError(
                    "platform_labour_pool_hours", "sharing labour by GPU-hours needs the pool"
                )
            total = self.self_managed_gpu_hours_per_month
            if total is None or total <= ZERO:
                raise EngineInputError(
                    "self_managed_gpu_hours_per_month",
                    "sharing labour by GPU-hours needs a positive total of GPU-hours",
                )

    @property
    def review_rate_per_hour(self) -> Decimal:
        """An operator's review hour: its own rate, else the labour rate."""
        rate = self.operator_review_rate_per_hour
        return self.labour_rate_per_hour if rate is None else rate

    def platform_hours(self, model: OperatingModel) -> Decimal:
        if model is OperatingModel.API:
            return self.platform_hours_api
        if model is OperatingModel.MANAGED_ENDPOINT:
            return self.platform_hours_managed_endpoint
        return self.platform_hours_self_managed


@dataclass(frozen=True, kw_only=True, slots=True)
class QuoteTerms:
    """A provider's GPU quote, converted to the reporting currency by the caller.

    OWNED with `capex_per_gpu` (and then `depreciation_months`) is costed as bought hardware
    (`costing_rates.owned_gpu_month`); its other owned fields override the finance defaults
    (None: use them). Without capex an OWNED quote is costed at its hourly figure.
    """

    pricing_term: PricingTerm
    hourly_price_per_gpu: Decimal
    storage_price_per_tb_month: Decimal = ZERO
    egress_price_per_gb: Decimal = ZERO
    network_monthly: Decimal = ZERO
    monthly_extras: Decimal = ZERO  # support, licences, other fixed monthly fees
    minimum_commitment_months: int = 0
    gpu_tdp_w: Decimal | None = None  # for the default power draw when OWNED with capex
    capex_per_gpu: Decimal | None = None  # OWNED: depreciated instead of the hourly figure
    depreciation_months: int | None = None  # required with capex_per_gpu
    power_kw_per_gpu: Decimal | None = None  # IT load per GPU (default: TDP + host share)
    pue: Decimal | None = None
    electricity_per_kwh: Decimal | None = None
    hosting_per_kw_month: Decimal | None = None
    ops_hours_per_month: Decimal | None = None  # datacentre hands-on hours per owned GPU
    operating_model: OperatingModel = OperatingModel.SELF_MANAGED

    def __post_init__(self) -> None:
        for name in (
            "hourly_price_per_gpu",
            "storage_price_per_tb_month",
            "egress_price_per_gb",
            "network_monthly",
            "monthly_extras",
            "gpu_tdp_w",
            "capex_per_gpu",
            "power_kw_per_gpu",
            "electricity_per_kwh",
            "hosting_per_kw_month",
            "ops_hours_per_month",
        ):
            _not_negative(name, getattr(self, name))
        if self.pue is not None and self.pue < ONE:
            raise EngineInputError("pue", "must be at least 1")
        if self.capex_per_gpu is not None and (
            self.depreciation_months is None or self.depreciation_months < 1
        ):
            raise EngineInputError(
                "depreciation_months", "an owned quote with capex needs its depreciation months"
            )

    @property
    def is_bought(self) -> bool:
        """Owned hardware costed from its capex and running costs."""
        return self.pricing_term is PricingTerm.OWNED and self.capex_per_gpu is not None


@dataclass(frozen=True, kw_only=True, slots=True)
class ApiRouteTerms:
    """A model served by a provider's API, priced per million tokens (reporting currency)."""

    input_price_per_mtok: Decimal
    output_price_per_mtok: Decimal
    batch_discount: Decimal = ZERO  # share off for batch jobs, [0, 1)
    rate_limit_rpm: int | None = None

    def __post_init__(self) -> None:
        _not_negative("input_price_per_mtok", self.input_price_per_mtok)
        _not_negative("output_price_per_mtok", self.output_price_per_mtok)
        _share("batch_discount", self.batch_discount, upper_open=True)


@dataclass(frozen=True, kw_only=True, slots=True)
class CapacityFigures:
    """The performance engine's answer for one candidate (per replica unless said otherwise)."""

    gpu_count: int  # GPUs per replica
    replicas: int
    gpu_hours_per_month: Decimal  # busy GPU-hours at the brief's duty cycle, all replicas
    fits: bool
    output_tokens_per_s_per_replica: Decimal | None = None  # at the brief's latency target
    p95_latency_ms: Decimal | None = None
    meets_latency_target: bool | None = None
    memory_headroom_gb: Decimal | None = None
    basis: Basis = Basis.ESTIMATED
    time_to_train_hours: Decimal | None = None  # one run, on gpus_total
    checkpoint_write_s: Decimal | None = None
    gpus_total: int | None = None  # training: GPUs of one run (default gpu_count x replicas)
    items_per_hour_per_replica: Decimal | None = None  # images or clips
    records_per_s_per_replica: Decimal | None = None  # embeddings
    measured_failed_share: Decimal | None = None  # overrides finance failure_rate
    # Sequences in flight on one replica while it works (the energy model's batch); None:
    # unknown, drawn at the saturated share (apps.engine.energy).
    batch_per_replica: int | None = None
    # The replicas are kept up through the brief's active hours (a service with a latency
    # target): a pay-per-use term then bills every replica for those hours, not only for the
    # hours of work (apps.engine.costing, "GPU compute").
    provisioned: bool = False

    def __post_init__(self) -> None:
        if self.gpu_count < 1 or self.replicas < 1:
            raise EngineInputError("gpu_count", "gpu_count and replicas must be at least 1")
        if self.gpus_total is not None and self.gpus_total < 1:
            raise EngineInputError("gpus_total", "must be at least 1")
        _not_negative("gpu_hours_per_month", self.gpu_hours_per_month)
        if self.measured_failed_share is not None:
            _share("measured_failed_share", self.measured_failed_share, upper_open=True)

    @property
    def run_gpus(self) -> int:
        """GPUs one training run (or one serving deployment) occupies."""
        return self.gpus_total if self.gpus_total is not None else self.gpu_count * self.replicas


@dataclass(frozen=True, kw_only=True, slots=True)
class Demand:
    """What the brief asks for in a month. Token counts are per request (means)."""

    workload_type: WorkloadType
    success_unit: SuccessUnit
    hours_per_month: Decimal  # active hours
    duty_cycle: DutyCycle = DutyCycle.ALWAYS_ON
    input_tokens_mean: Decimal = ZERO
    output_tokens_mean: Decimal = ZERO
    requests_per_month: Decimal | None = None  # real-time requests, or items for media
    records_per_job: Decimal | None = None
    jobs_per_month: Decimal = ONE
    training_tokens: Decimal | None = None
    checkpoint_interval_minutes: Decimal | None = None
    acceptance_rate: Decimal | None = None  # overrides the finance acceptance rate
    operating_boundary: OperatingBoundary | None = None
    storage_tb: Decimal | None = None
    egress_gb_per_month: Decimal | None = None
    clip_seconds: Decimal | None = None
    horizon_months: int | None = None  # how long the workload is expected to run
    # Whether the work survives capacity taken back mid-run (checkpointed training, batch jobs
    # that retry): spot capacity meets only such a brief.
    tolerates_interruptions: bool = True

    def __post_init__(self) -> None:
        if self.hours_per_month <= ZERO:
            raise EngineInputError("hours_per_month", "must be positive")
        if self.acceptance_rate is not None:
            _share("acceptance_rate", self.acceptance_rate, upper_open=False, lower_open=True)
        if self.checkpoint_interval_minutes is not None and self.checkpoint_interval_minutes <= 0:
            raise EngineInputError("checkpoint_interval_minutes", "must be positive")
        for name in (
            "input_tokens_mean",
            "output_tokens_mean",
            "requests_per_month",
            "records_per_job",
            "jobs_per_month",
            "storage_tb",
            "egress_gb_per_month",
            "clip_seconds",
        ):
            _not_negative(name, getattr(self, name))

    @property
    def clip_seconds_or_default(self) -> Decimal:
        return self.clip_seconds if self.clip_seconds is not None else DEFAULT_CLIP_SECONDS


# Not frozen: costing builds one for every quote of every table (~2,000 a compute), and a
# frozen dataclass's __init__ sets each of its 17 fields through object.__setattr__ (6.8 us
# against 0.9 us on this project's machine, Python 3.13). Nothing changes one once built.
@dataclass(kw_only=True, slots=True)
class CandidateCost:
    """One candidate row: its monthly cost lines and its effective unit cost.

    `monthly_cost` is the exact sum of `cost_lines` (each quantized to 4 dp);
    `effective_unit_cost` = monthly_cost / accepted_outputs_per_month to 10 significant digits,
    None when nothing is accepted.
    """

    cost_lines: dict[str, Decimal]
    monthly_cost: Decimal
    generated_outputs_per_month: Decimal
    accepted_outputs_per_month: Decimal
    effective_unit_cost: Decimal | None
    success_unit: SuccessUnit
    meets_constraints: bool
    why_not: tuple[str, ...]
    notes: tuple[str, ...]
    utilization: Decimal  # busy GPU-hours / paid GPU-hours (1 for pay-per-use and API)
    currency: str
    basis: Basis
    pricing_term: PricingTerm | None  # None for an API route
    gpus_paid: int  # GPUs billed (0 for an API route)
    busy_gpu_hours_per_month: Decimal
    paid_gpu_hours_per_month: Decimal
    energy: EnergyFigures | None = None  # GPU candidates (apps.engine.energy); None for an API
