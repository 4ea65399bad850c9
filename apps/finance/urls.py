from django.urls import path

from . import views

app_name = "finance"

urlpatterns = [
    path("assumptions/", views.organisation_assumptions_page, name="assumptions"),
    path("fx-rates/", views.fx_rates_page, name="fx-rates"),
]
