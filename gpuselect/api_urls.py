"""The whole public API surface, version 1, in one place."""

from django.urls import include, path
from rest_framework.routers import SimpleRouter

from apps.briefs.api.estimate import EstimateApi, ModelPresetListApi
from apps.briefs.api.views import BriefDetailApi, BriefEstimateApi, BriefListCreateApi
from apps.catalog.api.views import GpuViewSet

router = SimpleRouter(trailing_slash=True)
router.register("gpus", GpuViewSet, basename="gpu")

app_name = "api"

urlpatterns = [
    path("", include(router.urls)),
    path("estimate", EstimateApi.as_view(), name="estimate"),
    path("models/", ModelPresetListApi.as_view(), name="model-list"),
    path("briefs/", BriefListCreateApi.as_view(), name="brief-list"),
    path("briefs/<int:pk>/", BriefDetailApi.as_view(), name="brief-detail"),
    path("briefs/<int:pk>/estimate", BriefEstimateApi.as_view(), name="brief-estimate"),
]
