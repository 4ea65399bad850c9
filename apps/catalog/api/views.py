import django_filters
from rest_framework import serializers, viewsets

from apps.catalog.models import Gpu


class GpuFilter(django_filters.FilterSet):
    vendor = django_filters.CharFilter(field_name="vendor", lookup_expr="iexact")
    min_memory_gb = django_filters.NumberFilter(field_name="memory_gb", lookup_expr="gte")
    max_memory_gb = django_filters.NumberFilter(field_name="memory_gb", lookup_expr="lte")
    architecture = django_filters.ChoiceFilter(choices=Gpu.Architecture.choices)

    class Meta:
        model = Gpu
        fields = ["vendor", "architecture", "min_memory_gb", "max_memory_gb"]


class GpuOutputSerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    class Meta:
        model = Gpu
        fields = [
            "slug", "name", "vendor", "form_factor", "architecture", "memory_gb", "memory_type",
            "memory_bandwidth_tbps", "bf16_dense_tflops", "fp8_dense_tflops", "fp4_dense_tflops",
            "int8_dense_tops", "tdp_w", "interconnect", "interconnect_gbps_bidirectional",
            "max_gpus_per_node", "source", "checked_date",
        ]  # fmt: skip


class GpuViewSet(viewsets.ReadOnlyModelViewSet):  # type: ignore[type-arg]
    """The GPU catalog: datasheet figures (dense) with their source and checked date."""

    queryset = Gpu.objects.order_by("slug")
    serializer_class = GpuOutputSerializer
    lookup_field = "slug"
    filterset_class = GpuFilter
