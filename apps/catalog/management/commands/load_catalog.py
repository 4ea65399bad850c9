from typing import Any

from django.core.management.base import BaseCommand

from apps.catalog.services import catalog_load


class Command(BaseCommand):
    help = "Load (or refresh) the shipped GPU catalog, GPU systems and model presets."

    def handle(self, *args: Any, **options: Any) -> None:
        counts = catalog_load()
        self.stdout.write(
            self.style.SUCCESS(
                f"Catalog loaded: {counts['gpus']} GPUs, {counts['systems']} systems, "
                f"{counts['presets']} model presets."
            )
        )
