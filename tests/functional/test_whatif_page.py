"""The what-if calculator page: behind login, open to every role, saving only for the roles
that write briefs; its script's calls (the estimate, its sweeps, the save) are answered for a
signed-in session with the page's CSRF token and refused without it."""

import json
import re

import pytest
from rest_framework.test import APIClient

from apps.briefs.models import WorkloadBrief
from apps.briefs.whatif import CONTEXT_GPU_COUNTS, LEADING_GPUS, SWEEP_CONCURRENCIES
from apps.catalog.models import Gpu
from apps.core.roles import Role
from apps.engine import PRESETS
from apps.engine.types import ModelKind
from tests.factories.core import TeamFactory, UserFactory

pytestmark = pytest.mark.django_db

URL = "/briefs/what-if/"
ROLES = (Role.PLATFORM, Role.FINANCE, Role.PROCUREMENT, Role.API_CLIENT)
# The body the page's script posts for its first answer (apps.briefs.whatif.DEFAULTS).
FIRST_BODY = {
    "workload_type": "REALTIME_INFERENCE",
    "kv_cache_precision": "FP8",
    "model": {"preset": "llama-3.1-8b"},
    "weight_precision": "FP8",
    "input_tokens": {"p50": 1000, "p95": 1000},
    "output_tokens": {"p50": 200, "p95": 200},
    "concurrency": 32,
    "latency_target": {"ttft_p95_ms": 500, "itl_p95_ms": 50},
}


def setup_of(response) -> dict:
    found = re.search(
        rb'<script id="whatif-setup" type="application/json">(.*?)</script>', response.content
    )
    assert found, "the page carries its setup as a json_script block"
    return json.loads(found.group(1))


def session(user) -> tuple[APIClient, str]:
    """A browser-like client: signed in, CSRF enforced, with the token the page hands out."""
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    page = client.get(URL)
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.content)
    assert token
    return client, token.group(1).decode()


def post(client, url, body, token=None):
    headers = {"HTTP_X_CSRFTOKEN": token} if token else {}
    return client.post(url, json.dumps(body), content_type="application/json", **headers)


class TestWhoMayOpenIt:
    def test_anonymous_visitors_are_sent_to_sign_in(self, client):
        response = client.get(URL)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")

    @pytest.mark.parametrize("role", ROLES)
    def test_every_role_may_use_it(self, catalog, client, team, role):
        client.force_login(UserFactory(roles=[role], teams=[team]))
        response = client.get(URL)
        assert response.status_code == 200
        assert b'id="whatif-form"' in response.content
        saves = b'id="wi-save-button"' in response.content
        assert saves is (role == Role.PLATFORM)
        assert setup_of(response)["can_save"] is (role == Role.PLATFORM)
        if role != Role.PLATFORM:
            assert b"Only the platform role saves briefs" in response.content

    def test_a_superuser_may_save(self, catalog, client, team):
        client.force_login(UserFactory(is_superuser=True, is_staff=True))
        assert b'id="wi-save-button"' in client.get(URL).content

    def test_it_is_read_only(self, catalog, client, platform_user):
        client.force_login(platform_user)
        assert client.post(URL, {}).status_code == 405

    def test_the_navigation_links_to_it(self, catalog, client, finance_user):
        client.force_login(finance_user)
        assert b'href="/briefs/what-if/">What-if</a>' in client.get("/briefs/").content


class TestWhatThePageOffers:
    @pytest.fixture
    def page(self, catalog, client, platform_user):
        client.force_login(platform_user)
        return client.get(URL)

    def test_only_models_that_serve_tokens_are_offered(self, page):
        offered = set(re.findall(rb'<option value="([^"]+)"', page.content))
        decoders = {s.encode() for s, spec in PRESETS.items() if spec.kind is ModelKind.DECODER}
        assert decoders <= offered
        assert b"sdxl" not in offered and b"bge-large-en-v1.5" not in offered

    def test_presets_read_by_name_with_their_size(self, page):
        assert b">Llama 3.1 8B (8.0 B)</option>" in page.content
        assert b">DeepSeek-R1 (671 B)</option>" in page.content

    def test_the_setup_names_every_gpu_and_the_sweeps(self, page):
        setup = setup_of(page)
        assert set(setup["names"]) == set(Gpu.objects.values_list("slug", flat=True))
        assert setup["names"]["h100-sxm5-80gb"] == "NVIDIA H100 SXM5"
        assert setup["short_names"]["h100-sxm5-80gb"] == "H100 SXM5"
        assert setup["sweep"] == [1, 2, 4, 8, 16, 32, 64, 128, 256] == list(SWEEP_CONCURRENCIES)
        assert setup["counts"] == [1, 2, 4, 8, 16] == list(CONTEXT_GPU_COUNTS)
        assert setup["leading"] == LEADING_GPUS
        assert setup["windows"]["llama-3.1-8b"] == 131072
        assert setup["urls"] == {
            "estimate": "/api/v1/estimate",
            "briefs": "/api/v1/briefs/",
            "brief": "/briefs/{id}/",
            "gpu": "/catalog/{slug}/",
        }

    def test_the_labels_are_words_with_units(self, page):
        text = page.content.decode()
        for label in (
            "Prompt (tokens)",
            "Output (tokens)",
            "Concurrent requests at the busiest time",
            "Time to first token (ms)",
            "Inter-token latency (ms)",
            "As the checkpoint ships",
            "Real-time inference",
        ):
            assert label in text, label
        assert "REALTIME_INFERENCE</option>" not in text

    def test_no_inline_script_or_style(self, page):
        html = page.content.decode()
        for tag in re.findall(r"<script\b[^>]*>", html):
            assert "src=" in tag or 'type="application/json"' in tag, tag
        assert " style=" not in html
        assert "unsafe-inline" not in page["Content-Security-Policy"]
        assert '<script src="/static/js/whatif.js"' in html
        assert 'href="/static/css/whatif.css"' in html


class TestTheScriptsCalls:
    def test_the_first_answer_covers_every_gpu(self, catalog, platform_user):
        client, token = session(platform_user)
        response = post(client, "/api/v1/estimate", FIRST_BODY, token)
        assert response.status_code == 200
        assert len(response.json()["estimates"]) == Gpu.objects.count()

    def test_the_sweeps_answer_the_leading_gpus_at_each_point(self, catalog, finance_user):
        client, token = session(finance_user)
        leading = ["h100-sxm5-80gb", "h200-sxm-141gb"]
        base = {k: v for k, v in FIRST_BODY.items() if k != "latency_target"}
        for conc in SWEEP_CONCURRENCIES:
            answer = post(
                client, "/api/v1/estimate", {**base, "concurrency": conc, "gpus": leading}, token
            )
            assert answer.status_code == 200
            assert [e["gpu"] for e in answer.json()["estimates"]] == leading
            assert all(e["meets_latency_target"] is None for e in answer.json()["estimates"])
        contexts = []
        for count in CONTEXT_GPU_COUNTS:
            answer = post(
                client, "/api/v1/estimate", {**base, "gpu_count": count, "gpus": leading}, token
            )
            assert answer.status_code == 200
            h100 = answer.json()["estimates"][0]
            assert h100["gpu_count"] == count
            contexts.append(h100["max_context_tokens"])
        assert contexts == sorted(contexts)  # more GPUs never hold a shorter context

    def test_without_the_csrf_token_the_session_is_refused(self, catalog, platform_user):
        client, _ = session(platform_user)
        assert post(client, "/api/v1/estimate", FIRST_BODY).status_code == 403

    def test_a_bad_input_is_a_400_naming_the_field(self, catalog, platform_user):
        client, token = session(platform_user)
        body = {**FIRST_BODY, "model": {"hf_config": {"model_type": "llama"}}}
        response = post(client, "/api/v1/estimate", body, token)
        assert response.status_code == 400
        assert response.json()["field"].startswith("model.hf_config")


class TestSaveAsBrief:
    def test_the_inputs_become_a_brief_in_the_users_team(self, catalog, platform_user, team):
        client, token = session(platform_user)
        response = post(
            client,
            "/api/v1/briefs/",
            {**FIRST_BODY, "name": "From the calculator", "team": team.pk},
            token,
        )
        assert response.status_code == 201, response.content
        brief = WorkloadBrief.objects.get(pk=response.json()["id"])
        assert (brief.name, brief.team, brief.model_preset) == (
            "From the calculator",
            team,
            "llama-3.1-8b",
        )
        assert (brief.input_tokens_p50, brief.input_tokens_p95, brief.concurrency) == (
            1000,
            1000,
            32,
        )
        assert (brief.ttft_target_ms, brief.itl_target_ms) == (500, 50)

    def test_a_role_that_does_not_write_briefs_is_refused(self, catalog, finance_user, team):
        client, token = session(finance_user)
        response = post(
            client, "/api/v1/briefs/", {**FIRST_BODY, "name": "x", "team": team.pk}, token
        )
        assert response.status_code == 403
        assert not WorkloadBrief.objects.exists()

    def test_a_prompt_beyond_the_models_window_is_refused_by_field(self, catalog, platform_user):
        client, token = session(platform_user)
        body = {**FIRST_BODY, "name": "too long", "input_tokens": {"p50": 200_000, "p95": 200_000}}
        response = post(client, "/api/v1/briefs/", body, token)
        assert response.status_code == 400
        assert "input_tokens" in response.json()["errors"]
        assert not WorkloadBrief.objects.exists()

    def test_another_teams_id_is_refused(self, catalog, platform_user):
        client, token = session(platform_user)
        elsewhere = TeamFactory(slug="elsewhere")
        body = {**FIRST_BODY, "name": "x", "team": elsewhere.pk}
        response = post(client, "/api/v1/briefs/", body, token)
        assert response.status_code == 400
        assert "team" in response.json()["errors"]
        assert not WorkloadBrief.objects.exists()

    def test_the_team_choice_lists_only_the_users_teams(self, catalog, client, make_user, team):
        second = TeamFactory(name="Research", slug="research")
        TeamFactory(name="Not mine", slug="not-mine")
        client.force_login(make_user(Role.PLATFORM, teams=[team, second]))
        html = client.get(URL).content.decode()
        assert f'<option value="{team.pk}">ML Platform</option>' in html
        assert f'<option value="{second.pk}">Research</option>' in html
        assert "Not mine" not in html
