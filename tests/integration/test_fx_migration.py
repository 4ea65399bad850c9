"""The data migration that moves the finance assumptions' JSON FX rates into the FX-rate table
(apps/finance/migrations/0004_fx_rate_table.py)."""

from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.factories.briefs import BriefFactory

BEFORE = [("finance", "0003_candidate_row_basis_calibrated")]
AFTER = [("finance", "0004_fx_rate_table")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_json_rates_become_rows_and_the_default_wins():
    old = migrate(BEFORE)
    assumptions = old.get_model("finance", "FinanceAssumptions")
    assumptions.objects.create(
        is_default=True, fx_rates={"EUR": "1.08", "JPY": 0.0067, "XYZ": "2", "GBP": "-1"}
    )
    brief = BriefFactory()  # only the finance app is migrated back: briefs are as today
    # A brief reporting in EUR: its rates are EUR per unit; GBP becomes USD per GBP through
    # its USD rate (0.92 EUR per USD): 1.17 / 0.92.
    assumptions.objects.create(
        brief_id=brief.pk,
        reporting_currency="EUR",
        fx_rates={"USD": "0.92", "GBP": "1.17", "EUR": 1},
    )
    new = migrate(AFTER)
    rows = {r.currency: r for r in new.get_model("finance", "FxRate").objects.all()}
    assert set(rows) == {"EUR", "JPY", "GBP"}  # the unknown code and the negative rate are left
    assert rows["EUR"].rate == Decimal("1.08")  # the default's, not the brief's 1/0.92
    assert rows["JPY"].rate == Decimal("0.0067")
    assert rows["GBP"].rate == (Decimal("1.17") / Decimal("0.92")).quantize(Decimal("1e-10"))
    assert "migrated" in rows["EUR"].source
    assert not hasattr(new.get_model("finance", "FinanceAssumptions")(), "fx_rates")
