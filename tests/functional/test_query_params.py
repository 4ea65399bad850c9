"""Every query parameter the published schema documents is taken exactly as documented: each
documented value is accepted, and values the schema does not allow are refused with a 400
that names the parameter, never ignored (a filter a typo switched off would show rows that
were not asked for; schemathesis reports it as "schema-violating request accepted").

The table is read from docs/openapi.yaml, so a parameter added later is covered as it is
documented. The fuzzers find such gaps at random; this finds the usual ones every run."""

from pathlib import Path

import pytest
import yaml

from apps.core.roles import Role
from apps.decisions.checklist import QUESTION_KEYS
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import QuoteFactory

pytestmark = pytest.mark.django_db

SCHEMA = yaml.safe_load((Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml").read_text())

#: Strings that are not an integer or a number as a client serialising one would send it:
#: empty, padded, signed, non-ASCII digits, Python-only spellings, and no number at all.
NOT_NUMBERS = ["", " 1", "1 ", "+1", "1_0", "\u0661", "\u00b2", "NaN", "inf", "0x10", "one"]
NOT_INTEGERS = [*NOT_NUMBERS, "01", "1.0", "1e2", "9" * 40]


def _query_parameters() -> list[tuple[str, dict]]:
    found = []
    for path, operations in SCHEMA["paths"].items():
        get = operations.get("get") or {}
        for parameter in get.get("parameters", []):
            if parameter["in"] == "query":
                found.append((path, parameter))
    return found


def _refused(schema: dict) -> list[str]:
    """Values the parameter's schema does not allow."""
    if "enum" in schema:
        values = [str(v) for v in schema["enum"]]
        variants = {f(v) for v in values for f in (str.lower, str.upper, str.title)}
        return ["", "x", *sorted(variants - set(values)), *(f"{v} " for v in values)]
    if schema["type"] == "integer":
        return [*NOT_INTEGERS, str(schema["minimum"] - 1), str(schema["maximum"] + 1)]
    if schema["type"] == "number":
        beyond = [str(schema["minimum"] - 1), str(schema["maximum"] + 1), "1e999", "1e" + "9" * 19]
        return [*NOT_NUMBERS, *beyond]
    if schema.get("pattern") == "^[^\\x00]*$":
        return ["a\x00b"]
    raise AssertionError(f"no refused values known for {schema}: add them here")


def _accepted(schema: dict) -> list[str]:
    """Values the parameter's schema allows."""
    if "enum" in schema:
        return [str(v) for v in schema["enum"]]
    if schema["type"] in ("integer", "number"):
        values = [str(schema["minimum"]), str(schema["maximum"])]
        exotic = ["0.5", "1E2", "-0", "1e-20000", "80." + "0" * 60]  # JSON numbers, all in range
        return values + (exotic if schema["type"] == "number" else [])
    return ["", "h100-sxm5-80gb", "Ünïcode text"]


#: Stands for the caller's own team slug in ``?team=`` (the `call` fixture puts it in).
YOUR_TEAM = "<your team>"


PARAMETERS = _query_parameters()
IDS = [f"{path}?{p['name']}" for path, p in PARAMETERS]


@pytest.fixture
def call(catalog, token_client, team):
    """GET with one query parameter, as a user with every role; ``{id}`` is one of its briefs."""
    client = token_client(Role.PLATFORM, Role.FINANCE, Role.PROCUREMENT, Role.API_CLIENT)
    brief = BriefFactory(team=team)
    quote = QuoteFactory()
    ids = {"{id}": brief.pk, "{quote_id}": quote.pk, "{question}": min(QUESTION_KEYS)}

    def get(path: str, name: str, value: str):
        for placeholder, real in ids.items():
            path = path.replace(placeholder, str(real))
        # ``?team=`` names one of the caller's teams (another is a 404 by design).
        return client.get(path, {name: team.slug if value == YOUR_TEAM else value})

    return get


def test_the_schema_documents_the_filters_the_api_reads():
    """The table below is not empty by accident (a schema that lost its parameters)."""
    names = {(path, p["name"]) for path, p in PARAMETERS}
    assert {
        ("/api/v1/gpus/", "min_memory_gb"), ("/api/v1/gpus/", "architecture"),
        ("/api/v1/briefs/{id}/rankings", "limit"), ("/api/v1/benchmark-runs/", "phase"),
        ("/api/v1/decision-records/", "status"), ("/api/v1/quotes/", "retired"),
        ("/api/v1/briefs/", "page_size"),
    } <= names  # fmt: skip


@pytest.mark.parametrize(("path", "parameter"), PARAMETERS, ids=IDS)
def test_values_the_schema_does_not_allow_are_refused_by_name(call, path, parameter):
    name = parameter["name"]
    for value in _refused(parameter["schema"]):
        response = call(path, name, value)
        assert response.status_code == 400, (name, value, response.status_code)
        assert list(response.json()["errors"]) == [name], (name, value)


@pytest.mark.parametrize(("path", "parameter"), PARAMETERS, ids=IDS)
def test_values_the_schema_allows_are_accepted(call, path, parameter):
    name = parameter["name"]
    values = ["", YOUR_TEAM] if name == "team" else _accepted(parameter["schema"])
    for value in values:
        response = call(path, name, value)
        # A page past the last one is a 404 (documented), as is the evidence file of a question
        # not answered with one; anything else is an answer.
        allowed = (200, 404) if name == "page" or path.endswith("/evidence") else (200,)
        assert response.status_code in allowed, (name, value, response.status_code)


#: Every list endpoint, with the query parameters it takes besides the documented filters.
LIST_ENDPOINTS = [
    "/api/v1/gpus/", "/api/v1/models/", "/api/v1/briefs/", "/api/v1/fx-rates/",
    "/api/v1/providers/", "/api/v1/quotes/", "/api/v1/api-routes/", "/api/v1/benchmark-runs/",
    "/api/v1/decision-records/", "/api/v1/briefs/{id}/rankings",
]  # fmt: skip


@pytest.mark.parametrize("path", LIST_ENDPOINTS)
def test_an_unknown_query_parameter_is_refused_by_name(call, path):
    response = call(path, "colour", "blue")
    assert response.status_code == 400, (path, response.status_code)
    errors = response.json()["errors"]
    assert list(errors) == ["colour"]
    assert errors["colour"][0].startswith("not a query parameter of this endpoint (it takes: ")


@pytest.mark.parametrize("path", LIST_ENDPOINTS)
def test_a_filter_of_another_endpoint_is_refused_here(call, path):
    # ``?provider=`` filters quotes and API routes, ``?phase=`` benchmark runs; each is no
    # filter anywhere else.
    name = "phase" if path in ("/api/v1/quotes/", "/api/v1/api-routes/") else "provider"
    response = call(path, name, "x")
    assert response.status_code == 400, (path, name)
    assert list(response.json()["errors"]) == [name]


def test_every_documented_list_path_is_checked():
    documented = {path for path, _ in PARAMETERS if "{" not in path or path.endswith("rankings")}
    assert documented <= set(LIST_ENDPOINTS), documented - set(LIST_ENDPOINTS)
