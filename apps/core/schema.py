"""OpenAPI schema post-processing: every operation documents the errors it can answer with.

Every failure body is ``{"detail": "..."}`` (apps/core/api.py); validation failures add
``errors``. Documenting them lets schema-conformance fuzzing check error responses too."""

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from rest_framework import serializers

from .api_docs import document_operations

ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "detail": {"type": "string"},
        "field": {"type": "string"},
        "errors": {},
    },
    "required": ["detail"],
}
ERRORS = {
    "400": "Bad input; `detail` names the field",
    "401": "No valid token or session",
    "403": "The role lacks the right, or CSRF failed",
    "404": "Not found (or another team's)",
    "405": "Method not allowed",
    "406": "Not acceptable",
    "409": "The record's state does not allow this",
    "413": "Upload too large",
    "415": "Unsupported media type",
    "429": "Too many requests",
}
WRITE_ONLY = {"400", "409", "413", "415"}


def add_error_responses(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """The post-processing hook (SPECTACULAR_SETTINGS): error responses on every operation,
    closed JSON request bodies, and the reference's words (apps.core.api_docs: a tag per
    resource, a summary and description per operation, a link back to the app)."""
    document_operations(result)
    components = result.setdefault("components", {}).setdefault("schemas", {})
    _close_json_request_bodies(result, components)
    components["Error"] = ERROR_SCHEMA
    ref = {"$ref": "#/components/schemas/Error"}
    for path_item in result.get("paths", {}).values():
        for method, operation in path_item.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            responses = operation.setdefault("responses", {})
            for code, description in ERRORS.items():
                if code in WRITE_ONLY and method == "get" and code != "400":
                    continue
                responses.setdefault(
                    code,
                    {"description": description, "content": {"application/json": {"schema": ref}}},
                )
    return result


def _close_json_request_bodies(result: dict[str, Any], components: dict[str, Any]) -> None:
    """A JSON request body takes only the fields it names (apps.core.api.StrictJsonTypes refuses
    the others): say ``additionalProperties: false`` on it and on the objects nested in it.
    Multipart forms (file uploads) are left open; their serializers do not check names."""
    prefix = "#/components/schemas/"
    pending = [
        media["schema"]["$ref"]
        for path_item in result.get("paths", {}).values()
        for operation in path_item.values()
        if isinstance(operation, dict)
        for content_type, media in operation.get("requestBody", {}).get("content", {}).items()
        if content_type == "application/json" and "$ref" in media.get("schema", {})
    ]
    closed: set[str] = set()
    while pending:
        name = pending.pop().removeprefix(prefix)
        schema = components.get(name)
        if name in closed or not schema or schema.get("type") != "object":
            continue
        closed.add(name)
        schema["additionalProperties"] = False
        for prop in schema.get("properties", {}).values():
            pending.extend(_refs(prop))


def _refs(schema: Any) -> list[str]:
    """Every ``$ref`` inside a property's schema (``allOf``, ``items``, ``oneOf`` ...)."""
    if isinstance(schema, dict):
        found = [schema["$ref"]] if isinstance(schema.get("$ref"), str) else []
        return found + [r for value in schema.values() for r in _refs(value)]
    if isinstance(schema, list):
        return [r for item in schema for r in _refs(item)]
    return []


class DecimalInputExtension(OpenApiSerializerFieldExtension):  # type: ignore[misc]
    """A decimal is answered as a string, and taken as a number or a decimal string (the brief
    contract sends numbers): document both in requests, with the field's bounds."""

    target_class = serializers.DecimalField
    match_subclasses = True

    def map_serializer_field(self, auto_schema: Any, direction: str) -> Any:
        default = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        if direction != "request" or default.get("type") != "string":
            return default
        number: dict[str, Any] = {"type": "number"}
        if self.target.min_value is not None:
            number["minimum"] = float(self.target.min_value)
        if self.target.max_value is not None:
            number["maximum"] = float(self.target.max_value)
        return {"oneOf": [number, {k: v for k, v in default.items() if k != "nullable"}]} | (
            {"nullable": True} if default.get("nullable") else {}
        )
