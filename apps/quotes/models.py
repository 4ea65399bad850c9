from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Lower

from apps.catalog.models import Gpu, GpuSystem
from apps.core.choices import text_choices
from apps.core.currency import Currency
from apps.core.models import BaseModel, Team
from apps.engine import PRESETS, costing

ZERO = 0
# Explicit bounds, so that validation and the API schema are the same on SQLite (64-bit
# integers) and PostgreSQL (32-bit integer and 16-bit smallint columns).
MAX_COMMITMENT_MONTHS = 120
MAX_RATE_LIMIT_RPM = 100_000_000
MAX_VERSION = 2_147_483_647


def validate_preset(value: str) -> None:
    if value and value not in PRESETS:
        raise ValidationError(f"unknown model preset {value!r}")


def _money(**kwargs: Any) -> models.DecimalField:  # type: ignore[type-arg]
    return models.DecimalField(
        max_digits=14, decimal_places=4, validators=[MinValueValidator(ZERO)], **kwargs
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
        default=8, validators=[MinValueValidator(1), MaxValueValidator(576)]
    )
    region = models.CharField(max_length=60)
    pricing_term = models.CharField(max_length=20, choices=PricingTerm.choices)
    hourly_price_per_gpu = _money()
    currency = models.CharField(max_length=3, choices=Currency.choices, default=Currency.USD)
    storage_price_per_tb_month = _money(default=0)
    egress_price_per_gb = _money(default=0)
    network_monthly = _money(default=0, help_text="Private network / interconnect, per month.")
    monthly_extras = _money(default=0, help_text="Support, licences and other monthly fees.")
    minimum_commitment_months = models.PositiveSmallIntegerField(
        default=0, validators=[MaxValueValidator(MAX_COMMITMENT_MONTHS)]
    )
    quote_date = models.DateField()
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

    class Meta:
        constraints = [
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
        ]

    def __str__(self) -> str:
        what = self.gpu or self.system
        return f"{self.provider} · {what} · {self.get_pricing_term_display()}"


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
    input_price_per_mtok = _money()
    output_price_per_mtok = _money()
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
    quote_date = models.DateField(null=True, blank=True)
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
