"""Real SkyPilot catalogs imported and costed: one quote per instance size, and candidates that
rent whole instances (tests/data/catalogs/SOURCES.md names each file's repository and commit)."""

from decimal import Decimal
from pathlib import Path

import pytest

from apps.finance.models import CandidateRow
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from apps.quotes.catalog_import import quotes_import_catalog
from apps.quotes.models import Quote
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import ProviderFactory

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parents[1] / "data" / "catalogs"
LAMBDA = "skypilot_lambda_vms_v8.csv"


def import_file(name: str, provider):
    text = (DATA / name).read_text(encoding="utf-8")
    return quotes_import_catalog(text=text, fmt="skypilot", provider=provider, filename=name)


def recompute(brief):
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    return candidate_table_recompute(brief_id=brief.pk)


@pytest.fixture
def lambda_cloud(catalog):
    return ProviderFactory(name="Lambda")


class TestLambdaCatalog:
    def test_each_instance_type_is_a_quote_at_its_own_price(self, lambda_cloud):
        import_file(LAMBDA, lambda_cloud)
        east = Quote.objects.filter(region="us-east-1", gpu__slug="h100-sxm5-80gb")
        by_size = {q.gpus_per_node: q.hourly_price_per_gpu for q in east}
        # gpu_1x 3.29, gpu_2x 6.38 / 2, gpu_4x 12.36 / 4, gpu_8x 23.92 / 8.
        assert by_size == {
            1: Decimal("3.2900"), 2: Decimal("3.1900"), 4: Decimal("3.0900"), 8: Decimal("2.9900"),
        }  # fmt: skip
        two = east.get(gpus_per_node=2)
        assert two.import_key == "skypilot:gpu_2x_h100_sxm5:h100-sxm5-80gb:us-east-1:ON_DEMAND"

    def test_the_a100_80gb_is_only_an_8_gpu_instance(self, lambda_cloud):
        import_file(LAMBDA, lambda_cloud)
        a100 = Quote.objects.filter(gpu__slug="a100-sxm4-80gb")
        assert a100.count() == 17  # one per region
        assert set(a100.values_list("gpus_per_node", "hourly_price_per_gpu")) == {
            (8, Decimal("1.7900"))
        }

    def test_rows_it_cannot_place_are_reported_with_their_counts(self, lambda_cloud):
        result = import_file(LAMBDA, lambda_cloud)
        skipped = {s["name"]: s["rows"] for s in result.skipped}
        # Lambda's RTX6000 is the 24 GB Quadro RTX 6000 (not in the catalog); a bare "A100"
        # on gpu_Nx_a100 does not say SXM or PCIe.
        assert skipped == {"RTX6000": 17, "A100": 68}
        assert len(result.created) == 255

    def test_a_second_import_of_the_same_file_changes_nothing(self, lambda_cloud):
        import_file(LAMBDA, lambda_cloud)
        again = import_file(LAMBDA, lambda_cloud)
        assert (len(again.created), len(again.updated), len(again.unchanged)) == (0, 0, 255)
        assert Quote.objects.filter(retired=False).count() == 255

    def test_a_quote_of_the_one_per_gpu_keys_is_retired_for_its_instance_sizes(self, lambda_cloud):
        old = Quote.objects.create(
            provider=lambda_cloud, gpu_id=_gpu("h100-sxm5-80gb"), gpus_per_node=8,
            region="us-east-1", pricing_term="ON_DEMAND", hourly_price_per_gpu=Decimal("2.99"),
            quote_date="2026-11-01", source="an earlier import",
            import_key="skypilot:h100-sxm5-80gb:us-east-1:ON_DEMAND",
        )  # fmt: skip
        result = import_file(LAMBDA, lambda_cloud)
        old.refresh_from_db()
        assert old.retired and [q.pk for q in result.retired] == [old.pk]


class TestWholeInstances:
    """A candidate rents whole instances: its paid GPUs are a multiple of the instance size."""

    def test_no_a100_80gb_candidate_rents_fewer_than_8_gpus(self, lambda_cloud):
        import_file(LAMBDA, lambda_cloud)
        brief = BriefFactory(model_preset="llama-3.1-8b", concurrency=4)
        recompute(brief)
        rows = CandidateRow.objects.filter(
            table__brief=brief, quote__gpu__slug="a100-sxm4-80gb", candidate_kind="GPU"
        )
        assert rows.count() == 17
        for row in rows:
            gpus = row.gpu_count * row.replicas
            assert gpus >= 8 and gpus % 8 == 0, (row.gpu_count, row.replicas)
            # Always on: every rented GPU is paid for every hour of the month.
            assert row.paid_gpu_hours_per_month == Decimal(gpus) * 730

    def test_the_2x_h100_instance_is_costed_at_its_own_price_and_size(self, lambda_cloud):
        import_file(LAMBDA, lambda_cloud)
        brief = BriefFactory(model_preset="llama-3.1-8b", concurrency=4)
        recompute(brief)
        two = Quote.objects.get(
            import_key="skypilot:gpu_2x_h100_sxm5:h100-sxm5-80gb:us-east-1:ON_DEMAND"
        )
        row = CandidateRow.objects.get(table__brief=brief, quote=two)
        assert row.gpu_count * row.replicas == 2  # one instance of 2, not one GPU of it
        compute = Decimal(row.cost_lines["gpu_compute"]) + Decimal(row.cost_lines["retry_waste"])
        assert compute == Decimal("3.19") * 2 * 730
        assert any("rents 1 instance of 2 GPUs" in n for n in row.notes)


def _gpu(slug):
    from apps.catalog.models import Gpu

    return Gpu.objects.get(slug=slug).pk
