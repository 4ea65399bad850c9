"""Shared set-up for the database benchmarks (bench/recompute.py, bench/rankings_load.py).

A throwaway PostgreSQL database, Django configured against it, and a seeded dataset: the shipped
catalog plus synthetic ``bench-...`` GPUs (30 in all), teams, users, providers, 2,000 quotes,
API routes and 200 complete briefs of every workload type. Seeding uses bulk_create (it bypasses
the services on purpose); the caller asks for one recompute afterwards.

Nothing here is imported from the app at module level: ``django_setup`` must run first.
"""

from __future__ import annotations

import io
import os
import platform
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# The project's virtual environment: the checkout's own .venv, else the one running this script
# (a git worktree shares the main checkout's).
VENV_BIN = ROOT / ".venv" / "bin"
if not (VENV_BIN / "celery").exists():
    VENV_BIN = Path(sys.executable).parent
PG_ADMIN_URL = os.environ.get("BENCH_PG_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
PG_BASE_URL = PG_ADMIN_URL.rsplit("/", 1)[0]
REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379

N_BRIEFS = 200
N_QUOTES = 2000
N_GPUS = 30
N_TEAMS = 6
SEED = 20261201

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


# --- hard time limit ------------------------------------------------------------------------


class BenchTimeout(Exception):
    pass


@contextmanager
def hard_limit(seconds: int) -> Iterator[None]:
    """Raise BenchTimeout in the main thread after ``seconds`` (the caller's finally cleans up)."""

    def fire(signum: int, frame: Any) -> None:
        raise BenchTimeout(f"hard time limit of {seconds} s reached")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# --- the throwaway database -----------------------------------------------------------------


def db_name_for(kind: str) -> str:
    """gpuselect_bench_<kind>_<pid>; GPUSELECT_BENCH_DB_PREFIX replaces the prefix (a worktree
    that must keep to its own database names)."""
    prefix = os.environ.get("GPUSELECT_BENCH_DB_PREFIX", "gpuselect_bench")
    return f"{prefix}_{kind}_{os.getpid()}"


def create_database(name: str) -> str:
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{PG_BASE_URL}/{name}"


def drop_database(name: str) -> None:
    try:
        from django.db import connections

        connections.close_all()
    except Exception as exc:  # Django not set up yet: nothing to close
        print(f"cleanup:     (no Django connections to close: {type(exc).__name__})")
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def base_env(database_url: str, **extra: str) -> dict[str, str]:
    """The environment the bench process, the worker and gunicorn share."""
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="gpuselect.settings.local",
        DJANGO_DEBUG="false",
        DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost,testserver",
        DATABASE_URL=database_url,
        LOG_LEVEL="WARNING",
        PYTHONPATH=str(ROOT),
    )
    env.pop("CELERY_BROKER_URL", None)
    env.pop("REDIS_URL", None)
    env.pop("CELERY_QUEUE", None)
    env.update(extra)
    return env


def django_setup(env: dict[str, str]) -> None:
    """Point this process at the bench database (and broker, if any), then django.setup()."""
    for key in ("CELERY_BROKER_URL", "REDIS_URL", "CELERY_QUEUE"):
        os.environ.pop(key, None)
    os.environ.update(
        {k: v for k, v in env.items() if k.startswith(("DJANGO_", "DATABASE_", "CELERY_", "LOG_"))}
    )
    import django

    django.setup()


@contextmanager
def throwaway_database(kind: str, title: str, limit: int) -> Iterator[None]:
    """A bench's throwaway PostgreSQL database: created, Django set up on it, the bench's title
    and the machine printed, migrated with the catalog loaded; dropped afterwards (also on
    BenchTimeout, which ``limit`` seconds raise and the caller reports)."""
    name = db_name_for(kind)
    created = False
    try:
        with hard_limit(limit):
            url = create_database(name)
            created = True
            django_setup(base_env(url))
            print(f"== {title} ==")
            for line in machine_lines():
                print(line)
            migrate_and_load_catalog()
            yield
    finally:
        if created:
            drop_database(name)


def migrate_and_load_catalog() -> float:
    from django.core.management import call_command

    t0 = time.perf_counter()
    call_command("migrate", verbosity=0, interactive=False)
    call_command("load_catalog", verbosity=0, stdout=io.StringIO())
    return time.perf_counter() - t0


# --- seeding --------------------------------------------------------------------------------

PRESET_SHAPES = {
    # preset: (weights precision choices, realistic concurrency range)
    "llama-3.1-8b": (("FP8", "BF16"), (8, 64)),
    "llama-3.1-70b": (("FP8", "BF16"), (4, 32)),
    "mixtral-8x7b": (("BF16", "FP8"), (4, 32)),
    "qwen2.5-32b": (("BF16", "FP8"), (4, 32)),
    "qwen3-30b-a3b": (("BF16", "FP8"), (8, 48)),
    "gemma-2-27b": (("BF16",), (4, 32)),
    "mistral-7b": (("BF16", "FP8"), (8, 64)),
    "phi-4": (("BF16",), (8, 48)),
}
LLM_PRESETS = tuple(PRESET_SHAPES)

# Workload mix for 200 briefs (sums to 1).
WORKLOAD_MIX = (
    ("REALTIME_INFERENCE", 0.34),
    ("BATCH_INFERENCE", 0.18),
    ("EMBEDDINGS", 0.07),
    ("EVALUATION", 0.07),
    ("IMAGE_GENERATION", 0.08),
    ("VIDEO_GENERATION", 0.04),
    ("LORA_FINETUNE", 0.10),
    ("QLORA_FINETUNE", 0.05),
    ("FULL_FINETUNE", 0.04),
    ("TRAINING", 0.03),
)
TERM_MIX = (
    ("ON_DEMAND", 0.35, Decimal("1.00")),
    ("SPOT", 0.14, Decimal("0.45")),
    ("RESERVED_1Y", 0.15, Decimal("0.70")),
    ("RESERVED_3Y", 0.10, Decimal("0.52")),
    ("MARKETPLACE", 0.10, Decimal("0.80")),
    ("DEDICATED_CLUSTER", 0.08, Decimal("0.75")),
    ("OWNED", 0.08, Decimal("0.40")),
)
REGIONS = ("us-east", "us-west", "eu-west", "eu-central", "ap-southeast", "ap-northeast")
FX_RATES = {"EUR": "1.08", "GBP": "1.27"}


def _pick(rng: random.Random, mix: tuple[tuple[Any, ...], ...]) -> tuple[Any, ...]:
    r, acc = rng.random(), 0.0
    for item in mix:
        acc += item[1]
        if r <= acc:
            return item
    return mix[-1]


def _common(rng: random.Random, *, success_unit: str, duty: str, hours: int) -> dict[str, Any]:
    return {
        "success_unit": success_unit,
        "acceptance_rate": Decimal(str(rng.choice(("0.85", "0.9", "0.92", "0.95", "0.97")))),
        "duty_cycle": duty,
        "hours_per_month": Decimal(hours),
        "operating_boundary": rng.choice(
            ("PUBLIC_CLOUD", "PUBLIC_CLOUD", "PRIVATE_NETWORK", "DEDICATED_CLUSTER", "ON_PREM")
        ),
    }


def brief_fields(kind: str, rng: random.Random) -> dict[str, Any]:
    """Complete brief field values for one workload type (every brief can be ranked)."""
    preset = rng.choice(LLM_PRESETS)
    precisions, (c_lo, c_hi) = PRESET_SHAPES[preset]
    precision = rng.choice(precisions)
    in50 = rng.choice((256, 512, 1000, 2000, 3000))
    out50 = rng.choice((100, 200, 300, 500))
    tokens = {
        "input_tokens_p50": in50,
        "input_tokens_p95": in50 * rng.choice((2, 3, 4)),
        "output_tokens_p50": out50,
        "output_tokens_p95": out50 * rng.choice((2, 3)),
    }
    if kind == "REALTIME_INFERENCE":
        fields: dict[str, Any] = {
            "model_preset": preset,
            "weight_precision": precision,
            "kv_cache_precision": precision,
            **tokens,
            "latency_percentile": rng.choice(("P95", "P95", "P99")),
            "ttft_target_ms": rng.choice((300, 500, 1000, 2000)),
            "itl_target_ms": rng.choice((30, 50, 80)),
            "tooling": ["VLLM", "KUBERNETES"],
            **_common(rng, success_unit="TOKEN", duty="ALWAYS_ON", hours=730),
        }
        if rng.random() < 0.25:
            fields["requests_per_second"] = Decimal(rng.choice(("0.5", "2", "5", "10")))
        else:
            fields["concurrency"] = rng.randint(c_lo, c_hi)
        return fields
    if kind in ("BATCH_INFERENCE", "EVALUATION"):
        return {
            "model_preset": preset,
            "weight_precision": precision,
            "kv_cache_precision": precision,
            **tokens,
            "records_per_job": rng.choice((10_000, 50_000, 200_000, 1_000_000)),
            "latency_percentile": "OFFLINE",
            "tooling": ["VLLM", "RAY"],
            **_common(
                rng,
                success_unit="RECORD" if kind == "BATCH_INFERENCE" else "EVALUATION",
                duty="SCHEDULED_BATCH",
                hours=rng.choice((40, 120, 240)),
            ),
        }
    if kind == "EMBEDDINGS":
        return {
            "model_preset": rng.choice(("bge-large-en-v1.5", "e5-large")),
            "weight_precision": rng.choice(("FP16", "BF16")),
            "input_tokens_p50": rng.choice((128, 256, 512)),
            "input_tokens_p95": 512,
            "records_per_job": rng.choice((1_000_000, 5_000_000, 20_000_000)),
            "tooling": ["TRITON"],
            **_common(rng, success_unit="RECORD", duty="SCHEDULED_BATCH", hours=80),
        }
    if kind in ("IMAGE_GENERATION", "VIDEO_GENERATION"):
        size = rng.choice((512, 768, 1024))
        fields = {
            "model_preset": rng.choice(("sdxl", "flux.1-dev")),
            "weight_precision": rng.choice(("FP16", "BF16")),
            "image_width": size,
            "image_height": size,
            # Media demand is a request rate (concurrency alone gives no monthly volume).
            "requests_per_second": Decimal(
                rng.choice(("0.2", "0.5", "1", "2"))
                if kind == "IMAGE_GENERATION"
                else rng.choice(("0.02", "0.05", "0.1"))
            ),
            "tooling": ["COMFYUI"],
            **_common(
                rng,
                success_unit="IMAGE" if kind == "IMAGE_GENERATION" else "CLIP",
                duty=rng.choice(("ALWAYS_ON", "SEASONAL_BURST")),
                hours=rng.choice((200, 400, 730)),
            ),
        }
        if kind == "VIDEO_GENERATION":
            fields["clip_seconds"] = Decimal(rng.choice(("4", "6", "10")))
        return fields
    # Training and fine-tuning.
    small = rng.choice(("llama-3.1-8b", "mistral-7b", "qwen3-8b", "phi-4"))
    fields = {
        "model_preset": preset if kind == "TRAINING" and rng.random() < 0.3 else small,
        "weight_precision": "INT4" if kind == "QLORA_FINETUNE" else "BF16",
        "training_tokens": rng.choice((100_000_000, 500_000_000, 2_000_000_000)),
        "sequence_length": rng.choice((2048, 4096, 8192)),
        "global_batch_tokens": rng.choice((131_072, 262_144, 1_048_576)),
        "optimizer": rng.choice(("ADAMW", "ADAMW", "ADAM_8BIT")),
        "sharding": rng.choice(("NONE", "ZERO2", "ZERO3", "FSDP")),
        "activation_checkpointing": rng.random() < 0.7,
        "checkpoint_interval_minutes": rng.choice((15, 30, 60)),
        "tooling": ["SLURM"],
        **_common(
            rng,
            success_unit="TRAINING_RUN",
            duty=rng.choice(("EXPERIMENTAL", "SCHEDULED_BATCH")),
            hours=rng.choice((40, 80, 200)),
        ),
    }
    if kind == "TRAINING":
        fields["training_tokens"] = rng.choice((10_000_000_000, 50_000_000_000))
        fields["global_batch_tokens"] = 4_194_304
    if kind in ("LORA_FINETUNE", "QLORA_FINETUNE"):
        fields["lora_rank"] = rng.choice((8, 16, 32, 64))
    return fields


def _gpu_base_price(gpu: Any) -> Decimal:
    """A rough on-demand $/GPU-hour from the datasheet (illustrative, for seeding only)."""
    price = Decimal("0.35") + gpu.bf16_dense_tflops * Decimal("0.0018")
    price += gpu.memory_gb * Decimal("0.004")
    return price.quantize(Decimal("0.0001"))


def add_synthetic_gpus(target: int = N_GPUS) -> list[str]:
    """Derive ``bench-...`` GPUs from the shipped ones until the catalog holds ``target``."""
    from apps.catalog.models import Gpu

    real = list(Gpu.objects.exclude(slug__startswith="bench-").order_by("slug"))
    need = target - Gpu.objects.count()
    scales = (Decimal("0.8"), Decimal("1.15"), Decimal("0.9"), Decimal("1.3"))
    rows = []
    for i in range(max(need, 0)):
        src = real[i % len(real)]
        s = scales[i % len(scales)]
        rows.append(
            Gpu(
                slug=f"bench-{src.slug}-x{i}"[:64],
                name=f"bench {src.name} x{s} (synthetic)"[:120],
                vendor=src.vendor,
                form_factor=src.form_factor,
                architecture=src.architecture,
                memory_gb=(src.memory_gb * s).quantize(Decimal("0.01")),
                memory_type=src.memory_type,
                memory_bandwidth_tbps=(src.memory_bandwidth_tbps * s).quantize(Decimal("0.001")),
                bf16_dense_tflops=(src.bf16_dense_tflops * s).quantize(Decimal("0.01")),
                fp8_dense_tflops=None
                if src.fp8_dense_tflops is None
                else (src.fp8_dense_tflops * s).quantize(Decimal("0.01")),
                fp4_dense_tflops=None
                if src.fp4_dense_tflops is None
                else (src.fp4_dense_tflops * s).quantize(Decimal("0.01")),
                int8_dense_tops=None
                if src.int8_dense_tops is None
                else (src.int8_dense_tops * s).quantize(Decimal("0.01")),
                tdp_w=int(src.tdp_w * s),
                interconnect=src.interconnect,
                interconnect_gbps_bidirectional=src.interconnect_gbps_bidirectional,
                max_gpus_per_node=src.max_gpus_per_node,
                source=f"synthetic benchmark row derived from {src.slug}",
                checked_date=src.checked_date,
            )
        )
    Gpu.objects.bulk_create(rows)
    return [r.slug for r in rows]


def seed(*, today: date | None = None) -> dict[str, Any]:
    """Seed teams, users, providers, quotes, routes, assumptions and briefs (bulk, no services).

    Returns the ids the benchmarks need (brief ids, the API user, quote ids).
    """
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.db import transaction

    from apps.briefs.models import WorkloadBrief
    from apps.catalog.models import Gpu, GpuSystem
    from apps.core.models import Team
    from apps.core.roles import Role
    from apps.finance.models import FinanceAssumptions, FxRate
    from apps.quotes.models import ApiRoute, Provider, Quote

    rng = random.Random(SEED)
    today = today or datetime.now(UTC).date()
    user_model = get_user_model()
    with transaction.atomic():
        add_synthetic_gpus()
        groups = {role: Group.objects.get_or_create(name=role.value)[0] for role in Role}
        teams = Team.objects.bulk_create(
            [Team(name=f"Bench team {i}", slug=f"bench-team-{i}") for i in range(N_TEAMS)]
        )
        users = user_model.objects.bulk_create(
            [
                user_model(username=f"bench-platform-{i}", email=f"p{i}@example.com")
                for i in range(N_TEAMS)
            ]
        )
        api_user = user_model.objects.create(username="bench-api", email="api@example.com")
        for team, user in zip(teams, users, strict=True):
            team.members.add(user, api_user)
            user.groups.add(groups[Role.PLATFORM])
        api_user.groups.add(groups[Role.API_CLIENT])

        FinanceAssumptions.objects.update_or_create(
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

        FxRate.objects.bulk_create(
            [
                FxRate(currency=code, rate=Decimal(rate), as_of=date.today(), source="bench seed")
                for code, rate in FX_RATES.items()
            ]
        )

        providers = Provider.objects.bulk_create(
            [Provider(name=f"Bench provider {i:02d}") for i in range(24)]
        )
        gpus = list(Gpu.objects.order_by("slug"))
        systems = list(GpuSystem.objects.select_related("gpu"))
        quotes = []
        for i in range(N_QUOTES):
            term, _, factor = _pick(rng, TERM_MIX)
            use_system = systems and rng.random() < 0.05
            system = rng.choice(systems) if use_system else None
            gpu = system.gpu if system else gpus[i % len(gpus)]
            currency = rng.choices(("USD", "EUR", "GBP"), weights=(85, 10, 5))[0]
            noise = Decimal(str(round(rng.uniform(0.75, 1.35), 3)))
            quote_date = today - timedelta(days=rng.randint(0, 150))
            quotes.append(
                Quote(
                    provider=rng.choice(providers),
                    gpu=None if system else gpu,
                    system=system,
                    gpus_per_node=system.gpus_per_node if system else gpu.max_gpus_per_node,
                    region=rng.choice(REGIONS),
                    pricing_term=term,
                    hourly_price_per_gpu=(_gpu_base_price(gpu) * factor * noise).quantize(
                        Decimal("0.0001")
                    ),
                    currency=currency,
                    storage_price_per_tb_month=Decimal(rng.choice(("0", "20", "25", "40"))),
                    egress_price_per_gb=Decimal(rng.choice(("0", "0.01", "0.05", "0.09"))),
                    network_monthly=Decimal(rng.choice(("0", "0", "500", "2000"))),
                    monthly_extras=Decimal(rng.choice(("0", "0", "250", "1000"))),
                    minimum_commitment_months={"RESERVED_1Y": 12, "RESERVED_3Y": 36}.get(term, 0),
                    quote_date=quote_date,
                    valid_until=quote_date + timedelta(days=rng.choice((30, 90, 180))),
                    source=f"bench quote {i}",
                    confidential_to=rng.choice(teams) if rng.random() < 0.1 else None,
                )
            )
        Quote.objects.bulk_create(quotes, batch_size=500)

        routes = []
        for preset, price_in, price_out in (
            ("llama-3.1-8b", "0.10", "0.10"),
            ("llama-3.1-70b", "0.60", "0.80"),
            ("mixtral-8x7b", "0.45", "0.70"),
            ("qwen2.5-32b", "0.40", "0.60"),
            ("mistral-7b", "0.10", "0.15"),
            ("phi-4", "0.07", "0.14"),
        ):
            for p in rng.sample(providers, 2):
                routes.append(
                    ApiRoute(
                        provider=p,
                        model=f"{preset}-instruct",
                        model_preset=preset,
                        input_price_per_mtok=Decimal(price_in),
                        output_price_per_mtok=Decimal(price_out),
                        batch_discount=Decimal("0.5"),
                        rate_limit_rpm=6000,
                        quote_date=today - timedelta(days=10),
                        source="bench route",
                    )
                )
        ApiRoute.objects.bulk_create(routes)

        briefs = []
        kinds = [_pick(rng, WORKLOAD_MIX)[0] for _ in range(N_BRIEFS)]
        for i, kind in enumerate(kinds):
            team_index = i % N_TEAMS
            briefs.append(
                WorkloadBrief(
                    name=f"Bench brief {i:03d} ({kind.lower()})",
                    team=teams[team_index],
                    created_by=users[team_index],
                    workload_type=kind,
                    **brief_fields(kind, rng),
                )
            )
        WorkloadBrief.objects.bulk_create(briefs, batch_size=200)
        incomplete = [b.name for b in briefs if b.missing_fields()]
        if incomplete:
            raise RuntimeError(f"seeded briefs are incomplete: {incomplete[:5]}")
    return {
        "brief_ids": [b.pk for b in briefs],
        "kinds": kinds,
        "api_user_id": api_user.pk,
        "quote_ids": [q.pk for q in quotes],
    }


def row_counts() -> dict[str, int]:
    from apps.briefs.models import WorkloadBrief
    from apps.catalog.models import Gpu, GpuSystem
    from apps.core.models import Team
    from apps.finance.models import CandidateRow, CandidateTable
    from apps.quotes.models import ApiRoute, Provider, Quote

    return {
        "gpus": Gpu.objects.count(),
        "gpus_synthetic": Gpu.objects.filter(slug__startswith="bench-").count(),
        "systems": GpuSystem.objects.count(),
        "teams": Team.objects.count(),
        "briefs": WorkloadBrief.objects.count(),
        "providers": Provider.objects.count(),
        "quotes": Quote.objects.count(),
        "quotes_confidential": Quote.objects.filter(confidential_to__isnull=False).count(),
        "api_routes": ApiRoute.objects.count(),
        "candidate_tables": CandidateTable.objects.count(),
        "candidate_rows": CandidateRow.objects.count(),
    }


def ranking_summary() -> dict[str, Any]:
    """How many tables rank something, and the reasons of those that do not."""
    from collections import Counter

    from django.db.models import Count

    from apps.finance.models import CandidateTable

    tables = CandidateTable.objects.annotate(n=Count("rows"))
    reasons = Counter(t.no_ranking_reason[:80] for t in tables if t.no_ranking_reason)
    sizes = sorted(t.n for t in tables)
    return {
        "tables_with_rows": sum(1 for n in sizes if n),
        "rows_per_table_min": sizes[0] if sizes else 0,
        "rows_per_table_median": sizes[len(sizes) // 2] if sizes else 0,
        "rows_per_table_max": sizes[-1] if sizes else 0,
        "no_ranking_reasons": dict(reasons.most_common(5)),
    }


# --- reporting ------------------------------------------------------------------------------


def machine_lines() -> list[str]:
    lines = [
        f"date:        {datetime.now(UTC).isoformat(timespec='seconds')}",
        f"machine:     {platform.platform()}; {os.cpu_count()} CPUs; "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        f"python:      {sys.version.split()[0]} ({platform.python_implementation()})",
    ]
    try:
        from django.db import connection

        with connection.cursor() as cur:
            cur.execute("SHOW server_version")
            lines.append(f"postgresql:  {cur.fetchone()[0]}")
    except Exception as exc:
        lines.append(f"postgresql:  ? ({exc})")
    try:
        import django

        lines.append(f"django:      {django.get_version()}")
    except ImportError:
        lines.append("django:      ?")
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.split("\n")
        dirty_files = [line[3:] for line in dirty if line.strip()]
        lines.append(
            f"code:        HEAD {head}"
            + (f" + uncommitted changes in {len(dirty_files)} files" if dirty_files else "")
        )
    except (OSError, subprocess.SubprocessError) as exc:
        lines.append(f"code:        ? ({exc})")
    return lines


def percentile(sorted_values: list[float], p: float) -> float:
    if not sorted_values:
        return float("nan")
    k = (len(sorted_values) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


def stop_process(proc: subprocess.Popen[Any], *, grace: float = 15.0) -> None:
    """SIGTERM (warm shutdown), then SIGKILL after ``grace`` seconds; only this process."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def tail(path: Path, n: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def clean_up_server_run(
    server: subprocess.Popen[Any] | None, log: Path, db_name: str | None, workdir: Path
) -> None:
    """After a gunicorn bench, whatever happened: stop the server (its log tail if it died),
    drop the throwaway database (``None`` if it was never created), remove the work folder."""
    if server is not None:
        stop_process(server, grace=10)
        if server.returncode not in (0, None, -15):
            print(f"gunicorn log tail:\n{tail(log)}")
    if db_name is not None:
        drop_database(db_name)
        print(f"cleanup:     dropped {db_name}")
    for path in workdir.iterdir():
        path.unlink()
    workdir.rmdir()


# --- helpers for the fault tests (tests/faults) and bench/load.py ---------------------------


def seed_sized(*, n_briefs: int = N_BRIEFS, n_quotes: int = N_QUOTES) -> dict[str, Any]:
    """``seed()`` with another number of briefs / quotes (same generator, same mix)."""
    global N_BRIEFS, N_QUOTES
    saved = N_BRIEFS, N_QUOTES
    N_BRIEFS, N_QUOTES = n_briefs, n_quotes
    try:
        return seed()
    finally:
        N_BRIEFS, N_QUOTES = saved
