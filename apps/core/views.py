from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware import csrf
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


# Why Django refused a form (its CsrfViewMiddleware reasons), in words and with what to do;
# anything else it may say falls back to CSRF_OTHER.
CSRF_WORDS = {
    csrf.REASON_NO_CSRF_COOKIE: (
        "Your browser did not send this site's security cookie with the form, so it was "
        "refused and nothing was saved. Allow cookies for this site, reload the page and send "
        "the form again."
    ),
    csrf.REASON_CSRF_TOKEN_MISSING: (
        "The form arrived without its security token, so it was refused and nothing was saved. "
        "Go back, reload the page and send the form again."
    ),
    csrf.REASON_NO_REFERER: (
        "Your browser did not say which page sent the form (a secure connection needs it), so "
        "it was refused and nothing was saved. Allow the Referer header for this site and try "
        "again."
    ),
}
CSRF_STALE = (
    "The form's security token no longer matches your session (you signed in or out in "
    "another tab, or the page was open a long time), so it was refused and nothing was saved. "
    "Go back, reload the page and send the form again."
)
CSRF_OTHER_SITE = (
    "The form came from another site or address than this one, so it was refused and nothing "
    "was saved. Open the page on this site and send the form from there."
)
CSRF_OTHER = "The form failed the site's security check, so it was refused and nothing was saved."


def csrf_reason_words(reason: str) -> str:
    """Django's CSRF failure reason as a person reads it."""
    if reason in CSRF_WORDS:
        return CSRF_WORDS[reason]
    if reason.startswith("CSRF token") or reason.startswith("CSRF cookie"):
        return CSRF_STALE  # "CSRF token from POST incorrect.", "... has incorrect length."
    if reason.startswith("Origin checking failed") or reason.startswith("Referer checking"):
        return CSRF_OTHER_SITE
    return CSRF_OTHER


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """settings.CSRF_FAILURE_VIEW: the site's 403 page, saying why in words, with a way back
    (Django's default is a bare technical page)."""
    return render(
        request,
        "403.html",
        {"exception": csrf_reason_words(reason), "csrf_failure": True},
        status=403,
    )


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
