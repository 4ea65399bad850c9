"""What a decision record's PDF says, built once from the record's frozen evidence
(``selectors.decision_record_report``) as a typed ``pdf_layout.Document``: the commercial summary
(what procurement signs: the GPUs billed, the vendor bill and the vendor commitment over the
quote's term, apart from the all-in cost the organisation bears), the decision and the
alternatives, the brief, the frozen candidate table, what would change the decision, the
evidence (checklist with its files, FX rates, assumptions, owned hardware), the approvals with
their comments and the audit trail. Every figure is in words here (apps.core.formatting);
apps.decisions.pdf_layout only draws.

The report is read once into a typed ``report_data.Report`` (``report_of``: every default for a
key an older snapshot lacks is applied there); everything here reads its attributes."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from apps.briefs.choices import SuccessUnit, WorkloadType
from apps.catalog.selectors import preset_name
from apps.core import formatting
from apps.core.currency import BASE_CURRENCY
from apps.core.roles import Role
from apps.finance.forms import FIELD_LABELS, MONEY_FIELDS, SHARE_ASSUMPTIONS
from apps.finance.lines import PLAN_WORDS, energy_per_output_text
from apps.finance.units import unit_for, unit_words
from apps.quotes.models import TERM_LABELS

from .candidate_words import API_TERM_WORDS, base_label
from .checklist import SECTIONS
from .evidence_words import acknowledgement_words, evidence_words, warning_lines
from .models import ChecklistAnswer
from .pdf_layout import Bar, BarChart, Block, Document, Facts, Paragraph, Section, Table
from .report_data import (
    Answer,
    Evidence,
    Frozen,
    FxRate,
    Owned,
    Report,
    ReportRow,
    report_of,
    row_of,
)

# The bars a chart shows at most (the rest are in the table above it).
MAX_CHART_BARS = 15


def _when(value: Any) -> str:
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S UTC")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str) and "T" in value:
        return value.replace("T", " ")[:19]
    return "" if value is None else str(value)


def _num(value: Any) -> str:
    if value is None:
        return "-"
    return formatting.number(value)


# --- Words for the codes a record stores ---------------------------------------------------

STATUS_WORDS = {
    "DRAFT": "Draft",
    "IN_REVIEW": "In review",
    "APPROVED": "Approved",
    "REJECTED": "Rejected",
    "SUPERSEDED": "Superseded",
}
VERDICT_WORDS = {"APPROVE": "Approved", "REJECT": "Rejected"}
ACTION_WORDS = {
    "CREATE": "Created",
    "REFRESH": "Evidence refreshed",
    "EDIT": "Edited",
    "SUBMIT": "Submitted for review",
    "APPROVE": "Approved",
    "REJECT": "Rejected",
    "SUPERSEDE": "Superseded",
}
WORKLOAD_WORDS = dict(WorkloadType.choices)
SUCCESS_UNIT_WORDS = dict(SuccessUnit.choices)
ROLE_WORDS = dict(Role.choices)
ANSWER_WORDS = dict(ChecklistAnswer.Answer.choices)
SECTION_WORDS = dict(SECTIONS)
CRITERIA_WORDS = {
    "latency_percentile": ("Latency percentile", ""),
    "ttft_target_ms": ("Time to first token target", " ms"),
    "itl_target_ms": ("Inter-token latency target", " ms"),
    "e2e_target_ms": ("End-to-end latency target", " ms"),
    "acceptance_rate": ("Acceptance rate", ""),
    "min_memory_headroom_gb": ("Minimum memory headroom", " GB"),
    "accepted_outputs_per_month": ("Accepted outputs a month", ""),
}
LATENCY_WORDS = {"ttft": "time to first token", "itl": "inter-token latency", "e2e": "end-to-end"}
ASSUMPTION_WORDS = {
    "reporting_currency": "Reporting currency",
    "labour_rate_per_hour": "Labour rate per hour",
    "observability_share": "Observability, share of the monthly cost",
    "retry_rate": "Retry rate",
    "failure_rate": "Failure rate",
    "acceptance_rate": "Acceptance rate",
    "power_price_per_kwh": "Electricity price per kWh",
    "pue": "Power usage effectiveness (PUE)",
    "hosting_per_kw_month": "Hosting per kW-month",
    "ops_hours_per_gpu_month": "Operations hours per owned GPU-month",
    "platform_hours_self_managed": "Platform hours a month per self-managed deployment",
    "labour_allocation": "Platform labour allocation",
    "platform_labour_pool_hours": "Platform team's hours a month (shared pool)",
    "self_managed_gpu_hours_per_month": "Self-managed GPU-hours a month (shared pool)",
}
SOURCE_WORDS = {
    "brief": "this brief's finance override",
    "organisation": "the organisation's finance assumptions",
    "built-in": "gpuselect's built-in default",
}
ALLOCATION_WORDS = {
    "PER_DEPLOYMENT": "per deployment",
    "SHARED_BY_GPU_HOURS": "shared by GPU-hours",
}
NOT_RECORDED = "not recorded"


def words(code: Any, vocabulary: dict[str, str]) -> str:
    """A stored code in words: its label, else the code with its underscores as spaces."""
    if code in (None, ""):
        return "-"
    text = str(code)
    return str(vocabulary.get(text) or text.replace("_", " ").capitalize())


def _pct(share: Any) -> str:
    """0.0300 -> "3 %", 0.975 -> "97.5 %"."""
    return formatting.percent(share)


def _figure(value: Any) -> str:
    """A figure someone typed (an assumption, a target) as they would write it."""
    return formatting.number(value)


def _money(value: Any, currency: str) -> str:
    """Money as a buyer reads it (apps.core.formatting.money); "not recorded" for none."""
    if value is None:
        return NOT_RECORDED
    return formatting.money(value, currency)


def _model_words(model: Frozen) -> str:
    """The brief's model as its card names it ("Llama 3.1 8B"), else the preset as written."""
    if not model:
        return "-"
    preset = model.get("preset")
    if preset:
        return preset_name(preset)
    return "a pasted config.json" if model.get("hf_config") else "custom"


def _latency(target: Any) -> str:
    """{"ttft_p95_ms": 500} -> "time to first token 500 ms (p95)"."""
    if not target:
        return "-"
    if not isinstance(target, dict):
        return str(target)
    parts = []
    for key, value in target.items():
        kind, _, rest = str(key).partition("_")
        percentile = rest.removesuffix("_ms")
        parts.append(
            f"{LATENCY_WORDS.get(kind, kind)} {value} ms"
            + (f" ({percentile})" if percentile else "")
        )
    return ", ".join(parts)


def criterion_words(key: str, value: Any) -> tuple[str, str]:
    label, suffix = CRITERIA_WORDS.get(key, (words(key, {}), ""))
    if value in (None, ""):
        return label, "none"
    if key == "acceptance_rate":
        return label, _pct(value)
    if key == "latency_percentile":
        return label, str(value).lower() if str(value).startswith("P") else words(value, {})
    return label, f"{_figure(value)}{suffix}"


# --- The report's rows, labelled as a buyer reads them --------------------------------------


def _typed(report: Report | Frozen) -> Report:
    """The typed report (report_data.report_of), from ``selectors.decision_record_report``'s
    plain data or as it is."""
    return report if isinstance(report, Report) else report_of(report)


def _gpu_words(row: ReportRow | None, quote: Evidence | None) -> str:
    return str((quote and quote.gpu_name) or (row and row.gpu) or (quote and quote.gpu) or "-")


def _gpus(row: ReportRow) -> str:
    """ "18 GPUs (18 replicas x 1)": the GPUs the row pays for and how they serve, as the record
    page words them (candidate_words.configuration); "-" for none."""
    return row.gpus_text or "-"


LAYOUT_TERMS = (
    ("DEP", "attention data-parallel with the experts split across the GPUs"),
    ("TP", "tensor parallel"),
    ("PP", "pipeline parallel"),
    ("DP", "independent engines"),
)


def layout_words(layout: Any) -> str:
    """A row's parallel layout: its label ("TP2xPP2", or the engine's layout as a dict of tp,
    pp, dep and replicas) followed by what its parts mean."""
    if isinstance(layout, dict):
        tp, pp, dep, dp = (int(layout.get(k) or 1) for k in ("tp", "pp", "dep", "replicas"))
        parts = [f"DP{dp}"] if dp > 1 else []
        if dep > 1:
            parts.append(f"DEP{dep}")
        else:
            parts += [f"TP{tp}"] if tp > 1 or pp == 1 else []
            parts += [f"PP{pp}"] if pp > 1 else []
        label = "x".join(parts)
    else:
        label = str(layout)
    meaning = [text for term, text in LAYOUT_TERMS if re.search(rf"\b{term}\d|x{term}\d", label)]
    return f"{label} ({'; '.join(meaning)})" if meaning else label


def _gpus_short(row: ReportRow) -> str:
    """ "6 (3 replicas x 2)" or "1": the candidate table's GPUs column, the GPUs paid for (a
    serving plan's in all)."""
    paid, count, replicas = row.paid_gpus, row.gpu_count, row.replicas
    if paid and (row.candidate_kind in PLAN_WORDS or not count):
        return str(paid)
    if not count:
        return "-"
    total = int(paid or int(count) * int(replicas or 1))
    if replicas and int(replicas) > 1:
        return f"{total} ({replicas} replicas {formatting.TIMES} {count})"
    return str(total)


def _term(row: ReportRow) -> str:
    if row.candidate_kind == "API_ROUTE":
        return "Per token (API)"
    if row.candidate_kind in PLAN_WORDS:
        terms = sorted({words(term, TERM_LABELS) for term in row.plan_terms})
        return ", ".join(terms) or "-"
    return words(row.pricing_term, TERM_LABELS)


def _why_not_words(reasons: Sequence[str], report: Report, row: ReportRow) -> str:
    """The engine's reasons, with its latency shorthand spelled out against the targets."""
    criteria = report.acceptance_criteria
    out = []
    for reason in reasons:
        text = str(reason)
        if "TTFT/ITL" in text or "latency target" in text:
            targets = [
                f"{label.lower().removesuffix(' target')} {criteria[key]} ms"
                for key, (label, _) in CRITERIA_WORDS.items()
                if key.endswith("_target_ms") and criteria.get(key)
            ]
            text = "misses the latency target" + (": " + ", ".join(targets) if targets else "")
            if row.p95_latency_ms:
                text += f" (estimated p95 {_num(row.p95_latency_ms)} ms)"
        out.append(text)
    return "; ".join(out)


def _not_costed_words(reason: Any) -> str:
    """ "no FX rate for JPY (to convert ...)" -> "not costed: no FX rate for JPY"."""
    text = str(reason or "no reason recorded").split(" (", 1)[0]
    return f"not costed: {text}"


def why_it_lost(
    row: ReportRow | Frozen | None,
    chosen: ReportRow | Frozen | None,
    unit: str,
    report: Report | Frozen,
) -> str:
    """Why an alternative was not chosen, in words, against the chosen row (rows typed, or as
    frozen)."""
    if row is None:
        return "not in the frozen candidate table"
    row = row if isinstance(row, ReportRow) else row_of(row)
    if not row.meets_constraints:
        reasons = row.why_not or ("does not meet the brief",)
        return _why_not_words(reasons, _typed(report), row)
    if chosen is not None and not isinstance(chosen, ReportRow):
        chosen = row_of(chosen)
    cost, base = row.effective_unit_cost, chosen.effective_unit_cost if chosen else None
    if cost is None or base in (None, "") or Decimal(str(base)) == 0:
        return "no unit cost to compare"
    change = (Decimal(str(cost)) / Decimal(str(base)) - 1) * 100
    if change >= Decimal("0.5"):
        return f"costs {change:.0f} % more {unit}"
    if change <= Decimal("-0.5"):
        return f"costs {-change:.0f} % less {unit}; passed over for the reasons in the rationale"
    return f"costs the same {unit}; passed over for the reasons in the rationale"


def alternatives_lost(report: Report | Frozen, unit: str) -> list[dict[str, str]]:
    """Each alternative the record names (else the table's other leading rows), with the
    reason it lost; every quote the table could not cost is listed with why."""
    report = _typed(report)
    rows = report.rows
    chosen_row = report.chosen.row
    refs = report.alternative_refs
    not_costed = {e.quote_id: e for e in report.not_costed if e.quote_id}
    # (the row, else the quote id the record names, else the label it gave)
    picked: list[tuple[ReportRow | None, Any, str]] = []
    if refs:
        for ref in refs:
            qid, rid = ref.quote_id, ref.api_route_id
            found = next(
                (
                    r for r in rows
                    if (qid is not None and r.quote_id == qid)
                    or (qid is None and rid is not None and r.api_route_id == rid)
                ),
                None,
            )  # fmt: skip
            route = report.api_routes.get(rid)
            fallback = (
                f"{route.provider} · {route.model} · {API_TERM_WORDS}"
                if route
                else "an API route not in the frozen evidence"
            )
            picked.append((found, qid, fallback))
    elif refs is None and report.alternatives:  # a report from before alternative_refs
        by_label = {r.label: r for r in rows}
        picked = [(by_label.get(label), None, label) for label in report.alternatives]
    else:
        others = [r for r in rows if not r.chosen][:MAX_IMPLIED_ALTERNATIVES]
        picked = [(r, None, "") for r in others]
    out = []
    seen_quotes = set()
    for row, qid, fallback in picked:
        if row is None:
            entry = not_costed.get(qid) if qid is not None else None
            seen_quotes.add(qid)
            quote = report.quotes.get(qid) if qid is not None else None
            out.append(
                {
                    "label": _quote_label(quote) if qid is not None else fallback,
                    "term": words(quote.pricing_term, TERM_LABELS) if quote else "-",
                    "unit_cost": "-",
                    "monthly": "-",
                    "reason": _not_costed_words(entry.reason)
                    if entry
                    else "not in the frozen candidate table",
                }
            )
            continue
        seen_quotes.add(row.quote_id)
        out.append(
            {
                "label": row.label,
                "term": _term(row),
                "unit_cost": _num(row.effective_unit_cost),
                "monthly": _money(row.monthly_cost, report.currency),
                "reason": why_it_lost(row, chosen_row, unit, report),
            }
        )
    for qid, entry in not_costed.items():
        if qid in seen_quotes:
            continue
        quote = report.quotes.get(qid)
        out.append(
            {
                "label": _quote_label(quote),
                "term": words(quote.pricing_term, TERM_LABELS) if quote else "-",
                "unit_cost": "-",
                "monthly": "-",
                "reason": _not_costed_words(entry.reason),
            }
        )
    return out


def _quote_label(quote: Evidence | None) -> str:
    """A frozen quote without a candidate row: provider · GPU · term · region."""
    if quote is None or not quote.frozen:
        return "a quote not in the frozen evidence"
    label = base_label({}, {}, quote.frozen)
    return f"{label} · {quote.region}" if quote.region else label


# The alternatives shown when the record names none: the table's next rows (the rest are in
# the candidate table further on).
MAX_IMPLIED_ALTERNATIVES = 5


# --- Commercial summary --------------------------------------------------------------------


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
    return f" (= {_money(value, reporting)} at the frozen FX rate)"


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
    return f" (= {_money(Decimal(str(amount)) * here / there, currency)})"


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
                f"{_money(vendor, currency)}"
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
                    f"{_money(total, quote_currency)}{_converted(report, total, quote_currency)} "
                    f"(capex: {paid} GPUs x {_money(capex, quote_currency)}), "
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
                f"{_money(total, currency)}{_in_quote_currency(report, total, quote_currency)} "
                f"(vendor commitment: the vendor bill x the {months}-month commitment)",
            )
        )
    else:
        facts.append(("Contract value (vendor commitment)", "none: billed as used, no commitment"))
    return facts


def commercial_summary(report: Report | Frozen) -> list[tuple[str, str]]:
    """Page 1's facts: what is bought, from whom, on what terms, what the vendor bills and
    commits the organisation to, and the all-in cost beside it."""
    report = _typed(report)
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
                f"input {_money(evidence.input_price_per_mtok, quote_currency)}, "
                f"output {_money(evidence.output_price_per_mtok, quote_currency)}"
                if evidence
                else NOT_RECORDED,
            ),
            ("Quote date", (evidence and _when(evidence.quote_date)) or NOT_RECORDED),
            ("Commitment", "none (billed per token)"),
        ]
    elif parts:
        facts += [
            ("Serving plan", row.label if row else str(chosen.label)),
            ("Pricing terms", _term(row) if row else NOT_RECORDED),
        ]
        facts += _vendor_facts(report, row, evidence, parts)
    else:
        facts += _quote_facts(report, row, evidence, quote_currency)
        facts += _vendor_facts(report, row, evidence, [])
    monthly = row.monthly_cost if row else None
    facts.append(
        (
            "All-in cost a month",
            f"{_money(monthly, currency)} (every cost line: the vendor bill, platform labour, "
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
                _money(totals[months], currency) if months in totals else NOT_RECORDED,
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
                f"{_money(capex, quote_currency)}{_converted(report, capex, quote_currency)}"
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
    valid = _when(evidence.valid_until) if evidence else ""
    if valid and evidence:
        valid += _days_left(evidence.valid_until, report.frozen_at)
    facts += [
        ("Quote date", (evidence and _when(evidence.quote_date)) or NOT_RECORDED),
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
        text += f"; {_figure(co2e)} kg CO2e"
    return text + " (modelled from TDP and utilisation, facility PUE included)"


def _days_left(valid_until: Any, frozen_at: Any) -> str:
    """ " (25 days left when frozen)" or " (expired when frozen)"; "" when either is unknown."""
    try:
        end = date.fromisoformat(str(valid_until)[:10])
        frozen = date.fromisoformat(_when(frozen_at)[:10])
    except ValueError:
        return ""
    left = (end - frozen).days
    return " (expired when frozen)" if left < 0 else f" ({left} days left when frozen)"


# --- The document ----------------------------------------------------------------------------


def _chart(rows: Sequence[ReportRow], currency: str, unit: str) -> Block:
    """The effective unit cost of the costed rows as bars (the chosen one, those that meet the
    brief, those that do not), at most MAX_CHART_BARS."""
    costed = [r for r in rows if r.effective_unit_cost is not None][:MAX_CHART_BARS]
    if not costed:
        return Paragraph(text="No candidate has a unit cost to chart.")
    values = [float(str(r.effective_unit_cost)) for r in costed]
    return BarChart(
        title=f"Effective unit cost, {currency} {unit}",
        bars=tuple(
            Bar(
                label=r.label,
                value=value,
                text=formatting.unit_cost(r.effective_unit_cost),
                kind="chosen" if r.chosen else "meets" if r.meets_constraints else "misses",
            )
            for r, value in zip(costed, values, strict=True)
        ),
        top_text=formatting.unit_cost(max(values)),
        caption="Blue: the chosen candidate. Light blue: meets the brief. Grey: does not.",
    )


def _decision_facts(report: Report, currency: str, unit: str) -> list[tuple[str, str]]:
    chosen = report.chosen
    row = chosen.row
    label = row.label if row else str(chosen.label)
    rank = row.rank if row else None
    ranked = [r for r in report.rows if r.rank is not None]
    facts = [
        ("Chosen candidate", label),
        ("Capacity model", report.capacity_model),
        (
            "Unit cost",
            f"{formatting.unit_cost(row.effective_unit_cost if row else None, currency)} {unit}"
            + (f", rank {rank} of {len(ranked)} that meet the brief" if rank is not None else ""),
        ),
    ]
    # Every section speaks of the table's winner: a record choosing another says so.
    first = min(ranked, key=lambda r: r.rank or 0) if ranked else None
    if first is not None and not first.chosen:
        facts.append(
            (
                "The table's winner",
                f"{first.label}, rank 1 at "
                f"{formatting.unit_cost(first.effective_unit_cost)} {currency} {unit}; "
                "this record chooses another candidate (the rationale says why)",
            )
        )
    facts += [
        ("Platform labour", _labour(row, currency) if row else "-"),
        ("Rationale", report.rationale or "-"),
    ]
    return facts


def _alternatives(report: Report, currency: str, unit: str) -> tuple[Block, ...]:
    lost = alternatives_lost(report, unit)
    if not lost:
        return (Paragraph(text="No alternatives were recorded and the table holds no other one."),)
    return (
        Paragraph(text=f"Unit costs in {currency} {unit}; monthly costs in {currency}.", size=8),
        Table(
            header=("Alternative", "Term", "Unit cost", "Monthly cost", "Why it lost"),
            rows=tuple(
                (a["label"], a["term"], a["unit_cost"], a["monthly"], a["reason"]) for a in lost
            ),
            widths=(54, 24, 18, 22, 72),
        ),
    )


def _brief_facts(report: Report) -> list[tuple[str, str]]:
    brief = report.brief
    return [
        ("Brief", f"{brief.name} (#{brief.id}, version {brief.inputs_version})"),
        ("Workload", words(brief.workload_type, WORKLOAD_WORDS)),
        ("Model", str(_model_words(brief.model))),
        ("Success unit", words(brief.success_unit, SUCCESS_UNIT_WORDS)),
        ("Concurrency", formatting.count(brief.concurrency) if brief.concurrency else "-"),
        ("Latency target", _latency(brief.latency_target)),
        ("Required approvals", ", ".join(words(r, ROLE_WORDS) for r in report.required_roles)),
    ]


def _table_blocks(report: Report, currency: str, unit: str) -> tuple[Block, ...]:
    rows = report.rows
    intro = Paragraph(
        text=f"Computed {_when(report.computed_at) or 'never'}; costs in {currency}, unit "
        f"costs {unit}; monthly costs include platform labour, shown on its own. GPUs are the "
        "GPUs each candidate pays for."
    )
    if not rows:
        return (intro, Paragraph(text="The candidate table was empty when the record was frozen."))
    blocks: list[Block] = [
        intro,
        Table(
            header=(
                "Rank",
                "Candidate",
                "Term",
                "GPUs",
                "Unit cost",
                "Monthly cost",
                "Platform labour",
                "Meets the brief",
            ),
            rows=tuple(
                (
                    str(r.rank if r.rank is not None else "-"),
                    ("> " if r.chosen else "") + r.label,
                    _term(r),
                    _gpus_short(r),
                    formatting.unit_cost(r.effective_unit_cost),
                    formatting.money(r.monthly_cost),
                    formatting.money(r.platform_labour),
                    "yes" if r.meets_constraints else "no",
                )
                for r in rows
            ),
            widths=(10, 60, 22, 22, 20, 20, 20, 16),
        ),
        Paragraph(text="> marks the chosen candidate.", size=7),
    ]
    for r in rows:
        if not r.meets_constraints:
            reason = _why_not_words(r.why_not, report, r) or "no reason recorded"
            blocks.append(Paragraph(text=f"{r.label} does not meet the brief: {reason}.", size=7))
    blocks.append(_chart(rows, currency, unit))
    return tuple(blocks)


def _assumption_rows(report: Report) -> tuple[tuple[str, ...], ...]:
    values, sources = report.assumption_values, report.assumption_sources
    rows = []
    currency = str(values.get("reporting_currency") or "")
    for name, value in values.items():
        if name == "fx_rates":
            continue
        if value is None:
            shown = "not set"
        elif name in SHARE_ASSUMPTIONS:
            shown = _pct(value)
        elif name in MONEY_FIELDS:
            shown = _money(value, currency)
        elif name == "labour_allocation":
            shown = words(value, ALLOCATION_WORDS)
        else:
            shown = _figure(value) if name != "reporting_currency" else str(value)
        label = FIELD_LABELS.get(name) or words(name, ASSUMPTION_WORDS)
        rows.append((label, shown, words(sources.get(name), SOURCE_WORDS)))
    return tuple(rows)


def _fx_blocks(report: Report) -> tuple[Block, ...]:
    rates = report.fx_rates
    if not rates:
        return (
            Paragraph(text=f"None: every frozen figure is in {BASE_CURRENCY}, the base currency."),
        )
    return (
        Table(
            header=("Currency", "Rate", "As of", "Source"),
            rows=tuple(
                (
                    str(r.currency),
                    f"1 {r.currency} = {formatting.number(r.rate, 6)} {BASE_CURRENCY}",
                    _when(r.as_of),
                    str(r.source or NOT_RECORDED),
                )
                for r in rates
            ),
            widths=(24, 50, 30, 86),
        ),
    )


def _owned_blocks(report: Report) -> tuple[Block, ...]:
    """The capex inputs of every owned row: what the quote gave, and the defaults it took."""
    providers = {q.id: str(q.provider) for q in report.quotes.values()}

    def cell(entry: Owned, name: str) -> str:
        mark = "*" if name in entry.from_finance_defaults else ""
        return f"{formatting.number(entry.figures.get(name))}{mark}"

    return (
        Paragraph(
            text="Monthly cost of an owned GPU = capex / depreciation months + kW x PUE x 730 h "
            "x electricity + kW x hosting per kW-month + hands-on hours x labour rate. Figures "
            "marked * are finance defaults, not the quote's."
        ),
        Table(
            header=(
                "Quote",
                "Capex per GPU",
                "Depreciation months",
                "kW per GPU",
                "PUE",
                "Electricity per kWh",
                "Hosting per kW-month",
                "Ops hours a month",
                "Per GPU-month",
            ),
            rows=tuple(
                (
                    f"{providers[e.quote_id]} (#{e.quote_id})"
                    if e.quote_id in providers
                    else f"#{e.quote_id}",
                    formatting.money(e.capex_per_gpu, e.currency),
                    str(e.depreciation_months or "-"),
                    cell(e, "power_kw_per_gpu"),
                    cell(e, "pue"),
                    cell(e, "electricity_per_kwh"),
                    cell(e, "hosting_per_kw_month"),
                    cell(e, "ops_hours_per_month"),
                    formatting.money(e.total_per_gpu_month)
                    if e.costed
                    else str(e.not_costed or "-"),
                )
                for e in report.owned_hardware
            ),
            widths=(30, 24, 22, 16, 12, 20, 22, 18, 26),
            size=7,
        ),
    )


def _checklist_rows(answers: Sequence[Answer]) -> tuple[tuple[str, ...] | str, ...]:
    """The answers under a title row per section, in the order frozen, each with its
    evidence (text, link, file name, size and hash)."""
    out: list[tuple[str, ...] | str] = []
    section = None
    for a in answers:
        if a.section != section:
            section = a.section
            out.append(words(section, SECTION_WORDS))
        out.append(
            (
                a.text,
                words(a.answer, ANSWER_WORDS) if a.answer else "unanswered",
                evidence_words(dict(a.frozen)),
                a.answered_by,
            )
        )
    return tuple(out)


def _checklist_blocks(report: Report) -> tuple[Block, ...]:
    checklist = report.checklist
    blocks: list[Block] = []
    warnings = warning_lines([dict(w) for w in report.checklist_warnings])
    if warnings:
        blocks.append(Paragraph(text="Must-have questions answered No or Partial:", style="B"))
        blocks += [Paragraph(text=f"- {line}") for line in warnings]
    if checklist.answers:
        blocks.append(
            Table(
                header=("Question", "Answer", "Evidence", "By"),
                rows=_checklist_rows(checklist.answers),
                widths=(90, 18, 62, 20),
                size=7,
            )
        )
    else:
        blocks.append(Paragraph(text="No checklist applies (an API route was chosen)."))
    return tuple(blocks)


def _approval_blocks(report: Report) -> tuple[Block, ...]:
    blocks: list[Block] = []
    if report.approvals:
        blocks.append(
            Table(
                header=("Role", "Verdict", "By", "When", "Comment or reason"),
                rows=tuple(
                    (
                        words(a.role, ROLE_WORDS),
                        words(a.verdict, VERDICT_WORDS),
                        a.user,
                        _when(a.created_at),
                        "; ".join(
                            t for t in (a.reason, acknowledgement_words(dict(a.frozen))) if t
                        ),
                    )
                    for a in report.approvals
                ),
                widths=(26, 22, 30, 40, 72),
            )
        )
    else:
        blocks.append(Paragraph(text="No approvals yet."))
    decided = {a.role for a in report.approvals}
    pending = [words(r, ROLE_WORDS) for r in report.required_roles if r not in decided]
    if pending:
        blocks.append(Paragraph(text=f"Still to give a verdict: {', '.join(pending)}.", size=8))
    return tuple(blocks)


def _audit_table(report: Report) -> Table:
    return Table(
        header=("When", "Action", "From", "To", "Role", "By", "Reason"),
        rows=tuple(
            (
                _when(e.created_at),
                words(e.action, ACTION_WORDS),
                words(e.from_status, STATUS_WORDS) if e.from_status else "-",
                words(e.to_status, STATUS_WORDS) if e.to_status else "-",
                words(e.role, ROLE_WORDS) if e.role else "-",
                e.actor,
                e.reason,
            )
            for e in report.audit_trail
        ),
        widths=(36, 30, 22, 22, 20, 24, 36),
        size=7,
    )


def build_document(report: Report | Frozen) -> Document:
    """The decision PDF's content, every figure in words, from ``selectors
    .decision_record_report`` (read once into a typed ``report_data.Report``): the commercial
    summary and the alternatives first, then the evidence. Built once; apps.decisions
    .pdf_layout draws it."""
    report = _typed(report)
    currency = report.currency
    unit = unit_words(report.unit)  # one unit for the whole report
    sections: list[Section] = [
        Section(
            heading="Commercial summary", blocks=(Facts(items=tuple(commercial_summary(report))),)
        ),
        Section(
            heading="Decision",
            blocks=(Facts(items=tuple(_decision_facts(report, currency, unit))),),
        ),
        Section(
            heading="Alternatives and why they lost", blocks=_alternatives(report, currency, unit)
        ),
        Section(heading="Brief", blocks=(Facts(items=tuple(_brief_facts(report))),)),
    ]
    criteria = report.acceptance_criteria
    if criteria:
        sections.append(
            Section(
                heading="Acceptance criteria",
                blocks=(Facts(items=tuple(criterion_words(k, v) for k, v in criteria.items())),),
            )
        )
    sections.append(
        Section(heading="Candidate table (frozen)", blocks=_table_blocks(report, currency, unit))
    )
    if report.sensitivity_summary:
        sections.append(
            Section(
                heading="What would change the decision",
                blocks=tuple(Paragraph(text=f"- {line}") for line in report.sensitivity_summary),
            )
        )
    if report.owned_hardware:
        sections.append(
            Section(heading="Owned hardware (capex inputs)", blocks=_owned_blocks(report))
        )
    rows = _assumption_rows(report)
    if rows:
        sections.append(
            Section(
                heading="Finance assumptions and their sources",
                blocks=(
                    Table(header=("Assumption", "Value", "Source"), rows=rows, widths=(72, 34, 84)),
                ),
            )
        )
    sections.append(Section(heading="FX rates used", blocks=_fx_blocks(report)))
    checklist = report.checklist
    sections += [
        Section(
            heading=f"Procurement checklist ({checklist.answered}/{checklist.total} answered)",
            blocks=_checklist_blocks(report),
        ),
        Section(heading="Approvals", blocks=_approval_blocks(report)),
        Section(heading="Audit trail", blocks=(_audit_table(report),)),
        Section(
            heading="Integrity",
            blocks=(
                Facts(
                    items=(
                        ("Engine version", str(report.engine_version or "-")),
                        ("Frozen at", _when(report.frozen_at) or "-"),
                    )
                ),
            ),
        ),
    ]
    return Document(
        title=report.title,
        subtitle=f"Decision record #{report.id} - {words(report.status, STATUS_WORDS)} - "
        f"team {report.team} - frozen {_when(report.frozen_at) or 'not yet'}",
        hash_line=f"Content hash (SHA-256 of the frozen evidence): {report.content_hash}",
        footer=f"Decision record #{report.id} - {report.content_hash}",
        sections=tuple(sections),
        content_hash=report.content_hash,
        hash_label="Content hash (SHA-256 of the canonical snapshot):",
    )


def _labour(row: ReportRow, currency: str) -> str:
    """The chosen row's platform labour line and its share of the monthly cost."""
    labour, monthly = row.platform_labour, row.monthly_cost
    if labour is None or not monthly or Decimal(str(monthly)) == 0:
        return "-"
    share = Decimal(str(labour)) / Decimal(str(monthly))
    return (
        f"{_money(labour, currency)} a month ({formatting.percent(share, 2)} of the monthly cost)"
    )
