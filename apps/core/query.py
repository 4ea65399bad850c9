"""Query parameters of the API, each declared once: the same object documents the parameter in
the OpenAPI schema (``.openapi()``) and reads it from a request (``.parse(request)``).

A parameter is taken exactly as documented or refused with a 400 that names it. Nothing is
quietly ignored or loosely read: an empty ``?min_memory_gb=``, a number with spaces round it,
non-ASCII digits (Arabic-Indic, superscript), ``NaN``, or ``estimated`` where the schema lists
``ESTIMATED``. A client that sends one of these has a bug we should tell it about, and a
filter that a typo switches off would show it rows it did not ask for."""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request

#: A JSON number (RFC 8259 §6), ASCII only: what a client serialising the schema's ``number``
#: sends. Python's ``float()`` and ``Decimal()`` would also take " 1", "1_0", "NaN", "inf"
#: and non-ASCII digits.
JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
#: A whole number in ASCII digits, no sign, no leading zeros (what ``str(int)`` gives).
WHOLE_NUMBER = re.compile(r"0|[1-9][0-9]*")
#: Largest row id (``DEFAULT_AUTO_FIELD`` is a BigAutoField: a signed 64-bit integer).
MAX_ID = 2**63 - 1
#: Longest value read as a number; longer is refused before it is parsed (Python refuses to
#: convert integers of more than 4,300 digits; a request line is at most 4,094 bytes under
#: gunicorn's default ``limit_request_line`` anyway).
MAX_NUMBER_CHARS = 4_000


def _raw(request: Request, name: str) -> str | None:
    value: str | None = request.query_params.get(name)
    return value


def _refuse(name: str, message: str) -> ValidationError:
    return ValidationError({name: [message]})


class _Documented:
    """What every parameter shares: its entry in the OpenAPI schema."""

    name: str
    description: str

    @property
    def schema(self) -> dict[str, Any]:
        raise NotImplementedError

    def openapi(self) -> OpenApiParameter:
        """For ``extend_schema(parameters=[...])``."""
        return OpenApiParameter(self.name, self.schema, description=self.description)

    def parameter(self) -> dict[str, Any]:
        """The OpenAPI parameter object itself (what a paginator's schema hook returns)."""
        return {
            "name": self.name,
            "required": False,
            "in": "query",
            "description": self.description,
            "schema": self.schema,
        }


@dataclass(frozen=True)
class _RangeParam[N: (int, Decimal)](_Documented):
    """A number in ``minimum..maximum``, spelled as ``SPELLING`` matches."""

    name: str
    minimum: int
    maximum: int
    description: str = ""

    #: Set by each subclass: the schema's type, the spelling taken, and the words of the 400.
    KIND: ClassVar[str]
    SPELLING: ClassVar[re.Pattern[str]]
    WORDS: ClassVar[str]

    @property
    def schema(self) -> dict[str, Any]:
        return {"type": self.KIND, "minimum": self.minimum, "maximum": self.maximum}

    def convert(self, raw: str) -> N:
        raise NotImplementedError

    def parse(self, request: Request) -> N | None:
        raw = _raw(request, self.name)
        if raw is None:
            return None
        if len(raw) <= MAX_NUMBER_CHARS and self.SPELLING.fullmatch(raw):
            try:
                value = self.convert(raw)
            except ArithmeticError:  # an exponent past what Decimal can hold: out of range
                value = None
            if value is not None and self.minimum <= value <= self.maximum:
                return value
        raise _refuse(self.name, f"must be {self.WORDS} from {self.minimum} to {self.maximum}")


class IntParam(_RangeParam[int]):
    """A whole number in ``minimum..maximum``."""

    KIND = "integer"
    SPELLING = WHOLE_NUMBER
    WORDS = "a whole number"

    def convert(self, raw: str) -> int:
        return int(raw)


class NumberParam(_RangeParam[Decimal]):
    """A number (decimals and exponents allowed) in ``minimum..maximum``."""

    KIND = "number"
    SPELLING = JSON_NUMBER
    WORDS = "a number"

    def convert(self, raw: str) -> Decimal:
        return Decimal(raw)


@dataclass(frozen=True)
class ChoiceParam(_Documented):
    """One of ``choices``, spelled exactly as listed (flags: ``("true", "false")``)."""

    name: str
    choices: Sequence[str]
    description: str = ""

    @property
    def schema(self) -> dict[str, Any]:
        return {"type": "string", "enum": sorted(self.choices)}

    def parse(self, request: Request) -> str | None:
        raw = _raw(request, self.name)
        if raw is None or raw in self.choices:
            return raw
        raise _refuse(self.name, f"must be one of {', '.join(sorted(self.choices))}")


@dataclass(frozen=True)
class TextParam(_Documented):
    """Free text; refused with a NUL in it (PostgreSQL cannot compare one)."""

    name: str
    description: str = ""

    @property
    def schema(self) -> dict[str, Any]:
        return {"type": "string", "pattern": "^[^\\x00]*$"}

    def parse(self, request: Request) -> str | None:
        raw = _raw(request, self.name)
        if raw is not None and "\x00" in raw:
            raise _refuse(self.name, "Null characters are not allowed.")
        return raw


#: Query parameters every paginated list takes (apps.core.pagination.StandardPagination).
PAGE_PARAMS = ("page", "page_size")


def refuse_unknown(request: Request, known: Sequence[str]) -> None:
    """A 400 naming every query parameter of ``request`` outside ``known``: a parameter the
    endpoint does not take is a client's bug (a misspelt filter would otherwise be ignored and
    the client shown rows it did not ask for)."""
    unknown = sorted(set(request.query_params) - set(known))
    if unknown:
        takes = ", ".join(sorted(known)) or "none"
        raise ValidationError(
            {
                name: [f"not a query parameter of this endpoint (it takes: {takes})"]
                for name in unknown
            }
        )


class KnownQueryParams:
    """A list endpoint that takes only the query parameters it documents.

    ``query_params`` are the parameters its GET reads (the same objects its schema lists), and
    a paginated endpoint takes ``page`` and ``page_size`` too; any other is a 400 that names it,
    before the endpoint runs. A viewset checks its ``list`` action only."""

    query_params: ClassVar[Sequence[_Documented]] = ()

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # type: ignore[misc]
        if request.method != "GET" or getattr(self, "action", "list") not in ("list", None):
            return
        known = [p.name for p in self.query_params]
        if getattr(self, "pagination_class", None) is not None:
            known += PAGE_PARAMS
        refuse_unknown(request, known)
