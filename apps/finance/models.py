from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from apps.briefs.models import WorkloadBrief
from apps.catalog.models import Gpu
from apps.core.currency import Currency
from apps.core.models import BaseModel
from apps.quotes.models import ApiRoute, Quote

NOT_NEGATIVE = MinValueValidator(Decimal(0))
# A share of something, 0 <= x < 1 (a retry rate of 1 would retry forever).
SHARE = [NOT_NEGATIVE, MaxValueValidator(Decimal("0.9999"))]


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
        max_digits=10, decimal_places=2, null=True, blank=True, validators=[NOT_NEGATIVE]
    )
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
    amortisation_years = models.DecimalField(
        max_digits=4, decimal_places=1, null=True, blank=True,
        validators=[MinValueValidator(Decimal("0.1"))],
    )  # fmt: skip
    power_price_per_kwh = models.DecimalField(
        max_digits=8, decimal_places=4, null=True, blank=True, validators=[NOT_NEGATIVE]
    )
    hosting_cost_per_gpu_month = models.DecimalField(
        max_digits=10, decimal_places=2, null=True, blank=True, validators=[NOT_NEGATIVE]
    )
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
                & (Q(amortisation_years__isnull=True) | Q(amortisation_years__gt=0))
                & (Q(power_price_per_kwh__isnull=True) | Q(power_price_per_kwh__gte=0))
                & (
                    Q(hosting_cost_per_gpu_month__isnull=True)
                    | Q(hosting_cost_per_gpu_month__gte=0)
                ),
                name="assumption_amounts_not_negative",
            ),
        ]

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
    rate = models.DecimalField(max_digits=FX_RATE_MAX_DIGITS, decimal_places=FX_RATE_DECIMAL_PLACES)
    as_of = models.DateField()
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
    # Engine results depend on the brief, the catalog and calibration, not on prices: they are
    # kept here and reused when only a price changes.
    estimates_key = models.CharField(max_length=64, blank=True)
    estimates = models.JSONField(default=list, blank=True)

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


class CandidateRow(BaseModel):
    class Kind(models.TextChoices):
        GPU = "GPU", "GPU capacity"
        API_ROUTE = "API_ROUTE", "Model / API route"

    class Basis(models.TextChoices):
        ESTIMATED = "ESTIMATED"
        CALIBRATED = "CALIBRATED"  # estimated, factors learnt from runs of the same model
        MEASURED = "MEASURED"

    table = models.ForeignKey(CandidateTable, on_delete=models.CASCADE, related_name="rows")
    candidate_kind = models.CharField(max_length=10, choices=Kind.choices)
    quote = models.ForeignKey(Quote, on_delete=models.PROTECT, null=True, blank=True)
    api_route = models.ForeignKey(ApiRoute, on_delete=models.PROTECT, null=True, blank=True)
    gpu = models.ForeignKey(Gpu, on_delete=models.PROTECT, null=True, blank=True)
    gpu_count = models.PositiveSmallIntegerField(null=True, blank=True)
    replicas = models.PositiveIntegerField(null=True, blank=True)
    pricing_term = models.CharField(max_length=20, blank=True)
    cost_lines = models.JSONField(default=dict)
    monthly_cost = models.DecimalField(max_digits=16, decimal_places=4)
    accepted_outputs_per_month = models.DecimalField(max_digits=24, decimal_places=4)
    effective_unit_cost = models.DecimalField(max_digits=32, decimal_places=18, null=True)
    meets_constraints = models.BooleanField()
    why_not = models.JSONField(default=list, blank=True)
    basis = models.CharField(max_length=10, choices=Basis.choices, default=Basis.ESTIMATED)
    p95_latency_ms = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    memory_headroom_gb = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    notes = models.JSONField(default=list, blank=True)

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
