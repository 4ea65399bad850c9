"""Sign-in with a brake on guessing, on both sign-in pages: /accounts/login/ and /admin/login/.

Before a password is checked, the attempt takes a place on two counters kept in the cache
(Redis in production, shared by every process):

- one for the username tried *from this address*, the username normalised so that ``Alice``,
  `` alice`` and the same letters in full width (which Django's sign-in form turns into
  ``alice``) are one counter: at most LOGIN_FAILURE_LIMIT places per LOGIN_FAILURE_WINDOW_S.
  Failures from one address never lock that person out from another address;
- one for the address the attempt comes from (a whole /64 for IPv6), with the much higher
  LOGIN_ADDRESS_FAILURE_LIMIT, so that typos in one office behind one NAT address do not lock
  out the whole organisation, while one machine still cannot try passwords for everyone.

The address is REMOTE_ADDR, or, behind LOGIN_TRUSTED_PROXY_HOPS reverse proxies, the entry of
X-Forwarded-For that the outermost trusted proxy wrote (see ``client_address``).

When either counter is full the attempt is refused with 429 and the password is not checked at
all. A check that succeeds gives its places back, so the counters hold failed checks (and checks
still in progress). Taking a place is a single atomic increment whose result is the place
number, so twenty attempts arriving at once cannot all slip under the limit: at most
LOGIN_FAILURE_LIMIT of them get a place, the rest are refused.

A counter's window starts with the first attempt it counts and is not extended by later ones,
nor by refused attempts; when it ends, the counter is gone.
"""

import hashlib
import ipaddress
import unicodedata
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext as _

LOCKED_OUT_MESSAGE = "Too many failed sign-ins. Wait a few minutes and try again."
LOCKED_OUT_CODE = "locked_out"
# An IPv6 host is normally given a whole /64 (RFC 6177 / RFC 7421), so it can pick a fresh
# address for every attempt; the network, not the single address, is what one machine controls.
IPV6_HOST_PREFIX = 64
# Tries at taking a place when the window ends between starting it and counting in it (a race
# that needs the key to expire within microseconds, twice running; after that, refuse).
TAKE_ATTEMPTS = 3


def client_address(request: HttpRequest | None) -> str:
    """The address a sign-in comes from, as text ("" when there is none).

    With LOGIN_TRUSTED_PROXY_HOPS = 0 it is REMOTE_ADDR. With N trusted reverse proxies in front,
    each appending the address it received from to X-Forwarded-For, it is the N-th entry from
    the right: the one the outermost trusted proxy wrote. Entries left of it were written by
    the client (anyone can send the header) and are never read. A header with fewer than N
    entries did not pass through every trusted proxy: REMOTE_ADDR is used.
    """
    if request is None:
        return ""
    remote_addr = request.META.get("REMOTE_ADDR", "")
    hops = settings.LOGIN_TRUSTED_PROXY_HOPS
    if hops <= 0:
        return remote_addr
    forwarded = [entry.strip() for entry in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    forwarded = [entry for entry in forwarded if entry]
    if len(forwarded) < hops:
        return remote_addr
    return forwarded[-hops]


def _address_part(request: HttpRequest | None) -> str:
    """The address counted: an IPv4 address, an IPv6 /64 network, or "unknown"."""
    try:
        ip = ipaddress.ip_address(client_address(request))
    except ValueError:
        return "unknown"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/{IPV6_HOST_PREFIX}", strict=False))
    return str(ip)


def _username_key(username: str, request: HttpRequest | None) -> str:
    # The same normalisation Django's sign-in form applies (NFKC, stripped), then casefold so
    # that case variants share a counter; one counter per (username, address) pair. Hashed: any
    # text the user typed becomes a valid key for every cache backend, and usernames are not
    # stored in the cache in clear. The NUL between them cannot be in either part's text.
    normal = unicodedata.normalize("NFKC", username).strip().casefold()
    pair = f"{normal}\0{_address_part(request)}"
    return "login-fail:user:" + hashlib.sha256(pair.encode()).hexdigest()


def _address_key(request: HttpRequest | None) -> str:
    return f"login-fail:addr:{_address_part(request)}"


def _give_back(key: str) -> None:
    try:
        if cache.decr(key) < 0:
            # Redis only: Django's decr is EXISTS then DECRBY; if the window ended in between,
            # DECRBY made a fresh key holding -1 and no expiry. Remove it.
            cache.delete(key)
    except ValueError:  # the window has ended: there is nothing to give back
        pass


def _take_place(key: str, limit: int) -> bool:
    """One more place on the counter at ``key``; False, with nothing taken, when it is full."""
    window = settings.LOGIN_FAILURE_WINDOW_S
    for _attempt in range(TAKE_ATTEMPTS):
        # add starts a window (Redis SET NX EX; LocMemCache under its lock) and does nothing
        # while one is running; incr is atomic on both (Redis INCR; under the same lock).
        cache.add(key, 0, timeout=window)
        try:
            place = cache.incr(key)
        except ValueError:  # the window ended between add and incr: start the next one
            continue
        if place == 1:
            # Redis only: Django's incr is EXISTS then INCR; if the window ended in between,
            # INCR made a fresh key with no expiry. The first place (re)sets the expiry, so a
            # counter can never outlive its window.
            cache.touch(key, timeout=window)
        if place > limit:
            _give_back(key)
            return False
        return True
    return False


def login_attempt_start(*, request: HttpRequest | None, username: str) -> bool:
    """Take a place for one password check; False when the username or address is locked out."""
    user_key, address_key = _username_key(username, request), _address_key(request)
    if not _take_place(user_key, settings.LOGIN_FAILURE_LIMIT):
        return False
    if not _take_place(address_key, settings.LOGIN_ADDRESS_FAILURE_LIMIT):
        _give_back(user_key)
        return False
    return True


def login_attempt_succeeded(*, request: HttpRequest | None, username: str) -> None:
    """The password was right: the places taken for it are not failures."""
    _give_back(_username_key(username, request))
    _give_back(_address_key(request))


class LoginThrottleMixin(AuthenticationForm):
    """For an AuthenticationForm: the password is checked only if the attempt gets a place."""

    request: HttpRequest | None

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username")
        if not username or not self.cleaned_data.get("password"):
            return super().clean()  # a field is missing: no password is checked
        if not login_attempt_start(request=self.request, username=username):
            raise ValidationError(LOCKED_OUT_MESSAGE, code=LOCKED_OUT_CODE)
        cleaned = super().clean()  # a wrong password raises here, and its place stays taken
        login_attempt_succeeded(request=self.request, username=username)
        return cleaned


class ThrottledAuthenticationForm(LoginThrottleMixin, AuthenticationForm):
    pass


class ThrottledAdminAuthenticationForm(LoginThrottleMixin, AdminAuthenticationForm):
    pass


class ThrottledLoginView(auth_views.LoginView):
    authentication_form: type[AuthenticationForm] = ThrottledAuthenticationForm

    def form_invalid(self, form: AuthenticationForm) -> HttpResponse:
        response = super().form_invalid(form)
        if form.has_error(NON_FIELD_ERRORS, LOCKED_OUT_CODE):
            response.status_code = 429
        return response


class ThrottledAdminLoginView(ThrottledLoginView):
    """The admin's sign-in page, behind the same throttle.

    Routed at /admin/login/ ahead of the admin's own URLs, so it replaces AdminSite.login; it
    keeps that view's form, template and page context (as in Django 6.1's AdminSite.login).
    """

    authentication_form = ThrottledAdminAuthenticationForm
    template_name = "admin/login.html"

    def setup(self, request: HttpRequest, *args: Any, **kwargs: Any) -> None:
        super().setup(request, *args, **kwargs)
        request.current_app = admin.site.name

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if admin.site.has_permission(request):  # already signed in as staff: go on
            return HttpResponseRedirect(self.get_success_url())
        return super().get(request, *args, **kwargs)

    def get_default_redirect_url(self) -> str:
        return reverse("admin:index", current_app=admin.site.name)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(
            {
                **admin.site.each_context(self.request),
                "title": _("Log in"),
                "subtitle": None,
                "app_path": self.request.get_full_path(),
                "username": self.request.user.get_username(),
                REDIRECT_FIELD_NAME: self.get_success_url(),
            }
        )
        return context
