"""The whole public API surface, version 1, in one place."""

from django.urls import include, path
from rest_framework.routers import SimpleRouter

from apps.catalog.api.views import GpuViewSet

router = SimpleRouter(trailing_slash=True)
router.register("gpus", GpuViewSet, basename="gpu")

app_name = "api"

urlpatterns = [
    path("", include(router.urls)),
]
