"""Quotes dated relative to today, so that staleness tests do not rot with the calendar."""

from datetime import date, timedelta

import factory
from django.utils import timezone

from apps.catalog.models import Gpu, GpuSystem
from apps.catalog.services import read_gpu_csv, read_system_csv

from .quotes import QuoteFactory


def days_ago(days: int) -> date:
    return timezone.localdate() - timedelta(days=days)


class FreshQuoteFactory(QuoteFactory):
    """A quote made ten days ago and valid for two more months: never stale."""

    quote_date = factory.LazyFunction(lambda: days_ago(10))
    valid_until = factory.LazyFunction(lambda: days_ago(-60))


def gpu_catalog_create() -> None:
    """The shipped GPUs and systems, bulk-created straight from the catalog CSVs.

    A fast stand-in for the ``catalog`` fixture where only the slugs matter (quote input and
    output); tests that cost or rank candidates use the real ``catalog`` fixture instead.
    """
    gpus = Gpu.objects.bulk_create([Gpu(**row) for row in read_gpu_csv()])
    by_slug = {gpu.slug: gpu for gpu in gpus}
    GpuSystem.objects.bulk_create(
        [GpuSystem(**{**row, "gpu": by_slug[row["gpu"]]}) for row in read_system_csv()]
    )
