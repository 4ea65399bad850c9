from datetime import date
from decimal import Decimal

import factory

from apps.catalog.models import Gpu
from apps.quotes.models import ApiRoute, Provider, Quote


class ProviderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Provider

    name = factory.Sequence(lambda n: f"Provider {n}")


class QuoteFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Quote

    provider = factory.SubFactory(ProviderFactory)
    gpu = factory.LazyFunction(lambda: Gpu.objects.get(slug="h100-sxm5-80gb"))
    region = "us-east"
    pricing_term = "ON_DEMAND"
    hourly_price_per_gpu = Decimal("2.50")
    quote_date = date(2026, 11, 1)
    valid_until = date(2027, 1, 31)
    source = "test quote"


class ApiRouteFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ApiRoute

    provider = factory.SubFactory(ProviderFactory)
    model = factory.Sequence(lambda n: f"model-{n}")
    input_price_per_mtok = Decimal("0.10")
    output_price_per_mtok = Decimal("0.30")
