from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from knox.models import AuthToken

from apps.core.users import signed_in

from .health import database_status, queue_status
from .services import MAX_TOKEN_DAYS, api_token_create, api_token_revoke


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Unauthenticated on purpose (load balancers call it); it reveals no data."""
    database = database_status()
    queue = queue_status()
    healthy = database["ok"] and queue["ok"]
    body: dict[str, Any] = {"status": "ok" if healthy else "degraded"}
    body["database"] = database
    body["queue"] = queue
    return JsonResponse(body, status=200 if healthy else 503)


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return redirect("briefs:list")


class TokenCreateForm(forms.Form):
    days = forms.IntegerField(min_value=1, max_value=MAX_TOKEN_DAYS, initial=90)


@login_required
@require_http_methods(["GET", "POST"])
def tokens(request: HttpRequest) -> HttpResponse:
    """A user creates and revokes their own API tokens; a new key is shown exactly once."""
    new_key = None
    form = TokenCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        _, new_key = api_token_create(user=signed_in(request.user), days=form.cleaned_data["days"])
        form = TokenCreateForm()
    existing = AuthToken.objects.filter(user=request.user).order_by("-created")
    return render(
        request, "core/tokens.html", {"form": form, "tokens": existing, "new_key": new_key}
    )


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_key: str) -> HttpResponse:
    if api_token_revoke(user=signed_in(request.user), token_key=token_key):
        messages.success(request, "Token revoked.")
    else:
        messages.error(request, "No such token.")
    return redirect("core:tokens")
