from django.urls import path

from . import views

app_name = "briefs"

urlpatterns = [
    path("", views.brief_list_page, name="list"),
    path("new/", views.brief_create_page, name="create"),
    path("<int:pk>/", views.brief_detail_page, name="detail"),
    path("<int:pk>/edit/", views.brief_edit_page, name="edit"),
]
