"""The API reference a person reads (/api/docs/, issue 27): one tag per resource, a summary and
a description on every operation, worked examples for the estimate and the rankings, and a
link back to the app."""

from pathlib import Path

import pytest
import yaml

from apps.core.api_docs import OPERATIONS, TAGS
from apps.core.roles import Role

SCHEMA = yaml.safe_load((Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml").read_text())
OPERATIONS_IN_SCHEMA = {
    op["operationId"]: (path, op)
    for path, item in SCHEMA["paths"].items()
    for method, op in item.items()
    if isinstance(op, dict)
}


def test_every_operation_has_a_resource_tag_a_summary_and_a_description():
    names = {name for name, _ in TAGS}
    for operation_id, (_path, op) in OPERATIONS_IN_SCHEMA.items():
        assert op["tags"] and op["tags"][0] in names, (operation_id, op["tags"])
        assert op.get("summary"), operation_id
        assert len(op.get("description") or "") > 20, operation_id


def test_the_words_are_for_the_operations_that_exist():
    assert set(OPERATIONS) == set(OPERATIONS_IN_SCHEMA)


def test_resources_are_tagged_apart():
    tag = {oid: op["tags"][0] for oid, (_, op) in OPERATIONS_IN_SCHEMA.items()}
    assert tag["v1_briefs_rankings_retrieve"] == "Rankings"
    assert tag["v1_briefs_create"] == "Briefs"
    assert tag["v1_checklist_quotes_retrieve"] == "Procurement checklist"
    assert len(set(tag.values())) == len(TAGS)
    assert [t["name"] for t in SCHEMA["tags"]] == [name for name, _ in TAGS]


def test_the_estimate_and_the_rankings_have_worked_examples():
    estimate = OPERATIONS_IN_SCHEMA["v1_estimate_create"][1]
    request = estimate["requestBody"]["content"]["application/json"]["examples"]
    body = next(iter(request.values()))["value"]
    assert body["model"] == {"preset": "llama-3.1-8b"} and body["concurrency"] == 32
    answer = estimate["responses"]["200"]["content"]["application/json"]["examples"]
    assert next(iter(answer.values()))["value"]["estimates"][0]["gpu"] == "h100-sxm5-80gb"
    rankings = OPERATIONS_IN_SCHEMA["v1_briefs_rankings_retrieve"][1]
    examples = rankings["responses"]["200"]["content"]["application/json"]["examples"]
    value = next(iter(examples.values()))["value"]
    assert value["unit"] == "per 1M accepted tokens" and value["rows"][0]["rank"] == 1


def test_the_reference_links_back_to_the_app():
    assert "[← Back to the app](/)" in SCHEMA["info"]["description"]


@pytest.mark.django_db
def test_the_docs_page_has_a_way_back_to_the_app(client, make_user):
    client.force_login(make_user(Role.API_CLIENT))
    html = client.get("/api/docs/").content.decode()
    assert 'id="back-to-app"' in html and '<a href="/"><strong>← gpuselect</strong></a>' in html
