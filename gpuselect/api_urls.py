"""The whole public API surface, version 1, in one place."""

from django.urls import include, path
from rest_framework.routers import SimpleRouter

from apps.briefs.api.estimate import EstimateApi, ModelPresetListApi
from apps.briefs.api.views import BriefDetailApi, BriefEstimateApi, BriefListCreateApi
from apps.catalog.api.views import GpuViewSet
from apps.finance.api import BriefRankingsApi, FxRateListCreateApi
from apps.quotes.api import views as quotes
from apps.quotes.api.catalog import QuoteCatalogImportApi

router = SimpleRouter(trailing_slash=True)
router.register("gpus", GpuViewSet, basename="gpu")

app_name = "api"

urlpatterns = [
    path("", include(router.urls)),
    path("", include("apps.benchmarks.api.urls")),
    path("", include("apps.decisions.api.urls")),
    path("estimate", EstimateApi.as_view(), name="estimate"),
    path("models/", ModelPresetListApi.as_view(), name="model-list"),
    path("briefs/", BriefListCreateApi.as_view(), name="brief-list"),
    path("briefs/<int:pk>/", BriefDetailApi.as_view(), name="brief-detail"),
    path("briefs/<int:pk>/estimate", BriefEstimateApi.as_view(), name="brief-estimate"),
    path("briefs/<int:pk>/rankings", BriefRankingsApi.as_view(), name="brief-rankings"),
    path("fx-rates/", FxRateListCreateApi.as_view(), name="fx-rate-list"),
    path("providers/", quotes.ProviderListCreateApi.as_view(), name="provider-list"),
    path("providers/<int:pk>/", quotes.ProviderDetailApi.as_view(), name="provider-detail"),
    path("quotes/", quotes.QuoteListCreateApi.as_view(), name="quote-list"),
    path("quotes/import", quotes.QuoteImportApi.as_view(), name="quote-import"),
    path("quotes/import-catalog", QuoteCatalogImportApi.as_view(), name="quote-import-catalog"),
    path("quotes/<int:pk>/", quotes.QuoteDetailApi.as_view(), name="quote-detail"),
    path("quotes/<int:pk>/retire", quotes.QuoteRetireApi.as_view(), name="quote-retire"),
    path("api-routes/", quotes.ApiRouteListCreateApi.as_view(), name="api-route-list"),
    path("api-routes/<int:pk>/", quotes.ApiRouteDetailApi.as_view(), name="api-route-detail"),
    path("api-routes/<int:pk>/retire", quotes.ApiRouteRetireApi.as_view(), name="api-route-retire"),
]
