"""Every operation of the published OpenAPI schema, fuzzed in-process with schemathesis and
every check it has: no server errors, every response (errors included) as documented, invalid
input refused, valid input accepted where the schema can promise it (see schemathesis.toml).

The committed schema (docs/openapi.yaml) must be what the code generates: `make schema`
regenerates it. scripts/fuzz-live runs the same checks with the CLI against a live server.

Like that run, each case is judged as a user sees it too (issue 24): the recomputes its
changes asked for are run (a test's transaction never commits, so they would not run on their
own), and a case fails when one of them fails or leaves a table pending: a recompute failure
is not a 5xx, so schemathesis' checks alone cannot see it."""

import logging
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis import openapi
from schemathesis.checks import CHECKS, is_check_class, load_all_checks
from schemathesis.config import SchemathesisConfig

from apps.core.roles import Role
from apps.core.services import api_token_create
from apps.finance.selectors import tables_left_pending
from apps.finance.services import candidate_tables_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ApiRouteFactory, QuoteFactory

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = ROOT / "docs" / "openapi.yaml"

# schemathesis.toml (found from the working directory up) carries the per-operation settings
# shared with the CLI run; make sure it is the repository's, wherever pytest was started.
schema = openapi.from_path(
    SCHEMA_FILE, config=SchemathesisConfig.from_path(ROOT / "schemathesis.toml")
)
schema.app = get_wsgi_application()
schema.config.generation.update(max_examples=20)

load_all_checks()
#: Every check schemathesis registers (status, content type, headers and body conformance,
#: server errors, negative and positive data, missing headers, unsupported methods, Allow
#: header, use after free, resource availability, ignored auth, object-level authorization).
ALL_CHECKS = [check for check in CHECKS.get_all() if not is_check_class(check)]


def checks_off_for(operation) -> set[str]:
    """The checks schemathesis.toml turns off for this operation (each with its reason there)."""
    config = schema.config.checks_config_for(operation=operation, phase=None)
    return {c.__name__ for c in ALL_CHECKS if not config.get_by_name(name=c.__name__).enabled}


@pytest.fixture(autouse=True)
def keep_the_test_connection():
    """schemathesis calls the WSGI app directly, not through Django's test client, so the
    request signals would close the test's database connection (inside its transaction) after
    each call; the test client disconnects them the same way."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def api_key(catalog, make_user, team):
    """A user holding every role, in a team with a brief, quotes and a route to find."""
    user = make_user(Role.PLATFORM, Role.FINANCE, Role.PROCUREMENT, Role.API_CLIENT)
    BriefFactory(team=team)
    QuoteFactory()
    ApiRouteFactory(model_preset="llama-3.1-8b")
    _, key = api_token_create(user=user, days=1)
    return key


@pytest.mark.django_db
class TestCommittedSchema:
    def test_matches_what_the_code_generates(self, tmp_path):
        generated = tmp_path / "openapi.yaml"
        call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(generated))
        assert yaml.safe_load(generated.read_text()) == yaml.safe_load(SCHEMA_FILE.read_text()), (
            "docs/openapi.yaml is out of date: run `make schema`"
        )


class TestFuzzConfig:
    def test_every_check_runs_on_operations_without_a_body(self):
        assert {c.__name__ for c in ALL_CHECKS} >= {
            "not_a_server_error", "status_code_conformance", "content_type_conformance",
            "response_headers_conformance", "response_schema_conformance",
            "negative_data_rejection", "positive_data_acceptance", "missing_required_header",
            "unsupported_method", "allow_header_conformance", "use_after_free",
            "ensure_resource_availability", "ignored_auth", "object_level_authorization",
        }  # fmt: skip
        for operation in ("GET /api/v1/briefs/", "GET /api/v1/quotes/{id}/"):
            assert checks_off_for(schema[operation.split()[1]][operation.split()[0]]) == set()

    def test_only_positive_data_acceptance_is_off_and_only_where_a_body_is_sent(self):
        assert checks_off_for(schema["/api/v1/quotes/"]["POST"]) == {"positive_data_acceptance"}


class FailureRecords(logging.Handler):
    """The ERROR records the finance app logs (a failed recompute, a failed sweep)."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def recompute_failures():
    handler = FailureRecords()
    finance = logging.getLogger("apps.finance")
    finance.addHandler(handler)
    yield handler.records
    finance.removeHandler(handler)


def assert_tables_settle(failures: list[logging.LogRecord]) -> None:
    """Run the recomputes the case asked for, as the server would after its commit; none may
    fail (in the tests a failure is raised where it happens) nor leave a table pending."""
    pending = tables_left_pending()
    if pending:
        candidate_tables_recompute(brief_ids=pending)
    assert not failures, [r.getMessage() for r in failures]
    assert tables_left_pending() == [], "candidate tables left pending after the case"


@pytest.mark.django_db
@schema.parametrize()
@settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_api_conforms_to_its_schema(case, api_key, recompute_failures):
    case.call_and_validate(
        headers={"Authorization": f"Token {api_key}"},
        checks=ALL_CHECKS,
        excluded_checks=[c for c in ALL_CHECKS if c.__name__ in checks_off_for(case.operation)],
    )
    assert_tables_settle(recompute_failures)
