from django.urls import path

from apps.finance import views as finance_views

from . import views, whatif

app_name = "briefs"

urlpatterns = [
    path("", views.brief_list_page, name="list"),
    path("new/", views.brief_create_page, name="create"),
    path("what-if/", whatif.whatif_page, name="whatif"),
    path("<int:pk>/", views.brief_detail_page, name="detail"),
    path("<int:pk>/edit/", views.brief_edit_page, name="edit"),
    path("<int:pk>/finance/", finance_views.brief_finance_page, name="finance"),
]
