"""Settings shared by every environment.

Everything is read from the environment through one ``env`` object. The embedded default
(no variables set) is SQLite with background tasks run in-process right after the transaction
commits, so ``make run`` needs nothing but Python.
"""

from datetime import timedelta
from pathlib import Path

import environ
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

# A development-only key: production.py refuses to start without DJANGO_SECRET_KEY.
SECRET_KEY = env("DJANGO_SECRET_KEY", default="insecure-dev-key-only-for-the-embedded-default")
DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    # runserver (``make dev``) leaves /static/ to WhiteNoise, as ``make run`` (gunicorn) and
    # production do: compressed, cache headers
    # (https://whitenoise.readthedocs.io/en/stable/django.html, "Using WhiteNoise in development").
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "knox",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "apps.core",
    "apps.catalog",
    "apps.briefs",
    "apps.quotes",
    "apps.benchmarks",
    "apps.finance",
    "apps.decisions",
    "apps.demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "apps.core.middleware.RequestBodyLimitMiddleware",  # 413 before a too-large body is read
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "apps.core.middleware.DatabaseBusyMiddleware",  # 503 + Retry-After when SQLite is busy
]

CSRF_FAILURE_VIEW = "apps.core.views.csrf_failure"  # the 403 page, the reason in words
ROOT_URLCONF = "gpuselect.urls"
WSGI_APPLICATION = "gpuselect.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "apps.core.context_processors.navigation",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
# Keep connections between requests and tasks (a new PostgreSQL connection costs ~10-20 ms,
# more than an incremental recompute); checked before reuse so a restarted server is survived.
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"].get("ENGINE") == "django.db.backends.sqlite3":
    # The embedded default serves a team writing at once. WAL lets readers and the one writer
    # proceed side by side (synchronous=NORMAL is WAL's recommended pairing: durable against
    # an application crash, may lose the last commits on a power cut). IMMEDIATE takes the
    # write lock when a transaction begins, so a writer waits for it in the busy handler
    # instead of failing at once with "database is locked" when a read transaction upgrades.
    #
    # SQLITE_BUSY_TIMEOUT_S: how long a connection waits for another's write lock before
    # "database is locked". Each write transaction is short, but under a team of writers whose
    # requests also recompute (CPU-bound, sharing one process's GIL) the waits pile up.
    # Measured with bench/sqlite_load.py (8 writers, 20 s, 2 busy CPUs): Django's default 5 s
    # still failed about 1 write in 40; 20 s failed none. Longer would only hold a client on a
    # truly stuck database.
    SQLITE_BUSY_TIMEOUT_S = 20
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
            "transaction_mode": "IMMEDIATE",
            "timeout": SQLITE_BUSY_TIMEOUT_S,
        }
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# Development and tests serve static files straight from the finders; production collects them
# into STATIC_ROOT (set in production.py) and serves them compressed through whitenoise.
WHITENOISE_USE_FINDERS = True
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    # STATICFILES_DIRS, collected without the committed .gz/.br copies (gpuselect/staticfinders.py)
    "gpuselect.staticfinders.CollectWithoutCompressedCopies",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
]
# plotly.js's basic bundle (scatter, bar, pie: every trace apps/*/charts.py draws), vendored in
# static/vendor/plotly/ with its licence, source and integrity (README.md there); 1.2 MB, 0.33
# MB as brotli, against 4.8 MB for the full plotly.min.js the Python package ships.
# templates/partials/plotly.html includes it, the one place its versioned name is written.
# The version is in the bundle's name, so a new version is a new URL: WhiteNoise may tell
# browsers to keep it a year without asking again ("max-age=315360000, public, immutable"),
# here as in production, where the manifest's content-hashed names are immutable too
# (production.py). Its .gz/.br copies beside it are served to browsers that accept them.
WHITENOISE_IMMUTABLE_FILE_TEST = r"/vendor/plotly/plotly-basic-\d+\.\d+\.\d+\.min\.js$"
MEDIA_URL = "media/"
MEDIA_ROOT = env.path("DJANGO_MEDIA_ROOT", default=str(BASE_DIR / "media"))

# --- Security headers -------------------------------------------------------------------
# Django's built-in content security policy: nothing inline, nothing from other origins.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    # Plotly adds its few CSS rules through the CSSOM into a <style> element that the page
    # creates with the request's nonce (templates/partials/plotly.html); no 'unsafe-inline'.
    "style-src": [CSP.SELF, CSP.NONCE],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_HTTPONLY = True

# --- API ----------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "knox.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "apps.core.pagination.StandardPagination",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # JSON with a depth guard that refuses NaN/Infinity/1e400, NUL and lone surrogates.
    "DEFAULT_PARSER_CLASSES": [
        "apps.core.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "EXCEPTION_HANDLER": "apps.core.api.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env("API_THROTTLE_ANON", default="60/min"),
        "user": env("API_THROTTLE_USER", default="1200/min"),
    },
    # The address the API throttles count by: REMOTE_ADDR (0 proxies). DRF's default (None) reads
    # the whole X-Forwarded-For header, which any client writes (a new header each request
    # would be a new client to the anon rate; every endpoint needs a sign-in or a token today,
    # so that rate guards nothing yet, but it must not be open by default). Production sets it to
    # DJANGO_TRUSTED_PROXY_HOPS, as sign-in throttling does (apps.core.login.client_address).
    "NUM_PROXIES": 0,
    # ?format= is ours (rankings as CSV), not DRF's renderer override.
    "URL_FORMAT_OVERRIDE": None,
}
REST_KNOX = {
    # Tokens are stored as SHA-512 digests only; the key is shown once, at creation.
    "TOKEN_TTL": timedelta(days=env.int("API_TOKEN_TTL_DAYS", default=90)),
    "AUTH_HEADER_PREFIX": "Token",
    "AUTO_REFRESH": False,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "gpuselect API",
    "DESCRIPTION": "Choose GPUs by cost per accepted output.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "PrecisionEnum": "apps.briefs.choices.Precision",
        # Currencies (apps.core.currency): every one, and an FX rate's (all but the base).
        "CurrencyEnum": "apps.core.currency.Currency",
        "FxRateCurrencyEnum": "apps.core.currency.FX_CURRENCIES",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "apps.core.schema.add_error_responses",
    ],
}

# Sign-in throttling (apps/core/login.py), on /accounts/login/ and /admin/login/: failed
# password checks allowed within the window, then 429 until it ends. Per username tried from
# one address (5: room for a few typos, far too few to guess a password; failures from one
# address never lock the user out from another):
LOGIN_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=5)
# Per address (IPv6: per /64), much higher: a whole office behind one NAT address shares it, and
# its typos must not lock everyone out; 50 still stops one machine trying passwords for everyone.
LOGIN_ADDRESS_FAILURE_LIMIT = env.int("LOGIN_ADDRESS_FAILURE_LIMIT", default=50)
# 15 minutes, from the first attempt a counter counts; later attempts do not extend it.
LOGIN_FAILURE_WINDOW_S = env.int("LOGIN_FAILURE_WINDOW_S", default=900)
# How many reverse proxies in front of the app append to X-Forwarded-For and are trusted. 0:
# the address counted is REMOTE_ADDR and X-Forwarded-For, which anyone can send, is ignored
# (the embedded default, which listens on loopback only). N: the N-th entry from the right,
# the one the outermost trusted proxy wrote; entries left of it are the client's own and
# never read. Production reads it from DJANGO_TRUSTED_PROXY_HOPS (docs/design.md, known limits).
LOGIN_TRUSTED_PROXY_HOPS = 0

# The cache holds throttle counters; production shares them across processes through Redis.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "gpuselect"}
}

# --- Background tasks -----------------------------------------------------------------------
# Without a broker the tasks run in-process (eager), after the transaction commits.
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=env("REDIS_URL", default=""))
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_TIMEOUT = 3
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A web request that publishes while the broker is down gives up after one quick retry
# (kombu's default is a long back-off): the change is committed either way and the table it
# leaves stale is re-sent by the sweeper. Workers keep their own reconnection settings.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
CELERY_TASK_DEFAULT_QUEUE = env("CELERY_QUEUE", default="gpuselect")

# --- Product settings ----------------------------------------------------------------------
# The demo dataset (users with a public password, apps/demo) loads only where a settings
# module allows it: the embedded default's local.py, never production.
DEMO_DATA_ALLOWED = False
# A quote older than this is flagged stale even before its valid_until (procurement habit:
# cloud GPU list prices moved monthly through 2024-2025, so 90 days is the usual re-quote cycle).
QUOTE_MAX_AGE_DAYS = env.int("QUOTE_MAX_AGE_DAYS", default=90)
# The quote CSV import (page and API): the largest file it takes.
QUOTE_CSV_MAX_BYTES = 2 * 1024 * 1024
# The catalog import (SkyPilot vms.csv, gpuhunt CSV; page and API): the largest file it takes.
# SkyPilot's AWS vms.csv is 2.5 MB (skypilot-catalog catalogs/v7/aws/vms.csv) and a whole
# cloud's catalog grows with every instance type, so 20 MiB (the benchmark import's limit)
# leaves room for the largest without splitting.
QUOTE_CATALOG_MAX_BYTES = env.int("QUOTE_CATALOG_MAX_BYTES", default=20 * 1024 * 1024)
# Largest benchmark result file accepted for import.
BENCHMARK_MAX_UPLOAD_BYTES = env.int("BENCHMARK_MAX_UPLOAD_BYTES", default=20 * 1024 * 1024)
# Largest request body an endpoint without an upload takes (form fields, JSON): 5 MiB, over
# a hundred times the largest brief or quote body; apps/core/middleware.py refuses a longer
# declared body with a 413 before it is read.
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
# An uploaded file larger than this is streamed to a temporary file instead of held in memory
# (Django's default, 2.5 MiB, written out so that the bound is visible here): memory per upload
# stays bounded whatever the file's size, up to its endpoint's limit (apps/core/middleware.py).
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # The handler's level too: django.request's 4xx warnings reach it by propagation, past the
    # root logger's own level.
    "handlers": {
        "console": {"class": "logging.StreamHandler", "level": env("LOG_LEVEL", default="INFO")}
    },
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    # One line per task run drowns the server log when tasks run in-process.
    "loggers": {"celery.app.trace": {"level": env("TASK_LOG_LEVEL", default="WARNING")}},
}
