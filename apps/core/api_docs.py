"""The API reference as a reader meets it (/api/docs/): one tag per resource, a summary and a
description on every operation. The schema stays generated (drf-spectacular reads the views);
this module only adds the words, applied by apps.core.schema's post-processing hook, and a test
(tests/functional/test_api_docs.py) fails when an operation has none."""

import re
from typing import Any, Final

#: Each resource's tag (by the first path segment after /api/v1/), in the order the reference
#: lists them, with what it is for.
TAGS: Final = (
    ("Estimate", "The engine's answer for a brief not saved: fit, latency, throughput per GPU."),
    ("Briefs", "Workload briefs: what a team needs to run, the input of every ranking."),
    ("Rankings", "A brief's candidate table: every quote and API route costed and ranked."),
    ("GPU catalog", "GPUs with their datasheet figures and sources."),
    ("Model presets", "The models the engine knows by name."),
    ("Providers", "The companies quotes and API routes come from."),
    ("Quotes", "Providers' GPU offers (hourly, reserved, owned), entered, imported, retired."),
    ("API routes", "Models served by a provider's API, priced per million tokens."),
    ("FX rates", "Finance's exchange rates, with which quotes in other currencies are costed."),
    ("Benchmark runs", "Measured runs that replace or calibrate the engine's estimates."),
    ("Procurement checklist", "The questions procurement answers of each quote, with evidence."),
    ("Decision records", "A frozen decision: its evidence, review by role, approval, exports."),
)
_TAG_BY_SEGMENT: Final = {
    "estimate": "Estimate",
    "briefs": "Briefs",
    "gpus": "GPU catalog",
    "models": "Model presets",
    "providers": "Providers",
    "quotes": "Quotes",
    "api-routes": "API routes",
    "fx-rates": "FX rates",
    "benchmark-runs": "Benchmark runs",
    "checklist": "Procurement checklist",
    "decision-records": "Decision records",
}
# Operations under another resource's path that are a resource of their own.
_TAG_BY_PATH: Final = ((re.compile(r"/briefs/\{[^}]+\}/rankings$"), "Rankings"),)

#: operationId -> (summary, description). The description says what the operation does, who
#: may call it and what it refuses; the fields are described by the schema itself.
OPERATIONS: Final[dict[str, tuple[str, str]]] = {
    "v1_estimate_create": (
        "Estimate a brief without saving it",
        "Takes a brief in the contract's shape (docs/design.md) and answers, per catalog GPU "
        "(or the `gpus` given, at `gpu_count` when given): memory fit and headroom, the "
        "parallel layout, latency and throughput, capacity at the latency target, and the "
        "notes that explain them. Bad input is a 400 naming the field. Any signed-in role.",
    ),
    "v1_models_list": (
        "List the model presets",
        "Every model preset the engine knows, by slug and name, with its shape (parameters, "
        'layers, heads, experts). Use a slug as `{"model": {"preset": slug}}`.',
    ),
    "v1_briefs_list": (
        "List briefs",
        "The workload briefs of your teams, newest first, each with what it still needs for a "
        "ranking (`missing_fields`).",
    ),
    "v1_briefs_create": (
        "Create a brief",
        "The estimate body plus the brief's own fields (name, team, duty cycle, operating "
        "boundary, acceptance rate …). A brief may be saved incomplete: it then names what is "
        "missing and has no ranking. Platform role only; its candidate table is computed after "
        "the save.",
    ),
    "v1_briefs_retrieve": ("Read a brief", "One brief of your teams, in the contract's shape."),
    "v1_briefs_partial_update": (
        "Change a brief",
        "Changes the fields given (the others stay); the brief's candidate table is recomputed "
        "after the change. Platform role only.",
    ),
    "v1_briefs_estimate_retrieve": (
        "Estimate a stored brief",
        "The engine's per-GPU answer for a stored brief, in the same shape as `POST "
        "/api/v1/estimate`, calibrated by the team's benchmark runs of the brief's model.",
    ),
    "v1_briefs_rankings_retrieve": (
        "Read a brief's ranked candidate table",
        "Every applicable quote and API route costed for the brief, best first: each row's "
        "configuration, cost lines, accepted outputs, effective unit cost (in the table's "
        "`unit`, e.g. per 1M accepted tokens), basis and, for a row that fails the brief, "
        "`why_not`. `not_costed` lists what could not be costed and why (a missing FX rate); "
        "`capacity_model` compares rent, reserve, buy and API; `sensitivity` says what would "
        "change the winner. Filters: `basis`, `pricing_term`, `meets_constraints`; `?limit=`; "
        "`?format=csv` for a spreadsheet-safe CSV.",
    ),
    "v1_gpus_list": (
        "List GPUs",
        "The GPU catalog with datasheet figures (dense compute, memory, bandwidth, power) and "
        "their sources. Filters: `vendor`, `architecture`, `min_memory_gb`, `max_memory_gb`.",
    ),
    "v1_gpus_retrieve": ("Read a GPU", "One catalog GPU by slug, with its systems."),
    "v1_providers_list": ("List providers", "Every provider, by name, with its website."),
    "v1_providers_create": (
        "Create a provider",
        "A provider's name (unique, ignoring case) and website. Procurement role only.",
    ),
    "v1_providers_retrieve": ("Read a provider", "One provider: its name and website."),
    "v1_providers_partial_update": (
        "Change a provider",
        "Renames a provider or changes its website. Procurement role only.",
    ),
    "v1_quotes_list": (
        "List quotes",
        "The quotes you may see (public ones and your teams' confidential ones), with their "
        "age and staleness; retired quotes with `?retired=1`.",
    ),
    "v1_quotes_create": (
        "Create a quote",
        "One provider's offer for one GPU or system, region and pricing term, in its own "
        "currency; an owned (bought) quote gives its capex per GPU and depreciation months. "
        "Procurement role only; the candidate tables it applies to are recomputed.",
    ),
    "v1_quotes_retrieve": (
        "Read a quote",
        "One quote you may see, with its price, terms, validity and who entered it.",
    ),
    "v1_quotes_partial_update": (
        "Change a quote",
        "Changes the fields given; a new price is a new version, and the rows that use the "
        "quote are re-costed. Procurement role only.",
    ),
    "v1_quotes_retire_create": (
        "Retire a quote",
        "Takes a quote out of every candidate table; decision records that cite it keep it. "
        "Quotes are never deleted. Procurement role only.",
    ),
    "v1_quotes_import_create": (
        "Import quotes from a CSV",
        "A CSV of quotes (the columns of /quotes/import/template.csv), validated as a whole: "
        "any bad row and nothing is saved, every row's problem listed. Procurement role only.",
    ),
    "v1_quotes_import_catalog_create": (
        "Import quotes from a GPU price catalog",
        "A SkyPilot `vms.csv` or gpuhunt catalog CSV for one provider, imported as a whole: one "
        "quote per GPU, region and term at the cheapest zone's price per GPU; a re-import "
        "updates those quotes in place. Procurement role only.",
    ),
    "v1_api_routes_list": (
        "List API routes",
        "Models served by providers' APIs, priced per million input and output tokens.",
    ),
    "v1_api_routes_create": (
        "Create an API route",
        "A provider's model API with its prices per 1M tokens (and batch discount, rate "
        "limit). Procurement role only.",
    ),
    "v1_api_routes_retrieve": (
        "Read an API route",
        "One API route with its prices per 1M tokens and where they came from.",
    ),
    "v1_api_routes_partial_update": (
        "Change an API route",
        "Changes the fields given; the rows that use the route are re-costed. Procurement "
        "role only.",
    ),
    "v1_api_routes_retire_create": (
        "Retire an API route",
        "Takes a route out of every candidate table; decision records that cite it keep it. "
        "Procurement role only.",
    ),
    "v1_fx_rates_list": (
        "List FX rates",
        "Every FX rate entered, newest first per currency; the newest `as_of` of each "
        "currency is the one applied.",
    ),
    "v1_fx_rates_create": (
        "Add an FX rate",
        "A rate of the base currency per one unit of another currency, valid from `as_of`, "
        "with its source. Rates are never edited; a new one recomputes every candidate table. "
        "Finance role only.",
    ),
    "v1_benchmark_runs_list": (
        "List benchmark runs",
        "Runs of your teams. Filters: `brief`, `gpu`, `phase`, `current=true`.",
    ),
    "v1_benchmark_runs_create": (
        "Record a benchmark run by hand",
        "A memory-fit or failure-and-operations run entered as figures (no results file). "
        "Platform role only.",
    ),
    "v1_benchmark_runs_retrieve": (
        "Read a benchmark run",
        "One run with its conditions, canonical results (each with the tool's own name for it) "
        "and the engine's estimate at import.",
    ),
    "v1_benchmark_runs_raw_retrieve": (
        "Download a run's results file",
        "The results file exactly as imported, as an attachment.",
    ),
    "v1_benchmark_runs_import_create": (
        "Import a benchmark tool's results file",
        "A results file as the tool wrote it (vllm bench serve, GuideLLM, AIPerf, GenAI-Perf, "
        "llmperf, inference-perf, MLPerf Endpoints, trtllm-bench, SGLang bench_serving), for a "
        "brief and a candidate GPU. A file naming another model than the brief's is refused "
        "unless `proxy=true`. Platform role only.",
    ),
    "v1_checklist_quotes_retrieve": (
        "Read a quote's procurement checklist",
        "Every question by section with its answer, evidence (text, link, file name, size and "
        "SHA-256) and whether it is a must-have whose No or Partial warns decision records.",
    ),
    "v1_checklist_quotes_create": (
        "Answer a checklist question",
        "Answers (or re-answers) one question with its evidence text and link; the same as "
        "PUT. Evidence files are attached on the checklist page. Procurement role only.",
    ),
    "v1_checklist_quotes_update": (
        "Answer a checklist question",
        "Answers (or re-answers) one question with its evidence text and link. Procurement "
        "role only.",
    ),
    "v1_checklist_quotes_evidence_retrieve": (
        "Download an answer's evidence file",
        "The evidence file as uploaded, as an attachment, to whoever may see the quote.",
    ),
    "v1_decision_records_list": (
        "List decision records",
        "The decision records of your teams, with their status and chosen candidate.",
    ),
    "v1_decision_records_create": (
        "Open a decision record",
        "Opens a DRAFT for one candidate of a brief's table (a quote or an API route), and "
        "freezes its evidence: the candidate table, quotes, checklist, benchmark runs, "
        "assumptions and FX rates, with a content hash. Platform, finance or procurement.",
    ),
    "v1_decision_records_retrieve": (
        "Read a decision record",
        "The record with its snapshot summary, approvals (with their comments and the "
        "checklist warnings acknowledged), audit trail and what changed since freezing.",
    ),
    "v1_decision_records_partial_update": (
        "Change a draft",
        "Changes a DRAFT's title, rationale, roles, alternatives or criteria; a record past "
        "draft is a 409.",
    ),
    "v1_decision_records_refresh_create": (
        "Re-freeze a draft's evidence",
        "Freezes a DRAFT's evidence again from today's inputs.",
    ),
    "v1_decision_records_submit_create": (
        "Submit a draft for review",
        "Sends a DRAFT for review under one of its roles; the submitter then approves for no role.",
    ),
    "v1_decision_records_approve_create": (
        "Approve for a role",
        "Approves for one of the record's roles, with a `comment` shown on the record and its "
        "PDF. When the frozen checklist answers No or Partial to a must-have question, the "
        "approval needs `acknowledge_warnings: true` and a comment saying why (else a 400 "
        "naming the field). The record is approved once every role has.",
    ),
    "v1_decision_records_reject_create": (
        "Reject for a role",
        "Rejects the record for one of its roles; `reason` is required.",
    ),
    "v1_decision_records_supersede_create": (
        "Open a successor of an approved record",
        "Opens a new DRAFT that supersedes this APPROVED record once it is approved itself.",
    ),
    "v1_decision_records_verify_retrieve": (
        "Verify a record against its hash",
        "Recomputes the stored snapshot's content hash and compares it with the record's.",
    ),
    "v1_decision_records_export.csv_retrieve": (
        "Export a record as CSV",
        "The frozen candidate table of the record, one row per candidate.",
    ),
    "v1_decision_records_export.pdf_retrieve": (
        "Export a record as PDF",
        "The record as a buyer signs it: commercial summary, the chosen candidate and the "
        "alternatives, assumptions, FX rates, checklist, approvals and the content hash.",
    ),
}

#: Where the reference points back to the app.
APP_LINK = "/"


def tag_for(path: str) -> str:
    """The resource an operation's path belongs to."""
    for pattern, tag in _TAG_BY_PATH:
        if pattern.search(path):
            return tag
    segment = path.removeprefix("/api/v1/").split("/", 1)[0]
    return _TAG_BY_SEGMENT.get(segment, segment.replace("-", " ").capitalize())


def document_operations(result: dict[str, Any]) -> dict[str, Any]:
    """Tag each operation by its resource, give it its summary and description, and list the
    tags with what each is for; the schema's description links back to the app."""
    for path, path_item in result.get("paths", {}).items():
        for _method, operation in path_item.items():
            if not isinstance(operation, dict) or "operationId" not in operation:
                continue
            operation["tags"] = [tag_for(path)]
            words = OPERATIONS.get(operation["operationId"])
            if words is not None:
                operation["summary"], operation["description"] = words
    result["tags"] = [{"name": name, "description": text} for name, text in TAGS]
    info = result.setdefault("info", {})
    info["description"] = (
        f"{info.get('description', '').strip()}\n\n"
        f"[← Back to the app]({APP_LINK}) · Sign in there, or send a token from the app's "
        "API tokens page (/account/tokens/) as `Authorization: Token <key>`. Every error is "
        '`{"detail": …}`, naming the field for a 400.'
    ).strip()
    return result
