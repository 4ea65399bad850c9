"""The FX rates move from a JSON field of the finance assumptions into finance's FX-rate table.

The JSON held units of the row's reporting currency per unit of each currency. A row reporting
in the base currency (USD) gives its rates as they are; one reporting in another currency is
converted through its own USD rate when it has one (else its rates cannot be placed and are
left out). The organisation default's rates are taken first; a brief override adds only
currencies the default lacked (the table has one rate per currency for every brief).
"""

from datetime import date
from decimal import Decimal, InvalidOperation

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

BASE = "USD"  # apps.core.currency.BASE_CURRENCY when this migration was written
KNOWN = {"USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "SGD", "INR", "CNY"}
SOURCE = "migrated from the finance assumptions' JSON rates"


def _positive(value):
    try:
        number = Decimal(str(value))
    except (InvalidOperation, ValueError, TypeError):
        return None
    return number if number.is_finite() and number > 0 else None


def _base_rates(json_rates, reporting):
    """{currency: USD per unit} from one row's JSON rates (reporting per unit)."""
    rates = {c: r for c, r in ((c, _positive(v)) for c, v in (json_rates or {}).items()) if r}
    if reporting == BASE:
        return {c: r for c, r in rates.items() if c in KNOWN and c != BASE}
    usd = rates.get(BASE)  # reporting per USD
    if usd is None or reporting not in KNOWN:
        return {}
    out = {c: r / usd for c, r in rates.items() if c in KNOWN and c not in (BASE, reporting)}
    out[reporting] = Decimal(1) / usd
    return out


def json_rates_to_rows(apps, schema_editor):
    FinanceAssumptions = apps.get_model("finance", "FinanceAssumptions")
    FxRate = apps.get_model("finance", "FxRate")
    default = FinanceAssumptions.objects.filter(is_default=True).first()
    default_reporting = (default.reporting_currency if default else "") or BASE
    rows = ([default] if default else []) + list(
        FinanceAssumptions.objects.filter(is_default=False).order_by("pk")
    )
    found = {}
    for row in rows:
        reporting = row.reporting_currency or default_reporting
        for currency, rate in _base_rates(row.fx_rates, reporting).items():
            stored = rate.quantize(Decimal("1e-10"))  # the column's 10 decimal places
            if stored > 0:
                found.setdefault(currency, stored)
    today = date.today()
    FxRate.objects.bulk_create(
        [FxRate(currency=c, rate=r, as_of=today, source=SOURCE) for c, r in sorted(found.items())]
    )


class Migration(migrations.Migration):
    dependencies = [
        ("finance", "0003_candidate_row_basis_calibrated"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="FxRate",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "currency",
                    models.CharField(
                        choices=[
                            ("USD", "US dollar"),
                            ("EUR", "Euro"),
                            ("GBP", "Pound sterling"),
                            ("JPY", "Japanese yen"),
                            ("CHF", "Swiss franc"),
                            ("CAD", "Canadian dollar"),
                            ("AUD", "Australian dollar"),
                            ("SGD", "Singapore dollar"),
                            ("INR", "Indian rupee"),
                            ("CNY", "Chinese yuan"),
                        ],
                        max_length=3,
                    ),
                ),
                ("rate", models.DecimalField(decimal_places=10, max_digits=20)),
                ("as_of", models.DateField()),
                ("source", models.CharField(max_length=200)),
                (
                    "created_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["currency", "-as_of", "-pk"],
                "indexes": [models.Index(fields=["currency", "-as_of"], name="fx_rate_newest")],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("rate__gt", 0)), name="fx_rate_positive"
                    )
                ],
            },
        ),
        migrations.RunPython(json_rates_to_rows, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name="financeassumptions",
            name="fx_rates",
        ),
    ]
