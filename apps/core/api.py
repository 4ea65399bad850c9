"""API-wide helpers: one error shape, ``{"detail": ...}``, for every failure."""

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


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
