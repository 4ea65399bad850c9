"""The admin shows candidate tables and rows read-only, with figures as the pages write them
(issue 27: anyone with admin access could add or delete rows, and saw 0.000002616282601000)."""

from decimal import Decimal

import pytest

from apps.finance.models import CandidateRow
from apps.finance.services import candidate_table_recompute, candidate_tables_request_recompute
from tests.factories.briefs import BriefFactory
from tests.factories.quotes import QuoteFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, make_user, catalog, team):
    brief = BriefFactory(team=team)
    QuoteFactory(hourly_price_per_gpu=Decimal("2.50"))
    candidate_tables_request_recompute(brief_ids=[brief.pk])
    candidate_table_recompute(brief_id=brief.pk)
    client.force_login(make_user(is_superuser=True, is_staff=True))
    return client


def test_the_row_list_shows_unit_costs_in_the_tables_unit_and_money_with_its_currency(
    admin_client,
):
    html = admin_client.get("/admin/finance/candidaterow/").content.decode()
    row = CandidateRow.objects.filter(effective_unit_cost__isnull=False).first()
    assert "per 1M accepted tokens" in html and "USD\u00a0" in html
    assert format(row.effective_unit_cost, "f") not in html  # never the stored per-token float
    assert 'href="/admin/finance/candidaterow/add/"' not in html


def test_rows_and_tables_cannot_be_added_changed_or_deleted(admin_client):
    row = CandidateRow.objects.first()
    assert admin_client.get("/admin/finance/candidaterow/add/").status_code == 403
    assert admin_client.get(f"/admin/finance/candidaterow/{row.pk}/delete/").status_code == 403
    detail = admin_client.get(f"/admin/finance/candidaterow/{row.pk}/change/")
    assert detail.status_code == 200 and b'name="_save"' not in detail.content
    table = row.table
    assert admin_client.get(f"/admin/finance/candidatetable/{table.pk}/delete/").status_code == 403
    assert admin_client.post(f"/admin/finance/candidaterow/{row.pk}/delete/").status_code == 403
    assert CandidateRow.objects.filter(pk=row.pk).exists()
