"""The migration that adds the results fingerprint gives every imported run the fingerprint an
import computes (apps/benchmarks/migrations/0006_run_results_fingerprint.py), so a file imported
before it is still found as the twin of the same figures imported after it."""

import importlib
from pathlib import Path

import pytest
from django.apps import apps as django_apps

from apps.benchmarks import services
from apps.benchmarks.importers import results_fingerprint
from apps.benchmarks.models import BenchmarkRun
from apps.catalog.models import Gpu
from apps.core.roles import Role
from tests.factories.briefs import BriefFactory

MIGRATION = importlib.import_module("apps.benchmarks.migrations.0006_run_results_fingerprint")
REAL = Path(__file__).resolve().parents[1] / "data" / "benchmarks" / "real"


@pytest.mark.django_db
def test_the_backfill_matches_the_import_and_finds_the_twin(catalog, team, make_user):
    brief = BriefFactory(team=team)
    where = {
        "brief": brief, "gpu": Gpu.objects.get(slug="a10g-24gb"), "gpu_count": 4, "proxy": True,
        "created_by": make_user(Role.PLATFORM, teams=[team]),
    }  # fmt: skip
    raw = (REAL / "llmperf_yi34b_4xa10g_c4_summary.json").read_bytes()
    first = services.benchmark_runs_import(raw=raw, filename="a.json", **where).runs[0]
    BenchmarkRun.objects.update(results_sha256="")  # as a run imported before the migration

    MIGRATION.fingerprint_imported_runs(django_apps, None)

    first.refresh_from_db()
    assert first.results_sha256 == results_fingerprint(first.results)
    copy = services.benchmark_runs_import(raw=raw + b"\n", filename="b.json", **where).runs[0]
    assert copy.conditions["duplicate_of_run"] == first.pk
