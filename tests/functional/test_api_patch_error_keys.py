"""A PATCH that the merged brief refuses names each field as the request named it (the body's
shape: ``input_tokens.p95``, ``model.preset``, ``latency_target``), exactly as a POST of the
same body does, never by the model's column (``input_tokens_p95``); and it saves nothing."""

import json

import pytest

from apps.core.roles import Role
from tests.factories.briefs import BriefFactory

pytestmark = pytest.mark.django_db

# llama-3.1-8b reads 131,072 tokens; the factory's brief sends up to 800 output tokens.
OVER_THE_WINDOW = {"input_tokens": {"p50": 1000, "p95": 131_000}}


@pytest.fixture
def api(catalog, token_client):
    return token_client(Role.PLATFORM)


def patch(api, brief, body):
    return api.patch(
        f"/api/v1/briefs/{brief.pk}/", json.dumps(body), content_type="application/json"
    )


def keys(errors, prefix=""):
    """Every error's path in the response's ``errors`` ("input_tokens.p95")."""
    out = []
    for name, value in errors.items():
        path = f"{prefix}.{name}" if prefix else name
        out += keys(value, path) if isinstance(value, dict) else [path]
    return sorted(out)


class TestPatchErrorKeys:
    def test_a_request_beyond_the_context_window_names_the_body_field(self, api, team):
        brief = BriefFactory(team=team)
        before = brief.inputs_version

        response = patch(api, brief, OVER_THE_WINDOW)

        assert response.status_code == 400, response.json()
        names = keys(response.json()["errors"])
        assert names, response.json()
        assert all(n.split(".")[0] in {"input_tokens", "output_tokens"} for n in names), names
        assert not any("_p50" in n or "_p95" in n for n in names), names
        assert response.json()["detail"].startswith(names[0])
        brief.refresh_from_db()
        assert brief.inputs_version == before

    def test_the_patch_and_the_post_of_one_body_name_the_same_fields(self, api, team):
        brief = BriefFactory(team=team)
        patched = patch(api, brief, OVER_THE_WINDOW).json()["errors"]
        body = {
            "name": "Same body", "team": team.pk, "workload_type": "REALTIME_INFERENCE",
            "model": {"preset": "llama-3.1-8b"}, "output_tokens": {"p50": 200, "p95": 800},
            **OVER_THE_WINDOW,
        }  # fmt: skip
        posted = api.post("/api/v1/briefs/", json.dumps(body), content_type="application/json")
        assert posted.status_code == 400
        assert keys(patched) == keys(posted.json()["errors"])

    def test_a_model_of_the_wrong_kind_names_the_model_field(self, api, team):
        brief = BriefFactory(team=team)

        response = patch(api, brief, {"workload_type": "VIDEO_GENERATION"})

        assert response.status_code == 400
        names = keys(response.json()["errors"])
        assert names and all(
            n.split(".")[0] in {"model", "workload_type", "success_unit"} for n in names
        ), names
        assert "model_preset" not in names

    def test_a_latency_target_refused_by_the_brief_is_named_as_sent(self, api, team):
        brief = BriefFactory(team=team)

        response = patch(api, brief, {"latency_target": {"ttft_p95_ms": 0, "itl_p95_ms": 50}})

        assert response.status_code == 400
        names = keys(response.json()["errors"])
        assert names and all(n.split(".")[0] == "latency_target" for n in names), names
