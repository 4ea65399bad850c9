"""A quote CSV import does a fixed number of queries whatever the number of rows."""

from datetime import date

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.quotes.csv_rows import QuoteRowParser
from apps.quotes.models import Quote
from apps.quotes.services import QuoteImportError, quotes_import_csv
from tests.factories.quotes import ProviderFactory

pytestmark = pytest.mark.django_db

HEADER = "provider,gpu,system,region,pricing_term,hourly_price_per_gpu,currency,source,quote_date"


def csv_text(n: int, provider: str) -> str:
    row = f"{provider},h100-sxm5-80gb,,us,ON_DEMAND,2.49,USD,price sheet,2026-11-01"
    return "\n".join([HEADER, *[row] * n]) + "\n"


def import_queries(n: int, provider: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        quotes_import_csv(text=csv_text(n, provider), parse_row=QuoteRowParser())
    return len(captured)


class TestQuoteImportWork:
    def test_fifty_rows_cost_the_same_queries_as_five(self, catalog):
        provider = ProviderFactory(name="Acme Cloud").name
        small = import_queries(5, provider)
        large = import_queries(50, provider)
        assert Quote.objects.count() == 55
        assert large == small

    def test_a_row_only_a_database_rule_refuses_rejects_the_file_in_words(self, catalog):
        provider = ProviderFactory(name="Acme Cloud").name
        parser = QuoteRowParser()

        def valid_until_before_quote_date(raw):
            fields = parser(raw)
            return {**fields, "valid_until": date(2026, 10, 1)}  # quote_date is 2026-11-01

        with pytest.raises(QuoteImportError) as caught:
            quotes_import_csv(text=csv_text(3, provider), parse_row=valid_until_before_quote_date)
        assert "database rule" in caught.value.errors[0].message
        assert Quote.objects.count() == 0
