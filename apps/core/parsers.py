"""The API's JSON parser. Its own module: DRF reads DEFAULT_PARSER_CLASSES while
``rest_framework.views`` is imported, so this must not import it (apps.core.api does)."""

from typing import Any

from rest_framework import exceptions, parsers, serializers

from apps.core import json_guard


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, with the checks of ``apps.core.json_guard``: a body nested more than
    ``MAX_BODY_DEPTH`` levels, a non-finite number (NaN, Infinity, 1e400), or a NUL or lone
    surrogate in any string or key is a 400 that names where, never a ``RecursionError`` or a
    database error after the fact. Every API view parses JSON with this class (a test checks)."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        encoding = parsers.get_encoding(parser_context or {})  # type: ignore[attr-defined]
        try:
            text = stream.read().decode(encoding) if stream is not None else ""
            return json_guard.loads(
                text, max_depth=json_guard.MAX_BODY_DEPTH, configs_under=json_guard.CONFIG_PATHS
            )
        except json_guard.JsonRefused as exc:
            if not exc.path:
                raise exceptions.ParseError(f"JSON parse error - {exc.message}") from None
            raise serializers.ValidationError({exc.path: [exc.message]}) from None
        except ValueError as exc:  # malformed JSON, or text that is not of ``encoding``
            raise exceptions.ParseError(f"JSON parse error - {exc}") from None
