"""Settings for the test suite: the embedded default unless DATABASE_URL / CELERY_BROKER_URL
point at real services, in which case the same suite runs against them."""

from .base import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.InMemoryStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Tasks run in-process after commit by default; the broker tests (tests/integration/
# test_worker.py) switch to the real broker and start a real worker when one is configured.
CELERY_TASK_ALWAYS_EAGER = True

# The suite makes thousands of API calls; the throttling tests set their own low rates.
REST_FRAMEWORK = {
    **REST_FRAMEWORK,  # noqa: F405
    "DEFAULT_THROTTLE_RATES": {"anon": "100000/min", "user": "100000/min"},
}
