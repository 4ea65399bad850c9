"""The first pages: catalog and briefs, behind login, by role, with field-level errors."""

import re
from decimal import Decimal

import pytest

from apps.briefs.models import WorkloadBrief
from apps.core.roles import Role
from apps.finance.models import CandidateTable
from tests.factories.briefs import BriefFactory

pytestmark = pytest.mark.django_db

VALID_POST = {
    "name": "Chat assistant",
    "workload_type": "REALTIME_INFERENCE",
    "model_preset": "llama-3.1-8b",
    "weight_precision": "FP8",
    "kv_cache_precision": "FP8",
    "input_tokens_p50": "1000",
    "input_tokens_p95": "4000",
    "output_tokens_p50": "200",
    "output_tokens_p95": "800",
    "concurrency": "32",
    "success_unit": "TOKEN",
    "acceptance_rate": "95",  # the form takes a percentage (stored as 0.95)
    "latency_percentile": "P95",
    "ttft_target_ms": "500",
    "itl_target_ms": "50",
    "duty_cycle": "ALWAYS_ON",
    "hours_per_month": "730",
    "operating_boundary": "PUBLIC_CLOUD",
    "tooling": ["VLLM", "KUBERNETES"],
}


@pytest.fixture
def platform_client(client, platform_user, team):
    client.force_login(platform_user)
    return client


def post_data(team, **changes):
    return {**VALID_POST, "team": str(team.pk), **changes}


class TestLoginRequired:
    @pytest.mark.parametrize(
        "url",
        ["/", "/briefs/", "/briefs/new/", "/catalog/", "/catalog/l4-24gb/", "/account/tokens/"],
    )
    def test_pages_redirect_anonymous_users_to_login(self, client, url):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")

    def test_login_page_renders_with_csrf(self, client):
        response = client.get("/accounts/login/")
        assert response.status_code == 200
        assert b"csrfmiddlewaretoken" in response.content


class TestCatalogPages:
    def test_list_shows_every_gpu(self, catalog, platform_client):
        response = platform_client.get("/catalog/")
        assert response.status_code == 200
        assert len(response.context["gpus"]) == 31
        assert b"NVIDIA H200 SXM" in response.content

    def test_list_filters_by_vendor(self, catalog, platform_client):
        response = platform_client.get("/catalog/", {"vendor": "AMD"})
        assert [g.slug for g in response.context["gpus"]] == [
            "mi355x-288gb", "mi325x-256gb", "mi300x-192gb",
        ]  # fmt: skip

    def test_detail_shows_source_and_systems(self, catalog, platform_client):
        response = platform_client.get("/catalog/h100-sxm5-80gb/")
        assert b"NVIDIA H100 datasheet" in response.content
        assert b"NVIDIA HGX H100 8-GPU" in response.content

    def test_detail_says_which_memory_figure_the_engine_sizes_against(
        self, catalog, platform_client
    ):
        h100 = platform_client.get("/catalog/h100-sxm5-80gb/").content.decode()
        assert "81,559 MiB as the driver reports it" in h100
        b300 = platform_client.get("/catalog/b300-sxm-288gb/").content.decode()
        assert "no driver figure on file" in b300

    def test_unknown_gpu_is_404(self, catalog, platform_client):
        assert platform_client.get("/catalog/nope/").status_code == 404

    def test_the_list_names_architectures_in_words_and_figures_with_separators(
        self, catalog, platform_client
    ):
        html = platform_client.get("/catalog/").content.decode()
        text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))

        architectures = re.findall(r'<td class="architecture">([^<]*)</td>', html)
        assert architectures[:4] == ["CDNA 4", "CDNA 3", "CDNA 3", "Blackwell Ultra"]
        assert {"Ada Lovelace", "Hopper", "Ampere", "Blackwell"} <= set(architectures)
        assert "Cdna" not in text and "Blackwell_Ultra" not in text
        start = html.index("/catalog/mi355x-288gb/")
        mi355x = html[start : html.index("</tr>", start)]
        cells = re.findall(r'<td class="num">([^<]*)</td>', mi355x)
        assert cells == ["288", "8", "2,516", "5,033", "10,066"]
        assert re.findall(r'<td class="date">([^<]*)</td>', html)[0] == "2026-12-01"

    def test_the_detail_page_in_words_and_separated_figures(self, catalog, platform_client):
        html = platform_client.get("/catalog/mi355x-288gb/").content.decode()

        assert "AMD · CDNA 4" in html
        assert "288 GB HBM3E, 8 TB/s" in html
        assert "BF16 2,516 TFLOPS · FP8 5,033 TFLOPS · FP4 10,066 TFLOPS" in html
        assert "1,400 W" in html and "1,075 GB/s bidirectional" in html
        assert '(checked <span class="date">2026-12-01</span>)' in html


class TestBriefPages:
    def test_create_saves_and_redirects_to_detail(self, catalog, platform_client, team):
        response = platform_client.post("/briefs/new/", post_data(team))
        brief = WorkloadBrief.objects.get(name="Chat assistant")
        assert brief.acceptance_rate == Decimal("0.95")  # typed 95 (%)
        assert response.status_code == 302
        assert response["Location"] == f"/briefs/{brief.pk}/"
        assert brief.team == team
        assert brief.tooling == ["VLLM", "KUBERNETES"]
        assert brief.missing_fields() == []

    def test_creating_a_brief_computes_its_candidate_table_after_commit(
        self, catalog, platform_client, team, django_capture_on_commit_callbacks
    ):
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            platform_client.post("/briefs/new/", post_data(team))
        assert len(callbacks) == 1
        table = CandidateTable.objects.get(brief__name="Chat assistant")
        assert table.computed_at is not None
        assert not table.stale

    @pytest.mark.parametrize(
        ("changes", "field", "message"),
        [
            ({"acceptance_rate": "150"}, "acceptance_rate", "At most 100\u00a0%"),
            ({"input_tokens_p50": "-5"}, "input_tokens_p50", "greater than or equal to 0"),
            ({"model_preset": "gpt-99"}, "model_preset", "Select a valid choice"),
            ({"model_hf_config": "{not json"}, "model_hf_config", "Not valid JSON"),
            ({"hours_per_month": "900"}, "hours_per_month", "less than or equal to 744"),
            ({"name": ""}, "name", "This field is required"),
        ],
    )
    def test_bad_input_gets_a_field_level_error_and_saves_nothing(
        self, catalog, platform_client, team, changes, field, message
    ):
        response = platform_client.post("/briefs/new/", post_data(team, **changes))
        assert response.status_code == 200
        errors = response.context["form"].errors
        assert field in errors, errors
        assert any(message in e for e in errors[field]), errors[field]
        assert WorkloadBrief.objects.count() == 0

    def test_p95_below_p50_is_a_field_error_not_a_500(self, catalog, platform_client, team):
        response = platform_client.post(
            "/briefs/new/", post_data(team, input_tokens_p50="4000", input_tokens_p95="100")
        )
        assert response.status_code == 200
        assert response.context["form"].errors
        assert WorkloadBrief.objects.count() == 0

    def test_an_incomplete_brief_saves_and_says_what_is_missing(
        self, catalog, platform_client, team
    ):
        data = {"name": "Just an idea", "team": str(team.pk), "workload_type": "LORA_FINETUNE"}
        response = platform_client.post("/briefs/new/", data, follow=True)
        assert response.status_code == 200
        assert b"Still missing:" in response.content
        assert b"LoRA rank" in response.content
        assert b"Training tokens per run" in response.content

    def test_edit_changes_the_brief_and_bumps_its_inputs_version(
        self, catalog, platform_client, team
    ):
        brief = BriefFactory(team=team)
        data = post_data(team, name=brief.name, concurrency="64")
        response = platform_client.post(f"/briefs/{brief.pk}/edit/", data)
        assert response.status_code == 302
        brief.refresh_from_db()
        assert brief.concurrency == 64
        assert brief.inputs_version == 2

    def test_a_rejected_edit_changes_nothing(self, catalog, platform_client, team):
        brief = BriefFactory(team=team, concurrency=32)
        data = post_data(team, name=brief.name, concurrency="64", acceptance_rate="700")
        response = platform_client.post(f"/briefs/{brief.pk}/edit/", data)
        assert response.status_code == 200
        brief.refresh_from_db()
        assert brief.concurrency == 32
        assert brief.inputs_version == 1

    def test_finance_can_read_but_not_write_briefs(self, catalog, client, make_user, team):
        brief = BriefFactory(team=team)
        client.force_login(make_user(Role.FINANCE))
        assert client.get(f"/briefs/{brief.pk}/").status_code == 200
        assert client.get("/briefs/new/").status_code == 403
        assert client.post("/briefs/new/", post_data(team)).status_code == 403
        assert client.post(f"/briefs/{brief.pk}/edit/", post_data(team)).status_code == 403

    def test_another_teams_brief_is_404_and_not_listed(self, catalog, platform_client, other_team):
        theirs = BriefFactory(team=other_team)
        assert platform_client.get(f"/briefs/{theirs.pk}/").status_code == 404
        assert platform_client.get(f"/briefs/{theirs.pk}/edit/").status_code == 404
        assert theirs not in platform_client.get("/briefs/").context["briefs"]

    def test_a_brief_cannot_be_moved_to_a_team_the_user_is_not_in(
        self, catalog, platform_client, team, other_team
    ):
        response = platform_client.post("/briefs/new/", post_data(other_team))
        assert "team" in response.context["form"].errors
        assert WorkloadBrief.objects.count() == 0


class TestNavigation:
    def test_navigation_shows_the_sections(self, platform_client):
        response = platform_client.get("/briefs/")
        labels = [label for label, _ in response.context["nav_items"]]
        assert labels[:2] == ["Briefs", "GPU catalog"]
        assert "Admin" not in labels
