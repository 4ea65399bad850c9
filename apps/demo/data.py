"""The small demo dataset that `make run` loads: one user per role, a team, providers,
quotes, model/API routes and a few briefs. Idempotent: running it twice changes nothing."""

from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from apps.briefs.models import WorkloadBrief
from apps.briefs.services import brief_create
from apps.catalog.models import Gpu
from apps.core.models import Team
from apps.core.roles import Role
from apps.finance.models import FinanceAssumptions
from apps.quotes.models import ApiRoute, Provider, Quote

DEMO_USERS = (
    ("platform", Role.PLATFORM),
    ("finance", Role.FINANCE),
    ("procurement", Role.PROCUREMENT),
    # A second buyer: the submitter of a decision record approves for no role, so a record
    # that procurement submits needs another procurement member to approve for procurement.
    ("procurement2", Role.PROCUREMENT),
    ("apiclient", Role.API_CLIENT),
)

# Illustrative list prices, not live quotes: each row's source says where the figure is from.
DEMO_QUOTES: tuple[tuple[str, str, str, str, str], ...] = (
    ("Hyperscaler A", "h100-sxm5-80gb", "ON_DEMAND", "6.98", "p5.48xlarge list price / 8 GPUs"),
    ("Hyperscaler A", "h100-sxm5-80gb", "RESERVED_1Y", "4.90", "1-year savings plan, illustrative"),
    ("Neocloud B", "h100-sxm5-80gb", "ON_DEMAND", "2.99", "neocloud list price, illustrative"),
    ("Neocloud B", "h200-sxm-141gb", "ON_DEMAND", "3.79", "neocloud list price, illustrative"),
    ("Neocloud B", "b200-sxm-180gb", "RESERVED_1Y", "4.99", "reserved quote, illustrative"),
    ("Neocloud B", "l40s-48gb", "ON_DEMAND", "0.99", "neocloud list price, illustrative"),
    ("Marketplace C", "a100-sxm4-80gb", "MARKETPLACE", "1.29", "marketplace median, illustrative"),
    ("Marketplace C", "rtx-4090-24gb", "SPOT", "0.34", "marketplace spot median, illustrative"),
    (
        "Own datacentre",
        "h200-sxm-141gb",
        "OWNED",
        "0",
        "capex at the DGX H100 figure (~$270k / 8 GPUs, SemiAnalysis 2023) for the same-die "
        "H200, 4-year depreciation, illustrative",
    ),
)
# The owned quote's capex and depreciation (its running costs take the finance defaults).
DEMO_OWNED = {"capex_per_gpu": Decimal("34000"), "depreciation_months": 48}


@transaction.atomic
def demo_load(*, password: str, today: date) -> dict[str, Any]:
    groups = {role: Group.objects.get_or_create(name=role.value)[0] for role in Role}
    team, _ = Team.objects.get_or_create(slug="ml-platform", defaults={"name": "ML Platform"})
    user_model = get_user_model()
    users = {}
    for username, role in DEMO_USERS:
        user, created = user_model.objects.get_or_create(
            username=username, defaults={"email": f"{username}@example.com"}
        )
        if created:
            user.set_password(password)
            user.save()
        user.groups.add(groups[role])
        team.members.add(user)
        users[username] = user
    admin, created = user_model.objects.get_or_create(
        username="admin", defaults={"is_staff": True, "is_superuser": True}
    )
    if created:
        admin.set_password(password)
        admin.save()
    team.members.add(admin)

    providers = {}
    for name in sorted({q[0] for q in DEMO_QUOTES} | {"Model API D"}):
        providers[name], _ = Provider.objects.get_or_create(name=name)
    gpus = {g.slug: g for g in Gpu.objects.all()}
    for provider, slug, term, price, source in DEMO_QUOTES:
        Quote.objects.get_or_create(
            provider=providers[provider],
            gpu=gpus[slug],
            pricing_term=term,
            region="us-east",
            defaults={
                "hourly_price_per_gpu": Decimal(price),
                "quote_date": today - timedelta(days=20),
                "valid_until": today + timedelta(days=70),
                "source": source,
                "storage_price_per_tb_month": Decimal("20"),
                "egress_price_per_gb": Decimal("0.05"),
                "minimum_commitment_months": 12 if term.startswith("RESERVED") else 0,
                **(DEMO_OWNED if term == "OWNED" else {}),
            },
        )
    for model, preset, price_in, price_out in (
        ("llama-3.1-8b-instruct", "llama-3.1-8b", "0.10", "0.10"),
        ("llama-3.1-70b-instruct", "llama-3.1-70b", "0.60", "0.80"),
    ):
        ApiRoute.objects.get_or_create(
            provider=providers["Model API D"],
            model=model,
            retired=False,
            defaults={
                "model_preset": preset,
                "input_price_per_mtok": Decimal(price_in),
                "output_price_per_mtok": Decimal(price_out),
                "batch_discount": Decimal("0.5"),
                "rate_limit_rpm": 6000,
                "quote_date": today - timedelta(days=10),
                "source": "provider price page, illustrative",
            },
        )
    FinanceAssumptions.objects.get_or_create(
        is_default=True,
        defaults={
            "reporting_currency": "USD",
            "labour_rate_per_hour": Decimal("120"),
            "observability_share": Decimal("0.05"),
            "retry_rate": Decimal("0.03"),
            "failure_rate": Decimal("0.02"),
            "acceptance_rate": Decimal("0.95"),
            "power_price_per_kwh": Decimal("0.12"),
            "hosting_per_kw_month": Decimal("150"),
        },
    )
    for name, fields in DEMO_BRIEFS:
        if not WorkloadBrief.objects.filter(team=team, name=name).exists():
            brief_create(team=team, created_by=users["platform"], name=name, **fields)
    return {"users": [u for u, _ in DEMO_USERS] + ["admin"], "team": team.name}


DEMO_BRIEFS: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "Support chat assistant (8B, real time)",
        {
            "workload_type": "REALTIME_INFERENCE",
            "model_preset": "llama-3.1-8b",
            "weight_precision": "FP8",
            "kv_cache_precision": "FP8",
            "input_tokens_p50": 1000,
            "input_tokens_p95": 4000,
            "output_tokens_p50": 200,
            "output_tokens_p95": 800,
            "concurrency": 32,
            "success_unit": "TOKEN",
            "acceptance_rate": Decimal("0.97"),
            "latency_percentile": "P95",
            "ttft_target_ms": 500,
            "itl_target_ms": 50,
            "duty_cycle": "ALWAYS_ON",
            "hours_per_month": Decimal("730"),
            "operating_boundary": "PUBLIC_CLOUD",
            "tooling": ["VLLM", "KUBERNETES"],
        },
    ),
    (
        "Nightly document summaries (70B batch)",
        {
            "workload_type": "BATCH_INFERENCE",
            "model_preset": "llama-3.1-70b",
            "weight_precision": "BF16",
            "kv_cache_precision": "BF16",
            "input_tokens_p50": 3000,
            "input_tokens_p95": 6000,
            "output_tokens_p50": 300,
            "output_tokens_p95": 500,
            "records_per_job": 200000,
            "success_unit": "RECORD",
            "acceptance_rate": Decimal("0.92"),
            "latency_percentile": "OFFLINE",
            "duty_cycle": "SCHEDULED_BATCH",
            "hours_per_month": Decimal("120"),
            "operating_boundary": "PRIVATE_NETWORK",
            "tooling": ["VLLM", "RAY"],
        },
    ),
    (
        "Domain LoRA on Llama 3.1 8B",
        {
            "workload_type": "LORA_FINETUNE",
            "model_preset": "llama-3.1-8b",
            "weight_precision": "BF16",
            "success_unit": "TRAINING_RUN",
            "acceptance_rate": Decimal("0.9"),
            "duty_cycle": "EXPERIMENTAL",
            "hours_per_month": Decimal("80"),
            "operating_boundary": "PUBLIC_CLOUD",
            "training_tokens": 500_000_000,
            "sequence_length": 4096,
            "global_batch_tokens": 262_144,
            "optimizer": "ADAMW",
            "sharding": "NONE",
            "activation_checkpointing": True,
            "lora_rank": 16,
            "checkpoint_interval_minutes": 30,
            "tooling": ["SLURM"],
        },
    ),
    (
        "Product image generation (draft)",
        {
            "workload_type": "IMAGE_GENERATION",
            "model_preset": "sdxl",
            "weight_precision": "FP16",
            "image_width": 1024,
            "image_height": 1024,
            "success_unit": "IMAGE",
        },
    ),
)
