"""The frozen evidence of a decision record, its canonical JSON and its SHA-256 hash."""

import hashlib
import json
from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal
from typing import Any, cast

from django.core.exceptions import ValidationError

from apps.benchmarks.models import BenchmarkRun
from apps.briefs.contract import brief_to_body
from apps.briefs.models import WorkloadBrief
from apps.core.currency import BASE_CURRENCY
from apps.core.files import file_size_and_sha256
from apps.engine import ENGINE_VERSION
from apps.finance.assumptions import (
    assumption_values,
    assumptions_version,
    resolved_assumptions,
)
from apps.finance.fx import fx_rates_json
from apps.finance.owned import owned_hardware_inputs
from apps.finance.selectors import ranking_for_brief
from apps.quotes.models import OWNED_FIELDS, ApiRoute, Quote

from .checklist import QUESTIONS
from .frozen import (
    FrozenAnswer,
    FrozenChecklist,
    FrozenEvidenceFile,
    FrozenInputs,
    Snapshot,
)
from .models import ChecklistAnswer

SNAPSHOT_FORMAT = 1


def _plain(value: Any) -> Any:
    """JSON that survives any database's JSON type unchanged: numbers that are not integers
    become strings (jsonb and SQLite may re-spell floats), dates ISO strings, keys sorted."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, int | str):
        return value
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    return str(value)


def canonical_json(snapshot: Mapping[str, object]) -> str:
    return json.dumps(snapshot, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(snapshot: Mapping[str, object]) -> str:
    return hashlib.sha256(canonical_json(snapshot).encode("utf-8")).hexdigest()


def quote_evidence(quote: Quote) -> dict[str, Any]:
    """The quote as a record freezes it: before ``_plain`` (decimals, dates); frozen, a
    ``frozen.FrozenQuote``."""
    return {
        "id": quote.pk,
        "version": quote.version,
        "provider": quote.provider.name,
        "gpu": quote.gpu.slug if quote.gpu else None,
        # The names a buyer reads on the decision PDF (records frozen before: the slugs).
        "gpu_name": quote.gpu.name if quote.gpu else None,
        "system": quote.system.slug if quote.system else None,
        "system_name": quote.system.name if quote.system else None,
        "gpus_per_node": quote.gpus_per_node,
        "region": quote.region,
        "pricing_term": quote.pricing_term,
        "hourly_price_per_gpu": quote.hourly_price_per_gpu,
        "currency": quote.currency,
        "storage_price_per_tb_month": quote.storage_price_per_tb_month,
        "egress_price_per_gb": quote.egress_price_per_gb,
        "network_monthly": quote.network_monthly,
        "monthly_extras": quote.monthly_extras,
        "minimum_commitment_months": quote.minimum_commitment_months,
        **{name: getattr(quote, name) for name in OWNED_FIELDS},
        "quote_date": quote.quote_date,
        "valid_until": quote.valid_until,
        "source": quote.source,
        "retired": quote.retired,
    }


def route_evidence(route: ApiRoute) -> dict[str, Any]:
    """The API route as a record freezes it: before ``_plain``; frozen, a
    ``frozen.FrozenRoute``."""
    return {
        "id": route.pk,
        "version": route.version,
        "provider": route.provider.name,
        "model": route.model,
        "input_price_per_mtok": route.input_price_per_mtok,
        "output_price_per_mtok": route.output_price_per_mtok,
        "currency": route.currency,
        "batch_discount": route.batch_discount,
        "rate_limit_rpm": route.rate_limit_rpm,
        "quote_date": route.quote_date,  # the PDF's quote date (older records: "not recorded")
        "source": route.source,
    }


def evidence_file_frozen(answer: ChecklistAnswer) -> FrozenEvidenceFile | None:
    """An answer's evidence file as a record freezes it: {"name", "bytes", "sha256"} (None
    without one). A file stored before answers kept its size and hash is read for them."""
    if not answer.evidence_file:
        return None
    size, sha256 = answer.evidence_bytes, answer.evidence_sha256
    if size is None or not sha256:
        try:
            with answer.evidence_file.open("rb") as stored:
                size, sha256 = file_size_and_sha256(stored)
        except OSError:  # a file missing from storage is frozen by its name alone
            size, sha256 = None, ""
    return {"name": answer.evidence_download_name, "bytes": size, "sha256": sha256}


def checklist_evidence(*, quote: Quote | None, team_id: int) -> FrozenChecklist:
    """The chosen quote's checklist, as answered by the record's team (``team_id``; other
    teams' answers are theirs), as a record freezes it. Each answer keeps ``evidence`` (its
    text, else its link: what records frozen before the fields below hold) and, since issue 27,
    ``evidence_text``, ``evidence_link`` and ``evidence_file`` (name, size and SHA-256)."""
    if quote is None:
        return {"answered": 0, "total": len(QUESTIONS), "answers": []}
    answers = {
        a.question: a
        for a in ChecklistAnswer.objects.filter(quote=quote, team_id=team_id).select_related(
            "answered_by"
        )
    }
    frozen: list[FrozenAnswer] = []
    for q in QUESTIONS:
        a = answers.get(q.key)
        frozen.append(
            {
                "question": q.key,
                "section": q.section,
                "text": q.text,
                "answer": a.answer if a else None,
                "evidence": (a.evidence_text or a.evidence_link) if a else "",
                "evidence_text": a.evidence_text if a else "",
                "evidence_link": a.evidence_link if a else "",
                "evidence_file": evidence_file_frozen(a) if a else None,
                "answered_by": a.answered_by.get_username() if a else None,
            }
        )
    return {"answered": len(answers), "total": len(QUESTIONS), "answers": frozen}


def fx_rates_frozen(
    applied: dict[str, dict[str, Any]], currencies: set[Any]
) -> list[dict[str, Any]]:
    """The FX rates the frozen figures were converted with: those of the currencies of the
    frozen quotes and routes and of the reporting currency (the base currency needs none)."""
    return [
        {"currency": code, **applied[code]}
        for code in sorted(c for c in currencies if c and c != BASE_CURRENCY and c in applied)
    ]


def inputs_fingerprint(
    brief: WorkloadBrief, quote_ids: list[int], route_ids: list[int]
) -> FrozenInputs:
    """What the snapshot's figures rest on; compared later to say "inputs have changed"."""
    return cast(
        FrozenInputs,
        _plain(
            {
                "brief_version": brief.inputs_version,
                "quotes": dict(Quote.objects.filter(pk__in=quote_ids).values_list("pk", "version")),
                "api_routes": dict(
                    ApiRoute.objects.filter(pk__in=route_ids).values_list("pk", "version")
                ),
                "benchmark_runs": sorted(
                    BenchmarkRun.objects.filter(brief=brief).values_list("pk", flat=True)
                ),
                "assumptions": assumptions_version(brief),
            }
        ),
    )


def build_snapshot(
    *,
    brief: WorkloadBrief,
    chosen_quote: Quote | None,
    chosen_api_route: ApiRoute | None,
    acceptance_criteria: dict[str, Any],
    team_id: int | None = None,
    chosen_plan: str = "",
) -> Snapshot:
    """The evidence as ``team_id`` (the record's team; default the brief's) may see it: the
    candidate rows of quotes confidential to another team are never frozen."""
    ranking = ranking_for_brief(brief, team_id=team_id)
    team_id = brief.team_id if team_id is None else team_id
    quote_ids = sorted({r["quote_id"] for r in ranking["rows"] if r["quote_id"]})
    route_ids = sorted({r["api_route_id"] for r in ranking["rows"] if r["api_route_id"]})
    if chosen_quote is not None and chosen_quote.pk not in quote_ids:
        quote_ids.append(chosen_quote.pk)
    # A chosen serving plan: its row, and its parts' quotes, in the plan's order.
    plan_row = next(
        (r for r in ranking["rows"] if chosen_plan and r["candidate_kind"] == chosen_plan), None
    )
    if chosen_plan and plan_row is None:
        raise ValidationError({"chosen_plan": f"the table has no {chosen_plan} row to choose"})
    plan_quote_ids = list(plan_row["plan_quote_ids"]) if plan_row else []
    quote_ids += [pk for pk in plan_quote_ids if pk not in quote_ids]
    # The quotes the table could not cost (a missing FX rate) are frozen too, so that the
    # record can say whose quote was left out and on what terms.
    for entry in ranking["not_costed"]:
        if (qid := entry.get("quote_id")) and qid not in quote_ids:
            quote_ids.append(qid)
    if chosen_api_route is not None and chosen_api_route.pk not in route_ids:
        route_ids.append(chosen_api_route.pk)
    quotes = Quote.objects.filter(pk__in=quote_ids).select_related("provider", "gpu", "system")
    routes = ApiRoute.objects.filter(pk__in=route_ids).select_related("provider")
    runs = BenchmarkRun.objects.filter(brief=brief).select_related("gpu").order_by("pk")
    assumptions = resolved_assumptions(brief)
    values, sources = assumption_values(assumptions), assumptions.sources
    owned_hardware = owned_hardware_inputs(quote_ids, assumptions)
    fx_rates = fx_rates_frozen(
        fx_rates_json(assumptions.fx_rates),
        {q.currency for q in quotes} | {r.currency for r in routes} | {ranking["currency"]},
    )
    snapshot = {
        "format": SNAPSHOT_FORMAT,
        "engine_version": ENGINE_VERSION,
        "brief": {"id": brief.pk, "inputs_version": brief.inputs_version, **brief_to_body(brief)},
        "chosen": {
            "quote_id": chosen_quote.pk if chosen_quote else None,
            "api_route_id": chosen_api_route.pk if chosen_api_route else None,
            "plan": chosen_plan or None,
            "plan_quote_ids": plan_quote_ids,
        },
        "acceptance_criteria": acceptance_criteria,
        "candidate_table": {
            "computed_at": ranking["computed_at"],
            "stale": ranking["stale"],
            "currency": ranking["currency"],
            "unit": ranking["unit"],  # in words; the rows' unit costs are in it
            "success_unit": ranking["success_unit"],
            "unit_scale": ranking["unit_scale"],
            "no_ranking_reason": ranking["no_ranking_reason"],
            "capacity_model": {k: v for k, v in ranking["capacity_model"].items() if k != "curve"},
            "sensitivity": ranking["sensitivity"],
            "rows": ranking["rows"],
            "not_costed": ranking["not_costed"],
        },
        "quotes": [quote_evidence(q) for q in quotes.order_by("pk")],
        "api_routes": [route_evidence(r) for r in routes.order_by("pk")],
        # The capex inputs of every owned row: the quote's figures and the defaults used.
        "owned_hardware": owned_hardware,
        "benchmark_runs": [
            {
                "id": run.pk,
                "gpu": run.gpu.slug,
                "gpu_count": run.gpu_count,
                "phase": run.phase,
                "tool": run.tool,
                "tool_version": run.tool_version,
                "results": run.results,
                "raw_sha256": run.raw_sha256,
                "superseded": run.superseded_by_id is not None,
            }
            for run in runs
        ],
        "assumptions": {"values": values, "sources": sources},
        "fx_rates": fx_rates,
        # The chosen quote's checklist; a plan's: its first part's, and every part's below.
        "checklist": checklist_evidence(
            quote=chosen_quote
            if chosen_quote is not None or not plan_quote_ids
            else Quote.objects.filter(pk=plan_quote_ids[0]).first(),
            team_id=team_id,
        ),
        "plan_checklists": [
            checklist_evidence(quote=q, team_id=team_id)
            for q in Quote.objects.filter(pk__in=plan_quote_ids)
        ],
        "inputs": inputs_fingerprint(brief, quote_ids, route_ids),
    }
    # Stored as ``_plain`` gives it: the shape ``frozen.Snapshot`` describes.
    return cast(Snapshot, _plain(snapshot))
