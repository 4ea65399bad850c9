"""A decision record's report as the PDF reads it: one typed object (``Report``), read once by
``report_of`` from ``selectors.decision_record_report``'s plain data (a ``selectors.RecordReport``:
the frozen snapshot, typed by apps.decisions.frozen, and the record's own fields).

``report_of`` is the one place a missing key is given its default: a record frozen by an older
build lacks keys (a row without ``vendor_monthly_cost``, a quote without
``minimum_commitment_months``), and a report built by hand (the unit tests) lacks more.
apps.decisions.report then reads attributes, never ``.get`` chains.

Each row, quote and answer keeps its frozen dict too (``frozen``): apps.decisions.candidate_words
and apps.decisions.evidence_words name candidates and evidence from those dicts, for the record
page and the PDF alike."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, cast

from apps.finance.lines import PLAN_WORDS, plan_parts
from apps.finance.shown import shown_row

from .candidate_words import candidate_labels, configuration
from .checklist import ChecklistWarning
from .frozen import FrozenAnswer

# The frozen JSON of a row, a quote, an answer or the report itself: the snapshot's, read key
# by key below and nowhere else in the PDF's code.
Frozen = Mapping[str, Any]
# A frozen figure: a decimal as a string (snapshot._plain), an integer, or none.
Figure = str | int | None
# A date or time as frozen (an ISO string) or as the record holds it.
When = datetime | date | str | None


@dataclass(frozen=True, kw_only=True)
class ReportRow:
    """A frozen candidate row, with its label (the one the record gave it, else worked out
    among the report's rows: none two alike)."""

    frozen: Frozen
    label: str
    chosen: bool
    rank: int | None
    candidate_kind: str | None
    pricing_term: str | None
    # The pricing terms of a serving plan's parts (MIX, DISAGG); () for a single quote's row.
    plan_terms: tuple[str | None, ...]
    gpu: str | None
    quote_id: int | None
    api_route_id: int | None
    api_model: str | None
    gpu_count: int | None
    replicas: int | None
    # The GPUs paid for (its configuration's, else the row's own from older builds).
    paid_gpus: int | None
    # "18 GPUs (18 replicas x 1)" (candidate_words.configuration); "" for none.
    gpus_text: str
    layout: str | Mapping[str, int] | None
    effective_unit_cost: Figure
    monthly_cost: Figure
    vendor_monthly_cost: Figure  # None: frozen before rows said what the vendor bills
    meets_constraints: bool
    why_not: tuple[str, ...]
    p95_latency_ms: Figure
    platform_labour: Figure
    energy_kwh_per_month: Figure
    energy_j_per_output: Figure
    co2e_kg_per_month: Figure


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """A frozen quote (snapshot.quote_evidence) or API route (snapshot.route_evidence)."""

    frozen: Frozen
    id: int | None
    provider: str | None
    gpu: str | None
    gpu_name: str | None
    system: str | None
    system_name: str | None
    region: str | None
    pricing_term: str | None
    currency: str | None
    hourly_price_per_gpu: Figure
    capex_per_gpu: Figure
    minimum_commitment_months: int | None
    # Whether the quote's commitment was frozen at all (older records did not freeze it).
    commitment_frozen: bool
    quote_date: When
    valid_until: When
    # Whether the quote's end date was frozen (None then means "no end date").
    valid_until_frozen: bool
    model: str | None
    input_price_per_mtok: Figure
    output_price_per_mtok: Figure


@dataclass(frozen=True, kw_only=True)
class Chosen:
    """The chosen candidate (selectors.chosen_candidate): a quote, an API route or a plan."""

    kind: str | None
    quote_id: int | None
    api_route_id: int | None
    plan_quote_ids: tuple[int, ...]
    label: str | None
    provider: str | None
    row: ReportRow | None
    evidence: Evidence | None


@dataclass(frozen=True, kw_only=True)
class Brief:
    id: int | None
    name: str | None
    inputs_version: int | None
    workload_type: str | None
    model: Mapping[str, Any]  # the brief's model as its body gives it (preset or config)
    success_unit: str | None
    concurrency: int | None
    latency_target: Any  # {"ttft_p95_ms": 500}, or what an older record froze


@dataclass(frozen=True, kw_only=True)
class AlternativeRef:
    quote_id: int | None
    api_route_id: int | None


@dataclass(frozen=True, kw_only=True)
class NotCosted:
    quote_id: int | None
    reason: str | None


@dataclass(frozen=True, kw_only=True)
class FxRate:
    currency: str | None
    rate: Figure
    as_of: When
    source: str | None


@dataclass(frozen=True, kw_only=True)
class Owned:
    """An owned quote's frozen capex inputs (apps.finance.owned.OwnedHardware)."""

    quote_id: int
    currency: str  # the reporting currency, else the quote's own (not costed)
    capex_per_gpu: Figure
    depreciation_months: int | None
    figures: Mapping[str, Figure]  # power_kw_per_gpu, pue, ... by name
    from_finance_defaults: tuple[str, ...]
    total_per_gpu_month: Figure
    costed: bool  # whether the month was costed (else ``not_costed`` says why)
    not_costed: str | None


@dataclass(frozen=True, kw_only=True)
class Answer:
    """A frozen checklist answer (its evidence is worded from ``frozen``)."""

    frozen: FrozenAnswer
    section: str | None
    text: str
    answer: str | None
    answered_by: str


@dataclass(frozen=True, kw_only=True)
class Checklist:
    answered: int
    total: int
    answers: tuple[Answer, ...]


@dataclass(frozen=True, kw_only=True)
class Approval:
    frozen: Frozen  # acknowledged_warnings is worded from it (evidence_words)
    role: str
    verdict: str
    user: str
    created_at: When
    reason: str


@dataclass(frozen=True, kw_only=True)
class AuditEntry:
    created_at: When
    action: str
    from_status: str
    to_status: str
    role: str
    actor: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class LeadingTotals:
    """A leading candidate's frozen all-in totals (apps.finance.sensitivity), by months."""

    key: str | None
    totals: Mapping[int, Figure]


@dataclass(frozen=True, kw_only=True)
class Report:
    id: int | None
    title: str
    status: str | None
    team: str | None
    capacity_model: str  # the record's capacity model in words
    rationale: str
    acceptance_criteria: Mapping[str, Any]  # as the record holds them (criterion_words)
    required_roles: tuple[str, ...]
    brief: Brief
    chosen: Chosen
    # The record's alternatives: by reference (None: a report from before alternative_refs,
    # which named them by ``alternatives`` labels).
    alternative_refs: tuple[AlternativeRef, ...] | None
    alternatives: tuple[str, ...]
    currency: str
    unit: str | None
    computed_at: When
    rows: tuple[ReportRow, ...]
    quotes: Mapping[int | None, Evidence]
    api_routes: Mapping[int | None, Evidence]
    owned_hardware: tuple[Owned, ...]
    fx_rates: tuple[FxRate, ...]
    assumption_values: Mapping[str, Any]  # by name, in the order frozen
    assumption_sources: Mapping[str, str]
    sensitivity_summary: tuple[str, ...]
    leading: tuple[LeadingTotals, ...]
    not_costed: tuple[NotCosted, ...]
    checklist: Checklist
    checklist_warnings: tuple[ChecklistWarning, ...]  # worded by evidence_words.warning_lines
    approvals: tuple[Approval, ...]
    audit_trail: tuple[AuditEntry, ...]
    content_hash: str
    engine_version: str | None
    frozen_at: When


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def _dict(value: Any) -> Frozen:
    return value if isinstance(value, Mapping) else {}


def row_of(data: Frozen, label: str = "") -> ReportRow:
    """A frozen candidate row, typed (``label``: the one worked out for it, when it has none of
    its own)."""
    config = _dict(data.get("configuration"))
    kind = data.get("candidate_kind")
    plan_terms: tuple[str | None, ...] = ()
    if kind in PLAN_WORDS:
        plan_terms = tuple(p.get("pricing_term") for p in plan_parts(shown_row(data)))
    return ReportRow(
        frozen=data,
        label=str(data.get("label") or label),
        chosen=bool(data.get("chosen")),
        rank=data.get("rank"),
        candidate_kind=kind,
        pricing_term=data.get("pricing_term"),
        plan_terms=plan_terms,
        gpu=data.get("gpu"),
        quote_id=data.get("quote_id"),
        api_route_id=data.get("api_route_id"),
        api_model=data.get("api_model"),
        gpu_count=data.get("gpu_count"),
        replicas=data.get("replicas"),
        paid_gpus=config.get("paid_gpus") or data.get("paid_gpus"),
        gpus_text=configuration(data),
        layout=data.get("layout"),
        effective_unit_cost=data.get("effective_unit_cost"),
        monthly_cost=data.get("monthly_cost"),
        vendor_monthly_cost=data.get("vendor_monthly_cost"),
        meets_constraints=bool(data.get("meets_constraints")),
        why_not=tuple(str(w) for w in _list(data.get("why_not"))),
        p95_latency_ms=data.get("p95_latency_ms"),
        platform_labour=_dict(data.get("cost_lines")).get("platform_labour"),
        energy_kwh_per_month=data.get("energy_kwh_per_month"),
        energy_j_per_output=data.get("energy_j_per_output"),
        co2e_kg_per_month=data.get("co2e_kg_per_month"),
    )


def evidence_of(data: Frozen) -> Evidence:
    return Evidence(
        frozen=data,
        id=data.get("id"),
        provider=data.get("provider"),
        gpu=data.get("gpu"),
        gpu_name=data.get("gpu_name"),
        system=data.get("system"),
        system_name=data.get("system_name"),
        region=data.get("region"),
        pricing_term=data.get("pricing_term"),
        currency=data.get("currency"),
        hourly_price_per_gpu=data.get("hourly_price_per_gpu"),
        capex_per_gpu=data.get("capex_per_gpu"),
        minimum_commitment_months=data.get("minimum_commitment_months"),
        commitment_frozen="minimum_commitment_months" in data,
        quote_date=data.get("quote_date"),
        valid_until=data.get("valid_until"),
        valid_until_frozen="valid_until" in data,
        model=data.get("model"),
        input_price_per_mtok=data.get("input_price_per_mtok"),
        output_price_per_mtok=data.get("output_price_per_mtok"),
    )


def _gpu_names(quotes: list[Frozen]) -> dict[str, str]:
    """Slug -> name of the frozen quotes' GPUs and systems (records frozen before names: none)."""
    return {
        slug: name
        for q in quotes
        for slug, name in (
            (q.get("gpu"), q.get("gpu_name")),
            (q.get("system"), q.get("system_name")),
        )
        if slug and name
    }


def _owned(data: Frozen) -> Owned:
    figures = ("power_kw_per_gpu", "pue", "electricity_per_kwh", "hosting_per_kw_month",
               "ops_hours_per_month")  # fmt: skip
    return Owned(
        quote_id=data["quote_id"],
        currency=data.get("currency") or data.get("quote_currency") or "",
        capex_per_gpu=data.get("capex_per_gpu"),
        depreciation_months=data.get("depreciation_months"),
        figures={name: data.get(name) for name in figures},
        from_finance_defaults=tuple(_list(data.get("from_finance_defaults"))),
        total_per_gpu_month=data.get("total_per_gpu_month"),
        costed="total_per_gpu_month" in data,
        not_costed=data.get("not_costed"),
    )


def _totals_by_months(totals: list[Any]) -> dict[int, Figure]:
    out: dict[int, Figure] = {}
    for t in map(_dict, totals):
        if isinstance(months := t.get("months"), int):
            out.setdefault(months, t.get("total"))  # the first for a horizon
    return out


def report_of(data: Frozen) -> Report:
    """The report, every default applied here: ``data`` is ``selectors.decision_record_report``'s
    (or a hand-built one with fewer keys)."""
    quote_list = [_dict(q) for q in _list(data.get("quotes"))]
    quotes = {q.get("id"): evidence_of(q) for q in quote_list}
    routes = {r.get("id"): evidence_of(_dict(r)) for r in _list(data.get("api_routes"))}
    names = _gpu_names(quote_list)
    frozen_quotes = {k: v.frozen for k, v in quotes.items()}
    frozen_rows = [_dict(r) for r in _list(data.get("rows"))]

    def labelled(rows: list[Frozen]) -> list[str]:
        """Each row's label: the record's, else worked out among ``rows`` (none two alike)."""
        if all(r.get("label") for r in rows):
            return [str(r["label"]) for r in rows]
        worked = candidate_labels(rows, names, frozen_quotes)
        return [str(r.get("label") or w) for r, w in zip(rows, worked, strict=True)]

    rows = tuple(
        row_of(r, label) for r, label in zip(frozen_rows, labelled(frozen_rows), strict=True)
    )
    chosen_data = _dict(data.get("chosen"))
    chosen_row = None
    if chosen_data.get("row"):
        frozen_chosen = _dict(chosen_data["row"])
        chosen_row = next((r for r in rows if r.frozen is frozen_chosen), None)
        if chosen_row is None:  # not one of the rows: labelled among them, as the last
            label = labelled([*frozen_rows, frozen_chosen])[-1]
            chosen_row = row_of(frozen_chosen, label)
    evidence = _dict(chosen_data.get("evidence"))
    chosen = Chosen(
        kind=chosen_data.get("kind"),
        quote_id=chosen_data.get("quote_id"),
        api_route_id=chosen_data.get("api_route_id"),
        plan_quote_ids=tuple(_list(chosen_data.get("plan_quote_ids"))),
        label=chosen_data.get("label"),
        provider=chosen_data.get("provider"),
        row=chosen_row,
        evidence=evidence_of(evidence) if evidence else None,
    )
    refs = data.get("alternative_refs")
    brief = _dict(data.get("brief"))
    checklist = _dict(data.get("checklist"))
    assumptions = _dict(data.get("assumptions"))
    sensitivity = _dict(data.get("sensitivity"))
    return Report(
        id=data.get("id"),
        title=str(data.get("title") or ""),
        status=data.get("status"),
        team=data.get("team"),
        capacity_model=str(data.get("capacity_model") or ""),
        rationale=str(data.get("rationale") or ""),
        acceptance_criteria=_dict(data.get("acceptance_criteria")),
        required_roles=tuple(_list(data.get("required_roles"))),
        brief=Brief(
            id=brief.get("id"),
            name=brief.get("name"),
            inputs_version=brief.get("inputs_version"),
            workload_type=brief.get("workload_type"),
            model=_dict(brief.get("model")),
            success_unit=brief.get("success_unit"),
            concurrency=brief.get("concurrency"),
            latency_target=brief.get("latency_target"),
        ),
        chosen=chosen,
        alternative_refs=None
        if refs is None
        else tuple(
            AlternativeRef(quote_id=r.get("quote_id"), api_route_id=r.get("api_route_id"))
            for r in map(_dict, _list(refs))
        ),
        alternatives=tuple(str(a) for a in _list(data.get("alternatives"))),
        currency=str(data.get("currency") or ""),
        unit=data.get("unit"),
        computed_at=data.get("computed_at"),
        rows=rows,
        quotes=quotes,
        api_routes=routes,
        owned_hardware=tuple(_owned(_dict(o)) for o in _list(data.get("owned_hardware"))),
        fx_rates=tuple(
            FxRate(
                currency=r.get("currency"),
                rate=r.get("rate"),
                as_of=r.get("as_of"),
                source=r.get("source"),
            )
            for r in map(_dict, _list(data.get("fx_rates")))
        ),
        assumption_values=_dict(assumptions.get("values")),
        assumption_sources=_dict(assumptions.get("sources")),
        sensitivity_summary=tuple(str(s) for s in _list(sensitivity.get("summary"))),
        leading=tuple(
            LeadingTotals(
                key=c.get("key"),
                totals=_totals_by_months(_list(c.get("totals"))),
            )
            for c in map(_dict, _list(sensitivity.get("leading")))
        ),
        not_costed=tuple(
            NotCosted(quote_id=e.get("quote_id"), reason=e.get("reason"))
            for e in map(_dict, _list(data.get("not_costed")))
        ),
        checklist=Checklist(
            answered=int(checklist.get("answered") or 0),
            total=int(checklist.get("total") or 0),
            answers=tuple(
                Answer(
                    frozen=cast(FrozenAnswer, a),  # the snapshot's answer (frozen.py's shape)
                    section=a.get("section"),
                    text=a.get("text", ""),
                    answer=a.get("answer"),
                    answered_by=str(a.get("answered_by") or ""),
                )
                for a in map(_dict, _list(checklist.get("answers")))
            ),
        ),
        checklist_warnings=tuple(
            cast(ChecklistWarning, w) for w in map(_dict, _list(data.get("checklist_warnings")))
        ),
        approvals=tuple(
            Approval(
                frozen=a,
                role=str(a.get("role") or ""),
                verdict=str(a.get("verdict") or ""),
                user=str(a.get("user") or ""),
                created_at=a.get("created_at"),
                reason=str(a.get("reason") or ""),
            )
            for a in map(_dict, _list(data.get("approvals")))
        ),
        audit_trail=tuple(
            AuditEntry(
                created_at=e.get("created_at"),
                action=str(e.get("action") or ""),
                from_status=str(e.get("from_status") or ""),
                to_status=str(e.get("to_status") or ""),
                role=str(e.get("role") or ""),
                actor=str(e.get("actor") or ""),
                reason=str(e.get("reason") or ""),
            )
            for e in map(_dict, _list(data.get("audit_trail")))
        ),
        content_hash=str(data.get("content_hash") or ""),
        engine_version=data.get("engine_version"),
        frozen_at=data.get("frozen_at"),
    )


def as_report(report: Report | Frozen) -> Report:
    """The typed report, from ``selectors.decision_record_report``'s plain data (``report_of``)
    or as it is."""
    return report if isinstance(report, Report) else report_of(report)
