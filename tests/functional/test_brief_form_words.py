"""The brief form as a person fills it without the README (issue 27): presets by their names,
no language-model fields on a media brief, a diffusion-steps field, percentages typed as
percentages, what a ranking still needs marked and said after a save."""

import re
from decimal import Decimal

import pytest

from apps.briefs.forms import APPLIES, BriefForm, needed_by_type
from apps.briefs.models import WorkloadBrief
from apps.core.roles import Role
from apps.engine import types as engine
from tests.factories.briefs import BriefFactory

from .test_pages import post_data

pytestmark = pytest.mark.django_db

LLM_SHAPE = (
    "model_hf_config", "params_billion", "layers", "hidden_size", "attention_heads", "kv_heads",
    "head_dim", "vocab_size", "intermediate_size", "experts", "active_experts",
)  # fmt: skip


@pytest.fixture
def page(client, make_user, catalog):
    client.force_login(make_user(Role.PLATFORM))
    return client


def field_div(html: str, name: str) -> str:
    start = html.index(f'data-field="{name}"')
    return html[html.rindex("<div", 0, start) : html.index("</div>", start)]


class TestPresetsAndFields:
    def test_presets_are_offered_by_name_grouped_by_what_they_serve(self, team):
        form = BriefForm(teams=team.__class__.objects.all())
        groups = dict(form.fields["model_preset"].choices[1:])
        assert set(groups) == {
            "Language models", "Embedding models", "Image and video models (diffusion)",
        }  # fmt: skip
        assert ("llama-3.1-8b", "Llama 3.1 8B") in groups["Language models"]
        assert ("sdxl", "Stable Diffusion XL 1.0") in groups["Image and video models (diffusion)"]
        # Names, not slugs (gpt-oss is named by its slug on its own model card).
        named = [(s, n) for s, n in groups["Language models"] if not s.startswith("gpt-oss")]
        assert all(slug != name for slug, name in named)

    @pytest.mark.parametrize("workload", ["IMAGE_GENERATION", "VIDEO_GENERATION"])
    def test_a_media_brief_is_offered_no_language_model_fields(self, workload):
        for name in LLM_SHAPE:
            assert workload not in APPLIES[name], name
        for name in (
            "kv_cache_precision", "input_tokens_p50", "output_tokens_p95", "model_hf_config",
            "model_hf_quant_config",  # NVIDIA ModelOpt's file describes a language model
        ):  # fmt: skip
            assert workload not in APPLIES[name], name
        assert workload in APPLIES["diffusion_steps"]

    def test_the_diffusion_steps_are_saved_and_a_media_brief_drops_llm_numbers(self, page, team):
        data = post_data(
            team, workload_type="IMAGE_GENERATION", model_preset="sdxl", image_width="1024",
            image_height="1024", diffusion_steps="25", success_unit="IMAGE", layers="32",
            concurrency="4",
        )  # fmt: skip
        response = page.post("/briefs/new/", data)
        assert response.status_code == 302, response.context["form"].errors
        brief = WorkloadBrief.objects.get()
        assert brief.diffusion_steps == 25
        assert brief.layers is None  # hidden for images, emptied by the server too

    def test_too_many_diffusion_steps_is_a_field_error(self, page, team):
        data = post_data(
            team, workload_type="IMAGE_GENERATION", model_preset="sdxl", image_width="1024",
            image_height="1024", diffusion_steps="5000", success_unit="IMAGE",
        )  # fmt: skip
        response = page.post("/briefs/new/", data)
        assert "diffusion_steps" in response.context["form"].errors


class TestPercentages:
    def test_the_acceptance_rate_is_shown_as_a_percentage(self, page, team):
        brief = BriefFactory(team=team, acceptance_rate=Decimal("0.9"))
        html = page.get(f"/briefs/{brief.pk}/edit/").content.decode()
        box = field_div(html, "acceptance_rate")
        assert 'value="90"' in box and "Acceptance rate (%)" in box


class TestWhatARankingNeeds:
    def test_sharding_is_marked_needed_for_a_qlora_ranking(self):
        needed = needed_by_type()
        assert engine.WorkloadType.QLORA_FINETUNE in needed["sharding"]
        assert engine.WorkloadType.REALTIME_INFERENCE not in needed["sharding"]
        assert engine.WorkloadType.REALTIME_INFERENCE in needed["ttft_target_ms"]

    def test_the_form_marks_the_fields_a_ranking_needs(self, page):
        html = page.get("/briefs/new/").content.decode()
        sharding = field_div(html, "sharding")
        assert re.search(r'data-needed="[^"]*QLORA_FINETUNE', sharding)
        assert "needed for a ranking" in html

    def test_a_qlora_brief_saved_without_sharding_says_it_needs_it(self, page, team):
        data = {
            "name": "Guanaco-style QLoRA", "team": str(team.pk),
            "workload_type": "QLORA_FINETUNE", "model_preset": "llama-3.1-70b",
            "success_unit": "TRAINING_RUN", "acceptance_rate": "100", "duty_cycle": "EXPERIMENTAL",
            "hours_per_month": "100", "operating_boundary": "PUBLIC_CLOUD",
            "training_tokens": "10000000", "sequence_length": "512",
            "global_batch_tokens": "8192", "optimizer": "PAGED_ADAMW_8BIT", "lora_rank": "64",
            "checkpoint_interval_minutes": "60",
        }  # fmt: skip
        response = page.post("/briefs/new/", data, follow=True)
        shown = [str(m) for m in response.context["messages"]]
        assert shown == [
            "Brief “Guanaco-style QLoRA” saved. It produces no ranking until it has: Sharding."
        ]

    def test_a_complete_brief_is_confirmed(self, page, team):
        response = page.post("/briefs/new/", post_data(team), follow=True)
        shown = [str(m) for m in response.context["messages"]]
        assert shown == ["Brief “Chat assistant” saved; its candidate table is being recomputed."]
