"""How long an import of API prices from genai-prices takes: every model the pinned package
lists (--all-models), into a throwaway SQLite database: the diff, the import, a re-import that
changes nothing, and a re-import for an earlier date (which changes the batch discounts).

    .venv/bin/python bench/api_prices.py
"""

import os
import platform
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        os.environ["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gpuselect.settings.local")
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        from apps.quotes import api_prices
        from apps.quotes.models import ApiRoute, ApiRoutePrice

        today = date(2026, 12, 1)
        steps = [
            (
                "diff (nothing imported yet)",
                lambda: api_prices.plan_import(day=today, all_models=True),
            ),
            ("import", lambda: api_prices.apply_import(day=today, all_models=True)),
            (
                "re-import, nothing changed",
                lambda: api_prices.apply_import(day=today, all_models=True),
            ),
            (
                "re-import for 2026-10-01",
                lambda: api_prices.apply_import(day=date(2026, 10, 1), all_models=True),
            ),
        ]
        print(f"{api_prices.source_label()}, Python {platform.python_version()}, SQLite")
        print(f"load average before: {os.getloadavg()[0]:.2f}")
        for name, step in steps:
            start = time.perf_counter()
            plan = step()
            took = time.perf_counter() - start
            print(
                f"{name}: {took:.2f} s (new {len(plan.new)}, changed {len(plan.changed)}, "
                f"unchanged {plan.unchanged}, periods added {plan.history_added})"
            )
        print(f"routes {ApiRoute.objects.count()}, price periods {ApiRoutePrice.objects.count()}")


if __name__ == "__main__":
    main()
