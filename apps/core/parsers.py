"""The API's JSON parser. Its own module: DRF reads DEFAULT_PARSER_CLASSES while
``rest_framework.views`` is imported, so this must not import it (apps.core.api does)."""

from typing import Any

from django.conf import settings
from rest_framework import exceptions, parsers, serializers, status

from apps.core import json_guard


class RequestBodyTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "Request body too large."
    default_code = "request_too_large"


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, with the checks of ``apps.core.json_guard``: the body is read in
    chunks and refused as soon as it passes ``DATA_UPLOAD_MAX_MEMORY_SIZE`` bytes (413) or
    ``MAX_BODY_ELEMENTS`` keys and items (400), before the rest is read or anything is parsed;
    then a body nested more than ``MAX_BODY_DEPTH`` levels, a non-finite number (NaN, Infinity,
    1e400), or a NUL or lone surrogate in any string or key is a 400 that names where, never a
    ``RecursionError`` or a database error after the fact. Every API view parses JSON with this
    class (a test checks)."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        encoding = parsers.get_encoding(parser_context or {})  # type: ignore[attr-defined]
        try:
            raw = (
                json_guard.read_bounded(stream, max_bytes=settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
                if stream is not None
                else b""
            )
            return json_guard.loads(
                raw.decode(encoding),
                max_depth=json_guard.MAX_BODY_DEPTH,
                configs_under=json_guard.CONFIG_PATHS,
            )
        except json_guard.BodyTooLarge as exc:
            raise RequestBodyTooLarge(str(exc)) from None
        except json_guard.JsonRefused as exc:
            if not exc.path:
                raise exceptions.ParseError(f"JSON parse error - {exc.message}") from None
            raise serializers.ValidationError({exc.path: [exc.message]}) from None
        except ValueError as exc:  # malformed JSON, or text that is not of ``encoding``
            raise exceptions.ParseError(f"JSON parse error - {exc}") from None
