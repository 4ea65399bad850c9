"""/api/v1/briefs/: the estimate body plus the brief's fields, stored and read back."""

import json

import pytest

from apps.briefs.models import WorkloadBrief
from apps.core.roles import Role
from tests.factories.briefs import BriefFactory

from .test_estimate_api import CONTRACT_EXAMPLE

pytestmark = pytest.mark.django_db

BRIEF_BODY = {
    **CONTRACT_EXAMPLE,
    "name": "Chat 8B",
    "success_unit": "TOKEN",
    "acceptance_rate": 0.95,
    "duty_cycle": "ALWAYS_ON",
    "hours_per_month": 730,
    "operating_boundary": "PUBLIC_CLOUD",
    "tooling": ["VLLM"],
}


@pytest.fixture
def platform_api(catalog, token_client):
    return token_client(Role.PLATFORM)


def post(api, body, url="/api/v1/briefs/"):
    return api.post(url, json.dumps(body), content_type="application/json")


class TestBriefCreate:
    def test_the_estimate_body_plus_brief_fields_is_stored(self, platform_api, team):
        response = post(platform_api, BRIEF_BODY)
        assert response.status_code == 201, response.json()
        body = response.json()
        brief = WorkloadBrief.objects.get(pk=body["id"])
        assert brief.team == team
        assert brief.model_preset == "llama-3.1-8b"
        assert (brief.input_tokens_p50, brief.input_tokens_p95) == (1000, 4000)
        assert brief.latency_percentile == "P95"
        assert (brief.ttft_target_ms, brief.itl_target_ms) == (500, 50)
        assert body["model"] == {"preset": "llama-3.1-8b"}
        assert body["input_tokens"] == {"p50": 1000, "p95": 4000}
        assert body["latency_target"] == {"ttft_p95_ms": 500, "itl_p95_ms": 50}
        assert body["complete"] is True and body["missing_fields"] == []

    def test_an_incomplete_brief_is_stored_and_says_what_is_missing(self, platform_api):
        response = post(platform_api, {"name": "idea", "workload_type": "TRAINING"})
        assert response.status_code == 201
        assert "training_tokens" in response.json()["missing_fields"]
        assert response.json()["complete"] is False

    @pytest.mark.parametrize(
        ("change", "field"),
        [
            ({"model": {"preset": "gpt-99"}}, "model.preset"),
            ({"input_tokens": {"p50": 4000, "p95": 10}}, "input_tokens.p95"),
            ({"acceptance_rate": 1.5}, "acceptance_rate"),
            ({"hours_per_month": 9999}, "hours_per_month"),
            ({"tooling": ["EXCEL"]}, "tooling"),
            ({"training": {"tokens": 10}}, "training"),
            ({"latency_target": {"ttft_p95_ms": -1}}, "latency_target"),
            ({"name": ""}, "name"),
            ({"team": 999999}, "team"),
        ],
    )
    def test_bad_input_is_a_400_naming_the_field_and_saves_nothing(
        self, platform_api, change, field
    ):
        response = post(platform_api, {**BRIEF_BODY, **change})
        assert response.status_code == 400
        assert response.json()["detail"].startswith(field), response.json()
        assert WorkloadBrief.objects.count() == 0

    def test_only_platform_may_write(self, catalog, token_client):
        for role in (Role.FINANCE, Role.PROCUREMENT, Role.API_CLIENT):
            assert post(token_client(role), BRIEF_BODY).status_code == 403
        assert WorkloadBrief.objects.count() == 0


class TestBriefReadAndUpdate:
    def test_list_shows_only_my_teams_briefs(self, platform_api, team, other_team):
        mine = BriefFactory(team=team)
        BriefFactory(team=other_team)
        body = platform_api.get("/api/v1/briefs/").json()
        assert [b["id"] for b in body["results"]] == [mine.pk]

    def test_another_teams_brief_is_404(self, platform_api, other_team):
        theirs = BriefFactory(team=other_team)
        assert platform_api.get(f"/api/v1/briefs/{theirs.pk}/").status_code == 404
        assert platform_api.get(f"/api/v1/briefs/{theirs.pk}/estimate").status_code == 404

    def test_patch_changes_the_brief_and_bumps_its_version(self, platform_api, team):
        brief = BriefFactory(team=team)
        response = platform_api.patch(
            f"/api/v1/briefs/{brief.pk}/",
            json.dumps({"concurrency": 64}),
            content_type="application/json",
        )
        assert response.status_code == 200
        assert response.json()["concurrency"] == 64
        assert response.json()["inputs_version"] == 2

    @pytest.mark.parametrize(
        ("change", "missing"),
        [
            ({"output_tokens": {"p95": 900}}, "output_tokens.p50"),
            ({"input_tokens": {}}, "input_tokens.p50"),
        ],
    )
    def test_a_patch_sends_a_nested_object_whole(self, platform_api, team, change, missing):
        """The object replaces the stored one: without its required fields it would leave the
        brief without them (the schema's one component for POST and PATCH says so too)."""
        brief = BriefFactory(team=team)
        before = (brief.output_tokens_p50, brief.input_tokens_p50, brief.inputs_version)
        response = platform_api.patch(
            f"/api/v1/briefs/{brief.pk}/", json.dumps(change), content_type="application/json"
        )
        assert response.status_code == 400
        assert response.json()["detail"] == f"{missing}: This field is required."
        brief.refresh_from_db()
        assert (brief.output_tokens_p50, brief.input_tokens_p50, brief.inputs_version) == before

    def test_a_patch_may_replace_a_nested_object(self, platform_api, team):
        brief = BriefFactory(team=team)
        response = platform_api.patch(
            f"/api/v1/briefs/{brief.pk}/",
            json.dumps({"output_tokens": {"p50": 300, "p95": 900}}),
            content_type="application/json",
        )
        assert response.status_code == 200
        assert response.json()["output_tokens"] == {"p50": 300, "p95": 900}

    def test_estimate_of_a_stored_brief_matches_the_stateless_estimate(self, platform_api, team):
        brief_id = post(platform_api, BRIEF_BODY).json()["id"]
        stored = platform_api.get(f"/api/v1/briefs/{brief_id}/estimate").json()["estimates"]
        body = {k: v for k, v in BRIEF_BODY.items() if k not in ("gpus", "gpu_count")}
        stateless = post(platform_api, body, "/api/v1/estimate").json()["estimates"]
        assert stored == stateless
        assert len(stored) == 31
        assert all(e["fits"] is (e["fit"] != "NO") for e in stored)

    def test_estimate_of_an_incomplete_brief_names_what_the_engine_needs(self, platform_api):
        body = {"name": "idea", "workload_type": "REALTIME_INFERENCE"}
        brief_id = post(platform_api, body).json()["id"]
        response = platform_api.get(f"/api/v1/briefs/{brief_id}/estimate")
        assert response.status_code == 409  # the request is fine; the brief is not ready
        assert response.json()["field"] == "model"


class TestBriefModelMatchesWorkload:
    @pytest.mark.parametrize(
        ("workload_type", "preset"),
        [("TRAINING", "sdxl"), ("IMAGE_GENERATION", "llama-3.1-8b")],
    )
    def test_a_model_of_the_wrong_kind_is_refused_on_create(
        self, platform_api, workload_type, preset
    ):
        body = {"name": "x", "workload_type": workload_type, "model": {"preset": preset}}
        response = post(platform_api, body)
        assert response.status_code == 400
        assert response.json()["detail"].startswith("model.preset:")  # where the body has it
        assert WorkloadBrief.objects.count() == 0

    def test_and_on_update(self, platform_api, team):
        brief = BriefFactory(team=team)
        response = platform_api.patch(
            f"/api/v1/briefs/{brief.pk}/",
            json.dumps({"workload_type": "VIDEO_GENERATION"}),
            content_type="application/json",
        )
        assert response.status_code == 400
        brief.refresh_from_db()
        assert brief.workload_type == "REALTIME_INFERENCE"

    def test_names_are_measured_before_trimming(self, platform_api):
        response = post(platform_api, {"name": " " + "x" * 200, "workload_type": "TRAINING"})
        assert response.status_code == 400
        assert response.json()["detail"].startswith("name:")
