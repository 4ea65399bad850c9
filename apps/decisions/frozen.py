"""The one shape of a decision record's frozen snapshot (``DecisionRecord.snapshot``) as
apps.decisions.snapshot writes it and its readers (selectors, views, the CSV, the PDF's plain
report) read it.

What is stored is the JSON ``snapshot._plain`` gives: decimals and floats as strings, dates and
times as ISO strings, dictionary keys as strings. These types describe that stored JSON, not
the Python values it was built from.

Every section is ``total=False``: a record frozen by an older build may lack any key (the
``owned_hardware`` table, ``fx_rates``, a quote's ``gpu_name`` or ``minimum_commitment_months``,
an answer's ``evidence_file``, ``plan_checklists``...), so readers read with ``.get`` and say
"not recorded" where a key is missing. Nothing here changes the stored JSON: the snapshot is
hashed (``snapshot.content_hash``) and append-only once a record leaves DRAFT.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict, cast

from apps.finance.shown import (
    CapacityModel,
    NotCostedEntry,
    Sensitivity,
    ShownRow,
)

if TYPE_CHECKING:  # the model is only named here: no import of the ORM for these types
    from .models import DecisionRecord

# The contract's nested bodies of a brief (model, latency_target, training, image ...): their
# shape is apps.briefs.contract's, frozen as given (after ``_plain``); read key by key by the
# few readers that show them.
BodyJson = dict[str, Any]


class FrozenBrief(TypedDict, total=False):
    """The brief as ``contract.brief_to_body`` gives it, with its id and inputs version (numbers
    that are not integers as strings). Older records may lack any key."""

    id: int
    inputs_version: int
    name: str
    description: str
    workload_type: str
    weight_precision: str | None
    kv_cache_precision: str | None
    context_window: int | None
    concurrency: int | None
    requests_per_second: str | int | None
    records_per_job: int | None
    success_unit: str | None
    acceptance_rate: str | int | None
    duty_cycle: str | int | None
    hours_per_month: str | int | None
    operating_boundary: str | None
    tooling: str | None
    tolerates_interruptions: bool | None
    speculative: BodyJson | None
    model: BodyJson | None
    input_tokens: BodyJson | None
    output_tokens: BodyJson | None
    latency_target: BodyJson | None
    request_size_buckets: list[BodyJson] | None
    image: BodyJson
    video: BodyJson
    training: BodyJson


class FrozenChosen(TypedDict, total=False):
    """What the record chose: a quote, an API route or a serving plan (``plan``: its candidate
    kind, with its parts' quotes in the plan's order). Records from before plans lack
    ``plan`` and ``plan_quote_ids``."""

    quote_id: int | None
    api_route_id: int | None
    plan: str | None
    plan_quote_ids: list[int]


class FrozenTable(TypedDict, total=False):
    """The candidate table as frozen (``finance.shown.Ranking`` less what a record does not keep:
    the brief id, ``pending``, ``total_rows``, the plans not listed and the capacity curve).
    ``computed_at`` is an ISO string; ``unit_scale`` is read with ``int()`` (builds before
    aa2579b wrote some scales as strings). Older records lack ``success_unit``, ``unit_scale``,
    ``capacity_model``, ``sensitivity`` or ``not_costed``; their rows
    lack the keys later builds added (``shown.ShownRow``'s readers read with ``.get``), and the
    rows' floats (a MIX part's ``request_share``) are strings after ``_plain``."""

    computed_at: str | None
    stale: bool
    currency: str | None
    unit: str | None
    success_unit: str | None
    unit_scale: int | str | None
    no_ranking_reason: str | None
    capacity_model: CapacityModel
    sensitivity: Sensitivity
    rows: list[ShownRow]
    not_costed: list[NotCostedEntry]


class FrozenQuote(TypedDict, total=False):
    """A quote as ``snapshot.quote_evidence`` froze it (amounts as strings, dates ISO). Records
    frozen before the names lack ``gpu_name`` / ``system_name``; before commitments,
    ``minimum_commitment_months``; the owned fields (``quotes.models.OWNED_FIELDS``) likewise."""

    id: int
    version: int
    provider: str
    gpu: str | None
    gpu_name: str | None
    system: str | None
    system_name: str | None
    gpus_per_node: int | None
    region: str | None
    pricing_term: str | None
    hourly_price_per_gpu: str | None
    currency: str | None
    storage_price_per_tb_month: str | None
    egress_price_per_gb: str | None
    network_monthly: str | None
    monthly_extras: str | None
    minimum_commitment_months: int | None
    capex_per_gpu: str | None
    depreciation_months: int | None
    power_kw_per_gpu: str | None
    pue: str | None
    electricity_per_kwh: str | None
    hosting_per_kw_month: str | None
    ops_hours_per_month: str | None
    quote_date: str | None
    valid_until: str | None
    source: str | None
    retired: bool


class FrozenRoute(TypedDict, total=False):
    """An API route as ``snapshot.route_evidence`` froze it (older records lack
    ``quote_date``)."""

    id: int
    version: int
    provider: str
    model: str
    input_price_per_mtok: str | None
    output_price_per_mtok: str | None
    currency: str | None
    batch_discount: str | None
    rate_limit_rpm: int | None
    quote_date: str | None
    source: str | None


class FrozenOwned(TypedDict, total=False):
    """An owned quote's capex inputs (``finance.owned.OwnedHardware`` after ``_plain``: amounts
    as strings). Not costed: no ``currency`` nor per-month figures, and ``not_costed`` says why."""

    quote_id: int
    quote_currency: str
    currency: str
    capex_per_gpu: str | None
    depreciation_months: int | None
    not_costed: str
    power_kw_per_gpu: str
    pue: str
    electricity_per_kwh: str
    hosting_per_kw_month: str
    ops_hours_per_month: str
    labour_rate_per_hour: str
    from_finance_defaults: list[str]
    depreciation_per_gpu_month: str
    power_per_gpu_month: str
    hosting_per_gpu_month: str
    operations_per_gpu_month: str
    total_per_gpu_month: str


class FrozenRun(TypedDict, total=False):
    """A benchmark run of the brief, as frozen (its ``results`` as the run stored them)."""

    id: int
    gpu: str
    gpu_count: int
    phase: str
    tool: str
    tool_version: str
    results: BodyJson
    raw_sha256: str
    superseded: bool


class FrozenAssumptions(TypedDict, total=False):
    """Every finance assumption's value (as a string, or an integer) and its source, by name."""

    values: dict[str, str | int | None]
    sources: dict[str, str]


class FrozenFxRate(TypedDict, total=False):
    """An FX rate the frozen figures were converted with (``finance.fx.fx_rates_json``)."""

    currency: str
    id: int
    rate: str
    as_of: str | None
    source: str


class FrozenEvidenceFile(TypedDict):
    """An answer's evidence file: its uploaded name, size and SHA-256 (``bytes`` None and
    ``sha256`` "" for a file missing from storage when frozen)."""

    name: str
    bytes: int | None
    sha256: str


class FrozenAnswer(TypedDict, total=False):
    """A checklist question with the team's answer (``answer`` None when unanswered). Records
    frozen before issue 27 hold ``evidence`` alone, without ``evidence_text``, ``evidence_link``
    and ``evidence_file``."""

    question: str
    section: str
    text: str
    answer: str | None
    evidence: str
    evidence_text: str
    evidence_link: str
    evidence_file: FrozenEvidenceFile | None
    answered_by: str | None


class FrozenChecklist(TypedDict, total=False):
    """A quote's procurement checklist as its team answered it (``snapshot.checklist_evidence``)."""

    answered: int
    total: int
    answers: list[FrozenAnswer]


class FrozenInputs(TypedDict, total=False):
    """What the figures rest on (``snapshot.inputs_fingerprint``): versions by id (keys are
    strings once frozen), run ids, the finance assumptions' versions."""

    brief_version: int
    quotes: dict[str, int]
    api_routes: dict[str, int]
    benchmark_runs: list[int]
    assumptions: list[int]


class Snapshot(TypedDict, total=False):
    """A decision record's frozen evidence (``snapshot.build_snapshot``). ``{}`` for a record
    that never froze any; an older build's snapshot lacks the sections added since."""

    format: int
    engine_version: str
    brief: FrozenBrief
    chosen: FrozenChosen
    acceptance_criteria: BodyJson
    candidate_table: FrozenTable
    quotes: list[FrozenQuote]
    api_routes: list[FrozenRoute]
    owned_hardware: list[FrozenOwned]
    benchmark_runs: list[FrozenRun]
    assumptions: FrozenAssumptions
    fx_rates: list[FrozenFxRate]
    # The chosen quote's checklist; a plan's: its first part's, and each part's below.
    checklist: FrozenChecklist
    plan_checklists: list[FrozenChecklist]
    inputs: FrozenInputs


def snapshot_of(record: DecisionRecord) -> Snapshot:
    """The record's stored snapshot read as a ``Snapshot``: the one place the JSON field is
    taken for one. The same dict, not a copy."""
    return cast(Snapshot, record.snapshot)
