from django.urls import path

from . import views, views_api_prices, views_catalog

app_name = "quotes"

urlpatterns = [
    path("", views.quote_list_page, name="list"),
    path("new/", views.quote_edit_page, name="create"),
    path("import/", views.quote_import_page, name="import"),
    path("import/template.csv", views.quote_import_template, name="import-template"),
    path("import-catalog/", views_catalog.quote_catalog_import_page, name="import-catalog"),
    path("<int:pk>/edit/", views.quote_edit_page, name="edit"),
    path("<int:pk>/retire/", views.quote_retire_page, name="retire"),
    path("compare/<slug:gpu_slug>/", views.price_comparison_page, name="compare"),
    path("providers/", views.provider_list_page, name="providers"),
    path("providers/new/", views.provider_edit_page, name="provider-create"),
    path("providers/<int:pk>/edit/", views.provider_edit_page, name="provider-edit"),
    path("api-prices/", views_api_prices.api_prices_page, name="api-prices"),
    path("api-routes/new/", views.api_route_edit_page, name="route-create"),
    path("api-routes/<int:pk>/edit/", views.api_route_edit_page, name="route-edit"),
    path("api-routes/<int:pk>/retire/", views.api_route_retire_page, name="route-retire"),
]
