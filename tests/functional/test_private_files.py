"""Uploaded files are private: a benchmark run's raw file and a checklist answer's evidence
file are stored under random names, served only by views that check login and team, always as
an attachment of a type no browser renders, and never from a public /media/ route."""

import importlib
import re
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from django.urls import Resolver404, clear_url_caches, resolve

from apps.benchmarks import services as benchmark_services
from apps.catalog.models import Gpu
from apps.core.files import download_filename
from apps.core.roles import Role
from apps.decisions import services as decision_services
from apps.decisions.models import ChecklistAnswer
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import QuoteFactory

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parents[1] / "data" / "benchmarks"
VLLM_RAW = (DATA / "vllm_benchmark_serving_v0_6_4.json").read_bytes()
HOSTILE_HTML = b"<html><script>alert(document.cookie)</script></html>"
RANDOM_NAME = re.compile(r"^(benchmark-runs|checklist-evidence)/\d{4}/\d{2}/[0-9a-f]{32}$")


@pytest.fixture
def platform_user(make_user):
    return make_user(Role.PLATFORM, username="plat")


@pytest.fixture
def procurement_user(make_user):
    return make_user(Role.PROCUREMENT, username="proc")


@pytest.fixture
def run(catalog, team, platform_user):
    return benchmark_services.benchmark_runs_import(
        brief=BriefFactory(team=team),
        gpu=Gpu.objects.get(slug="h100-sxm5-80gb"),
        gpu_count=1,
        raw=VLLM_RAW,
        filename="C:\\results\\vllm run 1.json",
        created_by=platform_user,
    ).runs[0]


@pytest.fixture
def confidential_quote(catalog, team):
    return QuoteFactory(confidential_to=team, hourly_price_per_gpu=Decimal("2"))


@pytest.fixture
def evidence(confidential_quote, procurement_user, team):
    upload = SimpleUploadedFile("../../sla terms.html", HOSTILE_HTML, content_type="text/html")
    return decision_services.checklist_answer_set(
        quote=confidential_quote,
        question="co_sla",
        answer="YES",
        user=procurement_user,
        team=team,
        evidence_file=upload,
    )


def evidence_page_url(answer):
    url = f"/decisions/checklist/quotes/{answer.quote_id}/{answer.question}/evidence"
    return f"{url}?team={answer.team.slug}"


def evidence_api_url(answer):
    url = f"/api/v1/checklist/quotes/{answer.quote_id}/{answer.question}/evidence"
    return f"{url}?team={answer.team.slug}"


def assert_private_download(response, *, content, filename):
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == content
    assert response["Content-Type"] == "application/octet-stream"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Disposition"] == f'attachment; filename="{filename}"'
    assert "no-store" in response["Cache-Control"]


class TestStoredNames:
    def test_a_raw_file_is_stored_under_a_random_name_and_keeps_its_own(self, run):
        assert RANDOM_NAME.match(run.raw_file.name), run.raw_file.name
        assert run.raw_filename == "vllm_run_1.json"

    def test_an_evidence_file_is_stored_under_a_random_name_and_keeps_its_own(self, evidence):
        assert RANDOM_NAME.match(evidence.evidence_file.name), evidence.evidence_file.name
        assert evidence.evidence_filename == "sla_terms.html"

    def test_two_uploads_of_the_same_name_get_different_names(self, evidence, procurement_user):
        again = decision_services.checklist_answer_set(
            quote=evidence.quote,
            question="co_replacement",
            answer="YES",
            user=procurement_user,
            team=evidence.team,
            evidence_file=SimpleUploadedFile("../../sla terms.html", b"other"),
        )
        assert again.evidence_file.name != evidence.evidence_file.name

    @pytest.mark.parametrize(
        ("uploaded", "expected"),
        [
            ("report.json", "report.json"),
            ("../../etc/passwd", "passwd"),
            ("C:\\Users\\me\\run.json", "run.json"),
            ('a"b;c\r\nSet-Cookie: x.json', "abcSet-Cookie_x.json"),
            ("résultat.json", "résultat.json"),
            ("..", "fallback"),
            ("", "fallback"),
            ("x" * 300 + ".json", "x" * 95 + ".json"),
        ],
    )
    def test_the_download_name_is_sanitised(self, uploaded, expected):
        assert download_filename(uploaded, default="fallback") == expected


class TestRawFileDownload:
    def test_the_page_serves_it_as_an_attachment_no_browser_renders(
        self, client, platform_user, run
    ):
        client.force_login(platform_user)
        response = client.get(f"/benchmarks/{run.pk}/raw")
        assert_private_download(response, content=VLLM_RAW, filename="vllm_run_1.json")

    def test_the_api_links_to_its_own_download_which_a_token_opens(self, run, token_client):
        api = token_client(Role.PLATFORM)
        body = api.get(f"/api/v1/benchmark-runs/{run.pk}/").json()
        assert body["raw_file_url"] == f"/api/v1/benchmark-runs/{run.pk}/raw"
        response = api.get(body["raw_file_url"])
        assert_private_download(response, content=VLLM_RAW, filename="vllm_run_1.json")

    def test_anonymous_is_sent_to_sign_in_or_refused(self, client, run):
        page = client.get(f"/benchmarks/{run.pk}/raw")
        assert page.status_code == 302 and page["Location"].startswith("/accounts/login/")
        assert client.get(f"/api/v1/benchmark-runs/{run.pk}/raw").status_code in (401, 403)

    def test_another_team_gets_404(self, client, make_user, other_team, run, token_client):
        outsider = make_user(Role.PLATFORM, teams=[other_team])
        client.force_login(outsider)
        assert client.get(f"/benchmarks/{run.pk}/raw").status_code == 404
        api = token_client(user=outsider)
        assert api.get(f"/api/v1/benchmark-runs/{run.pk}/raw").status_code == 404

    def test_a_file_stored_before_names_were_kept_is_offered_under_its_stored_name(
        self, client, platform_user, run
    ):
        run.raw_filename = ""
        run.save(update_fields=["raw_filename"])
        client.force_login(platform_user)
        response = client.get(f"/benchmarks/{run.pk}/raw")
        stored = run.raw_file.name.rsplit("/", 1)[-1]
        assert response["Content-Disposition"] == f'attachment; filename="{stored}"'


class TestEvidenceDownload:
    def test_an_html_upload_is_served_as_octet_stream_attachment(self, client, make_user, evidence):
        client.force_login(make_user(Role.FINANCE))
        response = client.get(evidence_page_url(evidence))
        assert_private_download(response, content=HOSTILE_HTML, filename="sla_terms.html")

    def test_the_checklist_page_links_to_the_protected_view(
        self, client, procurement_user, evidence
    ):
        client.force_login(procurement_user)
        html = client.get(f"/decisions/checklist/quotes/{evidence.quote_id}/").content.decode()
        assert f'href="{evidence_page_url(evidence)}"' in html
        assert "/media/" not in html and evidence.evidence_file.name not in html

    def test_the_api_links_to_its_own_download_which_a_token_opens(self, evidence, token_client):
        api = token_client(Role.API_CLIENT)
        body = api.get(f"/api/v1/checklist/quotes/{evidence.quote_id}/").json()
        (item,) = [q for s in body["sections"] for q in s["questions"] if q["question"] == "co_sla"]
        assert item["evidence_file"] == "sla_terms.html"  # the uploaded name, not the storage's
        assert item["evidence_file_url"] == evidence_api_url(evidence)
        response = api.get(item["evidence_file_url"])
        assert_private_download(response, content=HOSTILE_HTML, filename="sla_terms.html")

    def test_anonymous_is_sent_to_sign_in_or_refused(self, client, evidence):
        page = client.get(evidence_page_url(evidence))
        assert page.status_code == 302 and page["Location"].startswith("/accounts/login/")
        assert client.get(evidence_api_url(evidence)).status_code in (401, 403)

    def test_another_team_gets_404_for_a_confidential_quotes_evidence(
        self, client, make_user, other_team, evidence, token_client
    ):
        outsider = make_user(Role.PROCUREMENT, teams=[other_team])
        client.force_login(outsider)
        assert client.get(evidence_page_url(evidence)).status_code == 404
        assert token_client(user=outsider).get(evidence_api_url(evidence)).status_code == 404

    @pytest.mark.parametrize("question", ["co_replacement", "no_such_question"])
    def test_an_answer_without_a_file_or_no_answer_is_404(
        self, client, procurement_user, evidence, question
    ):
        ChecklistAnswer.objects.create(
            quote=evidence.quote,
            question="co_replacement",
            answer="NO",
            answered_by=procurement_user,
            team=evidence.team,
        )
        client.force_login(procurement_user)
        url = f"/decisions/checklist/quotes/{evidence.quote_id}/{question}/evidence"
        assert client.get(url).status_code == 404


@pytest.fixture
def urls_as_under_debug():
    """gpuselect.urls as imported with DEBUG on (where the static(MEDIA_URL) route was)."""
    import gpuselect.urls

    with override_settings(DEBUG=True):
        importlib.reload(gpuselect.urls)
        clear_url_caches()
        yield
    importlib.reload(gpuselect.urls)
    clear_url_caches()


class TestNoPublicMediaRoute:
    @pytest.mark.parametrize("debug", [False, True])
    def test_nothing_resolves_under_media(self, request, debug, evidence):
        if debug:
            request.getfixturevalue("urls_as_under_debug")
        with pytest.raises(Resolver404):
            resolve(f"/media/{evidence.evidence_file.name}")
