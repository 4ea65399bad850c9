"""Production settings refuse to run on the embedded default's shortcuts."""

import os
import subprocess
import sys
from pathlib import Path

from django.test import override_settings

from apps.core.checks import production_needs_real_services

ROOT = Path(__file__).resolve().parents[2]
SQLITE = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
POSTGRES = {"default": {"ENGINE": "django.db.backends.postgresql", "NAME": "x"}}


def manage(*args, **env_changes):
    """Run manage.py in a fresh process under production settings with ``env_changes``
    (a value of None removes the variable)."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "gpuselect.settings.production"}
    for name, value in env_changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return subprocess.run(  # noqa: S603 - our own manage.py, fixed arguments
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def on_sqlite(tmp_path):
    return {
        "DJANGO_SECRET_KEY": "x" * 50,
        "DJANGO_ALLOWED_HOSTS": "example.com",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'never-used.sqlite3'}",
        "CELERY_BROKER_URL": "",
        "REDIS_URL": "",
    }


class TestProductionChecks:
    @override_settings(DATABASES=SQLITE, CELERY_TASK_ALWAYS_EAGER=True, PRODUCTION=True)
    def test_sqlite_and_in_process_tasks_are_both_errors(self):
        ids = [e.id for e in production_needs_real_services(None)]
        assert ids == ["gpuselect.E001", "gpuselect.E002"]

    @override_settings(DATABASES=POSTGRES, CELERY_TASK_ALWAYS_EAGER=False, PRODUCTION=True)
    def test_postgres_and_a_broker_pass(self):
        assert production_needs_real_services(None) == []

    @override_settings(DATABASES=SQLITE, CELERY_TASK_ALWAYS_EAGER=True)
    def test_the_embedded_default_is_fine_outside_production(self):
        assert production_needs_real_services(None) == []

    def test_production_settings_refuse_to_migrate_on_sqlite(self, tmp_path):
        result = manage("migrate", "--check", **on_sqlite(tmp_path))
        assert result.returncode != 0
        assert "gpuselect.E001" in result.stderr

    def test_check_deploy_fails_on_sqlite_under_production_settings(self, tmp_path):
        result = manage("check", "--deploy", **on_sqlite(tmp_path))
        assert result.returncode != 0
        assert "gpuselect.E001" in result.stderr
        assert "gpuselect.E002" in result.stderr

    def test_production_refuses_to_start_without_a_secret_key(self):
        result = manage("check", DJANGO_SECRET_KEY=None, DJANGO_ALLOWED_HOSTS="example.com")
        assert result.returncode != 0
        assert "DJANGO_SECRET_KEY" in result.stderr


def trusted_proxy_hops(tmp_path, **env_changes):
    # The sign-in throttle's hops and the API throttles' (DRF NUM_PROXIES) are one setting.
    code = (
        "from django.conf import settings; "
        "assert settings.REST_FRAMEWORK['NUM_PROXIES'] == settings.LOGIN_TRUSTED_PROXY_HOPS; "
        "print(settings.LOGIN_TRUSTED_PROXY_HOPS)"
    )
    return manage("shell", "--no-imports", "-c", code, **on_sqlite(tmp_path), **env_changes)


class TestTrustedProxyHops:
    def test_production_reads_them_from_the_environment(self, tmp_path):
        result = trusted_proxy_hops(tmp_path, DJANGO_TRUSTED_PROXY_HOPS="2")
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "2"

    def test_unset_they_are_0_and_only_remote_addr_counts(self, tmp_path):
        result = trusted_proxy_hops(tmp_path, DJANGO_TRUSTED_PROXY_HOPS=None)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "0"

    def test_a_negative_number_is_refused(self, tmp_path):
        result = trusted_proxy_hops(tmp_path, DJANGO_TRUSTED_PROXY_HOPS="-1")
        assert result.returncode != 0
        assert "DJANGO_TRUSTED_PROXY_HOPS" in result.stderr
