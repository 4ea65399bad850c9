from decimal import Decimal

import factory

from apps.briefs.models import WorkloadBrief

from .core import TeamFactory, UserFactory


class BriefFactory(factory.django.DjangoModelFactory):
    """A complete real-time inference brief (the docs/design.md contract example)."""

    class Meta:
        model = WorkloadBrief

    name = factory.Sequence(lambda n: f"Brief {n}")
    team = factory.SubFactory(TeamFactory)
    created_by = factory.SubFactory(UserFactory)
    workload_type = "REALTIME_INFERENCE"
    model_preset = "llama-3.1-8b"
    weight_precision = "FP8"
    kv_cache_precision = "FP8"
    input_tokens_p50 = 1000
    input_tokens_p95 = 4000
    output_tokens_p50 = 200
    output_tokens_p95 = 800
    concurrency = 32
    success_unit = "TOKEN"
    acceptance_rate = Decimal("0.95")
    latency_percentile = "P95"
    ttft_target_ms = 500
    itl_target_ms = 50
    duty_cycle = "ALWAYS_ON"
    hours_per_month = Decimal("730")
    operating_boundary = "PUBLIC_CLOUD"
    tooling = ["VLLM"]
