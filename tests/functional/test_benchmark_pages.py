"""Benchmark pages: runs of a brief with measured-vs-estimated charts, run detail with the
tool's own names, raw file download, the upload and by-hand forms, team scoping, and the
read-only admin."""

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.benchmarks import services
from apps.benchmarks.models import BenchmarkRun
from apps.catalog.models import Gpu
from apps.core.roles import Role
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ProviderFactory, QuoteFactory

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parents[1] / "data" / "benchmarks"
VLLM_RAW = (DATA / "vllm_benchmark_serving_v0_6_4.json").read_bytes()


@pytest.fixture
def brief(catalog, team):
    return BriefFactory(team=team)


@pytest.fixture
def platform_user(make_user):
    return make_user(Role.PLATFORM)


@pytest.fixture
def imported(brief, platform_user):
    return services.benchmark_runs_import(
        brief=brief,
        gpu=Gpu.objects.get(slug="h100-sxm5-80gb"),
        gpu_count=1,
        raw=VLLM_RAW,
        filename="vllm_result.json",
        created_by=platform_user,
    ).runs[0]


@pytest.fixture
def failure_ops_run(brief, platform_user):
    return services.benchmark_run_create_manual(
        brief=brief,
        gpu=Gpu.objects.get(slug="h100-sxm5-80gb"),
        gpu_count=1,
        phase="FAILURE_OPS",
        results={
            "checks": {
                "kill_worker": {"passed": True, "time_s": 12.5, "notes": "moved in 12 s"},
                "bad_deploy": {"passed": False, "time_s": None, "notes": "no rollback"},
            }
        },
        created_by=platform_user,
    )


class TestBriefRunsPage:
    def test_lists_runs_with_a_chart_per_metric(self, client, make_user, brief, imported):
        client.force_login(make_user(Role.FINANCE))
        response = client.get(f"/benchmarks/briefs/{brief.pk}/")
        assert response.status_code == 200
        assert response.context["runs"] == [imported]
        figures = response.context["figures"]
        assert [chart_id for chart_id, _, _ in figures] == ["tps-chart", "ttft-chart", "tpot-chart"]
        tps = figures[0][2]
        assert [trace["name"] for trace in tps["data"]] == ["Measured", "Estimated at import"]
        assert tps["data"][0]["y"] == [2000.0]
        assert tps["data"][1]["y"] == [imported.estimate_at_import["output_tokens_per_s"]]
        assert figures[1][2]["data"][0]["y"] == [72.25]  # TTFT p50
        assert figures[2][2]["data"][0]["y"] == [14.25]  # TPOT p50
        html = response.content.decode()
        assert 'data-figure="tps-chart-data"' in html
        assert '<script id="tps-chart-data" type="application/json">' in html
        assert "plotly-basic-" in html  # the chart script (templates/partials/plotly.html)
        assert b"Import a results file" not in response.content  # finance cannot write

    def test_a_run_on_a_quote_names_the_quote_in_words(self, client, platform_user, brief):
        quote = QuoteFactory(
            provider=ProviderFactory(name="Neocloud B"), region="us-east", pricing_term="SPOT"
        )
        run = services.benchmark_runs_import(
            brief=brief, gpu=quote.gpu, gpu_count=1, raw=VLLM_RAW, filename="vllm_result.json",
            created_by=platform_user, quote=quote,
        ).runs[0]  # fmt: skip
        client.force_login(platform_user)

        runs_page = client.get(f"/benchmarks/briefs/{brief.pk}/").content.decode()
        run_page = client.get(f"/benchmarks/{run.pk}/").content.decode()

        for html in (runs_page, run_page):
            assert "Neocloud B&#x27;s quote (Spot / preemptible, us-east)" in html
            assert f"quote #{quote.pk}" not in html

    def test_platform_sees_the_forms(self, client, platform_user, brief):
        client.force_login(platform_user)
        response = client.get(f"/benchmarks/briefs/{brief.pk}/")
        assert response.context["figures"] == []
        assert b"Import a results file" in response.content
        assert b"plotly-basic-" not in response.content

    def test_brief_detail_links_here(self, client, platform_user, brief):
        client.force_login(platform_user)
        response = client.get(f"/briefs/{brief.pk}/")
        assert f'href="/benchmarks/briefs/{brief.pk}/"'.encode() in response.content


class TestRunDetailPage:
    def test_results_with_tool_names_conditions_and_raw_link(self, client, platform_user, imported):
        client.force_login(platform_user)
        response = client.get(f"/benchmarks/{imported.pk}/")
        assert response.status_code == 200
        rows = {r["figure"]: r for r in response.context["rows"]}
        assert rows["ttft_ms.p99"]["value"] == 203.25
        assert rows["ttft_ms.p99"]["source"] == "vLLM: p99_ttft_ms (ms)"
        assert rows["goodput_rps"]["source"].startswith("vLLM: request_goodput:")
        assert (
            rows["output_tokens_per_s"]["estimated"]
            == (imported.estimate_at_import["output_tokens_per_s"])
        )
        html = response.content.decode()
        assert "p99_ttft_ms (ms)" in html
        assert f'href="/benchmarks/{imported.pk}/raw"' in html
        assert "max_concurrency" in html

    def test_figures_read_in_words_with_units_and_the_gpu_by_name(
        self, client, platform_user, imported
    ):
        client.force_login(platform_user)
        response = client.get(f"/benchmarks/{imported.pk}/")
        rows = {r["figure"]: r for r in response.context["rows"]}
        assert rows["ttft_ms.p99"]["words"] == "Time to first token, p99"
        assert rows["ttft_ms.p99"]["shown"] == "203\u00a0ms"
        assert rows["output_tokens_per_s"]["shown"] == "2,000\u00a0tokens/s"
        assert response.context["candidate"] == "1 \u00d7 NVIDIA H100 SXM5"
        html = response.content.decode()
        assert "h100-sxm5-80gb" not in html.split("<main>")[1].split('href="')[0]
        assert "CALIBRATED" not in html and "{'input_tokens'" not in html

    def test_the_chart_names_each_run_in_words(self, client, platform_user, brief, imported):
        client.force_login(platform_user)
        figures = client.get(f"/benchmarks/briefs/{brief.pk}/").context["figures"]
        label = figures[0][2]["data"][0]["x"][0]
        assert label.startswith(f"Run {imported.pk} · 1 \u00d7 NVIDIA H100 SXM5")
        assert "h100-sxm5-80gb" not in label
        assert figures[0][2]["layout"]["yaxis"]["title"]["text"] == "tokens/s"
        assert figures[0][2]["layout"]["yaxis"]["tickformat"] == ",~r"  # 4,000, not 4000

    def test_failure_ops_checks_in_order(self, client, platform_user, failure_ops_run):
        client.force_login(platform_user)
        response = client.get(f"/benchmarks/{failure_ops_run.pk}/")
        checks = response.context["checks"]
        assert [(c["name"], c["passed"]) for c in checks] == [
            ("Kill a worker", True),
            ("Bad deploy (roll back)", False),
        ]
        assert b"no rollback" in response.content

    def test_raw_download_is_the_file_as_imported(self, client, platform_user, imported):
        client.force_login(platform_user)
        response = client.get(f"/benchmarks/{imported.pk}/raw")
        assert response.status_code == 200
        assert b"".join(response.streaming_content) == VLLM_RAW
        assert response["Content-Disposition"].startswith("attachment;")

    def test_runs_entered_by_hand_have_no_raw_file(self, client, platform_user, failure_ops_run):
        client.force_login(platform_user)
        assert client.get(f"/benchmarks/{failure_ops_run.pk}/raw").status_code == 404

    @pytest.mark.parametrize("path", ["/benchmarks/{run}/", "/benchmarks/{run}/raw",
                                      "/benchmarks/briefs/{brief}/",
                                      "/benchmarks/briefs/{brief}/upload/"])  # fmt: skip
    def test_other_teams_get_404(self, client, make_user, other_team, imported, path):
        client.force_login(make_user(Role.PLATFORM, teams=[other_team]))
        url = path.format(run=imported.pk, brief=imported.brief_id)
        assert client.get(url).status_code == 404


class TestUploadPage:
    def test_platform_imports_a_file(self, client, platform_user, brief):
        client.force_login(platform_user)
        response = client.post(
            f"/benchmarks/briefs/{brief.pk}/upload/",
            {
                "file": SimpleUploadedFile("r.json", VLLM_RAW),
                "gpu": "h100-sxm5-80gb",
                "gpu_count": 1,
                "tool": "",
                "framework": "vllm",
            },
        )
        run = BenchmarkRun.objects.get()
        assert response.status_code == 302
        assert response["Location"] == f"/benchmarks/{run.pk}/"
        assert run.conditions["framework"] == "vllm"

    def test_a_sweep_redirects_to_the_list(self, client, platform_user, brief):
        client.force_login(platform_user)
        response = client.post(
            f"/benchmarks/briefs/{brief.pk}/upload/",
            {
                "file": SimpleUploadedFile("b.json", (DATA / "guidellm_v0_5.json").read_bytes()),
                "gpu": "h100-sxm5-80gb",
                "gpu_count": 1,
                "proxy": "on",  # a Qwen3 8B sweep on a Llama 3.1 8B brief
            },
        )
        assert response.status_code == 302
        assert response["Location"] == f"/benchmarks/briefs/{brief.pk}/"
        assert BenchmarkRun.objects.count() == 2

    def test_a_bad_file_shows_why_and_saves_nothing(self, client, platform_user, brief):
        client.force_login(platform_user)
        response = client.post(
            f"/benchmarks/briefs/{brief.pk}/upload/",
            {"file": SimpleUploadedFile("r.json", b"{\"completed\": 1"), "gpu": "h100-sxm5-80gb",
             "gpu_count": 1},
        )  # fmt: skip
        assert response.status_code == 400
        assert "truncated JSON" in response.context["form"].errors["file"][0]
        assert BenchmarkRun.objects.count() == 0

    def test_an_oversized_upload_is_refused_unread(self, client, platform_user, brief):
        client.force_login(platform_user)
        response = client.generic(
            "POST",
            f"/benchmarks/briefs/{brief.pk}/upload/",
            b"x" * 100,
            content_type="multipart/form-data; boundary=BoUnDaRy",
            CONTENT_LENGTH=str(200 * 1024 * 1024),
        )
        assert response.status_code == 400
        assert response.context["upload_error"].startswith("upload too large: 209715200 bytes")

    def test_the_csrf_check_still_applies(self, platform_user, brief):
        from django.test import Client

        client = Client(enforce_csrf_checks=True)
        client.force_login(platform_user)
        response = client.post(
            f"/benchmarks/briefs/{brief.pk}/upload/",
            {"file": SimpleUploadedFile("r.json", VLLM_RAW), "gpu": "h100-sxm5-80gb",
             "gpu_count": 1},
        )  # fmt: skip
        assert response.status_code == 403
        assert BenchmarkRun.objects.count() == 0

    def test_finance_cannot_upload(self, client, make_user, brief):
        client.force_login(make_user(Role.FINANCE))
        assert client.get(f"/benchmarks/briefs/{brief.pk}/upload/").status_code == 403
        assert client.get(f"/benchmarks/briefs/{brief.pk}/manual/").status_code == 403


class TestManualPage:
    def test_memory_fit_by_hand(self, client, platform_user, brief):
        client.force_login(platform_user)
        response = client.post(
            f"/benchmarks/briefs/{brief.pk}/manual/",
            {"phase": "MEMORY_FIT", "gpu": "h100-sxm5-80gb", "gpu_count": 1,
             "peak_memory_gb": "71.5", "oom_rate": "2", "headroom_gb": "8.5",
             "framework": "vllm", "concurrency": "32"},
        )  # fmt: skip
        run = BenchmarkRun.objects.get()
        assert response.status_code == 302
        # The OOM rate is typed as a percentage (2 means 2 %) and stored as a share.
        assert run.results == {"peak_memory_gb": 71.5, "oom_rate": 0.02, "headroom_gb": 8.5}
        assert run.conditions == {"framework": "vllm", "concurrency": 32}

    def test_failure_ops_by_hand(self, client, platform_user, brief):
        client.force_login(platform_user)
        client.post(
            f"/benchmarks/briefs/{brief.pk}/manual/",
            {"phase": "FAILURE_OPS", "gpu": "h100-sxm5-80gb", "gpu_count": 1,
             "kill_worker_result": "pass", "kill_worker_time_s": "12.5",
             "drain_node_result": "fail", "drain_node_notes": "pods stuck terminating"},
        )  # fmt: skip
        run = BenchmarkRun.objects.get()
        assert run.results["checks"] == {
            "kill_worker": {"passed": True, "time_s": 12.5, "notes": ""},
            "drain_node": {"passed": False, "time_s": None, "notes": "pods stuck terminating"},
        }

    def test_missing_memory_figure_is_shown_on_its_field(self, client, platform_user, brief):
        client.force_login(platform_user)
        response = client.post(
            f"/benchmarks/briefs/{brief.pk}/manual/",
            {"phase": "MEMORY_FIT", "gpu": "h100-sxm5-80gb", "gpu_count": 1, "oom_rate": "0",
             "headroom_gb": "1"},
        )  # fmt: skip
        assert response.status_code == 200
        assert response.context["form"].errors["peak_memory_gb"] == [
            "is required for a memory-fit run"
        ]
        assert BenchmarkRun.objects.count() == 0

    def test_no_checks_is_refused(self, client, platform_user, brief):
        client.force_login(platform_user)
        response = client.post(
            f"/benchmarks/briefs/{brief.pk}/manual/",
            {"phase": "FAILURE_OPS", "gpu": "h100-sxm5-80gb", "gpu_count": 1},
        )
        assert "give at least one check" in response.content.decode()
        assert BenchmarkRun.objects.count() == 0


class TestAdmin:
    def test_imported_runs_are_read_only(self, client, make_user, imported):
        admin = make_user(is_superuser=True, is_staff=True)
        client.force_login(admin)
        url = f"/admin/benchmarks/benchmarkrun/{imported.pk}/change/"
        page = client.get(url)
        assert page.status_code == 200
        assert b'name="_save"' not in page.content
        response = client.post(url, {"label": "edited", "gpu_count": 8})
        assert response.status_code == 403
        imported.refresh_from_db()
        assert imported.label == "vllm rate=8.0 concurrency=64"
        assert client.get("/admin/benchmarks/benchmarkrun/add/").status_code == 403
