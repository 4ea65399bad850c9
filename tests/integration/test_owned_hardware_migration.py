"""The migration that replaces hosting per GPU-month with hosting per kW-month keeps finance's
price (apps/finance/migrations/0006_owned_hardware_defaults.py)."""

from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("finance", "0005_candidate_table_sensitivity")]
AFTER = [("finance", "0006_owned_hardware_defaults")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture
def back_to_latest():
    yield
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_hosting_per_gpu_month_becomes_per_kw_month(back_to_latest):
    old = migrate(BEFORE)
    old.get_model("finance", "FinanceAssumptions").objects.create(
        is_default=True, hosting_cost_per_gpu_month=Decimal("191.25"), amortisation_years=4
    )

    new = migrate(AFTER)

    row = new.get_model("finance", "FinanceAssumptions").objects.get(is_default=True)
    assert row.hosting_per_kw_month == Decimal("150.00")  # 191.25 / 1.275 kW per GPU
    assert row.pue is None and row.ops_hours_per_gpu_month is None  # the defaults apply
