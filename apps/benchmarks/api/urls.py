"""Included at /api/v1/ (namespace "api")."""

from django.urls import path

from . import views

urlpatterns = [
    path("benchmark-runs/", views.BenchmarkRunListCreateApi.as_view(), name="benchmark-run-list"),
    path(
        "benchmark-runs/import",
        views.BenchmarkRunImportApi.as_view(),
        name="benchmark-run-import",
    ),
    path(
        "benchmark-runs/<int:pk>/",
        views.BenchmarkRunDetailApi.as_view(),
        name="benchmark-run-detail",
    ),
    path(
        "benchmark-runs/<int:pk>/raw", views.BenchmarkRunRawApi.as_view(), name="benchmark-run-raw"
    ),
]
