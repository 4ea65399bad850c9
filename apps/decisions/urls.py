from django.urls import path

app_name = "decisions"

urlpatterns: list = []
