"""The quote-import CSV explained: what each accepted column means, and a template file with
the header row and one example row (served by the import page's download link)."""

import csv
import io

from .csv_rows import CSV_COLUMNS

#: What each column of apps.quotes.csv_rows.CSV_COLUMNS means, in words (the import page lists
#: them; a test keeps the two in step).
COLUMN_MEANINGS: dict[str, str] = {
    "provider": "The provider's name as it is on the Providers page (case does not matter).",
    "gpu": "A catalog GPU slug (list below). Give a GPU or a system, not both.",
    "system": "A catalog system slug (list below), for a quoted node or rack shape.",
    "gpus_per_node": "GPUs per node as quoted (whole number; empty: 8).",
    "region": "Where the capacity is, as the provider names it (e.g. us-east-1).",
    "pricing_term": "ON_DEMAND, SPOT, RESERVED_1Y, RESERVED_3Y, DEDICATED_CLUSTER, "
    "MARKETPLACE or OWNED.",
    "hourly_price_per_gpu": "Price per GPU per hour in the row's currency (empty or 0 only for "
    "OWNED).",
    "currency": "ISO 4217 code (USD, EUR, GBP, JPY, …; empty: USD).",
    "storage_price_per_tb_month": "Storage per TB a month (empty: 0).",
    "egress_price_per_gb": "Data out per GB (empty: 0).",
    "network_monthly": "Private network / interconnect, per month (empty: 0).",
    "monthly_extras": "Support, licences and other monthly fees (empty: 0).",
    "minimum_commitment_months": "Months you must commit to (whole number; empty: 0).",
    "quote_date": "The date of the quote, YYYY-MM-DD.",
    "valid_until": "The last day the price holds, YYYY-MM-DD (optional).",
    "source": "Who quoted it, or the price page's address.",
    "capex_per_gpu": "OWNED only: purchase price per GPU with its share of server and network.",
    "depreciation_months": "OWNED only: months the capex is depreciated over.",
    "power_kw_per_gpu": "OWNED only, optional: kW per GPU with its host share.",
    "pue": "OWNED only, optional: the site's power usage effectiveness (1.0-3.0).",
    "electricity_per_kwh": "OWNED only, optional: electricity price per kWh.",
    "hosting_per_kw_month": "OWNED only, optional: colocation per kW of IT load a month.",
    "ops_hours_per_month": "OWNED only, optional: hands-on hours per GPU a month.",
}

#: The template's example row: an on-demand quote (values a person replaces).
EXAMPLE_ROW: dict[str, str] = {
    "provider": "Example Cloud",
    "gpu": "h100-sxm5-80gb",
    "gpus_per_node": "8",
    "region": "us-east-1",
    "pricing_term": "ON_DEMAND",
    "hourly_price_per_gpu": "2.49",
    "currency": "USD",
    "minimum_commitment_months": "0",
    "quote_date": "2026-01-15",
    "valid_until": "2026-04-15",
    "source": "https://example.com/pricing",
}


def column_help() -> list[tuple[str, str]]:
    return [(name, COLUMN_MEANINGS.get(name, "")) for name in CSV_COLUMNS]


def template_csv(*, gpu_slug: str | None = None) -> str:
    """The header row of every accepted column and one example row (its GPU slug one that the
    catalog has, when given)."""
    example = dict(EXAMPLE_ROW)
    if gpu_slug:
        example["gpu"] = gpu_slug
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(CSV_COLUMNS), lineterminator="\r\n")
    writer.writeheader()
    writer.writerow({name: example.get(name, "") for name in CSV_COLUMNS})
    return out.getvalue()
