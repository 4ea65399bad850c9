from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.services import MAX_TOKEN_DAYS, api_token_create


class Command(BaseCommand):
    help = "Create an API token for a user; the key is printed alone on the last line."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--days", type=int, default=90, help="Days until it expires.")

    def handle(self, *args: Any, username: str, days: int, **options: Any) -> None:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named {username!r}.")
        if not user.is_active:
            raise CommandError(f"User {username!r} is deactivated.")
        if not 1 <= days <= MAX_TOKEN_DAYS:
            raise CommandError(f"--days must be between 1 and {MAX_TOKEN_DAYS}.")
        token, key = api_token_create(user=user, days=days)
        self.stderr.write(f"Token for {username}, expires {token.expiry:%Y-%m-%d %H:%M} UTC:")
        self.stdout.write(key)
