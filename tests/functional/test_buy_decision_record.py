"""A decision record freezes the capex inputs of every owned row (the quote's figures and the
finance defaults it took), and its PDF shows them."""

import io
from decimal import Decimal

import pytest
from pypdf import PdfReader

from apps.core.roles import Role
from apps.decisions.services import decision_record_create
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import QuoteFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def record(catalog, team, make_user):
    brief = BriefFactory(team=team, operating_boundary="ON_PREM")
    QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
    owned = QuoteFactory(
        pricing_term="OWNED",
        hourly_price_per_gpu=Decimal(0),
        capex_per_gpu=Decimal("30000"),
        depreciation_months=60,
        pue=Decimal("1.25"),
    )
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    candidate_table_recompute(brief_id=brief.pk)
    author = make_user(Role.PROCUREMENT, teams=[team])
    made = decision_record_create(
        brief=brief, created_by=author, capacity_model="BUY", chosen_quote=owned
    )
    return made, owned, author


class TestOwnedHardwareInTheRecord:
    def test_the_snapshot_freezes_each_owned_row_s_capex_inputs(self, record):
        made, owned, _ = record

        (entry,) = made.snapshot["owned_hardware"]

        assert entry["quote_id"] == owned.pk
        assert (entry["capex_per_gpu"], entry["depreciation_months"], entry["pue"]) == (
            "30000.00",
            60,
            "1.25",
        )
        # 0.7 kW TDP + 0.575 kW host share; the rest are finance defaults, said so
        assert entry["power_kw_per_gpu"] == "1.275"
        assert entry["from_finance_defaults"] == [
            "power_kw_per_gpu",
            "electricity_per_kwh",
            "hosting_per_kw_month",
            "ops_hours_per_month",
        ]
        assert Decimal(entry["depreciation_per_gpu_month"]) == Decimal(500)
        (evidence,) = [q for q in made.snapshot["quotes"] if q["id"] == owned.pk]
        assert (evidence["capex_per_gpu"], evidence["electricity_per_kwh"]) == ("30000.00", None)

    def test_the_pdf_shows_the_capex_inputs(self, record, client):
        made, _, author = record
        client.force_login(author)

        pdf = client.get(f"/decisions/{made.pk}/export.pdf")

        text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.content)).pages)
        assert "Owned hardware (capex inputs)" in text
        assert "USD 30,000" in text
        assert "1.25" in text and "1.28*" in text  # the quote's PUE; the default kW, marked
