from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from apps.core import views as core_views
from apps.core.api import api_not_found
from apps.core.login import ThrottledAdminLoginView, ThrottledLoginView

urlpatterns = [
    path("", core_views.home, name="home"),
    path("healthz", core_views.healthz, name="healthz"),
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("account/", include("apps.core.urls")),
    path("briefs/", include("apps.briefs.urls")),
    path("catalog/", include("apps.catalog.urls")),
    path("quotes/", include("apps.quotes.urls")),
    path("finance/", include("apps.finance.urls")),
    path("benchmarks/", include("apps.benchmarks.urls")),
    path("decisions/", include("apps.decisions.urls")),
    path("admin/login/", ThrottledAdminLoginView.as_view(), name="admin-login"),  # before admin/
    path("admin/", admin.site.urls),
    path("api/v1/", include("gpuselect.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    # Last: whatever else is under /api/ (an unknown path, an id that is not one) is a JSON 404.
    re_path(r"^api/", api_not_found, name="api-not-found"),
]

# No route serves MEDIA_ROOT, not even under DEBUG: uploaded files are private and come only
# from their own team-checked views (apps.core.files).
