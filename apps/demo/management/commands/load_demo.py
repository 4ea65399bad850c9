import os
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from apps.demo.data import demo_load

# The demo accounts exist only on the embedded default's database (settings.DEMO_DATA_ALLOWED,
# set by gpuselect/settings/local.py); production refuses to load them. Override with
# DEMO_PASSWORD if you share a demo server.
DEFAULT_DEMO_PASSWORD = "gpuselect-demo"  # noqa: S105 - a public demo credential, by design
# Where `make run` serves unless told otherwise (its PORT=); `make run` passes the real one.
DEFAULT_DEMO_URL = "http://127.0.0.1:8000/"


class Command(BaseCommand):
    help = "Load the demo dataset (users per role, a team, providers, quotes, briefs)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--password", default=None)
        parser.add_argument(
            "--url",
            default=None,
            help=f"Where the server answers, to print (default $DEMO_URL or {DEFAULT_DEMO_URL}).",
        )

    def handle(self, *args: Any, password: str | None, url: str | None, **options: Any) -> None:
        if not settings.DEMO_DATA_ALLOWED:
            raise CommandError(
                "Demo data is for the embedded default only (gpuselect.settings.local)."
            )
        password = password or os.environ.get("DEMO_PASSWORD") or DEFAULT_DEMO_PASSWORD
        result = demo_load(password=password, today=timezone.localdate())
        self.stdout.write(self.style.SUCCESS(f"Demo data loaded for team {result['team']}."))
        url = url or os.environ.get("DEMO_URL") or DEFAULT_DEMO_URL
        self.stdout.write(f"Demo logins (password: {password}), at {url} :")
        for username in result["users"]:
            self.stdout.write(f"  {username}")
