from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response


def _bounded_int(request: Request, name: str, *, maximum: int) -> int | None:
    """The query parameter as an integer in 1..maximum, None when absent; anything else is a
    400 that names it (DRF would quietly fall back to the default, or answer 404)."""
    raw = request.query_params.get(name)
    if raw is None:
        return None
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 9 and 1 <= int(raw) <= maximum):
        raise ValidationError({name: f"must be a whole number from 1 to {maximum}"})
    return int(raw)


class StandardPagination(PageNumberPagination):
    """`page` and `page_size`, both bounded and checked: out of range is a 400, not a default.

    An APIView that pages sets ``pagination_class = StandardPagination`` (so the schema shows
    the paginated envelope and the parameters) and answers through :func:`paginated`."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
    max_page = 100_000
    last_page_strings = ()

    def get_page_size(self, request: Request) -> int:
        size = _bounded_int(request, self.page_size_query_param, maximum=self.max_page_size)
        return self.page_size if size is None else size

    def get_page_number(self, request: Request, paginator: Any) -> int:
        number = _bounded_int(request, self.page_query_param, maximum=self.max_page)
        return 1 if number is None else number

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        """Bounded `page` and `page_size`, so clients (and fuzzers) know the valid range."""
        return [
            {
                "name": self.page_query_param,
                "required": False,
                "in": "query",
                "description": "Page number (1-based); past the last page is a 404.",
                "schema": {"type": "integer", "minimum": 1, "maximum": self.max_page},
            },
            {
                "name": self.page_size_query_param,
                "required": False,
                "in": "query",
                "description": f"Rows per page, at most {self.max_page_size}.",
                "schema": {"type": "integer", "minimum": 1, "maximum": self.max_page_size},
            },
        ]


def paginated(view: Any, request: Request, queryset: Any, serializer_class: Any) -> Response:
    """One page of ``queryset`` through the view's paginator, in the paginated envelope."""
    paginator = view.pagination_class()
    page = paginator.paginate_queryset(queryset, request, view=view)
    return paginator.get_paginated_response(serializer_class(page, many=True).data)
