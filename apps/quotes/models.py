from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Lower

from apps.catalog.models import Gpu, GpuSystem
from apps.core import bounds
from apps.core.choices import text_choices
from apps.core.currency import Currency
from apps.core.models import BaseModel, Team
from apps.engine import PRESETS, costing

ZERO = 0
# The ranges are apps.core.bounds' (each with its source); these names stay for their readers.
# Explicit bounds keep validation and the API schema the same on SQLite (64-bit integers) and
# PostgreSQL (32-bit integer and 16-bit smallint columns).
MAX_COMMITMENT_MONTHS = bounds.MINIMUM_COMMITMENT_MONTHS_MAX
MAX_RATE_LIMIT_RPM = bounds.RATE_LIMIT_RPM_MAX
MAX_VERSION = 2_147_483_647
MIN_CAPEX = bounds.CAPEX_PER_GPU_MIN
MAX_DEPRECIATION_MONTHS = bounds.DEPRECIATION_MONTHS_MAX
MIN_KW_PER_GPU = bounds.KW_PER_GPU_MIN
MAX_KW_PER_GPU = bounds.KW_PER_GPU_MAX
MAX_PUE = bounds.PUE_MAX
MAX_OPS_HOURS = bounds.OPS_HOURS_PER_GPU_MONTH_MAX
OWNED_REQUIRED = ("capex_per_gpu", "depreciation_months")
OWNED_OPTIONAL = (
    "power_kw_per_gpu", "pue", "electricity_per_kwh", "hosting_per_kw_month", "ops_hours_per_month",
)  # fmt: skip
OWNED_FIELDS = (*OWNED_REQUIRED, *OWNED_OPTIONAL)


def validate_preset(value: str) -> None:
    if value and value not in PRESETS:
        raise ValidationError(f"unknown model preset {value!r}")


def _money(high: Decimal, **kwargs: Any) -> models.DecimalField:  # type: ignore[type-arg]
    """A price of 0 to ``high`` (apps.core.bounds), stored to 4 decimal places."""
    return models.DecimalField(
        max_digits=14, decimal_places=4, validators=bounds.at_most(high), **kwargs
    )


class Provider(BaseModel):
    """A cloud, neocloud, reseller, hardware vendor or model-API company."""

    name = models.CharField(max_length=120, unique=True)
    website = models.URLField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                Lower("name"),
                name="provider_name_unique_ignoring_case",
                violation_error_message="A provider with this name already exists.",
            )
        ]

    def __str__(self) -> str:
        return self.name


class Quote(BaseModel):
    """A provider's price for GPU capacity. Never deleted: retired, so records can cite it."""

    PricingTerm = text_choices(
        costing.PricingTerm,
        {
            "ON_DEMAND": "On demand",
            "SPOT": "Spot / preemptible",
            "RESERVED_1Y": "Reserved 1 year",
            "RESERVED_3Y": "Reserved 3 years",
            "DEDICATED_CLUSTER": "Dedicated cluster",
            "MARKETPLACE": "Marketplace",
            "OWNED": "Owned (bought)",
        },
        name="Quote.PricingTerm",
    )

    provider = models.ForeignKey(Provider, on_delete=models.PROTECT, related_name="quotes")
    gpu = models.ForeignKey(
        Gpu, on_delete=models.PROTECT, null=True, blank=True, related_name="quotes"
    )
    system = models.ForeignKey(
        GpuSystem, on_delete=models.PROTECT, null=True, blank=True, related_name="quotes"
    )
    gpus_per_node = models.PositiveSmallIntegerField(
        default=8, validators=bounds.between(1, bounds.GPUS_PER_NODE_MAX)
    )
    region = models.CharField(max_length=60)
    pricing_term = models.CharField(max_length=20, choices=PricingTerm.choices)
    # At least bounds.GPU_HOUR_PRICE_MIN unless owned (``clean``).
    hourly_price_per_gpu = _money(bounds.GPU_HOUR_PRICE_MAX)
    currency = models.CharField(max_length=3, choices=Currency.choices, default=Currency.USD)
    storage_price_per_tb_month = _money(bounds.STORAGE_PER_TB_MONTH_MAX, default=0)
    egress_price_per_gb = _money(bounds.EGRESS_PER_GB_MAX, default=0)
    network_monthly = _money(
        bounds.MONTHLY_FEE_MAX, default=0, help_text="Private network / interconnect, per month."
    )
    monthly_extras = _money(
        bounds.MONTHLY_FEE_MAX, default=0, help_text="Support, licences and other monthly fees."
    )
    minimum_commitment_months = models.PositiveSmallIntegerField(
        default=0, validators=[MaxValueValidator(MAX_COMMITMENT_MONTHS)]
    )
    # --- Owned (bought) hardware: only on OWNED quotes (see ``clean``). Money in ``currency``;
    # a blank optional figure takes the finance assumptions' default.
    capex_per_gpu = models.DecimalField(
        max_digits=14, decimal_places=2, null=True, blank=True,
        validators=bounds.between(MIN_CAPEX, bounds.CAPEX_PER_GPU_MAX),
        help_text="Owned: purchase price per GPU, its share of the server and network.",
    )  # fmt: skip
    depreciation_months = models.PositiveSmallIntegerField(
        null=True, blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_DEPRECIATION_MONTHS)],
        help_text="Owned: months the capex is depreciated over.",
    )  # fmt: skip
    power_kw_per_gpu = models.DecimalField(
        max_digits=6, decimal_places=3, null=True, blank=True,
        validators=[MinValueValidator(MIN_KW_PER_GPU), MaxValueValidator(MAX_KW_PER_GPU)],
        help_text="Owned: kW drawn per GPU with its host share (blank: GPU TDP + host share).",
    )  # fmt: skip
    pue = models.DecimalField(
        max_digits=4, decimal_places=2, null=True, blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_PUE)],
        help_text="Owned: the site's power usage effectiveness (blank: finance default).",
    )  # fmt: skip
    electricity_per_kwh = models.DecimalField(
        max_digits=8, decimal_places=4, null=True, blank=True,
        validators=bounds.at_most(bounds.ELECTRICITY_PER_KWH_MAX),
        help_text="Owned: electricity price per kWh (blank: finance default).",
    )  # fmt: skip
    hosting_per_kw_month = models.DecimalField(
        max_digits=10, decimal_places=2, null=True, blank=True,
        validators=bounds.at_most(bounds.HOSTING_PER_KW_MONTH_MAX),
        help_text="Owned: colocation / hosting per kW of IT load a month (blank: finance default).",
    )  # fmt: skip
    ops_hours_per_month = models.DecimalField(
        max_digits=6, decimal_places=2, null=True, blank=True,
        validators=[MinValueValidator(ZERO), MaxValueValidator(MAX_OPS_HOURS)],
        help_text="Owned: datacentre hands-on hours per GPU a month (blank: finance default).",
    )  # fmt: skip
    quote_date = models.DateField(validators=[bounds.plausible_date])
    valid_until = models.DateField(null=True, blank=True)
    source = models.CharField(max_length=300, help_text="Who quoted it, or the price page.")
    retired = models.BooleanField(default=False)
    confidential_to = models.ForeignKey(
        Team,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="confidential_quotes",
        help_text="Visible only to this team (quotes under NDA).",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="Who entered it: they and their teams own it (may make it confidential). "
        "Empty on quotes entered before this was recorded.",
    )
    version = models.PositiveIntegerField(default=1, validators=[MaxValueValidator(MAX_VERSION)])
    # --- Imported from a published catalog (apps/quotes/catalog_import.py); empty otherwise.
    import_key = models.CharField(
        max_length=200,
        blank=True,
        default="",
        help_text="Catalog imports: format, GPU, region and term; a re-import of the same key "
        "updates this quote in place.",
    )
    fetched_date = models.DateField(
        null=True,
        blank=True,
        validators=[bounds.plausible_date],
        help_text="Catalog imports: the day the catalog was fetched.",
    )

    class Meta:
        constraints = [
            # One live public quote per provider and catalog key, and one per team among its
            # confidential ones: a re-import updates the importer's in place, and another
            # team's confidential quote of the key neither blocks nor shows (catalog_import).
            models.UniqueConstraint(
                fields=["provider", "import_key"],
                condition=Q(retired=False) & ~Q(import_key="") & Q(confidential_to__isnull=True),
                name="quote_one_live_public_per_provider_import_key",
            ),
            models.UniqueConstraint(
                fields=["provider", "import_key", "confidential_to"],
                condition=Q(retired=False) & ~Q(import_key="") & Q(confidential_to__isnull=False),
                name="quote_one_live_per_team_provider_import_key",
            ),
            models.CheckConstraint(
                condition=(Q(gpu__isnull=False) & Q(system__isnull=True))
                | (Q(gpu__isnull=True) & Q(system__isnull=False)),
                name="quote_gpu_xor_system",
            ),
            models.CheckConstraint(
                condition=Q(hourly_price_per_gpu__gte=0)
                & Q(storage_price_per_tb_month__gte=0)
                & Q(egress_price_per_gb__gte=0)
                & Q(network_monthly__gte=0)
                & Q(monthly_extras__gte=0),
                name="quote_prices_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(valid_until__isnull=True) | Q(valid_until__gte=F("quote_date")),
                name="quote_valid_until_after_quote_date",
            ),
            models.CheckConstraint(
                condition=Q(gpus_per_node__gte=1), name="quote_gpus_per_node_positive"
            ),
            # Owned-hardware figures only on owned quotes (an owned quote entered before they
            # existed has none: it is costed at its hourly figure until it is edited).
            models.CheckConstraint(
                condition=Q(pricing_term="OWNED")
                | Q(**{f"{name}__isnull": True for name in OWNED_FIELDS}),
                name="quote_owned_figures_only_when_owned",
            ),
        ]

    def __str__(self) -> str:
        what = self.gpu or self.system
        return f"{self.provider} · {what} · {self.get_pricing_term_display()}"

    def clean(self) -> None:
        """An owned quote is bought hardware: it needs its capex and depreciation months, and
        is costed from them (its hourly price stays 0); no other term takes them."""
        errors: dict[str, str] = {}
        if self.pricing_term == costing.PricingTerm.OWNED:
            for name in OWNED_REQUIRED:
                if getattr(self, name) is None:
                    errors[name] = "Required for an owned (bought) quote."
            if self.hourly_price_per_gpu:
                errors["hourly_price_per_gpu"] = (
                    "An owned quote is costed from its capex and running costs: leave the "
                    "hourly price at 0."
                )
        else:
            price = self.hourly_price_per_gpu
            if price is not None and 0 <= price < bounds.GPU_HOUR_PRICE_MIN:
                errors["hourly_price_per_gpu"] = (
                    f"A rented GPU-hour costs at least {bounds.GPU_HOUR_PRICE_MIN} "
                    "(only an owned quote takes 0)."
                )
            for name in OWNED_FIELDS:
                if getattr(self, name) is not None:
                    errors[name] = "Only an owned (bought) quote takes this; leave it empty."
        if errors:
            raise ValidationError(errors)


# Every pricing term in words, the one home of the labels pages, charts, CSVs and PDFs use.
TERM_LABELS: dict[str, str] = dict(Quote.PricingTerm.choices)


class ApiRoute(BaseModel):
    """A model served by a provider's API, priced per million tokens."""

    provider = models.ForeignKey(Provider, on_delete=models.PROTECT, related_name="api_routes")
    model = models.CharField(max_length=120, help_text="The provider's model name.")
    model_preset = models.CharField(
        max_length=64,
        blank=True,
        validators=[validate_preset],
        help_text="The catalog preset this route serves, if any.",
    )
    input_price_per_mtok = _money(bounds.MTOK_PRICE_MAX)
    output_price_per_mtok = _money(bounds.MTOK_PRICE_MAX)
    cached_input_price_per_mtok = _money(
        bounds.MTOK_PRICE_MAX,
        null=True,
        blank=True,
        help_text="Per million input tokens read from the prompt cache.",
    )
    currency = models.CharField(max_length=3, choices=Currency.choices, default=Currency.USD)
    batch_discount = models.DecimalField(
        max_digits=5,
        decimal_places=4,
        default=0,
        validators=[MinValueValidator(0), MaxValueValidator(Decimal("0.9999"))],
        help_text="Share off for batch jobs, 0-1.",
    )
    rate_limit_rpm = models.PositiveIntegerField(
        null=True, blank=True, validators=[MaxValueValidator(MAX_RATE_LIMIT_RPM)]
    )
    # Hour-of-day prices (apps/quotes/price_windows.py): each window of the day and its prices,
    # covering the day; empty for one price all day. The prices above are then the windows'
    # hour-weighted figures, and a brief is costed at the hours it runs in them.
    price_windows = models.JSONField(
        default=list,
        blank=True,
        help_text="Hour-of-day windows (UTC) and their prices; empty: one price all day.",
    )
    quote_date = models.DateField(null=True, blank=True, validators=[bounds.plausible_date])
    source = models.CharField(max_length=300, blank=True)
    retired = models.BooleanField(default=False)
    version = models.PositiveIntegerField(default=1, validators=[MaxValueValidator(MAX_VERSION)])

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(input_price_per_mtok__gte=0) & Q(output_price_per_mtok__gte=0),
                name="api_route_prices_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(batch_discount__gte=0) & Q(batch_discount__lt=1),
                name="api_route_batch_discount_in_0_1",
            ),
            models.UniqueConstraint(
                fields=["provider", "model"],
                condition=Q(retired=False),
                name="api_route_one_live_per_provider_model",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.provider} · {self.model}"


class ApiRoutePrice(BaseModel):
    """One period of an API route's price, as a price list published it: in effect from
    ``effective_from`` (empty: from the list's first record of the model) until the next
    period of the same route. The route's own price fields hold the period in effect on the
    date it was last imported for; these rows are its history, for pricing at a date."""

    route = models.ForeignKey(ApiRoute, on_delete=models.PROTECT, related_name="prices")
    effective_from = models.DateField(
        null=True, blank=True, help_text="Empty: since the price list first listed the model."
    )
    input_price_per_mtok = _money(bounds.MTOK_PRICE_MAX)
    output_price_per_mtok = _money(bounds.MTOK_PRICE_MAX)
    cached_input_price_per_mtok = _money(bounds.MTOK_PRICE_MAX, null=True, blank=True)
    currency = models.CharField(max_length=3, choices=Currency.choices, default=Currency.USD)
    batch_discount = models.DecimalField(
        max_digits=5,
        decimal_places=4,
        default=0,
        validators=[MinValueValidator(0), MaxValueValidator(Decimal("0.9999"))],
    )
    source = models.CharField(max_length=300)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["route", "effective_from"], name="api_route_price_one_per_start"
            ),
            # NULL is distinct from NULL in a unique index: one open-start period a route.
            models.UniqueConstraint(
                fields=["route"],
                condition=Q(effective_from__isnull=True),
                name="api_route_price_one_open_start",
            ),
            models.CheckConstraint(
                condition=Q(input_price_per_mtok__gte=0)
                & Q(output_price_per_mtok__gte=0)
                & (
                    Q(cached_input_price_per_mtok__isnull=True)
                    | Q(cached_input_price_per_mtok__gte=0)
                ),
                name="api_route_price_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(batch_discount__gte=0) & Q(batch_discount__lt=1),
                name="api_route_price_batch_discount_in_0_1",
            ),
        ]

    def __str__(self) -> str:
        start = self.effective_from.isoformat() if self.effective_from else "first listed"
        return f"{self.route} from {start}"
