"""API-wide helpers: one error shape, ``{"detail": ...}``, for every failure; request bodies
taken at the types and spellings the schema documents."""

import functools
import re
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpRequest, JsonResponse
from django.urls import Resolver404, resolve
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, relations, serializers
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from apps.core import json_guard


def _first_message(data: Any, path: str = "") -> str:
    """Flatten DRF's error structure into one sentence that names the field."""
    if isinstance(data, dict):
        for key, value in data.items():
            name = key if key != "non_field_errors" else ""
            sub = f"{path}.{name}" if path and name else (path or name)
            return _first_message(value, sub)
    if isinstance(data, list) and data:
        if all(isinstance(v, str) for v in data):
            return f"{path}: {data[0]}" if path else str(data[0])
        for index, value in enumerate(data):
            if value:
                return _first_message(value, f"{path}[{index}]")
    return f"{path}: {data}" if path else str(data)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(
            exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        )
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        response.data = {"detail": _first_message(response.data), "errors": response.data}
    return response


@csrf_exempt
def api_not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    """Any path under /api/ that names no operation (an unknown path, or an id that is not
    one, like ``/briefs/null/``): a JSON 404 like every other API error, never the HTML page."""
    detail = "Not found."
    if not request.path.endswith("/"):
        try:
            resolve(request.path + "/")
        except Resolver404:
            pass
        else:
            detail = f"Not found. Did you mean {request.path}/ ?"
    return JsonResponse({"detail": detail}, status=404)


def _json_type_error(field: Any, value: Any) -> str | None:
    """Why ``value`` (parsed JSON) is not of the type the schema documents for ``field``.

    DRF is lenient (``0`` for a string, ``"1"`` for an integer, ``1`` for ``true``); the
    schema is not, and a client that sends the wrong type has a bug we should tell it about.
    Decimals take a number or a decimal string: the schema documents both."""
    if value is None:
        return None  # allow_null decides
    if isinstance(field, serializers.BooleanField):
        ok, expected = isinstance(value, bool), "true or false"
    elif isinstance(field, serializers.IntegerField | relations.PrimaryKeyRelatedField):
        ok, expected = isinstance(value, int) and not isinstance(value, bool), "an integer"
    elif isinstance(field, serializers.FloatField | serializers.DecimalField):
        ok = isinstance(value, int | float | str) and not isinstance(value, bool)
        expected = "a number"
    elif isinstance(
        field,
        serializers.CharField
        | serializers.ChoiceField
        | serializers.DateField
        | serializers.DateTimeField
        | relations.SlugRelatedField,
    ):
        ok, expected = isinstance(value, str), "a string"
    elif isinstance(field, serializers.ListField | serializers.ListSerializer):
        if not isinstance(value, list):
            return "must be a list"
        child = field.child
        for index, item in enumerate(value):
            reason = _json_type_error(child, item)
            if reason:
                return f"[{index}] {reason}"
        return None
    elif isinstance(field, serializers.DictField):
        ok, expected = isinstance(value, Mapping), "an object"
    else:
        return None  # nested serializers check themselves; JSONField takes any JSON
    return None if ok else f"must be {expected}"


#: The spellings the schema documents for values sent as text (ASCII digits, as ECMA-262's
#: ``\d`` in a schema pattern means): Python and DRF also read " 5", "+5", "5e2", "1_0",
#: "05" and non-ASCII digits as numbers, and "20261130" or "2026-W48-1" as dates.
TEXT_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")  # OpenAPI `format: date` (RFC 3339)
TEXT_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")  # an integer field in a form body
#: Text fields whose schema has a `format` or `pattern` (a URL, a slug, a regex).
FORMATTED_TEXT = (serializers.URLField, serializers.SlugField, serializers.RegexField)


@functools.cache
def _text_decimal(whole: int | None, places: int) -> re.Pattern[str]:
    """The pattern drf-spectacular documents for a decimal field's strings (see
    ``AutoSchema._map_serializer_field``), with ASCII digits; built once per precision. A field
    without ``max_digits`` has no documented pattern; it still takes only ASCII decimals (none
    does today)."""
    if whole is None:
        return re.compile(r"-?[0-9]*(?:\.[0-9]*)?")
    head = r"-?0?" if whole == 0 else rf"-?[0-9]{{0,{whole}}}"
    return re.compile(rf"{head}(?:\.[0-9]{{0,{places}}})?")


def _spelling_error(field: Any, value: str, *, is_json: bool) -> str | None:
    """Why the text ``value`` is not spelled as the schema documents for ``field``."""
    if isinstance(field, serializers.DecimalField):
        places = field.decimal_places
        if not _text_decimal(field.max_whole_digits, places).fullmatch(value):
            return f"must be a number, or a decimal string with at most {places} decimal places"
    if isinstance(field, serializers.DateField) and not TEXT_DATE.fullmatch(value):
        return "must be a date as YYYY-MM-DD"
    # DRF trims these before checking them, so "\t" passed as the empty (blank) value and
    # " https://…" as a URL; the schema's format or pattern is of the text sent.
    if isinstance(field, FORMATTED_TEXT) and value != value.strip():
        return "must not start or end with spaces"
    if (
        not is_json
        and isinstance(field, serializers.IntegerField | relations.PrimaryKeyRelatedField)
        and not TEXT_INTEGER.fullmatch(value)
    ):
        return "must be a whole number"
    return None


# How many unknown fields one 400 names: a body of ten thousand keys gets a short answer.
MAX_UNKNOWN_FIELDS_NAMED = 20


# Serializer mixin (first among the bases): a JSON body's values must be of the types the
# schema documents, and text in any body (JSON or form) spelled as documented, or the request
# is a 400 naming the field; no slug, JSON or form, may hold a NUL. A JSON body may hold only
# the fields the endpoint takes (the schema says additionalProperties: false, see
# apps/core/schema.py): a misspelt field is a 400 that names it rather than a change silently
# not made, and a server-owned field (id, status, timestamps) is refused, never stored. The
# docstring below is inherited by serializers without their own, and so becomes their
# description in the OpenAPI schema.
class StrictJsonTypes:
    """A JSON body holds only the fields named here, each of its documented type; any other
    field, or a value of another type, is a 400 that names the field."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            is_json = not hasattr(data, "getlist")
            fields = self.fields  # type: ignore[attr-defined]
            errors = _unexpected_fields(fields, data) if is_json else {}
            # A nested object is sent whole, also in a PATCH (the schema has one component for
            # both): DRF would let a partial update leave out its required fields.
            root = getattr(self, "root", self)
            nested = root is not self and getattr(root, "partial", False)
            for name, field in fields.items():
                if nested and field.required and not field.read_only and name not in data:
                    errors[name] = ["This field is required."]
                if field.read_only or name not in data:
                    continue
                value = data[name]
                # A slug is looked up as it is: PostgreSQL refuses a NUL in a query (a 500).
                if isinstance(field, relations.SlugRelatedField) and "\x00" in str(value):
                    errors[name] = ["Null characters are not allowed."]
                    continue
                reason = _json_type_error(field, value) if is_json else None
                if not reason and isinstance(value, str):
                    reason = _spelling_error(field, value, is_json=is_json)
                # The documented maxLength is of the text sent, before DRF trims whitespace.
                limit = getattr(field, "max_length", None)
                if not reason and isinstance(value, str) and limit and len(value) > limit:
                    reason = f"Ensure this field has no more than {limit} characters."
                if reason:
                    errors[name] = [reason]
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)  # type: ignore[misc]


def _unexpected_fields(fields: Mapping[str, Any], data: Mapping[str, Any]) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    for name in data:
        field = fields.get(name)
        if field is not None and not field.read_only:
            continue
        if len(errors) == MAX_UNKNOWN_FIELDS_NAMED:
            break
        errors[str(name)] = [
            "Set by the server; it cannot be sent."
            if field is not None
            else "Unknown field: this endpoint does not take it."
        ]
    return errors


class FreeFormJson:
    """Validator for a field that takes any JSON object (a pasted config.json, acceptance
    criteria, a run's results): nested at most ``MAX_JSON_DEPTH`` levels, finite numbers, no
    NUL or lone surrogate in a key or a string, and no more than ``limit`` (a
    ``json_guard.SizeLimit``: bytes, keys and items) holds. The message names the place inside
    it, or the limit passed."""

    def __init__(
        self, limit: json_guard.SizeLimit, max_depth: int = json_guard.MAX_JSON_DEPTH
    ) -> None:
        self.limit = limit
        self.max_depth = max_depth

    def __call__(self, value: Any) -> None:
        found = json_guard.problem(value, max_depth=self.max_depth)
        if found:
            path, why = found
            raise serializers.ValidationError(f"at {path}: {why}" if path else why)
        too_much = json_guard.size_problem(value, self.limit)
        if too_much:
            raise serializers.ValidationError(too_much)
