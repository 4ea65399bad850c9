# gpuselect — the two commands users need are `make run` and `make test`.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
STAMP := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: run test lint format migrations-check check-deploy install test-e2e bench clean

$(PY):
	@python=$$(scripts/find-python) || exit 1; echo "Creating $(VENV) with $$python"; \
	"$$python" -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-*; touch $(STAMP)

install: $(STAMP)

run: install  ## Start the app on SQLite with demo data at http://127.0.0.1:8000
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_catalog
	$(PY) manage.py load_demo
	@echo; echo "gpuselect is starting at http://127.0.0.1:8000/  (Ctrl-C to stop)"; echo
	$(PY) manage.py runserver 127.0.0.1:8000

test: install  ## Run the whole suite (SQLite; PostgreSQL/Redis when DATABASE_URL/CELERY_BROKER_URL are set)
	$(PY) -m pytest $(PYTEST_ARGS)

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

bench: install  ## Print the benchmark figures (llm-analysis installs without its deps: it only runs on 3.13 so)
	$(PY) -m pip install --quiet --no-deps llm-analysis==0.2.2
	$(PY) bench/estimate.py
	$(PY) bench/accuracy.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache
