"""A request body over its endpoint's limit is refused from Content-Length, before it is read."""

import io
import json

import pytest
from django.conf import settings
from django.http import HttpResponse
from django.test import RequestFactory

from apps.core.middleware import MULTIPART_OVERHEAD_BYTES, RequestBodyLimitMiddleware
from apps.quotes.csv_rows import MAX_CSV_BYTES

pytestmark = pytest.mark.django_db


class UnreadableBody(io.RawIOBase):
    """A body that fails the test if anything reads it."""

    def read(self, *args):
        raise AssertionError("the body was read")

    readline = readinto = read


def through_middleware(path, length):
    request = RequestFactory().post(
        path, data=b"", content_type="application/octet-stream", CONTENT_LENGTH=str(length)
    )
    request.META["wsgi.input"] = UnreadableBody()
    reached = []

    def view(req):
        reached.append(req)
        return HttpResponse("reached")

    return RequestBodyLimitMiddleware(view)(request), bool(reached)


class TestRequestBodyLimit:
    def test_an_api_body_over_the_data_limit_is_a_413_in_words_unread(self):
        length = settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1
        response, reached = through_middleware("/api/v1/briefs/", length)
        assert response.status_code == 413
        assert not reached
        detail = json.loads(response.content)["detail"]
        assert f"{length:,} bytes declared" in detail
        assert f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes" in detail

    def test_a_page_body_over_the_limit_is_a_413_page(self):
        response, reached = through_middleware("/briefs/new/", 50 * 1024 * 1024)
        assert response.status_code == 413
        assert not reached
        assert response["Content-Type"].startswith("text/html")
        assert b"Request body too large" in response.content

    def test_the_benchmark_import_is_left_to_its_own_unread_check(self):
        # It answers a 400 on ``file`` from the same Content-Length (test_benchmark_api.py).
        length = settings.BENCHMARK_MAX_UPLOAD_BYTES * 10
        for path in ("/api/v1/benchmark-runs/import", "/benchmarks/briefs/1/upload/"):
            assert through_middleware(path, length)[1]

    def test_a_quote_csv_over_its_limit_is_refused_before_it_is_read(self):
        limit = MAX_CSV_BYTES + MULTIPART_OVERHEAD_BYTES
        for path in ("/api/v1/quotes/import", "/quotes/import/"):
            assert through_middleware(path, limit)[1]
            response, reached = through_middleware(path, limit + 1)
            assert (response.status_code, reached) == (413, False)

    def test_the_catalog_import_takes_up_to_its_own_20_mib_limit(self):
        limit = 20 * 2**20 + MULTIPART_OVERHEAD_BYTES
        assert settings.QUOTE_CATALOG_MAX_BYTES == 20 * 2**20
        for path in ("/api/v1/quotes/import-catalog", "/quotes/import-catalog/"):
            # 6 MiB: over the 5 MiB every other form or JSON body is held to.
            assert through_middleware(path, 6 * 2**20)[1]
            assert through_middleware(path, limit)[1]
            response, reached = through_middleware(path, limit + 1)
            assert (response.status_code, reached) == (413, False)
            assert f"{limit:,} bytes" in response.content.decode()

    def test_a_body_within_the_limit_reaches_the_view(self):
        assert through_middleware("/api/v1/briefs/", 1000)[1]

    def test_the_whole_stack_answers_413_for_a_declared_oversized_body(self, client):
        response = client.post(
            "/api/v1/quotes/",
            data=b"{}",
            content_type="application/json",
            CONTENT_LENGTH=str(settings.DATA_UPLOAD_MAX_MEMORY_SIZE * 2),
        )
        assert response.status_code == 413
        assert "too large" in response.json()["detail"]
