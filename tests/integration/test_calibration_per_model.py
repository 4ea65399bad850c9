"""Calibration stays with its model (issue 14, item 8): a benchmark run belongs to a model, a
file of another model is refused unless imported as a proxy, MEASURED only for the same model,
GPU, count and precision, and calibration is kept per (team, model, GPU): runs of another model
or another team never change a brief's figures."""

from decimal import Decimal
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.benchmarks import services
from apps.benchmarks.model_identity import brief_model_identity, model_key
from apps.benchmarks.models import BenchmarkRun
from apps.benchmarks.selectors import brief_estimates
from apps.catalog.models import Gpu
from apps.core.roles import Role
from apps.finance.models import CandidateRow
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import QuoteFactory

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parents[1] / "data" / "benchmarks"
H100 = "h100-sxm5-80gb"
LLAMA_8B_FILE = "vllm_benchmark_serving_v0_6_4.json"  # meta-llama/Llama-3.1-8B-Instruct
QWEN3_8B_FILE = "vllm_bench_serve_v0_11.json"  # Qwen/Qwen3-8B
IMPORT_URL = "/api/v1/benchmark-runs/import"


def fixture(name: str) -> bytes:
    return (DATA / name).read_bytes()


@pytest.fixture
def user(make_user):
    return make_user(Role.PLATFORM)


@pytest.fixture
def h100(catalog):
    return Gpu.objects.get(slug=H100)


@pytest.fixture
def quote(catalog):
    return QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))


def do_import(brief, gpu, user, name, **kwargs):
    return services.benchmark_runs_import(
        brief=brief, gpu=gpu, gpu_count=1, raw=fixture(name), filename=name, created_by=user,
        **kwargs,
    )  # fmt: skip


def recompute(*briefs):
    candidate_tables_request_recompute(brief_ids=[b.pk for b in briefs])
    for brief in briefs:
        candidate_table_recompute(brief_id=brief.pk)


def h100_estimate(brief):
    return next(e for e in brief_estimates(brief) if e["gpu"] == H100)


def h100_row(brief):
    return CandidateRow.objects.get(table__brief=brief, gpu__slug=H100)


class TestModelIds:
    @pytest.mark.parametrize(
        ("name", "key"),
        [
            ("meta-llama/Llama-3.1-70B-Instruct", "llama-3.1-70b"),
            ("meta-llama/Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b"),
            ("Llama 3.1 70B", "llama-3.1-70b"),
            ("/models/Llama-3.1-8B-Instruct/", "llama-3.1-8b"),
            ("Qwen/Qwen3-8B", "qwen3-8b"),
            ("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b"),
            ("google/gemma-3-27b-it", "gemma-3-27b"),
            ("deepseek-ai/DeepSeek-V3", "deepseek-v3"),  # V3 is the model, not a packaging
            ("neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8", "llama-3.1-70b-instruct-fp8"),
            ("", ""),
            (None, ""),
        ],
    )
    def test_normalised_for_comparison(self, name, key):
        assert model_key(name) == key

    def test_a_brief_is_its_preset_or_its_config_s_name(self, catalog, team):
        assert brief_model_identity(BriefFactory(team=team)) == "llama-3.1-8b"
        config_brief = BriefFactory(
            team=team, model_preset="", model_hf_config={"_name_or_path": "Qwen/Qwen3-8B"}
        )
        assert brief_model_identity(config_brief) == "qwen3-8b"


class TestAnotherModelIsRefused:
    def test_the_qwen3_8b_file_on_a_llama_70b_brief_is_refused_naming_model(self, team, h100, user):
        brief = BriefFactory(team=team, model_preset="llama-3.1-70b")
        with pytest.raises(ValidationError) as caught:
            do_import(brief, h100, user, QWEN3_8B_FILE)
        assert list(caught.value.message_dict) == ["model"]
        message = caught.value.message_dict["model"][0]
        assert "Qwen/Qwen3-8B" in message and "llama-3.1-70b" in message
        assert "proxy=true" in message
        assert BenchmarkRun.objects.count() == 0

    def test_the_api_answers_400_naming_model_and_saves_nothing(self, team, h100, token_client):
        brief = BriefFactory(team=team, model_preset="llama-3.1-70b")
        response = token_client(Role.PLATFORM).post(
            IMPORT_URL,
            {"brief": brief.pk, "gpu": H100, "gpu_count": 1,
             "file": SimpleUploadedFile("r.json", fixture(QWEN3_8B_FILE))},
        )  # fmt: skip
        assert response.status_code == 400
        assert list(response.json()["errors"]) == ["model"]
        assert response.json()["detail"].startswith("model: the file was run with Qwen/Qwen3-8B")
        assert BenchmarkRun.objects.count() == 0

    def test_the_same_model_under_its_hf_repo_id_is_accepted(self, team, h100, user):
        (run,) = do_import(BriefFactory(team=team), h100, user, LLAMA_8B_FILE).runs
        assert run.model == "llama-3.1-8b"
        assert run.model_named == "meta-llama/Llama-3.1-8B-Instruct"
        assert run.proxy is False and run.weight_precision == "FP8"

    def test_a_file_that_names_no_model_needs_the_model_field(self, team, h100, user):
        brief = BriefFactory(team=team)
        raw = fixture(LLAMA_8B_FILE).replace(b'"model_id"', b'"model_idx"')
        kwargs = {"brief": brief, "gpu": h100, "gpu_count": 1, "raw": raw,
                  "filename": "r.json", "created_by": user}  # fmt: skip
        with pytest.raises(ValidationError) as caught:
            services.benchmark_runs_import(**kwargs)
        assert list(caught.value.message_dict) == ["model"]
        (run,) = services.benchmark_runs_import(
            **kwargs, conditions={"model": "meta-llama/Llama-3.1-8B-Instruct"}
        ).runs
        assert run.model == "llama-3.1-8b" and run.proxy is False

    def test_a_brief_that_names_no_model_needs_the_model_field(self, team, h100, user):
        brief = BriefFactory(
            team=team, model_preset="", params_billion=Decimal("8"), layers=32,
            hidden_size=4096, attention_heads=32, kv_heads=8,
        )  # fmt: skip
        with pytest.raises(ValidationError) as caught:
            do_import(brief, h100, user, LLAMA_8B_FILE)
        assert list(caught.value.message_dict) == ["model"]
        (run,) = do_import(
            brief, h100, user, LLAMA_8B_FILE, conditions={"model": "Llama-3.1-8B-Instruct"}
        ).runs
        assert run.model == "llama-3.1-8b"


class TestProxy:
    def test_with_proxy_the_run_is_recorded_as_a_proxy_and_never_measured(
        self, team, h100, user, quote
    ):
        brief = BriefFactory(team=team)  # Llama 3.1 8B
        (run,) = do_import(brief, h100, user, QWEN3_8B_FILE, proxy=True).runs
        assert run.proxy is True and run.model == "llama-3.1-8b"
        assert run.model_named == "Qwen/Qwen3-8B"
        recompute(brief)
        row = h100_row(brief)
        assert row.basis == "CALIBRATED"  # it calibrates the brief that imported it
        assert f"CALIBRATED from benchmark run #{run.pk}" in row.notes

    def test_the_api_records_proxy_true(self, team, h100, token_client):
        brief = BriefFactory(team=team)
        response = token_client(Role.PLATFORM).post(
            IMPORT_URL,
            {"brief": brief.pk, "gpu": H100, "gpu_count": 1, "proxy": "true",
             "file": SimpleUploadedFile("r.json", fixture(QWEN3_8B_FILE))},
        )  # fmt: skip
        assert response.status_code == 201, response.json()
        body = response.json()
        assert body["proxy"] is True and body["model_named"] == "Qwen/Qwen3-8B"
        assert body["model"] == "llama-3.1-8b"

    def test_the_run_page_says_it_is_a_proxy(self, client, team, h100, user):
        (run,) = do_import(BriefFactory(team=team), h100, user, QWEN3_8B_FILE, proxy=True).runs
        client.force_login(user)
        page = client.get(f"/benchmarks/{run.pk}/").content.decode()
        assert 'id="run-proxy"' in page and "Proxy run" in page

    def test_a_proxy_calibrates_only_the_brief_that_imported_it(self, team, h100, user):
        brief, same_model = BriefFactory(team=team), BriefFactory(team=team)
        before = h100_estimate(same_model)
        do_import(brief, h100, user, QWEN3_8B_FILE, proxy=True)
        assert h100_estimate(same_model) == before
        assert h100_estimate(brief)["basis"] == "CALIBRATED"


class TestMeasured:
    def test_measured_for_the_same_model_gpu_count_and_precision(self, team, h100, user, quote):
        brief = BriefFactory(team=team)
        (run,) = do_import(brief, h100, user, LLAMA_8B_FILE).runs
        recompute(brief)
        assert h100_row(brief).basis == "MEASURED"
        # The brief's precision changes: the run no longer measures it, it calibrates it.
        brief.weight_precision = "BF16"
        brief.save()
        recompute(brief)
        row = h100_row(brief)
        assert row.basis == "CALIBRATED"
        assert f"CALIBRATED from benchmark run #{run.pk}" in row.notes

    def test_a_run_of_the_old_model_does_not_measure_a_brief_whose_model_changed(
        self, team, h100, user, quote
    ):
        brief = BriefFactory(team=team)
        do_import(brief, h100, user, LLAMA_8B_FILE)
        brief.model_preset = "qwen3-8b"
        brief.save()
        recompute(brief)
        assert h100_row(brief).basis == "ESTIMATED"


class TestCalibrationIsPerTeamAndModel:
    def test_a_run_on_one_brief_leaves_another_model_s_brief_unchanged(
        self, team, h100, user, quote
    ):
        llama = BriefFactory(team=team)
        qwen = BriefFactory(team=team, model_preset="qwen3-8b")
        recompute(qwen)
        before, row_before = h100_estimate(qwen), h100_row(qwen)
        do_import(llama, h100, user, LLAMA_8B_FILE)
        recompute(qwen)
        assert h100_estimate(qwen) == before
        row = h100_row(qwen)
        assert (row.basis, row.effective_unit_cost) == ("ESTIMATED", row_before.effective_unit_cost)

    def test_another_team_s_runs_leave_a_brief_unchanged(self, team, other_team, h100, user, quote):
        mine = BriefFactory(team=team)
        theirs = BriefFactory(team=other_team)  # the same model, another team
        recompute(mine)
        before, row_before = h100_estimate(mine), h100_row(mine)
        for _ in range(5):  # five runs of one team, far off the estimate
            run = do_import(theirs, h100, user, LLAMA_8B_FILE).runs[0]
            BenchmarkRun.objects.filter(pk=run.pk).update(raw_sha256=f"moved-{run.pk}")
        recompute(mine)
        assert h100_estimate(mine) == before
        row = h100_row(mine)
        assert (row.basis, row.effective_unit_cost) == ("ESTIMATED", row_before.effective_unit_cost)

    def test_the_same_model_on_another_brief_of_the_team_calibrates_it(
        self, team, h100, user, quote
    ):
        first = BriefFactory(team=team)
        second = BriefFactory(team=team, concurrency=16, input_tokens_p50=500)
        before = h100_estimate(second)
        (run,) = do_import(first, h100, user, LLAMA_8B_FILE).runs
        after = h100_estimate(second)
        assert after["basis"] == "CALIBRATED"
        assert after["calibrated_from_run_ids"] == [run.pk]
        assert after["performance"] != before["performance"]
        recompute(second)
        row = h100_row(second)
        assert row.basis == "CALIBRATED"
        assert f"CALIBRATED from benchmark run #{run.pk}" in row.notes

    def test_the_gpu_page_lists_calibration_per_team_and_model(
        self, client, team, other_team, h100, user, make_user
    ):
        (mine,) = do_import(BriefFactory(team=team), h100, user, LLAMA_8B_FILE).runs
        (theirs,) = do_import(BriefFactory(team=other_team), h100, user, LLAMA_8B_FILE).runs
        client.force_login(make_user(Role.PLATFORM))  # a member of `team` only
        page = client.get(f"/catalog/{H100}/").content.decode()
        line = page[page.index('id="calibration"') :]
        assert "ML Platform · llama-3.1-8b" in line and f"#{mine.pk}" in line
        assert "Other Team" not in line and f"#{theirs.pk})" not in line


def test_one_read_for_many_briefs_gives_each_brief_its_own_calibration(
    team, other_team, h100, user
):
    """The repricing path reads a batch's calibration in one query
    (``calibrations_for_briefs``): each brief gets what ``calibration_for_brief`` gives it,
    whatever the other briefs' teams, models and proxy runs."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.benchmarks.selectors import calibration_for_brief, calibrations_for_briefs

    importer, brief = BriefFactory(team=team), BriefFactory(team=team)
    proxied, qwen = BriefFactory(team=team), BriefFactory(team=team, model_preset="qwen3-8b")
    stranger = BriefFactory(team=other_team)
    nameless = BriefFactory(team=team, model_preset="")
    do_import(importer, h100, user, LLAMA_8B_FILE)  # calibrates the team's Llama briefs
    do_import(proxied, h100, user, QWEN3_8B_FILE, proxy=True)  # this brief only
    do_import(qwen, h100, user, QWEN3_8B_FILE)
    briefs = [importer, brief, proxied, qwen, stranger, nameless]

    with CaptureQueriesContext(connection) as queries:
        together = calibrations_for_briefs(briefs)
    assert len(queries) == 1
    assert together == {b.pk: calibration_for_brief(b) for b in briefs}
    assert together[brief.pk][H100]["runs"] == 1  # the team's Llama run
    assert together[proxied.pk][H100]["runs"] == 2  # and its own proxy
    assert together[stranger.pk] == {}
