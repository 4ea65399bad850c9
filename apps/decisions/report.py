"""What a decision record's PDF says, built once from the record's frozen evidence
(``selectors.decision_record_report``) as a typed ``pdf_layout.Document``: the commercial summary
(what procurement signs: the GPUs billed, the vendor bill and the vendor commitment over the
quote's term, apart from the all-in cost the organisation bears), the decision and the
alternatives, the brief, the frozen candidate table, what would change the decision, the
evidence (checklist with its files, FX rates, assumptions, owned hardware), the approvals with
their comments and the audit trail. Every figure is in words here (apps.core.formatting);
apps.decisions.pdf_layout only draws.

The report is read once into a typed ``report_data.Report`` (``report_of``: every default for a
key an older snapshot lacks is applied there); everything here reads its attributes.

The sections' words live beside it: report_words (codes and figures), report_commercial
(page 1) and report_alternatives (what was passed over, and why)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from apps.core import formatting
from apps.core.currency import BASE_CURRENCY
from apps.finance.forms import FIELD_LABELS, MONEY_FIELDS, SHARE_ASSUMPTIONS
from apps.finance.lines import PLAN_WORDS
from apps.finance.units import unit_words

from .evidence_words import acknowledgement_words, evidence_words, warning_lines
from .pdf_layout import Bar, BarChart, Block, Document, Facts, Paragraph, Section, Table
from .report_alternatives import alternatives_lost, term_words, why_not_words
from .report_commercial import commercial_summary
from .report_data import Answer, Frozen, Owned, Report, ReportRow, as_report
from .report_words import (
    ACTION_WORDS,
    ALLOCATION_WORDS,
    ANSWER_WORDS,
    ASSUMPTION_WORDS,
    NOT_RECORDED,
    ROLE_WORDS,
    SECTION_WORDS,
    SOURCE_WORDS,
    STATUS_WORDS,
    SUCCESS_UNIT_WORDS,
    VERDICT_WORDS,
    WORKLOAD_WORDS,
    criterion_words,
    figure_words,
    latency_words,
    model_words,
    money_words,
    percent_words,
    when_words,
    words,
)

# The bars a chart shows at most (the rest are in the table above it).
MAX_CHART_BARS = 15


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
        ("Model", str(model_words(brief.model))),
        ("Success unit", words(brief.success_unit, SUCCESS_UNIT_WORDS)),
        ("Concurrency", formatting.count(brief.concurrency) if brief.concurrency else "-"),
        ("Latency target", latency_words(brief.latency_target)),
        ("Required approvals", ", ".join(words(r, ROLE_WORDS) for r in report.required_roles)),
    ]


def _table_blocks(report: Report, currency: str, unit: str) -> tuple[Block, ...]:
    rows = report.rows
    intro = Paragraph(
        text=f"Computed {when_words(report.computed_at) or 'never'}; costs in {currency}, unit "
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
                    term_words(r),
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
            reason = why_not_words(r.why_not, report, r) or "no reason recorded"
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
            shown = percent_words(value)
        elif name in MONEY_FIELDS:
            shown = money_words(value, currency)
        elif name == "labour_allocation":
            shown = words(value, ALLOCATION_WORDS)
        else:
            shown = figure_words(value) if name != "reporting_currency" else str(value)
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
                    when_words(r.as_of),
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
                evidence_words(a.frozen),
                a.answered_by,
            )
        )
    return tuple(out)


def _checklist_blocks(report: Report) -> tuple[Block, ...]:
    checklist = report.checklist
    blocks: list[Block] = []
    warnings = warning_lines(report.checklist_warnings)
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
                        when_words(a.created_at),
                        "; ".join(t for t in (a.reason, acknowledgement_words(a.frozen)) if t),
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
                when_words(e.created_at),
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
    report = as_report(report)
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
                        ("Frozen at", when_words(report.frozen_at) or "-"),
                    )
                ),
            ),
        ),
    ]
    return Document(
        title=report.title,
        subtitle=f"Decision record #{report.id} - {words(report.status, STATUS_WORDS)} - "
        f"team {report.team} - frozen {when_words(report.frozen_at) or 'not yet'}",
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
        f"{money_words(labour, currency)} a month "
        f"({formatting.percent(share, 2)} of the monthly cost)"
    )
