"""Small typed readers for untrusted JSON; every failure is an EngineInputError naming the field."""

from __future__ import annotations

import math
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from apps.engine.types import EngineInputError


def require_dict(value: Any, field: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise EngineInputError(field, "must be a JSON object")
    return value


def get_int(
    data: Mapping[str, Any],
    key: str,
    field: str,
    *,
    lo: int,
    hi: int,
    default: int | None = None,
    required: bool = False,
) -> int | None:
    value = data.get(key)
    if value is None:
        if required:
            raise EngineInputError(field, "is required")
        return default
    if isinstance(value, bool):
        raise EngineInputError(field, "must be an integer")
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise EngineInputError(field, "must be an integer")
        value = int(value)
    if not isinstance(value, int):
        raise EngineInputError(field, "must be an integer")
    if not lo <= value <= hi:
        raise EngineInputError(field, f"must be between {lo} and {hi}")
    return value


def req_int(data: Mapping[str, Any], key: str, field: str, *, lo: int, hi: int) -> int:
    value = get_int(data, key, field, lo=lo, hi=hi, required=True)
    assert value is not None  # noqa: S101 - required=True guarantees it
    return value


def get_float(
    data: Mapping[str, Any],
    key: str,
    field: str,
    *,
    lo: float,
    hi: float,
    default: float | None = None,
    exclusive_lo: bool = True,
) -> float | None:
    value = data.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise EngineInputError(field, "must be a number")
    if isinstance(value, int) and abs(value) > 10**18:
        raise EngineInputError(field, f"must be at most {hi:g}")
    number = float(value)
    if not math.isfinite(number):
        raise EngineInputError(field, "must be a finite number")
    too_low = number <= lo if exclusive_lo else number < lo
    if too_low or number > hi:
        raise EngineInputError(
            field, f"must be {'>' if exclusive_lo else '>='} {lo:g} and <= {hi:g}"
        )
    return number


def get_bool(data: Mapping[str, Any], key: str, field: str, *, default: bool) -> bool:
    value = data.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise EngineInputError(field, "must be true or false")
    return value


def get_enum[E: StrEnum](
    data: Mapping[str, Any],
    key: str,
    field: str,
    enum: type[E],
    *,
    default: E | None = None,
) -> E | None:
    value = data.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        raise EngineInputError(field, "must be a string")
    try:
        return enum(value.upper())
    except ValueError:
        allowed = ", ".join(m.value for m in enum)
        raise EngineInputError(field, f"unknown value {value[:40]!r}; one of {allowed}") from None
