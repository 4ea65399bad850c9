from datetime import date
from decimal import Decimal
from typing import Any

from django.utils import timezone
from rest_framework import serializers

from apps.catalog.models import Gpu, GpuSystem
from apps.core import bounds
from apps.core.api import StrictJsonTypes
from apps.engine.costing import PricingTerm
from apps.quotes.models import OWNED_FIELDS, ApiRoute, Provider, Quote
from apps.quotes.selectors import quote_age_days, quote_is_stale

#: What the schema says of a price's date (apps.core.bounds.plausible_date).
PLAUSIBLE_DATE = "From 2000-01-01 to tomorrow (400 outside)."


class ProviderSerializer(StrictJsonTypes, serializers.ModelSerializer):  # type: ignore[type-arg]
    class Meta:
        model = Provider
        fields = ["id", "name", "website", "created_at", "updated_at"]
        read_only_fields = ["id", "created_at", "updated_at"]


class QuoteInputSerializer(StrictJsonTypes, serializers.ModelSerializer):  # type: ignore[type-arg]
    """Writable quote fields. Server-owned fields (version, retired, timestamps) are not here."""

    provider = serializers.PrimaryKeyRelatedField(queryset=Provider.objects.all())
    gpu = serializers.SlugRelatedField(
        slug_field="slug", queryset=Gpu.objects.all(), required=False, allow_null=True
    )
    system = serializers.SlugRelatedField(
        slug_field="slug", queryset=GpuSystem.objects.all(), required=False, allow_null=True
    )

    class Meta:
        model = Quote
        fields = [
            "provider", "gpu", "system", "gpus_per_node", "region", "pricing_term",
            "hourly_price_per_gpu", "currency", "storage_price_per_tb_month",
            "egress_price_per_gb", "network_monthly", "monthly_extras",
            "minimum_commitment_months", "quote_date", "valid_until", "source", *OWNED_FIELDS,
        ]  # fmt: skip
        # An owned quote is costed from its capex: its hourly price may be left out (0).
        extra_kwargs = {
            "hourly_price_per_gpu": {
                "required": False,
                "help_text": f"{bounds.GPU_HOUR_PRICE_MIN} to {bounds.GPU_HOUR_PRICE_MAX:,} a "
                "GPU-hour in the quote's currency (400 outside); 0 or left out only on an "
                "owned quote",
            },
            "quote_date": {"help_text": PLAUSIBLE_DATE},
        }

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        instance = self.instance
        if instance is None and "hourly_price_per_gpu" not in attrs:
            if attrs.get("pricing_term") != PricingTerm.OWNED:
                raise serializers.ValidationError(
                    {"hourly_price_per_gpu": "required unless the quote is owned (bought)"}
                )
            attrs["hourly_price_per_gpu"] = Decimal(0)
        gpu = attrs.get("gpu", getattr(instance, "gpu", None))
        system = attrs.get("system", getattr(instance, "system", None))
        if (gpu is None) == (system is None):
            raise serializers.ValidationError({"gpu": "give a catalog GPU or a system, not both"})
        quote_date = attrs.get("quote_date", getattr(instance, "quote_date", None))
        valid_until = attrs.get("valid_until", getattr(instance, "valid_until", None))
        if quote_date and valid_until and valid_until < quote_date:
            raise serializers.ValidationError({"valid_until": "must not be before quote_date"})
        return attrs


class QuoteOutputSerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    provider = serializers.PrimaryKeyRelatedField(read_only=True)  # type: ignore[var-annotated]
    provider_name = serializers.CharField(source="provider.name", read_only=True)
    gpu = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)  # type: ignore[var-annotated]
    system = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)  # type: ignore[var-annotated]
    stale = serializers.SerializerMethodField()
    age_days = serializers.SerializerMethodField()

    class Meta:
        model = Quote
        fields = [
            "id", "provider", "provider_name", "gpu", "system", "gpus_per_node", "region",
            "pricing_term", "hourly_price_per_gpu", "currency", "storage_price_per_tb_month",
            "egress_price_per_gb", "network_monthly", "monthly_extras",
            "minimum_commitment_months", *OWNED_FIELDS, "quote_date", "valid_until", "source",
            "retired", "version", "stale", "age_days", "import_key", "fetched_date",
            "created_at", "updated_at",
        ]  # fmt: skip
        # Set by the catalog import (apps/quotes/catalog_import.py) alone; empty and null on a
        # quote entered by hand or from the quote CSV.
        read_only_fields = ["import_key", "fetched_date"]

    def _today(self) -> date:
        return self.context.get("today") or timezone.localdate()

    def get_stale(self, quote: Quote) -> bool:
        return quote_is_stale(quote, today=self._today())

    def get_age_days(self, quote: Quote) -> int:
        return quote_age_days(quote, today=self._today())


class ApiRouteInputSerializer(StrictJsonTypes, serializers.ModelSerializer):  # type: ignore[type-arg]
    provider = serializers.PrimaryKeyRelatedField(queryset=Provider.objects.all())

    class Meta:
        model = ApiRoute
        fields = [
            "provider", "model", "model_preset", "input_price_per_mtok",
            "output_price_per_mtok", "cached_input_price_per_mtok", "currency", "batch_discount",
            "rate_limit_rpm", "quote_date", "source",
        ]  # fmt: skip
        extra_kwargs = {"quote_date": {"help_text": PLAUSIBLE_DATE}}
        validators: list[Any] = []  # the live-route uniqueness is checked by the service


class PriceWindowSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """One hour-of-day window of a route's price (apps/quotes/price_windows.py)."""

    start = serializers.CharField(help_text="HH:MM, UTC")
    end = serializers.CharField(help_text="HH:MM, UTC (exclusive; past midnight when earlier)")
    hours = serializers.DecimalField(max_digits=4, decimal_places=2)
    input_price_per_mtok = serializers.DecimalField(max_digits=14, decimal_places=4)
    output_price_per_mtok = serializers.DecimalField(max_digits=14, decimal_places=4)
    cached_input_price_per_mtok = serializers.CharField(help_text="Empty when none is listed")


class ApiRouteOutputSerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    provider_name = serializers.CharField(source="provider.name", read_only=True)
    price_windows = PriceWindowSerializer(
        many=True,
        read_only=True,
        help_text="Hour-of-day prices from a price list, covering the day; the route's input "
        "and output prices are their hour-weighted figures. Empty: one price all day.",
    )

    class Meta:
        model = ApiRoute
        fields = [
            "id", "provider", "provider_name", "model", "model_preset", "input_price_per_mtok",
            "output_price_per_mtok", "cached_input_price_per_mtok", "currency", "batch_discount",
            "rate_limit_rpm", "price_windows",
            "quote_date", "source", "retired", "version", "created_at", "updated_at",
        ]  # fmt: skip
