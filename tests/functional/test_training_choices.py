"""The brief's new optimizer choices, and a weight precision left blank ("as the checkpoint
ships"), through the API, the form and the brief page."""

import json
from pathlib import Path

import pytest

from apps.briefs.contract import estimate_body_for_brief
from apps.briefs.models import WorkloadBrief
from apps.core.roles import Role
from apps.engine import PRESETS, parse_estimate_request
from tests.factories.briefs import BriefFactory

from .test_brief_api import BRIEF_BODY
from .test_pages import post_data

pytestmark = pytest.mark.django_db

HF_CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
GPT_OSS_20B = json.loads((HF_CONFIGS / "gpt-oss-20b.json").read_text())

QLORA_BODY = {
    "name": "Guanaco-style QLoRA",
    "workload_type": "QLORA_FINETUNE",
    "model": {"preset": "llama-3.1-70b"},
    "training": {
        "tokens": 10_000_000,
        "sequence_length": 512,
        "global_batch_tokens": 8192,
        "sharding": "NONE",
        "activation_checkpointing": True,
        "lora_rank": 64,
        "checkpoint_interval_minutes": 60,
    },
    "success_unit": "TRAINING_RUN",
    "acceptance_rate": 1,
    "duty_cycle": "EXPERIMENTAL",
    "hours_per_month": 100,
    "operating_boundary": "PUBLIC_CLOUD",
}


@pytest.fixture
def platform_api(catalog, token_client):
    return token_client(Role.PLATFORM)


@pytest.fixture
def platform_client(client, platform_user, team):
    client.force_login(platform_user)
    return client


def post(api, body, url="/api/v1/briefs/"):
    return api.post(url, json.dumps(body), content_type="application/json")


class TestOptimizerChoices:
    @pytest.mark.parametrize(
        "optimizer", ["ADAMW_8BIT", "PAGED_ADAMW_8BIT", "PAGED_ADAMW", "ADAFACTOR", "SGD"]
    )
    def test_the_api_stores_and_estimates_the_new_optimizers(self, platform_api, optimizer):
        body = {**QLORA_BODY, "training": {**QLORA_BODY["training"], "optimizer": optimizer}}
        response = post(platform_api, body)
        assert response.status_code == 201, response.json()
        assert response.json()["training"]["optimizer"] == optimizer
        assert response.json()["complete"] is True
        brief = WorkloadBrief.objects.get(pk=response.json()["id"])
        assert brief.optimizer == optimizer
        request = parse_estimate_request(estimate_body_for_brief(brief), known_gpus=())
        assert request.training is not None and request.training.optimizer == optimizer

    def test_an_unknown_optimizer_is_a_400_naming_the_field(self, platform_api):
        body = {**QLORA_BODY, "training": {**QLORA_BODY["training"], "optimizer": "ADAM_4BIT"}}
        response = post(platform_api, body)
        assert response.status_code == 400
        assert response.json()["detail"].startswith("training"), response.json()
        assert WorkloadBrief.objects.count() == 0

    def test_the_estimate_api_takes_a_paged_8bit_optimizer(self, catalog, token_client):
        body = {
            "workload_type": "QLORA_FINETUNE",
            "model": {"preset": "llama-3.1-70b"},
            "training": {"sequence_length": 512, "lora_rank": 64, "optimizer": "PAGED_ADAMW_8BIT"},
            "gpus": ["l40s-48gb"],
            "gpu_count": 1,
        }
        response = token_client().post(
            "/api/v1/estimate", json.dumps(body), content_type="application/json"
        )
        assert response.status_code == 200, response.json()
        notes = " ".join(response.json()["estimates"][0]["notes"])
        assert "paged optimizer" in notes

    def test_the_schema_lists_the_new_optimizers(self):
        schema = (Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml").read_text()
        for value in ("ADAMW_8BIT", "PAGED_ADAMW_8BIT", "PAGED_ADAMW"):
            assert f"- {value}\n" in schema


class TestBlankWeightPrecision:
    def test_a_brief_without_weight_precision_is_complete(self, platform_api):
        body = {k: v for k, v in BRIEF_BODY.items() if k != "weight_precision"}
        response = post(platform_api, body)
        assert response.status_code == 201, response.json()
        assert response.json()["complete"] is True
        assert response.json()["weight_precision"] == ""

    def test_blank_is_accepted_and_clears_a_stored_precision(self, platform_api, team):
        brief = BriefFactory(team=team, weight_precision="FP8")
        response = platform_api.patch(
            f"/api/v1/briefs/{brief.pk}/",
            json.dumps({"weight_precision": ""}),
            content_type="application/json",
        )
        assert response.status_code == 200, response.json()
        brief.refresh_from_db()
        assert brief.weight_precision == ""

    def test_a_blank_precision_is_sized_as_the_checkpoint_ships(self, team):
        brief = BriefFactory(team=team, model_preset="", model_hf_config=GPT_OSS_20B)
        brief.weight_precision = ""
        body = estimate_body_for_brief(brief)
        assert "weight_precision" not in body
        request = parse_estimate_request(body, known_gpus=())
        assert request.weight_precision == "FP4"  # gpt-oss ships MXFP4 experts
        assert not any("overrides" in n for n in request.model.notes)

    def test_a_chosen_precision_still_overrides_the_checkpoint(self, team):
        brief = BriefFactory(team=team, model_preset="", model_hf_config=GPT_OSS_20B)
        request = parse_estimate_request(estimate_body_for_brief(brief), known_gpus=())
        assert request.weight_precision == "FP8"
        assert any("overrides" in n for n in request.model.notes)

    def test_a_preset_without_a_dtype_defaults_to_bf16_and_says_so(self, team):
        assert PRESETS["llama-3.1-8b"].native_precision is None
        brief = BriefFactory(team=team, weight_precision="")
        request = parse_estimate_request(estimate_body_for_brief(brief), known_gpus=())
        assert request.weight_precision == "BF16"
        assert any("sized at BF16 (the default)" in n for n in request.model.notes)

    def test_the_form_saves_a_blank_precision_as_complete(self, catalog, platform_client, team):
        response = platform_client.post("/briefs/new/", post_data(team, weight_precision=""))
        assert response.status_code == 302
        brief = WorkloadBrief.objects.get(name="Chat assistant")
        assert brief.weight_precision == ""
        assert brief.missing_fields() == []

    def test_the_brief_page_shows_the_precision_used(self, catalog, platform_client, team):
        brief = BriefFactory(
            team=team, model_preset="", model_hf_config=GPT_OSS_20B, weight_precision=""
        )
        response = platform_client.get(f"/briefs/{brief.pk}/")
        assert response.status_code == 200
        html = response.content.decode()
        start = html.index('id="weight-precision"')
        shown = html[start : html.index("</dd>", start)]
        assert "Weights: FP4 (from the config&#x27;s quantization_config" in shown

    def test_the_brief_page_shows_the_bf16_default_for_a_preset(
        self, catalog, platform_client, team
    ):
        brief = BriefFactory(team=team, weight_precision="")
        response = platform_client.get(f"/briefs/{brief.pk}/")
        html = response.content.decode()
        start = html.index('id="weight-precision"')
        shown = html[start : html.index("</dd>", start)]
        assert "Weights: BF16 (the default" in shown
