"""`make run PORT=...` serves where it says, through gunicorn as the tests start it, and the
demo loader prints that same URL; `make dev` is Django's development server with DEBUG on."""

import os
import shutil
import subprocess
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.integration.test_embedded_concurrency import SERVER_CONFIG

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def demo_allowed(settings):
    settings.DEMO_DATA_ALLOWED = True


def make_commands(target: str, *args: str) -> str:
    make = shutil.which("make")
    if make is None:
        pytest.skip("no make on the PATH")
    # -n prints what `make run` would run without running it (nor installing anything).
    return subprocess.run(  # noqa: S603 - the system's make on our own Makefile
        [make, "-n", "-C", str(ROOT), target, *args],
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if k != "PORT"},  # a PORT already set is used
    ).stdout


def make_run_commands(*args: str) -> str:
    return make_commands("run", *args)


class TestMakeRun:
    def test_serves_on_8000_by_default(self):
        commands = make_run_commands()
        assert f"gunicorn --config {SERVER_CONFIG} --bind 127.0.0.1:8000" in commands
        assert "load_demo --url http://127.0.0.1:8000/" in commands
        assert "starting at http://127.0.0.1:8000/" in commands

    def test_port_moves_the_server_and_every_url_it_prints(self):
        commands = make_run_commands("PORT=8123")
        assert f"gunicorn --config {SERVER_CONFIG} --bind 127.0.0.1:8123" in commands
        assert "load_demo --url http://127.0.0.1:8123/" in commands
        assert "starting at http://127.0.0.1:8123/" in commands
        assert "8000" not in commands

    def test_never_the_development_server_nor_debug(self):
        commands = make_run_commands()
        assert "runserver" not in commands
        assert "DJANGO_DEBUG=true" not in commands


class TestMakeDev:
    def test_is_the_development_server_with_debug_on_at_the_same_port(self):
        commands = make_commands("dev", "PORT=8123")
        assert "DJANGO_DEBUG=true" in commands
        assert "manage.py runserver 127.0.0.1:8123" in commands
        assert "load_demo --url http://127.0.0.1:8123/" in commands


@pytest.mark.django_db
class TestLoadDemoUrl:
    def test_prints_the_url_it_is_given(self, catalog, demo_allowed):
        out = StringIO()
        call_command("load_demo", "--url", "http://127.0.0.1:8123/", stdout=out)
        assert "at http://127.0.0.1:8123/ :" in out.getvalue()

    def test_or_the_one_in_demo_url(self, catalog, demo_allowed, monkeypatch):
        monkeypatch.setenv("DEMO_URL", "http://127.0.0.1:9000/")
        out = StringIO()
        call_command("load_demo", stdout=out)
        assert "at http://127.0.0.1:9000/ :" in out.getvalue()

    def test_defaults_to_make_runs_default(self, catalog, demo_allowed, monkeypatch):
        monkeypatch.delenv("DEMO_URL", raising=False)
        out = StringIO()
        call_command("load_demo", stdout=out)
        assert "at http://127.0.0.1:8000/ :" in out.getvalue()
