"""Speculative decoding and the serving framework, end to end: the estimate API, the brief API,
the brief form and page (issue 13, items 5 and 6)."""

import json
from decimal import Decimal

import pytest

from apps.briefs.contract import estimate_body_for_brief
from apps.briefs.models import WorkloadBrief
from apps.core.roles import Role
from tests.factories.briefs import BriefFactory

from .test_brief_api import BRIEF_BODY
from .test_pages import post_data

pytestmark = pytest.mark.django_db

MTP = {"method": "MTP", "tokens": 1, "acceptance_rate": 0.8}
ESTIMATE = {
    "workload_type": "REALTIME_INFERENCE",
    "model": {"preset": "deepseek-r1"},
    "weight_precision": "FP8",
    "kv_cache_precision": "FP8",
    "input_tokens": {"p50": 1000},
    "output_tokens": {"p50": 1000},
    "concurrency": 1,
    "gpus": ["h200-sxm-141gb"],
    "gpu_count": 8,
}


@pytest.fixture
def api(catalog, token_client):
    return token_client(Role.PLATFORM)


def post(api, body, url="/api/v1/estimate"):
    return api.post(url, json.dumps(body), content_type="application/json")


class TestEstimateApi:
    def test_speculative_lowers_inter_token_latency_and_is_noted(self, api):
        plain = post(api, ESTIMATE)
        spec = post(api, {**ESTIMATE, "speculative": MTP})
        assert plain.status_code == spec.status_code == 200, spec.json()
        before, after = plain.json()["estimates"][0], spec.json()["estimates"][0]
        assert after["performance"]["itl_ms"] < before["performance"]["itl_ms"]
        notes = " ".join(after["notes"])
        assert "speculative decoding: multi-token prediction" in notes
        assert "speculative decoding" not in " ".join(before["notes"])

    @pytest.mark.parametrize(
        ("speculative", "field"),
        [
            ({"method": "MTP", "tokens": 1}, "speculative.acceptance_rate"),
            ({"method": "MTP", "tokens": 99, "acceptance_rate": 0.8}, "speculative.tokens"),
            ({"method": "guess", "tokens": 1, "acceptance_rate": 0.8}, "speculative.method"),
            ([1, 2], "speculative"),
        ],
    )
    def test_bad_speculative_is_a_400_naming_the_field(self, api, speculative, field):
        response = post(api, {**ESTIMATE, "speculative": speculative})
        assert response.status_code == 400
        assert response.json()["field"] == field

    def test_framework_sets_the_offline_batch_limit_and_a_bad_one_is_a_400(self, api):
        body = {
            "workload_type": "BATCH_INFERENCE",
            "model": {"preset": "llama-3.1-8b"},
            "weight_precision": "FP8",
            "input_tokens": {"p50": 128},
            "output_tokens": {"p50": 128},
            "gpus": ["b200-sxm-180gb"],
            "gpu_count": 1,
        }
        sglang = post(api, {**body, "framework": "SGLANG"})
        assert sglang.status_code == 200, sglang.json()
        notes = " ".join(sglang.json()["estimates"][0]["notes"])
        assert "SGLang's default --max-running-requests on this GPU is 2048" in notes
        bad = post(api, {**body, "framework": "ollama"})
        assert bad.status_code == 400
        assert bad.json()["field"] == "framework"


class TestBriefApi:
    def test_speculative_is_stored_and_read_back(self, api):
        response = post(api, {**BRIEF_BODY, "speculative": MTP}, "/api/v1/briefs/")
        assert response.status_code == 201, response.json()
        brief = WorkloadBrief.objects.get(pk=response.json()["id"])
        assert (brief.speculative_method, brief.speculative_tokens) == ("MTP", 1)
        assert brief.speculative_acceptance_rate == Decimal("0.8")
        assert response.json()["speculative"] == MTP
        assert estimate_body_for_brief(brief)["speculative"] == MTP

    def test_a_brief_without_speculative_reads_back_null(self, api):
        response = post(api, BRIEF_BODY, "/api/v1/briefs/")
        assert response.json()["speculative"] is None
        brief = WorkloadBrief.objects.get(pk=response.json()["id"])
        assert "speculative" not in estimate_body_for_brief(brief)

    @pytest.mark.parametrize(
        ("speculative", "field"),
        [
            ({"method": "MTP", "tokens": 1}, "acceptance_rate"),
            ({"method": "MTP", "tokens": 0, "acceptance_rate": 0.8}, "tokens"),
            ({"method": "MTP", "tokens": 1, "acceptance_rate": 1.5}, "acceptance_rate"),
            ({"method": "MEDUSA", "tokens": 1, "acceptance_rate": 0.8}, "method"),
        ],
    )
    def test_bad_speculative_is_a_400_and_saves_nothing(self, api, speculative, field):
        response = post(api, {**BRIEF_BODY, "speculative": speculative}, "/api/v1/briefs/")
        assert response.status_code == 400
        assert response.json()["detail"].startswith(f"speculative.{field}"), response.json()
        assert WorkloadBrief.objects.count() == 0

    def test_speculative_is_refused_for_training(self, api):
        body = {"name": "tune", "workload_type": "LORA_FINETUNE", "speculative": MTP}
        response = post(api, body, "/api/v1/briefs/")
        assert response.status_code == 400
        assert response.json()["detail"].startswith("speculative"), response.json()

    def test_patch_null_clears_speculative(self, api, team):
        brief = BriefFactory(
            team=team,
            speculative_method="EAGLE",
            speculative_tokens=3,
            speculative_acceptance_rate=Decimal("0.7"),
        )
        response = api.patch(
            f"/api/v1/briefs/{brief.pk}/",
            json.dumps({"speculative": None}),
            content_type="application/json",
        )
        assert response.status_code == 200, response.json()
        brief.refresh_from_db()
        assert (brief.speculative_method, brief.speculative_tokens) == ("", None)
        assert brief.speculative_acceptance_rate is None

    def test_framework_goes_first_in_the_tooling_and_into_the_estimate_body(self, api, team):
        brief = BriefFactory(team=team, tooling=["KUBERNETES", "VLLM"])
        response = api.patch(
            f"/api/v1/briefs/{brief.pk}/",
            json.dumps({"framework": "SGLANG"}),
            content_type="application/json",
        )
        assert response.status_code == 200, response.json()
        brief.refresh_from_db()
        assert brief.tooling == ["SGLANG", "KUBERNETES", "VLLM"]
        assert estimate_body_for_brief(brief)["framework"] == "SGLANG"

    def test_a_brief_naming_no_framework_sends_none(self, team):
        brief = BriefFactory(team=team, tooling=["KUBERNETES"])
        assert "framework" not in estimate_body_for_brief(brief)

    def test_the_brief_estimate_uses_its_speculative_field(self, api, team):
        brief = BriefFactory(
            team=team,
            speculative_method="MTP",
            speculative_tokens=2,
            speculative_acceptance_rate=Decimal("0.6"),
        )
        response = api.get(f"/api/v1/briefs/{brief.pk}/estimate")
        assert response.status_code == 200, response.json()
        notes = " ".join(response.json()["estimates"][0]["notes"])
        assert "2 tokens proposed per step at 60% acceptance" in notes


@pytest.fixture
def platform_client(client, platform_user, team):
    client.force_login(platform_user)
    return client


class TestBriefPages:
    def test_the_form_saves_speculative_and_the_page_shows_it(self, catalog, platform_client, team):
        data = post_data(
            team,
            speculative_method="MTP",
            speculative_tokens="1",
            speculative_acceptance_rate="80",  # a percentage on the form
        )
        response = platform_client.post("/briefs/new/", data)
        assert response.status_code == 302, response.context["form"].errors
        brief = WorkloadBrief.objects.get(name="Chat assistant")
        assert brief.speculative_method == "MTP"
        page = platform_client.get(f"/briefs/{brief.pk}/").content.decode()
        assert (
            "Multi-token prediction (the model&#x27;s MTP head), 1 token proposed per step" in page
        )
        assert "each accepted 80% of the time" in page

    def test_half_a_speculative_setting_is_a_field_error(self, catalog, platform_client, team):
        response = platform_client.post("/briefs/new/", post_data(team, speculative_method="EAGLE"))
        assert response.status_code == 200
        errors = response.context["form"].errors
        assert "speculative_tokens" in errors and "speculative_acceptance_rate" in errors
        assert WorkloadBrief.objects.count() == 0

    def test_a_brief_without_speculative_says_so(self, catalog, platform_client, team):
        brief = BriefFactory(team=team)
        page = platform_client.get(f"/briefs/{brief.pk}/").content.decode()
        assert "none (one token per step)" in page
