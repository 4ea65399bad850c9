from django.urls import path

from . import views

app_name = "catalog"

urlpatterns = [
    path("", views.gpu_list_page, name="gpu-list"),
    path("<slug:slug>/", views.gpu_detail_page, name="gpu-detail"),
]
