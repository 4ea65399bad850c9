"""One unit per table (rankings JSON and CSV, the finance page, the decision PDF) and platform
labour as finance allocates it: its own column, a warning when it carries a candidate, and the
organisation's choice of per-deployment or shared-by-GPU-hours allocation."""

import csv
import io
import json
from decimal import Decimal

import pytest
from pypdf import PdfReader

from apps.briefs.models import WorkloadBrief
from apps.core.roles import Role
from apps.decisions.exports import decision_record_pdf
from apps.decisions.selectors import decision_record_report
from apps.finance.models import CandidateRow, FinanceAssumptions
from apps.finance.services import candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.decisions import make_record
from tests.factories.quotes import QuoteFactory

pytestmark = pytest.mark.django_db

LORA_8B = {
    "name": "8B LoRA fine-tune",
    "workload_type": "LORA_FINETUNE",
    "model": {"preset": "llama-3.1-8b"},
    "weight_precision": "BF16",
    "training": {
        "tokens": 20_000_000,
        "sequence_length": 2048,
        "global_batch_tokens": 65536,
        "sharding": "NONE",
        "activation_checkpointing": True,
        "lora_rank": 16,
        "optimizer": "ADAMW",
        "checkpoint_interval_minutes": 60,
    },
    "success_unit": "CHECKPOINT",
    "acceptance_rate": 1,
    "duty_cycle": "EXPERIMENTAL",
    "hours_per_month": 100,
    "operating_boundary": "PUBLIC_CLOUD",
}
SHARED = {
    "labour_allocation": "SHARED_BY_GPU_HOURS",
    "platform_labour_pool_hours": "400",
    "self_managed_gpu_hours_per_month": "20000",
}


@pytest.fixture
def lora(catalog, team, token_client, django_capture_on_commit_callbacks):
    """An 8B LoRA fine-tune a month, priced on one on-demand H100 quote."""
    api = token_client(Role.PLATFORM)
    with django_capture_on_commit_callbacks(execute=True):
        QuoteFactory(hourly_price_per_gpu=Decimal("4.50"))
        response = api.post("/api/v1/briefs/", json.dumps(LORA_8B), content_type="application/json")
    assert response.status_code == 201, response.json()
    return WorkloadBrief.objects.get(pk=response.json()["id"])


@pytest.fixture
def chat(catalog, team, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        brief = BriefFactory(team=team)
        QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
        candidate_tables_request_recompute(brief_ids=[brief.pk])
    return brief


def finance_page(client, make_user, brief):
    client.force_login(make_user(Role.FINANCE))
    response = client.get(f"/briefs/{brief.pk}/finance/")
    assert response.status_code == 200
    return response


def gpu_row(brief) -> CandidateRow:
    return CandidateRow.objects.get(table__brief=brief, candidate_kind="GPU")


class TestOneUnitPerTable:
    def test_a_token_table_reads_per_million_tokens_everywhere(
        self, chat, client, make_user, token_client
    ):
        stored = gpu_row(chat).effective_unit_cost  # per one accepted token
        api = token_client(Role.FINANCE)
        body = api.get(f"/api/v1/briefs/{chat.pk}/rankings").json()
        row = next(r for r in body["rows"] if r["candidate_kind"] == "GPU")
        assert body["unit"] == "per 1M accepted tokens"
        assert Decimal(row["effective_unit_cost"]) == stored * 1_000_000

        lines = api.get(f"/api/v1/briefs/{chat.pk}/rankings", {"format": "csv"})
        cells = next(csv.DictReader(io.StringIO(lines.content.decode(), newline="")))
        assert (cells["currency"], cells["unit"]) == ("USD", "per 1M accepted tokens")
        assert Decimal(cells["effective_unit_cost"]) == stored * 1_000_000

        page = finance_page(client, make_user, chat)
        assert b'Unit cost</a><span class="sub">per 1M accepted tokens</span>' in page.content
        chart = page.context["figures"][0][2]
        assert chart["data"][0]["x"] == [float(stored * 1_000_000)]
        assert "per 1M accepted tokens" in chart["layout"]["title"]["text"]

    def test_a_fine_tune_table_reads_per_checkpoint(self, lora, token_client):
        body = token_client(Role.FINANCE).get(f"/api/v1/briefs/{lora.pk}/rankings").json()

        assert (body["unit"], body["success_unit"], body["unit_scale"]) == (
            "per accepted fine-tuned checkpoint",
            "CHECKPOINT",
            1,
        )
        row = body["rows"][0]
        assert row["rank"] == 1
        per_checkpoint = Decimal(row["monthly_cost"]) / Decimal(row["accepted_outputs_per_month"])
        unit_cost = Decimal(row["effective_unit_cost"])  # scale 1: the cost of one checkpoint
        assert abs(unit_cost - per_checkpoint) <= per_checkpoint * Decimal("1e-9")

    def test_an_image_table_reads_per_thousand_images(self, catalog, team, token_client):
        brief = BriefFactory(team=team, workload_type="IMAGE_GENERATION", success_unit="IMAGE")
        body = token_client(Role.FINANCE).get(f"/api/v1/briefs/{brief.pk}/rankings").json()

        assert (body["unit"], body["unit_scale"]) == ("per 1k accepted images", 1000)

    def test_the_decision_pdf_states_the_tables_unit(self, chat, make_user):
        record = make_record(
            brief=chat, user=make_user(Role.PROCUREMENT), quote=gpu_row(chat).quote
        )
        pdf = decision_record_pdf(decision_record_report(record))
        text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)
        assert "USD per 1M accepted tokens" in text
        assert "Platform labour" in text
        assert record.snapshot["candidate_table"]["unit_scale"] == 1_000_000


class TestLabourOnTheFinancePage:
    def test_labour_is_in_each_rows_cost_lines_and_the_page_says_how_it_is_allocated(
        self, chat, client, make_user
    ):
        page = finance_page(client, make_user, chat)
        row = page.context["rows"][0]

        assert b'<th scope="row">Platform labour</th><td class="num">USD\xc2\xa04,600.00</td>' in (
            page.content
        )  # in the row's cost lines, one click away
        assert row["display_labour"] == "4,600.00"  # 40 h x 115 USD, per deployment
        assert "platform_labour" in page.context["line_names"]
        assert (
            "Platform labour is charged per self-managed deployment (built-in)"
            in (page.context["labour_policy"])
        )

    def test_the_assumptions_read_in_words(self, chat, client, make_user):
        page = finance_page(client, make_user, chat)
        shown = {name: (label, value) for name, label, value, _, _ in page.context["assumptions"]}

        assert shown["labour_allocation"] == ("Labour allocation", "Per self-managed deployment")
        assert shown["platform_labour_pool_hours"] == ("Platform team hours a month", "—")
        assert shown["labour_rate_per_hour"][0] == "Labour rate per hour"

    def test_a_fine_tune_that_is_mostly_labour_is_flagged_in_words(self, lora, client, make_user):
        page = finance_page(client, make_user, lora)

        warning = page.context["leader_warning"]
        assert warning.startswith("Platform labour is ")
        assert "of this candidate's monthly cost" in warning
        assert "depends mostly on the platform labour assumption" in warning
        assert b'id="assumption-warning"' in page.content

    def test_sharing_labour_by_gpu_hours_moves_the_line_and_clears_the_warning(
        self, lora, client, make_user, django_capture_on_commit_callbacks
    ):
        before = gpu_row(lora).cost_lines["platform_labour"]
        client.force_login(make_user(Role.FINANCE))
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post("/finance/assumptions/", SHARED)
        assert response.status_code == 302

        row = gpu_row(lora)
        paid = Decimal(row.cost_lines["gpu_compute"])  # on-demand: compute = paid h x price
        assert Decimal(before) == Decimal("4600.0000")
        assert Decimal(row.cost_lines["platform_labour"]) < Decimal(10)
        assert Decimal(row.cost_lines["platform_labour"]) < paid
        page = client.get(f"/briefs/{lora.pk}/finance/")
        assert page.context["leader_warning"] is None
        assert "shared by GPU-hours (organisation)" in page.context["labour_policy"]


class TestLabourAssumptions:
    def test_sharing_without_the_pool_is_a_form_error_and_nothing_is_saved(
        self, catalog, client, make_user
    ):
        client.force_login(make_user(Role.FINANCE))
        response = client.post(
            "/finance/assumptions/", {"labour_allocation": "SHARED_BY_GPU_HOURS"}
        )

        assert response.status_code == 200
        errors = response.context["form"].errors
        assert set(errors) == {"platform_labour_pool_hours", "self_managed_gpu_hours_per_month"}
        assert not FinanceAssumptions.objects.filter(labour_allocation="SHARED_BY_GPU_HOURS")

    def test_a_negative_pool_is_a_field_error(self, catalog, client, make_user):
        client.force_login(make_user(Role.FINANCE))
        response = client.post(
            "/finance/assumptions/", {**SHARED, "platform_labour_pool_hours": "-5"}
        )

        assert response.status_code == 200
        assert "platform_labour_pool_hours" in response.context["form"].errors

    def test_a_brief_overrides_the_hours_per_deployment_but_not_the_allocation(
        self, chat, client, make_user, django_capture_on_commit_callbacks
    ):
        page = finance_page(client, make_user, chat)
        assert "labour_allocation" not in page.context["form"].fields
        assert "platform_hours_self_managed" in page.context["form"].fields

        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                f"/briefs/{chat.pk}/finance/",
                {"platform_hours_self_managed": "10", "labour_allocation": "SHARED_BY_GPU_HOURS"},
            )
        assert response.status_code == 302
        assert gpu_row(chat).cost_lines["platform_labour"] == "1150.0000"  # 10 h x 115 USD
        override = FinanceAssumptions.objects.get(brief=chat)
        assert override.labour_allocation == ""  # not a brief's choice: ignored


class TestGpuHoursPaid:
    def test_each_gpu_row_says_the_gpu_hours_it_pays_for(
        self, chat, token_client, django_capture_on_commit_callbacks
    ):
        with django_capture_on_commit_callbacks(execute=True):
            reserved = QuoteFactory(pricing_term="RESERVED_1Y", hourly_price_per_gpu=Decimal(2))
            candidate_tables_request_recompute(brief_ids=[chat.pk])
        rows = token_client(Role.FINANCE).get(f"/api/v1/briefs/{chat.pk}/rankings").json()["rows"]
        by_quote = {r["quote_id"]: r for r in rows}

        row = by_quote[reserved.pk]
        gpus = row["gpu_count"] * row["replicas"]
        assert Decimal(row["paid_gpu_hours_per_month"]) == Decimal(730) * gpus  # every hour

    def test_the_organisation_page_offers_todays_total_as_a_starting_point(
        self, chat, lora, client, make_user
    ):
        expected = sum(
            CandidateRow.objects.filter(table__brief=brief, meets_constraints=True)
            .exclude(effective_unit_cost=None)
            .exclude(candidate_kind="API_ROUTE")
            .order_by("effective_unit_cost")
            .first()
            .paid_gpu_hours_per_month
            for brief in (chat, lora)
        )
        client.force_login(make_user(Role.FINANCE))
        page = client.get("/finance/assumptions/")

        assert page.context["gpu_hours_briefs"] == 2
        assert page.context["gpu_hours_now"] == f"{expected:,.2f}".removesuffix(".00")
        assert b'id="gpu-hours-now"' in page.content


class TestASuccessUnitTheWorkloadProduces:
    def test_a_unit_the_workload_cannot_produce_is_a_400_naming_the_field(
        self, catalog, token_client
    ):
        body = {**LORA_8B, "success_unit": "VIDEO_SECOND"}
        response = token_client(Role.PLATFORM).post(
            "/api/v1/briefs/", json.dumps(body), content_type="application/json"
        )

        assert response.status_code == 400
        assert response.json()["detail"] == (
            "success_unit: LoRA fine-tune briefs do not produce accepted seconds of video; "
            "choose one of: Accepted fine-tuned checkpoint, Completed training run"
        )
        assert not WorkloadBrief.objects.exists()

    @pytest.mark.parametrize(
        ("workload", "unit"),
        [
            ("REALTIME_INFERENCE", "PATCH"),
            ("BATCH_INFERENCE", "PATCH"),
            ("LORA_FINETUNE", "CHECKPOINT"),
        ],
    )
    def test_the_new_units_are_accepted_where_they_apply(self, catalog, team, workload, unit):
        brief = BriefFactory.build(team=team, workload_type=workload, success_unit=unit)
        brief.clean()  # no error

    def test_an_unknown_unit_is_a_field_error_not_a_500(self, catalog, token_client):
        body = {**LORA_8B, "success_unit": "VIBES"}
        response = token_client(Role.PLATFORM).post(
            "/api/v1/briefs/", json.dumps(body), content_type="application/json"
        )

        assert response.status_code == 400
        assert response.json()["detail"].startswith("success_unit:")
