"""Production: PostgreSQL, Redis and a Celery worker; secrets only from the environment."""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import BASE_DIR, env

DEBUG = False
PRODUCTION = True
SECRET_KEY = env("DJANGO_SECRET_KEY")  # no default: refuse to start without one
if len(SECRET_KEY) < 32:
    raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set to a random string of 32+ chars.")
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS")
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True

# Reverse proxies in front of the app that append to X-Forwarded-For (1 for one nginx or load
# balancer); sign-in throttling counts the address the outermost of them saw. Default 0: only
# REMOTE_ADDR, never a header a client can write (gpuselect/settings/base.py).
LOGIN_TRUSTED_PROXY_HOPS = env.int("DJANGO_TRUSTED_PROXY_HOPS", default=0)
if LOGIN_TRUSTED_PROXY_HOPS < 0:
    raise ImproperlyConfigured("DJANGO_TRUSTED_PROXY_HOPS must be 0 or a positive number.")
REST_FRAMEWORK = {**REST_FRAMEWORK, "NUM_PROXIES": LOGIN_TRUSTED_PROXY_HOPS}  # noqa: F405

# Throttle counters (API rates, failed sign-ins) must be shared by every web process.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": env("CACHE_URL", default=CELERY_BROKER_URL),  # noqa: F405
    }
}
STATIC_ROOT = env.path("DJANGO_STATIC_ROOT", default=str(BASE_DIR / "staticfiles"))
WHITENOISE_USE_FINDERS = False
# Immutable: the manifest's content-hashed names (WhiteNoise's own test), a year-long cache.
WHITENOISE_IMMUTABLE_FILE_TEST = None
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
