"""manage.py import_api_prices: model/API route prices from the genai-prices package."""

from datetime import date
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from apps.quotes import api_prices
from apps.quotes.api_prices_text import plan_lines


class Command(BaseCommand):
    help = (
        "Create and update model/API routes from the price list the genai-prices package "
        "ships (offline), with their price history. Routes are shared by every team, as "
        "routes entered by hand are."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="Show the changes only.")
        parser.add_argument(
            "--provider", default="", help="One provider's routes (its genai-prices id or name)."
        )
        parser.add_argument(
            "--date",
            default="",
            help="Prices in effect on this date, YYYY-MM-DD (default today; not after today).",
        )
        parser.add_argument(
            "--all-models",
            action="store_true",
            help="Every model priced per token, not only those that serve a catalog preset.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        today = timezone.localdate()
        try:
            day = date.fromisoformat(options["date"]) if options["date"] else today
        except ValueError:
            raise CommandError(f"--date: {options['date']!r} is not a date YYYY-MM-DD") from None
        kwargs = {"day": day, "provider": options["provider"], "all_models": options["all_models"]}
        try:
            api_prices.check_date(day, today=today)
            if options["dry_run"]:
                plan = api_prices.plan_import(**kwargs)
            else:
                plan = api_prices.apply_import(**kwargs)
        except ValidationError as exc:
            if not hasattr(exc, "error_dict"):
                raise CommandError(" ".join(exc.messages)) from None
            raise CommandError(
                "; ".join(f"--{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
            ) from None
        for line in plan_lines(plan, applied=not options["dry_run"]):
            self.stdout.write(line)
