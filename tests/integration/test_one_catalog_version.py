"""apps.catalog.selectors.one_catalog_version: a candidate table's compute reads the catalog's
version once and every reader inside it sees that one; outside a block each read asks the
database, so a catalog change is seen by the next compute."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.catalog.models import Gpu
from apps.catalog.selectors import catalog_version, gpu_names, gpu_specs, one_catalog_version

pytestmark = pytest.mark.django_db


def _version_reads(queries: CaptureQueriesContext) -> int:
    return sum(1 for q in queries.captured_queries if 'COUNT(DISTINCT "catalog_gpu"' in q["sql"])


def test_inside_a_block_the_version_is_read_once(catalog):
    with CaptureQueriesContext(connection) as queries, one_catalog_version() as version:
        assert catalog_version() == version
        gpu_specs()
        gpu_names()
        gpu_names()
    assert _version_reads(queries) == 1


def test_outside_a_block_each_read_asks(catalog):
    with CaptureQueriesContext(connection) as queries:
        catalog_version()
        catalog_version()
    assert _version_reads(queries) == 2


def test_a_change_inside_a_block_is_seen_after_it(catalog):
    gpu = Gpu.objects.order_by("slug").first()
    with one_catalog_version() as before:
        gpu.name = gpu.name + " (renamed)"
        gpu.save()
        assert catalog_version() == before  # the compute keeps the version it started on
        with one_catalog_version() as inner:  # a nested block keeps the outer one
            assert inner == before
    after = catalog_version()
    assert after != before
    assert gpu_names()[gpu.slug].endswith("(renamed)")
