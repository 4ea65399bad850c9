from typing import Any

from rest_framework.pagination import PageNumberPagination


class StandardPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
    max_page = 100_000

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        """Bounded `page` and `page_size`, so clients (and fuzzers) know the valid range."""
        return [
            {
                "name": self.page_query_param,
                "required": False,
                "in": "query",
                "description": "Page number (1-based).",
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
