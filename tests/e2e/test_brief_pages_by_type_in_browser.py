"""A platform engineer reads a QLoRA brief by its time to train, and the brief form asks a
serving brief for no training fields. Screenshots at 1,440 px go to tests/e2e/screenshots/."""

from pathlib import Path

import pytest

from apps.core.roles import Role
from tests.functional.test_brief_pages_by_type import qlora_brief

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SHOTS = Path(__file__).resolve().parent / "screenshots"
WIDTH = 1440


def sign_in(page, live_server, username):
    page.set_viewport_size({"width": WIDTH, "height": 900})
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", "pw-for-tests")
    page.click("button[type=submit]")
    page.wait_for_url("**/")


def shot(page, name):
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def visible(page, field):
    return page.locator(f'[data-field="{field}"]').is_visible()


@pytest.fixture
def new_brief_form(page, live_server, catalog, make_user):
    """The new-brief form, open in the browser for a platform user."""
    make_user(Role.PLATFORM, username="pat")
    sign_in(page, live_server, "pat")
    page.goto(f"{live_server.url}/briefs/new/")


class TestBriefPagesByType:
    def test_the_qlora_brief_page_shows_time_to_train(
        self, page, live_server, catalog, make_user, team
    ):
        make_user(Role.PLATFORM, username="pat")
        brief = qlora_brief(team)
        sign_in(page, live_server, "pat")
        page.goto(f"{live_server.url}/briefs/{brief.pk}/")
        page.wait_for_selector("#fit-table")
        headers = page.locator("#fit-table thead th").all_inner_texts()
        assert "Time to train" in headers
        assert "Max concurrency" not in headers
        assert (
            " h" in page.locator("#fit-table tbody tr").first.locator(".time-to-train").inner_text()
        )
        assert "time to train" in page.inner_text("#best-fit")
        # The table fits the window: no sideways scrolling.
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
        shot(page, "brief-qlora")
        assert page.console_errors == []

    def test_the_form_hides_training_fields_for_a_serving_brief(self, page, new_brief_form):
        page.select_option("#id_workload_type", "REALTIME_INFERENCE")
        assert not visible(page, "training_tokens")
        assert not visible(page, "lora_rank")
        assert not page.locator('fieldset[data-group="Training and fine-tuning"]').is_visible()
        assert visible(page, "ttft_target_ms")
        assert (
            page.inner_text('label[for="id_ttft_target_ms"]') == "Time to first token target (ms)"
        )
        shot(page, "brief-form-serving")
        page.select_option("#id_workload_type", "QLORA_FINETUNE")
        assert visible(page, "training_tokens") and visible(page, "lora_rank")
        assert not visible(page, "ttft_target_ms")
        shot(page, "brief-form-qlora")
        assert page.console_errors == []

    def test_the_preset_list_offers_only_the_chosen_type_s_models(self, page, new_brief_form):
        offered = """() => [...document.querySelectorAll('#id_model_preset option')]
            .filter(o => o.value && !o.disabled && !o.hidden).map(o => o.value)"""
        page.select_option("#id_workload_type", "REALTIME_INFERENCE")
        page.select_option("#id_model_preset", "llama-3.1-8b")
        serving = page.evaluate(offered)
        assert "llama-3.1-8b" in serving and "sdxl" not in serving
        page.select_option("#id_workload_type", "IMAGE_GENERATION")
        assert sorted(page.evaluate(offered)) == ["flux.1-dev", "sdxl"]
        # the language model chosen before is no longer the choice
        assert page.eval_on_selector("#id_model_preset", "s => s.value") == ""
        assert page.console_errors == []

    def test_the_tooling_list_offers_only_the_chosen_type_s_tools(self, page, new_brief_form):
        page.select_option("#id_workload_type", "REALTIME_INFERENCE")
        vllm = page.locator('input[name="tooling"][value="VLLM"]')
        comfy = page.locator('input[name="tooling"][value="COMFYUI"]')
        assert vllm.is_visible() and not comfy.is_visible()
        vllm.check()
        page.select_option("#id_workload_type", "IMAGE_GENERATION")
        assert comfy.is_visible() and not vllm.is_visible()
        assert page.get_by_text("vLLM", exact=True).is_hidden()
        # a tool of the other type is not sent
        assert not vllm.is_checked()
        assert page.console_errors == []
