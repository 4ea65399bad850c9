"""Refuse a request body that is over its endpoint's limit from ``Content-Length`` alone.

Django reads (or spools to a temporary file) a body before a view can look at it, so a view's
own size check comes after the cost. This middleware runs before anything reads the body: when
the declared length is over the limit it answers 413 with the limit in words (JSON under
/api/, a small HTML page elsewhere) and the body is never read.

Limits: the quote CSV import (page and API) takes a file of up to ``QUOTE_CSV_MAX_BYTES`` plus
room for the form around it, the catalog import (page and API) one of up to
``QUOTE_CATALOG_MAX_BYTES`` plus the same room; every other endpoint takes up to
``DATA_UPLOAD_MAX_MEMORY_SIZE``, as is a JSON body to any address. The benchmark import
(page and API) is left to its own check, which refuses from the same Content-Length, also
unread, with a 400 naming the ``file`` field (and, on the page, the form with the error): up to
``BENCHMARK_MAX_UPLOAD_BYTES`` plus the same room. A body sent without a ``Content-Length``
(chunked) is left to Django's own limits (``DATA_UPLOAD_MAX_MEMORY_SIZE`` for form and JSON
data; files stream to temporary files past ``FILE_UPLOAD_MAX_MEMORY_SIZE``) and to the views'
size checks.
"""

import sqlite3
from collections.abc import Callable

from django.conf import settings
from django.db import OperationalError as DatabaseOperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve
from django.utils.html import escape

# The multipart form around an uploaded file: boundaries, part headers and the small fields
# (brief, gpu, conditions) sent with it. 64 KiB is far more than any form the app serves sends.
MULTIPART_OVERHEAD_BYTES = 64 * 1024
API_PREFIX = "/api/"


# Endpoints that refuse an oversized body from its Content-Length themselves, before reading
# it (apps/benchmarks/api/views.py ``upload_too_large``), in their own 400 shape.
SELF_LIMITED = frozenset({"api:benchmark-run-import", "benchmarks:upload"})


def upload_limits() -> dict[str, int]:
    """File limit per upload endpoint, by URL name."""
    csv_limit, catalog_limit = settings.QUOTE_CSV_MAX_BYTES, settings.QUOTE_CATALOG_MAX_BYTES
    return {
        "api:quote-import": csv_limit,
        "quotes:import": csv_limit,
        "api:quote-import-catalog": catalog_limit,
        "quotes:import-catalog": catalog_limit,
    }


def is_json(content_type: str) -> bool:
    """A JSON body (``application/json``, or any ``+json`` type)."""
    return content_type.endswith(("/json", "+json"))


def body_limit_for(path: str, content_type: str = "") -> int | None:
    """The most bytes a request body to ``path`` may declare (None: the view checks). A JSON
    body never takes a file, so it is held to ``DATA_UPLOAD_MAX_MEMORY_SIZE`` at every address,
    the upload endpoints' included (the API's JSON parser holds it to the same while reading,
    apps.core.parsers)."""
    if is_json(content_type):
        return settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    try:
        name = resolve(path).view_name
    except Resolver404:
        return settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if name in SELF_LIMITED:
        return None
    file_limit = upload_limits().get(name)
    if file_limit is None:
        return settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return file_limit + MULTIPART_OVERHEAD_BYTES


def _declared_length(request: HttpRequest) -> int | None:
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return None  # Django answers a malformed Content-Length itself
    return length if length > 0 else None


def _refusal(request: HttpRequest, length: int, limit: int) -> HttpResponse:
    message = (
        f"Request body too large: {length:,} bytes declared, the limit for this address is "
        f"{limit:,} bytes. Nothing was read or saved."
    )
    if request.path_info.startswith(API_PREFIX):
        return JsonResponse({"detail": message}, status=413)
    page = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<title>Request too large</title></head><body><h1>Request too large</h1>"
        f"<p>{escape(message)}</p>"
        "</body></html>"
    )
    return HttpResponse(page, status=413, content_type="text/html; charset=utf-8")


class RequestBodyLimitMiddleware:
    """413 for a declared body over its endpoint's limit, before the body is read."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        length = _declared_length(request)
        # Below the smallest limit nothing needs resolving (the common case costs nothing).
        smallest = min(settings.DATA_UPLOAD_MAX_MEMORY_SIZE, *upload_limits().values())
        if length is not None and length > smallest:
            limit = body_limit_for(request.path_info, request.content_type or "")
            if limit is not None and length > limit:
                return _refusal(request, length, limit)
        return self.get_response(request)


# --- A busy embedded database is a 503, not a 500 ------------------------------------------

# Seconds a client is asked to wait before trying again: writes on the embedded default take
# a few seconds each under a team's load (README "Known limits"), so a few seconds is enough
# for the writer ahead to finish.
BUSY_RETRY_AFTER_S = 5
# SQLite's message when a connection waited past its busy timeout for another's write lock.
SQLITE_BUSY_MESSAGES = ("database is locked", "database table is locked")


def is_database_busy(exc: BaseException) -> bool:
    """SQLite gave up waiting for the write lock (``SQLITE_BUSY`` after the busy timeout)."""
    return isinstance(exc, DatabaseOperationalError | sqlite3.OperationalError) and any(
        m in str(exc) for m in SQLITE_BUSY_MESSAGES
    )


class DatabaseBusyMiddleware:
    """A request whose own write waited past SQLite's busy timeout (README: more writers than
    the embedded default holds) is answered 503 with Retry-After: the transaction that waited
    was rolled back, and trying again later is the right thing to do. Any other error stays a
    500."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not is_database_busy(exception):
            return None
        detail = (
            "The database is busy with other people's changes and this request could not "
            f"finish. Try again in {BUSY_RETRY_AFTER_S} seconds."
        )
        response: HttpResponse
        if request.path.startswith(API_PREFIX):
            response = JsonResponse({"detail": detail}, status=503)
        else:
            response = HttpResponse(
                f"<!doctype html><title>Busy</title><h1>Busy</h1><p>{escape(detail)}</p>",
                status=503,
            )
        response["Retry-After"] = str(BUSY_RETRY_AFTER_S)
        return response
