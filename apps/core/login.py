"""Sign-in with a brake on guessing: after LOGIN_FAILURE_LIMIT failed attempts for one
username (or from one address) within LOGIN_FAILURE_WINDOW_S, further attempts are refused
with 429 until the window passes. Counts live in the cache (Redis in production)."""

from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse


def _keys(request: HttpRequest) -> list[str]:
    username = (request.POST.get("username") or "").strip().lower()[:150]
    address = request.META.get("REMOTE_ADDR", "unknown")
    return [f"login-fail:user:{username}", f"login-fail:addr:{address}"]


def login_blocked(request: HttpRequest) -> bool:
    return any((cache.get(key) or 0) >= settings.LOGIN_FAILURE_LIMIT for key in _keys(request))


def login_failed(request: HttpRequest) -> None:
    for key in _keys(request):
        cache.add(key, 0, timeout=settings.LOGIN_FAILURE_WINDOW_S)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=settings.LOGIN_FAILURE_WINDOW_S)


class ThrottledLoginView(auth_views.LoginView):
    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if login_blocked(request):
            form = self.get_form()
            form.errors.clear()
            form.add_error(None, "Too many failed sign-ins. Wait a few minutes and try again.")
            return self.render_to_response(self.get_context_data(form=form), status=429)
        response = super().post(request, *args, **kwargs)
        if response.status_code != 302:  # the form was invalid: a failed attempt
            login_failed(request)
        return response
