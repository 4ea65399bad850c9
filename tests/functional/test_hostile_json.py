"""Hostile JSON is a 400 that names the field, and nothing is saved: a body nested 100,000
levels deep (Python's json raised RecursionError, a 500), NaN/Infinity and numbers that
overflow a double (1e400), NUL (PostgreSQL's jsonb refuses it; SQLite keeps it) and lone
surrogates (not UTF-8; SQLite failed after the insert) in free-form objects, and free-form
objects nested beyond MAX_JSON_DEPTH.

The endpoints are read from docs/openapi.yaml, so an endpoint added later is covered as it is
documented (like tests/functional/test_query_params.py)."""

import json
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from django.test import Client
from django.urls import get_resolver

from apps.benchmarks.models import BenchmarkRun
from apps.briefs.models import WorkloadBrief
from apps.core import parsers as core_parsers
from apps.core.json_guard import MAX_BODY_DEPTH, MAX_JSON_DEPTH
from apps.core.roles import Role
from apps.decisions.models import DecisionRecord
from tests.factories.briefs import BriefFactory
from tests.factories.decisions import make_record
from tests.factories.quotes import ApiRouteFactory, ProviderFactory, QuoteFactory

pytestmark = pytest.mark.django_db

SCHEMA = yaml.safe_load((Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml").read_text())


def _json_operations() -> list[tuple[str, str]]:
    found = []
    for path, operations in SCHEMA["paths"].items():
        for method in ("post", "put", "patch"):
            content = (operations.get(method) or {}).get("requestBody", {}).get("content", {})
            if "application/json" in content:
                found.append((method, path))
    return found


OPERATIONS = _json_operations()

#: Bodies no JSON endpoint may answer with anything but a 400: 100,000 open brackets (the
#: review's case), the same of objects, and a complete document one level past the limit.
DEEP_BODIES = {
    "100000-arrays": "[" * 100_000,
    "100000-objects": '{"a":' * 100_000,
    "complete-past-limit": "[" * (MAX_BODY_DEPTH + 1) + "]" * (MAX_BODY_DEPTH + 1),
    "object-past-limit": '{"a":' * (MAX_BODY_DEPTH + 1) + "1" + "}" * (MAX_BODY_DEPTH + 1),
}


def nested(depth: int) -> dict:
    """An object ``depth`` levels deep: ``{"a": {"a": ... {}}}``."""
    value: dict = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


@pytest.fixture
def objects(catalog, team, make_user):
    author = make_user(Role.PROCUREMENT, Role.PLATFORM, Role.FINANCE)
    brief = BriefFactory(team=team)
    quote = QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
    route = ApiRouteFactory(model_preset="llama-3.1-8b")
    provider = ProviderFactory()
    record = make_record(brief=brief, user=author, quote=quote)
    return {
        "/api/v1/briefs/": brief,
        "/api/v1/quotes/": quote,
        "/api/v1/api-routes/": route,
        "/api/v1/providers/": provider,
        "/api/v1/decision-records/": record,
        "/api/v1/checklist/quotes/": quote,
    }


@pytest.fixture
def client(token_client):
    """A user with every role, so no endpoint refuses before it reads the body."""
    return token_client(Role.PLATFORM, Role.FINANCE, Role.PROCUREMENT, Role.API_CLIENT)


def _url(path: str, objects: dict) -> str:
    for prefix, obj in objects.items():
        if path.startswith(prefix) and "{" in path:
            return path.replace("{id}", str(obj.pk)).replace("{quote_id}", str(obj.pk))
    assert "{" not in path, f"no object for {path}: add one to the objects fixture"
    return path


def send(client, method: str, url: str, body: str):
    client.raise_request_exception = False  # a 500 is an answer the test looks at
    return getattr(client, method)(url, body, content_type="application/json")


def test_the_schema_documents_the_json_endpoints():
    """The table is not empty by accident (a schema that lost its request bodies)."""
    assert {
        ("post", "/api/v1/briefs/"), ("patch", "/api/v1/briefs/{id}/"),
        ("post", "/api/v1/estimate"), ("post", "/api/v1/decision-records/"),
        ("put", "/api/v1/checklist/quotes/{quote_id}/"),
        ("post", "/api/v1/benchmark-runs/"), ("post", "/api/v1/quotes/"),
    } <= set(OPERATIONS)  # fmt: skip


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_a_deeply_nested_body_is_a_400_on_every_json_endpoint(client, objects, method, path):
    url = _url(path, objects)
    for name, body in DEEP_BODIES.items():
        response = send(client, method, url, body)
        assert response.status_code == 400, (name, response.status_code, response.content[:200])
        assert "nested more than" in response.json()["detail"], name


def _closed_operations() -> list[tuple[str, str]]:
    """The JSON operations whose body is a documented object (a $ref), which the schema closes;
    /estimate takes the engine's free-form contract body and is left open."""
    return [
        (method, path)
        for method, path in OPERATIONS
        if "$ref"
        in SCHEMA["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]
    ]


CLOSED = _closed_operations()


@pytest.mark.parametrize(("method", "path"), CLOSED, ids=[f"{m} {p}" for m, p in CLOSED])
def test_every_json_endpoint_checks_its_body_strictly(client, objects, method, path):
    """The schema closes every JSON body (additionalProperties: false), so each endpoint's
    serializer must refuse what the schema refuses (apps.core.api.StrictJsonTypes): a field it
    does not take is a 400 naming that field, not a silently ignored key. An input serializer
    without the mixin also took a number for a text field and stored it as text (the live
    fuzz's ST201 on the FX-rate table)."""
    response = send(client, method, _url(path, objects), '{"not_a_field_here": 1}')
    assert response.status_code == 400, (response.status_code, response.content[:200])
    assert "not_a_field_here" in response.json()["errors"], response.content[:300]


def test_every_api_view_parses_json_with_the_guarded_parser():
    """A view that names DRF's own JSONParser would take the bodies above again."""
    unguarded = []
    for pattern in get_resolver().url_patterns:
        for view in _views(pattern):
            for parser in getattr(view, "parser_classes", ()):
                if "json" in parser.media_type and not issubclass(parser, core_parsers.JSONParser):
                    unguarded.append(f"{view.__name__}: {parser.__module__}.{parser.__name__}")
    assert unguarded == []


def _views(pattern):
    if hasattr(pattern, "url_patterns"):
        for inner in pattern.url_patterns:
            yield from _views(inner)
    elif hasattr(pattern.callback, "cls"):
        yield pattern.callback.cls


#: Free-form values no field may keep, with what the 400 says about them.
HOSTILE_VALUES = {
    "1e400": ('{"x": 1e400}', "must be finite"),
    "-1e400": ('{"x": -1e400}', "must be finite"),
    "NaN": ('{"x": NaN}', "must be finite"),
    "Infinity": ('{"x": [Infinity]}', "must be finite"),
    "huge-integer": ('{"x": 1' + "0" * 400 + "}", "must be finite"),
    "NUL-in-value": ('{"x": "a\\u0000b"}', "Null characters"),
    "NUL-in-key": ('{"a\\u0000b": 1}', "Null characters"),
    "lone-surrogate": ('{"x": "a\\ud800b"}', "Surrogate characters"),
    "surrogate-in-key": ('{"\\udfff": 1}', "Surrogate characters"),
}
HOSTILE_IDS = list(HOSTILE_VALUES)
#: A Hugging Face config.json may carry the NaN / Infinity literals Python's json writes
#: (Nemotron-H's time_step_limit [0.0, Infinity]): under model.hf_config they are kept as text
#: (apps.core.json_guard.CONFIG_PATHS), so only the rest are hostile there.
CONFIG_HOSTILE_IDS = [k for k in HOSTILE_IDS if k not in ("NaN", "Infinity")]


def _brief_body(hf_config: str) -> str:
    return (
        '{"name": "hostile", "workload_type": "REALTIME_INFERENCE", "model": {"hf_config": '
        + hf_config
        + "}}"
    )


class TestBriefHfConfig:
    @pytest.mark.parametrize("kind", CONFIG_HOSTILE_IDS)
    def test_a_hostile_value_is_a_400_naming_the_field_and_nothing_is_saved(
        self, client, team, kind
    ):
        value, said = HOSTILE_VALUES[kind]
        response = send(client, "post", "/api/v1/briefs/", _brief_body(value))
        assert response.status_code == 400, response.content[:300]
        assert response.json()["detail"].startswith("model.hf_config"), response.json()
        assert said in response.json()["detail"]
        assert not WorkloadBrief.objects.filter(name="hostile").exists()

    def test_infinity_and_nan_in_a_config_are_kept_as_the_text_hugging_face_wrote(
        self, client, team
    ):
        config = '{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, '
        config += '"vocab_size": 100, "time_step_limit": [0.0, Infinity], "x": NaN}'
        response = send(client, "post", "/api/v1/briefs/", _brief_body(config))
        assert response.status_code == 201, response.content[:300]
        brief = WorkloadBrief.objects.get(name="hostile")
        assert brief.model_hf_config["time_step_limit"] == [0.0, "Infinity"]
        assert brief.model_hf_config["x"] == "NaN"

    @pytest.mark.parametrize("kind", CONFIG_HOSTILE_IDS)
    def test_a_hostile_value_is_a_400_on_the_estimate(self, client, catalog, kind):
        value, said = HOSTILE_VALUES[kind]
        response = send(client, "post", "/api/v1/estimate", _brief_body(value))
        assert response.status_code == 400, response.content[:300]
        assert response.json()["detail"].startswith("model.hf_config"), response.json()
        assert said in response.json()["detail"]

    def test_a_config_nested_past_the_limit_is_a_400_naming_the_field(self, client, team):
        config = nested(MAX_JSON_DEPTH + 1)
        response = send(client, "post", "/api/v1/briefs/", _brief_body(json.dumps(config)))
        assert response.status_code == 400, response.content[:300]
        assert response.json()["detail"].startswith("model.hf_config: at a."), response.json()
        assert f"nested more than {MAX_JSON_DEPTH} levels deep" in response.json()["detail"]
        assert not WorkloadBrief.objects.filter(name="hostile").exists()

    def test_a_real_config_with_nested_sections_and_emoji_is_kept(self, client, team):
        config = {
            "model_type": "llama",
            "num_hidden_layers": 32,
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "intermediate_size": 14336,
            "vocab_size": 128256,
            "rope_scaling": {"factor": 8.0, "rope_type": "llama3", "deep": nested(20)},
            "_name_or_path": "team/llama-\U0001f999",
        }
        body = json.dumps({"name": "hostile", "workload_type": "REALTIME_INFERENCE",
                           "model": {"hf_config": config}})  # fmt: skip
        response = send(client, "post", "/api/v1/briefs/", body)
        assert response.status_code == 201, response.content[:300]
        brief = WorkloadBrief.objects.get(name="hostile")
        assert brief.model_hf_config["_name_or_path"] == "team/llama-\U0001f999"


class TestAcceptanceCriteria:
    @pytest.fixture
    def record(self, catalog, team, make_user):
        author = make_user(Role.PROCUREMENT)
        return make_record(brief=BriefFactory(team=team), user=author, quote=QuoteFactory())

    @pytest.mark.parametrize("kind", HOSTILE_IDS)
    def test_a_hostile_value_is_a_400_naming_the_field_and_nothing_is_saved(
        self, client, record, kind
    ):
        before = dict(record.acceptance_criteria)
        value, said = HOSTILE_VALUES[kind]
        body = '{"acceptance_criteria": ' + value + "}"
        response = send(client, "patch", f"/api/v1/decision-records/{record.pk}/", body)
        assert response.status_code == 400, response.content[:300]
        assert response.json()["detail"].startswith("acceptance_criteria"), response.json()
        assert said in response.json()["detail"]
        record.refresh_from_db()
        assert record.acceptance_criteria == before

    def test_criteria_nested_past_the_limit_are_a_400_and_nothing_is_saved(self, client, record):
        count = DecisionRecord.objects.count()
        body = json.dumps({"acceptance_criteria": nested(MAX_JSON_DEPTH + 1)})
        response = send(client, "patch", f"/api/v1/decision-records/{record.pk}/", body)
        assert response.status_code == 400, response.content[:300]
        assert response.json()["detail"].startswith("acceptance_criteria: at a.a"), response.json()
        record.refresh_from_db()
        assert "a" not in record.acceptance_criteria
        assert DecisionRecord.objects.count() == count


class TestManualRunResults:
    @pytest.mark.parametrize("field", ["results", "conditions"])
    @pytest.mark.parametrize("kind", HOSTILE_IDS)
    def test_a_hostile_value_is_a_400_naming_the_field_and_nothing_is_saved(
        self, client, catalog, team, field, kind
    ):
        brief = BriefFactory(team=team)
        value, said = HOSTILE_VALUES[kind]
        body = {"brief": brief.pk, "gpu": "h100-sxm5-80gb", "gpu_count": 1, "phase": "MEMORY_FIT",
                "results": {"fits": True}}  # fmt: skip
        text = json.dumps(body)[:-1] + f', "{field}": {value}}}'
        text = text.replace('"results": {"fits": true}, ', "") if field == "results" else text
        response = send(client, "post", "/api/v1/benchmark-runs/", text)
        assert response.status_code == 400, response.content[:300]
        assert response.json()["detail"].startswith(field), response.json()
        assert said in response.json()["detail"]
        assert not BenchmarkRun.objects.exists()

    def test_results_nested_past_the_limit_are_a_400(self, client, catalog, team):
        body = {"brief": BriefFactory(team=team).pk, "gpu": "h100-sxm5-80gb", "gpu_count": 1,
                "phase": "MEMORY_FIT", "results": nested(MAX_JSON_DEPTH + 1)}  # fmt: skip
        response = send(client, "post", "/api/v1/benchmark-runs/", json.dumps(body))
        assert response.status_code == 400, response.content[:300]
        assert response.json()["detail"].startswith("results: at a.a"), response.json()
        assert not BenchmarkRun.objects.exists()


class TestBriefFormPastedConfig:
    """The brief page takes a pasted config.json: the same refusals, as a form error."""

    PASTED = {
        "100000-arrays": ("[" * 100_000, "nested more than"),
        "past-the-limit": (json.dumps(nested(MAX_JSON_DEPTH + 1)), "nested more than"),
        "1e400": ('{"x": 1e400}', "must be finite"),
        "NUL": ('{"x": "a\\u0000b"}', "Null characters"),
        "lone-surrogate": ('{"x": "\\ud800"}', "Surrogate characters"),
    }

    @pytest.mark.parametrize("kind", list(PASTED))
    def test_a_hostile_paste_is_a_form_error_and_nothing_is_saved(
        self, client, catalog, team, platform_user, kind
    ):
        browser = Client(raise_request_exception=False)
        browser.force_login(platform_user)
        pasted, said = self.PASTED[kind]
        response = browser.post(
            "/briefs/new/",
            {
                "name": "hostile",
                "team": team.pk,
                "workload_type": "REALTIME_INFERENCE",
                "model_hf_config": pasted,
            },
        )
        assert response.status_code == 200, response.status_code
        errors = response.context["form"].errors
        assert said in errors["model_hf_config"][0], errors
        assert not WorkloadBrief.objects.filter(name="hostile").exists()
