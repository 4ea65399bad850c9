"""The estimate's top-level `model` summary, ModelOpt's hf_quant_config.json on the API and
the brief page, and a `layout` asked for (issue 25)."""

import json
from pathlib import Path

import pytest
from django.test import Client

from apps.briefs.models import WorkloadBrief

pytestmark = pytest.mark.django_db

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"


def config_text(name: str) -> str:
    return (CONFIGS / f"{name}.json").read_text()


@pytest.fixture
def api(catalog, token_client):
    return token_client()


def post(api, body):
    return api.post("/api/v1/estimate", json.dumps(body), content_type="application/json")


def body(model, **extra):
    return {
        "workload_type": "BATCH_INFERENCE",
        "model": model,
        "input_tokens": {"p50": 1000},
        "output_tokens": {"p50": 1000},
        "gpus": ["h100-sxm5-80gb"],
        **extra,
    }


class TestModelSummary:
    def test_the_response_says_how_the_model_was_read(self, api):
        response = post(api, body({"preset": "gpt-oss-120b"}, weight_precision="FP4"))
        assert response.status_code == 200, response.content[:300]
        model = response.json()["model"]
        assert model["total_params_billion"] == pytest.approx(116.8, abs=0.1)
        assert model["active_params_billion"] == pytest.approx(5.13, abs=0.01)
        assert "input embedding lookup excluded" in model["active_params_convention"]
        assert model["weights_by_tensor_group"]["routed experts"] == "FP4"
        assert model["weights_by_tensor_group"]["attention"] == "BF16"
        assert model["attention_layers"] == {"full attention": 18, "windowed attention": 18}
        assert model["kv_bytes_per_token"] == 18 * 2 * 8 * 64 * 2

    def test_a_modelopt_fp8_checkpoint_is_sized_from_its_hf_quant_config(self, api):
        model = {
            "hf_config": json.loads(config_text("llama-3.1-70b-instruct-fp8")),
            "hf_quant_config": json.loads(
                config_text("llama-3.1-70b-instruct-fp8.hf_quant_config")
            ),
        }
        response = post(api, body(model))
        assert response.status_code == 200, response.content[:300]
        assert response.json()["model"]["weight_precision"] == "FP8"
        assert response.json()["model"]["weights_gb"] == pytest.approx(72.7, abs=0.3)

    def test_a_config_with_an_infinity_literal_is_estimated(self, api):
        text = '{"workload_type": "BATCH_INFERENCE", "model": {"hf_config": '
        text += config_text("nemotron-h-56b-base-8k")
        text += '}, "input_tokens": {"p50": 1000}, "output_tokens": {"p50": 200}}'
        response = api.post("/api/v1/estimate", text, content_type="application/json")
        assert response.status_code == 200, response.content[:300]
        assert response.json()["model"]["total_params_billion"] == pytest.approx(56.3, abs=0.1)

    def test_a_layout_asked_for_is_the_one_answered(self, api):
        response = post(
            api, body({"preset": "qwen3-30b-a3b"}, layout="DP2xTP4", gpus=["h100-sxm5-80gb"])
        )
        assert response.status_code == 200, response.content[:300]
        (e,) = response.json()["estimates"]
        assert (e["layout"], e["gpu_count"]) == ("DP2xTP4", 8)

    def test_a_layout_the_model_cannot_use_is_a_400_naming_layout(self, api):
        response = post(api, body({"preset": "llama-3.1-8b"}, layout="DEP8"))
        assert response.status_code == 400
        assert response.json()["field"] == "layout"


class TestBriefPagePastedTogether:
    def test_config_and_hf_quant_config_pasted_together_are_kept_apart(
        self, catalog, team, platform_user
    ):
        browser = Client(raise_request_exception=False)
        browser.force_login(platform_user)
        pasted = config_text("llama-3.1-70b-instruct-fp8") + "\n"
        pasted += config_text("llama-3.1-70b-instruct-fp8.hf_quant_config")
        response = browser.post(
            "/briefs/new/",
            {
                "name": "modelopt",
                "team": team.pk,
                "workload_type": "BATCH_INFERENCE",
                "model_hf_config": pasted,
                "kv_cache_precision": "FP8",
                "input_tokens_p50": 1000,
                "output_tokens_p50": 200,
            },
        )
        assert response.status_code == 302, response.context["form"].errors
        brief = WorkloadBrief.objects.get(name="modelopt")
        assert "hf_quant_config" not in brief.model_hf_config
        assert brief.model_hf_quant_config["quantization"]["quant_algo"] == "FP8"
