from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        # Registration modules are imported once the app registry is ready (Django's AppConfig.ready
        # pattern), not at import time: they reach models and third-party registries.
        from . import (
            checks,  # noqa: F401  (registers the system checks)
            schema,  # noqa: F401  (registers the OpenAPI field extensions)
            signals,  # noqa: F401  (revokes API tokens on a password change or deactivation)
        )
