"""One codec between frozen dataclasses and JSON-safe values, exact both ways.

What the engine answers (``Estimate`` and its parts) and what finance keeps of a candidate table
(``apps.finance.state``) are stored as JSON and read back as the same typed objects: nothing is
rounded on the way (a float is written as Python's shortest repr, which reads back to the same
float; a Decimal as its string), so a figure read back from storage is the figure computed.

Supported field types: the JSON scalars (``str``, ``int``, ``float``, ``bool``, ``None``),
``Decimal``, ``StrEnum`` / ``IntEnum``, nested dataclasses, ``tuple[X, ...]``, ``list[X]``,
``dict[str, X]`` and ``X | None``. Each class's field readers are worked out once, on first use,
from its type hints (``typing.get_type_hints``), so decoding costs a dict lookup and a call per
field. A field a stored object lacks takes the class's default (an object stored by an older
version); a field it lacks without a default raises ``CodecError`` (the caller recomputes).
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable
from decimal import Decimal
from enum import Enum
from typing import Any

__all__ = ["CodecError", "decode", "encode"]


class CodecError(ValueError):
    """A stored value does not read back as the type asked for."""


def encode(value: Any) -> Any:
    """``value`` as JSON-safe data: dataclasses as objects of their fields, enums as their
    values, Decimals as strings, tuples as lists."""
    if value is None or isinstance(value, bool | int | str):
        if isinstance(value, Enum):
            return value.value
        return value
    if isinstance(value, float):
        # JSON (and PostgreSQL's jsonb) has no infinity or NaN: written as words.
        return value if math.isfinite(value) else _NON_FINITE[repr(value)]
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in _fields(type(value))}
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        if _plain(value):  # a table's quote versions: thousands of str -> int, as they are
            return dict(value)
        return {str(k): encode(v) for k, v in value.items()}
    raise CodecError(f"cannot encode a {type(value).__name__}")


def decode[T](cls: type[T], data: Any) -> T:
    """``data`` (as ``encode`` wrote it) read back as a ``cls``."""
    reader: Callable[[Any], Any] = _reader(cls)
    result: T = reader(data)
    return result


_FIELDS: dict[type[Any], tuple[dataclasses.Field[Any], ...]] = {}
_READERS: dict[Any, Callable[[Any], Any]] = {}


def _fields(cls: type[Any]) -> tuple[dataclasses.Field[Any], ...]:
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = tuple(dataclasses.fields(cls))
    return found


def _reader(hint: Any) -> Callable[[Any], Any]:
    found = _READERS.get(hint)
    if found is None:
        found = _READERS[hint] = _make_reader(hint)
    return found


def _make_reader(hint: Any) -> Callable[[Any], Any]:
    if hint is Any:
        return lambda v: v
    if hint is type(None):
        return _none
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        others = [a for a in args if a is not type(None)]
        if len(others) != 1:
            raise CodecError(f"only X | None unions are supported, not {hint}")
        inner = _reader(others[0])
        return lambda v: None if v is None else inner(v)
    if origin is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            item = _reader(args[0])
            return lambda v: tuple(item(x) for x in _list(v))
        readers = [_reader(a) for a in args]
        return lambda v: tuple(r(x) for r, x in zip(readers, _list(v), strict=True))
    if origin is list:
        item = _reader(typing.get_args(hint)[0])
        return lambda v: [item(x) for x in _list(v)]
    if origin is dict:
        key_type, value_type = typing.get_args(hint)
        key = _reader(key_type)
        value = _reader(value_type)
        if key_type is str and value_type in (int, str):
            return _plain_dict_reader(value_type, value)
        return lambda v: {key(k): value(x) for k, x in _dict(v).items()}
    if isinstance(hint, type):
        if issubclass(hint, Enum):
            return lambda v: hint(v)
        if hint is Decimal:
            return _decimal
        if hint is bool:
            return _bool
        if hint is int:
            return _int
        if hint is float:
            return _float
        if hint is str:
            return _str
        if dataclasses.is_dataclass(hint):
            return _dataclass_reader(hint)
    raise CodecError(f"cannot decode into {hint!r}")


def _dataclass_reader(cls: type[Any]) -> Callable[[Any], Any]:
    hints = typing.get_type_hints(cls)
    plan: list[tuple[str, Callable[[Any], Any], bool]] = []
    for f in _fields(cls):
        if not f.init:
            continue
        has_default = f.default is not dataclasses.MISSING or (
            f.default_factory is not dataclasses.MISSING
        )
        plan.append((f.name, _LazyReader(hints[f.name]), has_default))

    def read(data: Any) -> Any:
        stored = _dict(data)
        kwargs: dict[str, Any] = {}
        for name, reader, has_default in plan:
            if name in stored:
                kwargs[name] = reader(stored[name])
            elif not has_default:
                raise CodecError(f"{cls.__name__}.{name} is missing")
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as exc:
            raise CodecError(f"{cls.__name__}: {exc}") from exc

    return read


_STR: frozenset[type[Any]] = frozenset({str})
_INT_OR_STR: frozenset[type[Any]] = frozenset({int, str})


def _plain(value: dict[Any, Any]) -> bool:
    """Whether every key is a plain ``str`` and every value a plain ``int`` or ``str`` (not a
    bool, an enum or a subclass): such a mapping is its own JSON form."""
    return set(map(type, value)) <= _STR and set(map(type, value.values())) <= _INT_OR_STR


def _plain_dict_reader(
    value_type: type[Any], item: Callable[[Any], Any]
) -> Callable[[Any], dict[str, Any]]:
    """A ``dict[str, int]`` / ``dict[str, str]`` reader: a copy when every key and value is of
    its type already (JSON's ints are never bools here: ``type(x) is int``), else item by item,
    which names the value that is not."""

    def read(value: Any) -> dict[str, Any]:
        stored = _dict(value)
        if set(map(type, stored)) <= _STR and set(map(type, stored.values())) <= {value_type}:
            return dict(stored)
        return {_str(k): item(x) for k, x in stored.items()}

    return read


class _LazyReader:
    """A field's reader, made on first use (a class may name itself or a later class)."""

    __slots__ = ("hint", "reader")

    def __init__(self, hint: Any) -> None:
        self.hint = hint
        self.reader: Callable[[Any], Any] | None = None

    def __call__(self, value: Any) -> Any:
        if self.reader is None:
            self.reader = _reader(self.hint)
        return self.reader(value)


def _none(value: Any) -> None:
    if value is not None:
        raise CodecError(f"expected null, got {value!r}")


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise CodecError(f"expected a list, got {type(value).__name__}")
    return list(value)


def _dict(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise CodecError(f"expected an object, got {type(value).__name__}")
    return value


def _decimal(value: Any) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, str | int | float | Decimal):
        raise CodecError(f"expected a decimal, got {value!r}")
    return Decimal(str(value)) if isinstance(value, float) else Decimal(value)


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise CodecError(f"expected true or false, got {value!r}")
    return value


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CodecError(f"expected an integer, got {value!r}")
    return value


_NON_FINITE = {"inf": "Infinity", "-inf": "-Infinity", "nan": "NaN"}
_FROM_WORDS = {word: float(text) for text, word in _NON_FINITE.items()}


def _float(value: Any) -> float:
    if isinstance(value, str) and value in _FROM_WORDS:
        return _FROM_WORDS[value]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CodecError(f"expected a number, got {value!r}")
    return float(value)


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise CodecError(f"expected a string, got {value!r}")
    return value
