import django_filters
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import serializers, viewsets

from apps.catalog.models import Gpu

#: Bounds of the memory filters (GB): any real GPU fits, and the schema says so.
MAX_MEMORY_GB = 100_000
MEMORY_BOUNDS = {"type": "number", "minimum": 0, "maximum": MAX_MEMORY_GB}
#: Text filters are refused (400) with a NUL in them.
NO_NUL = {"type": "string", "pattern": "^[^\\x00]*$"}


class GpuFilter(django_filters.FilterSet):
    vendor = django_filters.CharFilter(field_name="vendor", lookup_expr="iexact")
    min_memory_gb = django_filters.NumberFilter(
        field_name="memory_gb", lookup_expr="gte", min_value=0, max_value=MAX_MEMORY_GB
    )
    max_memory_gb = django_filters.NumberFilter(
        field_name="memory_gb", lookup_expr="lte", min_value=0, max_value=MAX_MEMORY_GB
    )
    architecture = django_filters.ChoiceFilter(choices=Gpu.Architecture.choices)

    class Meta:
        model = Gpu
        fields = ["vendor", "architecture", "min_memory_gb", "max_memory_gb"]

    def is_valid(self) -> bool:
        """An empty architecture is not one of the documented choices: refused, where
        django-filter would quietly ignore it."""
        valid = bool(super().is_valid())
        for name in ("architecture",):
            if self.data.get(name, None) == "":
                self.form.add_error(name, "must not be empty; leave the parameter out instead")
                valid = False
        return valid


class GpuOutputSerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    class Meta:
        model = Gpu
        fields = [
            "slug", "name", "vendor", "form_factor", "architecture", "memory_gb", "memory_type",
            "memory_bandwidth_tbps", "bf16_dense_tflops", "fp8_dense_tflops", "fp4_dense_tflops",
            "int8_dense_tops", "tdp_w", "interconnect", "interconnect_gbps_bidirectional",
            "max_gpus_per_node", "source", "checked_date",
        ]  # fmt: skip


@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter("vendor", NO_NUL, description="Vendor, any case"),
            OpenApiParameter("min_memory_gb", MEMORY_BOUNDS, description="At least this many GB"),
            OpenApiParameter("max_memory_gb", MEMORY_BOUNDS, description="At most this many GB"),
        ]
    )
)
class GpuViewSet(viewsets.ReadOnlyModelViewSet):  # type: ignore[type-arg]
    """The GPU catalog: datasheet figures (dense) with their source and checked date."""

    queryset = Gpu.objects.order_by("slug")
    serializer_class = GpuOutputSerializer
    lookup_field = "slug"
    filterset_class = GpuFilter
