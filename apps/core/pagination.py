from typing import Any

from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.query import IntParam


class StandardPagination(PageNumberPagination):
    """`page` and `page_size`, both bounded and checked: out of range is a 400, not a default.

    An APIView that pages sets ``pagination_class = StandardPagination`` (so the schema shows
    the paginated envelope and the parameters) and answers through :func:`paginated`."""

    page_size = 50
    page_query_param = "page"
    page_size_query_param = "page_size"
    max_page_size = 500
    max_page = 100_000
    last_page_strings = ()

    page_param = IntParam(
        page_query_param, 1, max_page, "Page number (1-based); past the last is a 404."
    )
    page_size_param = IntParam(
        page_size_query_param, 1, max_page_size, f"Rows per page, at most {max_page_size}."
    )

    def get_page_size(self, request: Request) -> int:
        size = self.page_size_param.parse(request)
        return self.page_size if size is None else size

    def get_page_number(self, request: Request, paginator: Any) -> int:
        number = self.page_param.parse(request)
        return 1 if number is None else number

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        """Bounded `page` and `page_size`, so clients (and fuzzers) know the valid range."""
        return [self.page_param.parameter(), self.page_size_param.parameter()]


def paginated(view: Any, request: Request, queryset: Any, serializer_class: Any) -> Response:
    """One page of ``queryset`` through the view's paginator, in the paginated envelope."""
    paginator = view.pagination_class()
    page = paginator.paginate_queryset(queryset, request, view=view)
    return paginator.get_paginated_response(serializer_class(page, many=True).data)
