from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from apps.briefs.models import WorkloadBrief
from apps.catalog.models import Gpu
from apps.core import bounds
from apps.core.choices import register, text_choices
from apps.core.currency import Currency
from apps.core.models import BaseModel
from apps.engine import costing
from apps.quotes.models import ApiRoute, Quote

from .state import CandidateKind

NOT_NEGATIVE = MinValueValidator(Decimal(0))
# A share of something, 0 <= x < 1 (a retry rate of 1 would retry forever).
SHARE = [NOT_NEGATIVE, MaxValueValidator(Decimal("0.9999"))]


# The engine's `LabourAllocation` as Django choices (apps.engine.costing_labour).
LabourAllocation = text_choices(
    costing.LabourAllocation,
    {
        "PER_DEPLOYMENT": "Per self-managed deployment",
        "SHARED_BY_GPU_HOURS": "Shared by GPU-hours across self-managed deployments",
    },
)


# Set on the organisation defaults only: how the platform team is allocated is one decision for
# every brief (a brief's override row leaves them blank).
ORGANISATION_ONLY = (
    "labour_allocation",
    "platform_labour_pool_hours",
    "self_managed_gpu_hours_per_month",
)


class FinanceAssumptions(BaseModel):
    """Organisation defaults (brief empty) and per-brief overrides (blank field: use default)."""

    brief = models.OneToOneField(
        WorkloadBrief,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="finance_assumptions",
    )
    is_default = models.BooleanField(default=False, editable=False)
    reporting_currency = models.CharField(max_length=3, choices=Currency.choices, blank=True)
    labour_rate_per_hour = models.DecimalField(
        max_digits=10, decimal_places=2, null=True, blank=True,
        validators=bounds.at_most(bounds.LABOUR_RATE_PER_HOUR_MAX),
    )  # fmt: skip
    observability_share = models.DecimalField(
        max_digits=5, decimal_places=4, null=True, blank=True, validators=SHARE
    )
    retry_rate = models.DecimalField(
        max_digits=5, decimal_places=4, null=True, blank=True, validators=SHARE
    )
    failure_rate = models.DecimalField(
        max_digits=5, decimal_places=4, null=True, blank=True, validators=SHARE
    )
    acceptance_rate = models.DecimalField(
        max_digits=5,
        decimal_places=4,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0.0001")), MaxValueValidator(Decimal("1"))],
    )
    # --- Owned hardware (BUY): the defaults of owned quotes that do not give their own figure
    # (apps.engine.costing_constants has each built-in default and its source). Capex and
    # depreciation months are the quote's own, never a default.
    power_price_per_kwh = models.DecimalField(
        max_digits=8, decimal_places=4, null=True, blank=True,
        validators=bounds.at_most(bounds.ELECTRICITY_PER_KWH_MAX),
    )  # fmt: skip
    pue = models.DecimalField(
        max_digits=4, decimal_places=2, null=True, blank=True,
        validators=bounds.between(bounds.PUE_MIN, bounds.PUE_MAX),
    )  # fmt: skip
    hosting_per_kw_month = models.DecimalField(
        max_digits=10, decimal_places=2, null=True, blank=True,
        validators=bounds.at_most(bounds.HOSTING_PER_KW_MONTH_MAX),
    )  # fmt: skip
    ops_hours_per_gpu_month = models.DecimalField(
        max_digits=6, decimal_places=2, null=True, blank=True,
        validators=bounds.at_most(bounds.OPS_HOURS_PER_GPU_MONTH_MAX),
    )  # fmt: skip
    # --- end of owned hardware
    # Energy: the grid's carbon intensity, for every GPU candidate's kg CO2e a month (blank:
    # none shown; apps.engine.costing_types.FinanceAssumptions cites example sources).
    carbon_kg_per_kwh = models.DecimalField(
        "carbon intensity, kg CO2e per kWh",
        max_digits=5, decimal_places=3, null=True, blank=True,
        validators=[NOT_NEGATIVE, MaxValueValidator(Decimal(2))],
        help_text="The grid's carbon intensity (world average 0.436, Ember 2023)",
    )  # fmt: skip
    # Platform labour (apps.engine.costing_labour).
    platform_hours_self_managed = models.DecimalField(
        "platform hours per self-managed deployment",
        max_digits=8, decimal_places=2, null=True, blank=True,
        validators=bounds.at_most(bounds.PLATFORM_HOURS_PER_DEPLOYMENT_MAX),
        help_text="Hours a month each self-managed deployment takes (per-deployment allocation)",
    )  # fmt: skip
    labour_allocation = models.CharField(
        max_length=20, choices=LabourAllocation.choices, blank=True,
        help_text="Per deployment, or the platform team's pool shared by GPU-hours",
    )  # fmt: skip
    platform_labour_pool_hours = models.DecimalField(
        "platform team hours a month",
        max_digits=10, decimal_places=2, null=True, blank=True,
        validators=bounds.at_most(bounds.PLATFORM_POOL_HOURS_MAX),
        help_text="The platform team's hours a month for all self-managed deployments (shared)",
    )  # fmt: skip
    self_managed_gpu_hours_per_month = models.DecimalField(
        "self-managed GPU-hours a month",
        max_digits=12, decimal_places=2, null=True, blank=True,
        validators=bounds.between(
            bounds.SELF_MANAGED_GPU_HOURS_MIN, bounds.SELF_MANAGED_GPU_HOURS_MAX
        ),
        help_text="GPU-hours a month all self-managed deployments are expected to hold (shared)",
    )  # fmt: skip
    # --- The cost lines of serving and media (apps.engine.costing_constants cites each default).
    serving_stack_share = models.DecimalField(
        "serving stack, share of the GPU bill",
        max_digits=5, decimal_places=4, null=True, blank=True, validators=SHARE,
        help_text="Gateway, load balancer, autoscaler and tokenisation beside real-time "
        "replicas (default 5 %)",
    )  # fmt: skip
    queue_overhead_share = models.DecimalField(
        "media queue overhead, share of the GPU bill",
        max_digits=5, decimal_places=4, null=True, blank=True, validators=SHARE,
        help_text="Job queue, cold model loads and result upload of media pipelines "
        "(default 3 %)",
    )  # fmt: skip
    moderation_cost_per_image = models.DecimalField(
        "moderation per image",
        max_digits=10, decimal_places=4, null=True, blank=True,
        validators=bounds.at_most(bounds.MODERATION_COST_MAX),
        help_text="Automated moderation of each generated image (default 0.001: Amazon "
        "Rekognition's list price)",
    )  # fmt: skip
    moderation_cost_per_video_minute = models.DecimalField(
        "moderation per minute of video",
        max_digits=10, decimal_places=4, null=True, blank=True,
        validators=bounds.at_most(bounds.MODERATION_COST_MAX),
        help_text="Automated moderation of each minute of generated video (default 0.10)",
    )  # fmt: skip
    operator_review_share = models.DecimalField(
        "operator review, share of renders",
        max_digits=5, decimal_places=4, null=True, blank=True,
        validators=[NOT_NEGATIVE, MaxValueValidator(Decimal(1))],
        help_text="Share of generated images or clips a person reviews (default 5 %)",
    )  # fmt: skip
    operator_review_minutes_per_image = models.DecimalField(
        "review minutes per image",
        max_digits=7, decimal_places=2, null=True, blank=True,
        validators=[NOT_NEGATIVE, MaxValueValidator(Decimal(600))],
        help_text="Minutes a reviewer spends on each reviewed image (default 0.5)",
    )  # fmt: skip
    operator_review_minutes_per_clip = models.DecimalField(
        "review minutes per clip",
        max_digits=7, decimal_places=2, null=True, blank=True,
        validators=[NOT_NEGATIVE, MaxValueValidator(Decimal(600))],
        help_text="Minutes a reviewer spends on each reviewed clip (default 2)",
    )  # fmt: skip
    operator_review_rate_per_hour = models.DecimalField(
        "reviewer rate per hour",
        max_digits=10, decimal_places=2, null=True, blank=True,
        validators=bounds.at_most(bounds.LABOUR_RATE_PER_HOUR_MAX),
        help_text="What an hour of review costs (blank: the labour rate)",
    )  # fmt: skip
    version = models.PositiveIntegerField(default=1)

    class Meta:
        verbose_name_plural = "finance assumptions"
        constraints = [
            models.UniqueConstraint(
                fields=["is_default"], condition=Q(is_default=True), name="one_organisation_default"
            ),
            models.CheckConstraint(
                condition=(Q(is_default=True) & Q(brief__isnull=True))
                | (Q(is_default=False) & Q(brief__isnull=False)),
                name="default_xor_brief",
            ),
            models.CheckConstraint(
                condition=(Q(observability_share__isnull=True) | Q(observability_share__gte=0))
                & (Q(observability_share__isnull=True) | Q(observability_share__lt=1))
                & (Q(retry_rate__isnull=True) | (Q(retry_rate__gte=0) & Q(retry_rate__lt=1)))
                & (Q(failure_rate__isnull=True) | (Q(failure_rate__gte=0) & Q(failure_rate__lt=1)))
                & (
                    Q(acceptance_rate__isnull=True)
                    | (Q(acceptance_rate__gt=0) & Q(acceptance_rate__lte=1))
                ),
                name="assumption_rates_in_range",
            ),
            models.CheckConstraint(
                condition=(Q(labour_rate_per_hour__isnull=True) | Q(labour_rate_per_hour__gte=0))
                & (Q(power_price_per_kwh__isnull=True) | Q(power_price_per_kwh__gte=0)),
                name="assumption_amounts_not_negative",
            ),
            models.CheckConstraint(
                condition=(Q(pue__isnull=True) | Q(pue__gte=1))
                & (Q(hosting_per_kw_month__isnull=True) | Q(hosting_per_kw_month__gte=0))
                & (Q(ops_hours_per_gpu_month__isnull=True) | Q(ops_hours_per_gpu_month__gte=0)),
                name="assumption_owned_hardware_in_range",
            ),
            models.CheckConstraint(
                condition=(
                    Q(platform_hours_self_managed__isnull=True)
                    | Q(platform_hours_self_managed__gte=0)
                )
                & (
                    Q(platform_labour_pool_hours__isnull=True)
                    | Q(platform_labour_pool_hours__gte=0)
                )
                & (
                    Q(self_managed_gpu_hours_per_month__isnull=True)
                    | Q(self_managed_gpu_hours_per_month__gt=0)
                ),
                name="labour_figures_in_range",
            ),
        ]

    def clean(self) -> None:
        """Sharing labour needs both organisation figures; a brief's row sets none of the
        organisation-only fields."""
        errors: dict[str, str] = {}
        if not self.is_default and self.brief_id is not None:
            for name in ORGANISATION_ONLY:
                if getattr(self, name) not in (None, ""):
                    errors[name] = "Set on the organisation assumptions only, for every brief."
        elif self.labour_allocation == costing.LabourAllocation.SHARED_BY_GPU_HOURS:
            if self.platform_labour_pool_hours is None:
                errors["platform_labour_pool_hours"] = (
                    "Sharing labour by GPU-hours needs the platform team's hours a month."
                )
            if self.self_managed_gpu_hours_per_month is None:
                errors["self_managed_gpu_hours_per_month"] = (
                    "Sharing labour by GPU-hours needs the self-managed GPU-hours a month."
                )
        if errors:
            raise ValidationError(errors)

    def __str__(self) -> str:
        return f"Assumptions for {self.brief}" if self.brief_id else "Organisation defaults"


# A rate is stored to 10 decimal places: 0.0067 (USD per JPY) and rates of weaker currencies
# (USD per INR is about 0.012) keep their significant digits; 10 digits before the point leave
# room for any rate of the currencies in apps.core.currency.
FX_RATE_MAX_DIGITS = 20
FX_RATE_DECIMAL_PLACES = 10
FX_SOURCE_MAX_LENGTH = 200


class FxRate(BaseModel):
    """An exchange rate finance entered: ``rate`` units of the base currency
    (apps.core.currency.BASE_CURRENCY) per one unit of ``currency``, valid from ``as_of``.
    Rows are never edited: a new rate is a new row, and the newest ``as_of`` per currency
    applies (the later entry when two share a date)."""

    currency = models.CharField(max_length=3, choices=Currency.choices)
    rate = models.DecimalField(
        max_digits=FX_RATE_MAX_DIGITS,
        decimal_places=FX_RATE_DECIMAL_PLACES,
        validators=bounds.between(bounds.FX_RATE_MIN, bounds.FX_RATE_MAX),
    )
    as_of = models.DateField(validators=[bounds.plausible_date])
    source = models.CharField(max_length=FX_SOURCE_MAX_LENGTH)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["currency", "-as_of", "-pk"]
        indexes = [models.Index(fields=["currency", "-as_of"], name="fx_rate_newest")]
        constraints = [
            models.CheckConstraint(condition=Q(rate__gt=0), name="fx_rate_positive"),
        ]

    def __str__(self) -> str:
        return f"1 {self.currency} = {self.rate} (as of {self.as_of})"


class CandidateTable(BaseModel):
    """The ranked candidates of one brief, as last computed, and the inputs they came from.

    Every change to an input bumps ``requested_version``; a recompute records the version it
    started from in ``computed_version`` and never writes over a newer one. ``queued_at`` is
    set while a recompute is waiting in the queue, so a burst of changes enqueues it once.
    """

    brief = models.OneToOneField(
        WorkloadBrief, on_delete=models.CASCADE, related_name="candidate_table"
    )
    currency = models.CharField(max_length=3, choices=Currency.choices, default=Currency.USD)
    success_unit = models.CharField(max_length=16, blank=True)
    requested_version = models.PositiveBigIntegerField(default=1)
    computed_version = models.PositiveBigIntegerField(default=0)
    # The requested_version of the newest request that changed more than quotes or API routes
    # (a brief, assumptions, FX rates, benchmark runs): while it is at most computed_version,
    # a recompute re-costs only the quotes and routes that changed (apps.finance.repricing).
    full_version = models.PositiveBigIntegerField(default=1)
    queued_at = models.DateTimeField(null=True, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    engine_version = models.CharField(max_length=20, blank=True)
    inputs = models.JSONField(
        default=dict, blank=True, help_text="Versions of the inputs the rows were computed from."
    )
    no_ranking_reason = models.CharField(max_length=300, blank=True)
    capacity_model = models.JSONField(default=dict, blank=True)
    # What would change the winner (apps.finance.sensitivity), set by the recompute.
    sensitivity = models.JSONField(default=dict, blank=True)
    # Engine results depend on the brief, the catalog and calibration, not on prices: they are
    # kept here and reused when only a price changes.
    estimates_key = models.CharField(max_length=64, blank=True)
    estimates = models.JSONField(default=list, blank=True)
    # The digests of the quote and route versions the rows were costed with (VersionSet;
    # apps.finance.version_sets): columns, so that the sweeper finds the sets no table names.
    quote_set = models.CharField(max_length=64, blank=True, db_index=True)
    route_set = models.CharField(max_length=64, blank=True, db_index=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(computed_version__lte=models.F("requested_version")),
                name="table_computed_not_ahead_of_requested",
            )
        ]

    @property
    def stale(self) -> bool:
        return self.computed_version < self.requested_version

    def __str__(self) -> str:
        return f"Candidates for {self.brief}"


class VersionSet(models.Model):
    """The versions of the quotes (or API routes) candidate tables were costed with, stored
    once for every table that saw the same ones and named by the digest of its content
    (apps.finance.version_sets): a price change writes one set a team, not one a table."""

    digest = models.CharField(max_length=64, unique=True)
    versions = models.JSONField(default=dict)
    # The sweeper deletes a set no table names once it is old enough (apps.finance.version_sets).
    created_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"versions {self.digest[:12]}"


class CandidateRow(BaseModel):
    # apps.finance.state.CandidateKind as Django choices.
    Kind = text_choices(
        CandidateKind,
        {
            "GPU": "GPU capacity",
            "API_ROUTE": "Model / API route",
            "MIX": "GPU mix by request size",
            "DISAGG": "Disaggregated prefill / decode",
        },
        name="CandidateRow.Kind",
    )

    # ESTIMATED, CALIBRATED (estimated, factors learnt from runs of the same model), MEASURED.
    Basis = text_choices(costing.Basis, name="CandidateRow.Basis")

    # No index of its own: `row_ranking_order` below leads with the table, and every row is
    # written by a recompute (~1,850 a table), so each index costs every insert
    # (bench/recompute.py).
    table = models.ForeignKey(
        CandidateTable, on_delete=models.CASCADE, related_name="rows", db_index=False
    )
    # Rows are never looked up or ordered by creation time (they are replaced wholesale).
    created_at = models.DateTimeField(auto_now_add=True)
    candidate_kind = models.CharField(max_length=10, choices=Kind.choices)
    quote = models.ForeignKey(Quote, on_delete=models.PROTECT, null=True, blank=True)
    api_route = models.ForeignKey(ApiRoute, on_delete=models.PROTECT, null=True, blank=True)
    gpu = models.ForeignKey(Gpu, on_delete=models.PROTECT, null=True, blank=True)
    # The configuration (apps.finance.state.Configuration): GPUs per replica, replicas, and
    # the GPUs billed (for throughput-sized work and training too).
    gpu_count = models.PositiveSmallIntegerField(null=True, blank=True)
    replicas = models.PositiveIntegerField(null=True, blank=True)
    paid_gpus = models.PositiveIntegerField(null=True, blank=True)
    pricing_term = models.CharField(max_length=20, blank=True)
    cost_lines = models.JSONField(default=dict)
    # Wide enough for the largest accepted inputs (apps.core.bounds) on a large brief; a
    # candidate whose figures pass a column anyway is listed as not costed
    # (apps.finance.candidates.row_overflow).
    monthly_cost = models.DecimalField(max_digits=24, decimal_places=4)
    accepted_outputs_per_month = models.DecimalField(max_digits=24, decimal_places=4)
    effective_unit_cost = models.DecimalField(max_digits=38, decimal_places=18, null=True)
    meets_constraints = models.BooleanField()
    why_not = models.JSONField(default=list, blank=True)
    basis = models.CharField(max_length=10, choices=Basis.choices, default=costing.Basis.ESTIMATED)
    p95_latency_ms = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    memory_headroom_gb = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    # The parallel layout the engine chose for the configuration ("TP8", "DEP16 (2 nodes)");
    # empty for an API route.
    layout = models.CharField(max_length=40, blank=True, default="")
    # GPU-hours a month the candidate pays for (busy and idle); null for an API route. What a
    # shared platform-labour pool is split by (apps.engine.costing_labour).
    paid_gpu_hours_per_month = models.DecimalField(
        max_digits=24, decimal_places=4, null=True, blank=True
    )
    # Energy (apps.engine.energy): kWh a month at the facility meter, joules per accepted
    # output, and kg CO2e a month when finance gives a carbon intensity; null for an API route.
    energy_kwh_per_month = models.DecimalField(
        max_digits=24, decimal_places=4, null=True, blank=True
    )
    energy_j_per_output = models.DecimalField(
        max_digits=24, decimal_places=6, null=True, blank=True
    )
    co2e_kg_per_month = models.DecimalField(max_digits=24, decimal_places=4, null=True, blank=True)
    notes = models.JSONField(default=list, blank=True)
    # The figures the engine gives at the configuration that have no column of their own
    # (apps.finance.state.Figures: latencies, throughput, fit, load share, time to train) and
    # the hours each paid GPU is billed.
    figures = models.JSONField(default=dict, blank=True)
    # A serving plan's make-up (apps.finance.plans): MIX {"parts", "buckets", "best_single",
    # ...}, DISAGG {"pools", "ttft_ms", ...}; empty for a GPU or API row.
    plan = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(candidate_kind="GPU") & Q(quote__isnull=False) & Q(api_route__isnull=True)
                )
                | (
                    Q(candidate_kind="API_ROUTE")
                    & Q(api_route__isnull=False)
                    & Q(quote__isnull=True)
                )
                | (
                    Q(candidate_kind__in=["MIX", "DISAGG"])
                    & Q(api_route__isnull=True)
                    & Q(quote__isnull=True)
                ),
                name="row_kind_matches_candidate",
            ),
            models.CheckConstraint(
                condition=Q(monthly_cost__gte=0) & Q(accepted_outputs_per_month__gte=0),
                name="row_figures_not_negative",
            ),
        ]
        # Ranks are computed when read (selectors.ranking_for_brief), in this order.
        indexes = [
            models.Index(
                fields=["table", "-meets_constraints", "effective_unit_cost"],
                name="row_ranking_order",
            )
        ]


register(CandidateRow.Kind, name="CandidateRow.Kind")
