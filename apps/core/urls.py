from django.urls import path

from . import views

app_name = "core"

urlpatterns = [
    path("tokens/", views.tokens, name="tokens"),
    path("tokens/<str:token_key>/revoke/", views.token_revoke, name="token-revoke"),
]
