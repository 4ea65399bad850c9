"""Page 1 of a decision record's PDF, the commercial summary: what is bought, from whom, on
what terms, what the vendor bills and commits the organisation to (in the quote's currency and
the reporting currency, at the frozen FX rates), and the all-in cost beside it
(apps.decisions.report)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from apps.core import formatting
from apps.core.currency import BASE_CURRENCY
from apps.finance.lines import energy_per_output_text
from apps.finance.units import unit_for
from apps.quotes.models import TERM_LABELS

from .report_alternatives import term_words
from .report_data import Evidence, Frozen, FxRate, Report, ReportRow, as_report
from .report_words import (
    NOT_RECORDED,
    figure_words,
    layout_words,
    money_words,
    when_words,
    words,
)


def _gpu_words(row: ReportRow | None, quote: Evidence | None) -> str:
    return str((quote and quote.gpu_name) or (row and row.gpu) or (quote and quote.gpu) or "-")


def _gpus(row: ReportRow) -> str:
    """ "18 GPUs (18 replicas x 1)": the GPUs the row pays for and how they serve, as the record
    page words them (candidate_words.configuration); "-" for none."""
    return row.gpus_text or "-"


def _rate_of(report: Report, currency: str) -> FxRate | None:
    return next((r for r in report.fx_rates if r.currency == currency), None)


def _converted(report: Report, amount: Any, currency: str) -> str:
    """``amount`` of ``currency`` also in the reporting currency, at the frozen FX rate."""
    reporting = report.currency
    if amount is None or not currency or currency == reporting:
        return ""
    to_base = Decimal(1) if currency == BASE_CURRENCY else None
    found = _rate_of(report, currency)
    if found is not None:
        to_base = Decimal(str(found.rate))
    from_base = Decimal(1) if reporting == BASE_CURRENCY else None
    found_reporting = _rate_of(report, reporting)
    if found_reporting is not None:
        from_base = Decimal(str(found_reporting.rate))
    if to_base is None or not from_base:
        return f" (no frozen FX rate to convert {currency} into {reporting})"
    value = Decimal(str(amount)) * to_base / from_base
    return f" (= {money_words(value, reporting)} at the frozen FX rate)"


def _totals(report: Report, row: ReportRow, commitment: int) -> dict[int, Decimal]:
    """The chosen row's 12- and 36-month all-in cost: the sensitivity block's totals when it
    holds the row (commitment beyond the horizon included), else monthly x max(months,
    commitment)."""
    key = (
        f"quote:{row.quote_id}"
        if row.quote_id is not None
        else f"api_route:{row.api_route_id}"
        if row.api_route_id is not None
        else str(row.candidate_kind or "").lower()
    )
    frozen = next((c for c in report.leading if c.key == key), None)
    out: dict[int, Decimal] = {}
    for months in (12, 36):
        total = frozen.totals.get(months) if frozen else None
        if total is None and row.monthly_cost is not None:
            total = str(Decimal(str(row.monthly_cost)) * max(months, commitment))
        if total is not None:
            out[months] = Decimal(str(total))
    return out


# The months a reservation term binds whatever the quote's minimum says (the costing's rule,
# apps.engine.costing_rates.commitment_months).
TERM_MONTHS = {"RESERVED_1Y": 12, "RESERVED_3Y": 36}


def commitment_months_of(term: Any, minimum: Any) -> int:
    return max(TERM_MONTHS.get(str(term), 0), int(minimum or 0))


def _in_quote_currency(report: Report, amount: Any, currency: str) -> str:
    """An amount of the reporting currency in ``currency`` too, at the frozen FX rates (the
    vendor bills in its own currency)."""
    reporting = report.currency
    if amount is None or not currency or currency == reporting:
        return ""

    def to_base(code: str) -> Decimal | None:
        if code == BASE_CURRENCY:
            return Decimal(1)
        found = _rate_of(report, code)
        return Decimal(str(found.rate)) if found is not None else None

    there, here = to_base(currency), to_base(reporting)
    if not there or here is None:
        return f" (no frozen FX rate to convert {reporting} into {currency})"
    return f" (= {money_words(Decimal(str(amount)) * here / there, currency)})"


def _vendor_facts(
    report: Report,
    row: ReportRow | None,
    evidence: Evidence | None,
    parts: list[Evidence],
) -> list[tuple[str, str]]:
    """What procurement signs: the GPUs billed, what the provider bills a month (its GPU-hours,
    storage, network and extras, in its currency and the reporting currency) and the vendor
    commitment over the quote's term, apart from the organisation's own costs."""
    currency = report.currency
    vendor = row.vendor_monthly_cost if row else None
    paid = row.paid_gpus if row else None
    facts: list[tuple[str, str]] = []
    if row and paid:
        facts.append(("Quantity", _gpus(row)))
    quote_currency = str((evidence and evidence.currency) or currency)
    if vendor is None:  # a record frozen before rows said what the vendor bills
        facts.append(("Vendor bill a month", NOT_RECORDED))
        vendor_known = False
    else:
        vendor_known = True
        facts.append(
            (
                "Vendor bill a month",
                f"{money_words(vendor, currency)}"
                f"{_in_quote_currency(report, vendor, quote_currency)} "
                "(GPU-hours at the quoted rate, storage, network and the provider's extras)",
            )
        )
    if parts:  # a serving plan: each part on its own quote and term
        terms = []
        for p in parts:
            months = commitment_months_of(p.pricing_term, p.minimum_commitment_months)
            part_term = words(p.pricing_term, TERM_LABELS)
            bound = f", {months}-month commitment" if months else ", no commitment"
            gpu = p.gpu_name or p.gpu or p.system_name or "-"
            terms.append(f"{p.provider} · {gpu}: {part_term}{bound}")
        facts.append(("Vendor commitment", "; ".join(terms)))
        return facts
    term = (row and row.pricing_term) or (evidence and evidence.pricing_term)
    if term == "OWNED":
        capex = evidence.capex_per_gpu if evidence else None
        if capex and paid:
            total = Decimal(str(capex)) * int(paid)
            facts.append(
                (
                    "Contract value",
                    f"{money_words(total, quote_currency)}"
                    f"{_converted(report, total, quote_currency)} "
                    f"(capex: {paid} GPUs x {money_words(capex, quote_currency)}), "
                    "running costs monthly",
                )
            )
        else:
            facts.append(("Contract value", NOT_RECORDED))
        return facts
    if evidence is None or not evidence.commitment_frozen or not vendor_known:
        facts.append(("Contract value", f"{NOT_RECORDED} (the quote's commitment was not frozen)"))
        return facts
    months = commitment_months_of(term, evidence.minimum_commitment_months)
    if months:
        total = Decimal(str(vendor)) * months
        facts.append(
            (
                "Contract value",
                f"{money_words(total, currency)}"
                f"{_in_quote_currency(report, total, quote_currency)} "
                f"(vendor commitment: the vendor bill x the {months}-month commitment)",
            )
        )
    else:
        facts.append(("Contract value (vendor commitment)", "none: billed as used, no commitment"))
    return facts


def commercial_summary(report: Report | Frozen) -> list[tuple[str, str]]:
    """Page 1's facts: what is bought, from whom, on what terms, what the vendor bills and
    commits the organisation to, and the all-in cost beside it."""
    report = as_report(report)
    chosen = report.chosen
    row = chosen.row
    currency = report.currency
    evidence = chosen.evidence
    parts: list[Evidence] = []
    if chosen.kind == "quote":
        evidence = report.quotes.get(chosen.quote_id) or evidence
    elif chosen.kind == "plan":
        parts = [report.quotes[q] for q in chosen.plan_quote_ids if q in report.quotes]
        evidence = parts[0] if parts else None
    else:
        evidence = report.api_routes.get(chosen.api_route_id) or evidence
    providers = ", ".join(dict.fromkeys(str(p.provider) for p in parts)) if parts else ""
    facts: list[tuple[str, str]] = [
        (
            "Provider",
            providers or str(chosen.provider or (evidence and evidence.provider) or NOT_RECORDED),
        )
    ]
    quote_currency = str((evidence and evidence.currency) or currency)
    if chosen.kind == "api_route":
        facts += [
            (
                "Model API",
                str((evidence and evidence.model) or (row and row.api_model) or NOT_RECORDED),
            ),
            ("Pricing term", "Per token (model API), no GPUs rented"),
            (
                "Price per 1M tokens",
                f"input {money_words(evidence.input_price_per_mtok, quote_currency)}, "
                f"output {money_words(evidence.output_price_per_mtok, quote_currency)}"
                if evidence
                else NOT_RECORDED,
            ),
            ("Quote date", (evidence and when_words(evidence.quote_date)) or NOT_RECORDED),
            ("Commitment", "none (billed per token)"),
        ]
    elif parts:
        facts += [
            ("Serving plan", row.label if row else str(chosen.label)),
            ("Pricing terms", term_words(row) if row else NOT_RECORDED),
        ]
        facts += _vendor_facts(report, row, evidence, parts)
    else:
        facts += _quote_facts(report, row, evidence, quote_currency)
        facts += _vendor_facts(report, row, evidence, [])
    monthly = row.monthly_cost if row else None
    facts.append(
        (
            "All-in cost a month",
            f"{money_words(monthly, currency)} (every cost line: the vendor bill, platform labour, "
            "observability and the rest)"
            if monthly is not None
            else NOT_RECORDED,
        )
    )
    commitment = (
        commitment_months_of(evidence.pricing_term, evidence.minimum_commitment_months)
        if evidence
        else 0
    )
    totals = _totals(report, row, commitment) if row else {}
    for months in (12, 36):
        facts.append(
            (
                f"All-in cost, {months} months",
                money_words(totals[months], currency) if months in totals else NOT_RECORDED,
            )
        )
    energy = energy_words(row, report.brief.success_unit or "") if row else None
    if energy:
        facts.append(("Energy", energy))
    return facts


def _quote_facts(
    report: Report, row: ReportRow | None, evidence: Evidence | None, quote_currency: str
) -> list[tuple[str, str]]:
    """A chosen quote's GPU, terms, price and dates (page 1)."""
    chosen = report.chosen
    term = (row and row.pricing_term) or (evidence and evidence.pricing_term)
    commitment = evidence.minimum_commitment_months if evidence else None
    facts = [("GPU", _gpu_words(row, evidence))]
    system = evidence and (evidence.system_name or evidence.system)
    if system:
        facts.append(("System", str(system)))
    if row and row.layout:
        facts.append(("Layout", layout_words(row.layout)))
    facts += [
        ("Pricing term", words(term, TERM_LABELS)),
        ("Region", str((evidence and evidence.region) or NOT_RECORDED)),
    ]
    if term == "OWNED":
        owned = next((o for o in report.owned_hardware if o.quote_id == chosen.quote_id), None)
        capex = (owned and owned.capex_per_gpu) or (evidence and evidence.capex_per_gpu)
        facts.append(
            (
                "Capex per GPU",
                f"{money_words(capex, quote_currency)}{_converted(report, capex, quote_currency)}"
                if capex
                else NOT_RECORDED,
            )
        )
    else:
        price = evidence.hourly_price_per_gpu if evidence else None
        facts.append(
            (
                "Price per GPU-hour",
                f"{formatting.quoted(price, quote_currency)}"
                f"{_converted(report, price, quote_currency)}"
                if price is not None
                else NOT_RECORDED,
            )
        )
    valid = when_words(evidence.valid_until) if evidence else ""
    if valid and evidence:
        valid += _days_left(evidence.valid_until, report.frozen_at)
    facts += [
        ("Quote date", (evidence and when_words(evidence.quote_date)) or NOT_RECORDED),
        (
            "Valid until",
            valid or ("no end date" if evidence and evidence.valid_until_frozen else NOT_RECORDED),
        ),
        (
            "Minimum commitment",
            NOT_RECORDED
            if commitment is None
            else (f"{commitment} months" if commitment else "none (pay as you go)"),
        ),
    ]
    return facts


def energy_words(row: ReportRow, success_unit: str) -> str | None:
    """A GPU row's modelled energy in words (None for an API route or a row frozen before
    energy was costed): kWh a month, per accepted output, and kg CO2e when finance gave a
    carbon intensity."""
    kwh = row.energy_kwh_per_month
    if kwh is None:
        return None
    text = f"{formatting.energy(kwh)} a month"
    if row.energy_j_per_output is not None:
        per = energy_per_output_text(str(row.energy_j_per_output), success_unit)
        output = unit_for(success_unit)
        text += f" ({per} per {output.output if output else 'accepted output'})"
    if row.co2e_kg_per_month is not None:
        co2e = Decimal(str(row.co2e_kg_per_month)).quantize(Decimal(1))
        text += f"; {figure_words(co2e)} kg CO2e"
    return text + " (modelled from TDP and utilisation, facility PUE included)"


def _days_left(valid_until: Any, frozen_at: Any) -> str:
    """ " (25 days left when frozen)" or " (expired when frozen)"; "" when either is unknown."""
    try:
        end = date.fromisoformat(str(valid_until)[:10])
        frozen = date.fromisoformat(when_words(frozen_at)[:10])
    except ValueError:
        return ""
    left = (end - frozen).days
    return " (expired when frozen)" if left < 0 else f" ({left} days left when frozen)"
