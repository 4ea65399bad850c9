from django.urls import path

from . import views

app_name = "benchmarks"

urlpatterns = [
    path("briefs/<int:brief_id>/", views.brief_runs_page, name="brief-runs"),
    path("briefs/<int:brief_id>/upload/", views.run_upload_page, name="upload"),
    path("briefs/<int:brief_id>/manual/", views.run_manual_page, name="manual"),
    path("<int:pk>/", views.run_detail_page, name="detail"),
    path("<int:pk>/raw", views.run_raw_download, name="raw"),
]
