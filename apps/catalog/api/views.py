from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, viewsets

from apps.catalog.models import Gpu
from apps.core.query import ChoiceParam, KnownQueryParams, NumberParam, TextParam

#: Bound of the memory filters (GB): any real GPU fits, and the schema says so.
MEMORY_LIMIT_GB = 100_000
#: ``Gpu.memory_gb`` holds hundredths of a GB.
GB_STEP = Decimal("0.01")
VENDOR = TextParam("vendor", "Vendor, any case; empty means any")
ARCHITECTURE = ChoiceParam("architecture", Gpu.Architecture.values, "Architecture")
MIN_MEMORY = NumberParam("min_memory_gb", 0, MEMORY_LIMIT_GB, "At least this many GB")
MAX_MEMORY = NumberParam("max_memory_gb", 0, MEMORY_LIMIT_GB, "At most this many GB")


class GpuOutputSerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    class Meta:
        model = Gpu
        fields = [
            "slug", "name", "vendor", "form_factor", "architecture", "memory_gb",
            "device_memory_mib", "memory_type",
            "memory_bandwidth_tbps", "bf16_dense_tflops", "fp8_dense_tflops", "fp4_dense_tflops",
            "int8_dense_tops", "tdp_w", "interconnect", "interconnect_gbps_bidirectional",
            "max_gpus_per_node", "source", "checked_date",
        ]  # fmt: skip


@extend_schema_view(
    list=extend_schema(
        parameters=[p.openapi() for p in (VENDOR, ARCHITECTURE, MIN_MEMORY, MAX_MEMORY)]
    )
)
class GpuViewSet(KnownQueryParams, viewsets.ReadOnlyModelViewSet):  # type: ignore[type-arg]
    """The GPU catalog: datasheet figures (dense) with their source and checked date."""

    query_params = (VENDOR, ARCHITECTURE, MIN_MEMORY, MAX_MEMORY)

    queryset = Gpu.objects.order_by("slug")
    serializer_class = GpuOutputSerializer
    lookup_field = "slug"

    def get_queryset(self) -> QuerySet[Gpu]:
        qs = super().get_queryset()
        if self.action != "list":
            return qs
        request = self.request
        vendor, architecture = VENDOR.parse(request), ARCHITECTURE.parse(request)
        at_least, at_most = MIN_MEMORY.parse(request), MAX_MEMORY.parse(request)
        if vendor:
            qs = qs.filter(vendor__iexact=vendor)
        if architecture is not None:
            qs = qs.filter(architecture=architecture)
        # To the column's 0.01 GB, rounded the way that keeps the comparison exact: a bound
        # like 1e-20000 would otherwise reach PostgreSQL with more places than numeric holds.
        if at_least is not None:
            qs = qs.filter(memory_gb__gte=at_least.quantize(GB_STEP, rounding=ROUND_CEILING))
        if at_most is not None:
            qs = qs.filter(memory_gb__lte=at_most.quantize(GB_STEP, rounding=ROUND_FLOOR))
        return qs
