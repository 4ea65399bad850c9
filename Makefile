# gpuselect — the two commands users need are `make run` and `make test`.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
STAMP := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: run dev test test-faults fuzz lint format migrations-check check-deploy schema schema-check audit install bench clean

$(PY):
	@python=$$(scripts/find-python) || exit 1; echo "Creating $(VENV) with $$python"; \
	"$$python" -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-*; touch $(STAMP)

install: $(STAMP)

# `make run PORT=8001` when 8000 is taken; the server listens on loopback only.
PORT ?= 8000
RUN_URL := http://127.0.0.1:$(PORT)/

# The embedded default's server: gunicorn, one process of 8 threads, on SQLite with DEBUG off
# (gpuselect/gunicorn_embedded.py says why; tests/integration/test_embedded_server.py starts it
# the same way).
SERVE := $(BIN)/gunicorn --config python:gpuselect.gunicorn_embedded --bind 127.0.0.1:$(PORT)

run: install  ## Start the app on SQLite with demo data at http://127.0.0.1:$(PORT) (default 8000)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_catalog
	$(PY) manage.py load_demo --url $(RUN_URL)
	@echo; echo "gpuselect is starting at $(RUN_URL)  (Ctrl-C to stop)"; echo
	$(SERVE)

dev: install  ## The same on Django's development server: autoreload, DEBUG on (its debug pages)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_catalog
	$(PY) manage.py load_demo --url $(RUN_URL)
	@echo; echo "gpuselect (development server, DEBUG on) is starting at $(RUN_URL)"; echo
	DJANGO_DEBUG=true $(PY) manage.py runserver 127.0.0.1:$(PORT)

test: install  ## Run the whole suite (SQLite; PostgreSQL/Redis when DATABASE_URL/CELERY_BROKER_URL are set)
	$(PY) -m pytest $(PYTEST_ARGS)

test-faults: install  ## Kill workers, restart Redis and PostgreSQL mid-recompute (needs both running, as root)
	GPUSELECT_FAULTS=1 $(PY) -m pytest tests/faults -p no:django -p no:cacheprovider --confcutdir=tests/faults -m faults -v $(PYTEST_ARGS)

fuzz: install  ## schemathesis CLI against gunicorn on a throwaway seeded PostgreSQL database
	$(PY) scripts/fuzz-live $(FUZZ_ARGS)

schema: install  ## Regenerate the committed OpenAPI schema
	$(PY) manage.py spectacular --validate --fail-on-warn --file docs/openapi.yaml

schema-check: install  ## The committed schema matches what the code generates
	$(PY) manage.py spectacular --validate --fail-on-warn --file /tmp/gpuselect-openapi.yaml
	diff -u docs/openapi.yaml /tmp/gpuselect-openapi.yaml

audit: install  ## Known vulnerabilities in the pinned set (needs the advisory service)
	$(BIN)/pip-audit --progress-spinner off --strict

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

migrations-check: install
	$(PY) manage.py makemigrations --check --dry-run

check-deploy: install
	DJANGO_SETTINGS_MODULE=gpuselect.settings.production DJANGO_SECRET_KEY=ci-dummy-$$RANDOM$$RANDOM-not-a-secret-value-0123456789abcdef \
	DJANGO_ALLOWED_HOSTS=gpuselect.example.com DATABASE_URL=postgres://gpuselect@db/gpuselect \
	CELERY_BROKER_URL=redis://redis:6379/0 $(PY) manage.py check --deploy --fail-level WARNING

bench: install  ## Print the benchmark figures (needs PostgreSQL and Redis for the last three)
	$(PY) -m pip install --quiet --no-deps llm-analysis==0.2.2  # its pinned deps do not build on 3.13
	$(PY) bench/estimate.py
	$(PY) bench/accuracy.py
	$(PY) bench/recompute.py
	$(PY) bench/rankings_load.py
	$(PY) bench/load.py
	$(PY) bench/body_memory.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache
