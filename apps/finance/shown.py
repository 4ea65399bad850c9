"""The one shape of a shown row: a candidate row as the rankings (JSON and CSV), the finance
page, the charts and a decision record's snapshot give it (``selectors.row_json`` builds it).
Decimals travel as strings so that they round-trip exactly; the serving plan is its stored
JSON (``state.Row.plan_json``). A snapshot written by an older build may lack a key, so
readers of snapshot rows read with ``.get``; the page adds its ``display_*`` cells
(``lines.candidate_table_display``) and the charts a ``chart_label`` to the rows they show.

These are typed dicts, not dataclasses, because the same value is the API's JSON, the cached
ranking and the stored snapshot: no conversion per row on the hot path. The ranking as a whole
(``Ranking``: the rows, the rent / reserve / buy comparison, the sensitivity, what was not
costed) is typed here too, for the same reason."""

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, NotRequired, TypedDict, cast

# A serving plan's stored JSON (apps.finance.plans, encoded by ``state.Row.plan_json``): opaque
# here (its shape is ``state``'s codec's, of MixPlan / DisaggPlan), passed through and read key
# by key by its few readers.
PlanJson = dict[str, Any]


class ShownConfiguration(TypedDict):
    """``state.Configuration`` as a shown row gives it."""

    gpu: str | None
    gpus_per_replica: int | None
    replicas: int | None
    paid_gpus: int
    layout: str | None
    pricing_term: str | None
    hours_billed_per_month: str | None
    text: str


class ShownFigures(TypedDict):
    """``state.Figures`` as a shown row gives it."""

    fit: str | None
    ttft_p95_ms: str | None
    itl_p95_ms: str | None
    latency_p95_ms: str | None
    throughput: str | None
    throughput_unit: str | None
    memory_headroom_gb: str | None
    in_flight_per_replica: int | None
    time_to_train_days: str | None
    energy_kwh_per_month: str | None
    energy_j_per_output: str | None
    co2e_kg_per_month: str | None


class ShownBucket(TypedDict):
    """A request-size bucket a MIX part serves, with the share of its requests it takes."""

    input_tokens: int
    output_tokens: int
    share_served: float


class ShownMixPart(TypedDict):
    """One GPU type of a MIX row."""

    gpu: str
    gpu_count: int
    replicas: int
    quote_id: int
    pricing_term: str
    request_share: float
    monthly_cost: str
    buckets: list[ShownBucket]


class ShownRow(TypedDict):
    """A candidate row as readers see it (``selectors.row_json``)."""

    rank: int | None
    candidate_kind: str
    provider: str | None
    gpu: str | None
    system: str | None
    # The quote's region (None for an API route or a serving plan): tells two offers alike in
    # provider, GPU and term apart on a chart.
    region: str | None
    api_model: str | None
    gpu_count: int | None
    replicas: int | None
    paid_gpus: int | None
    pricing_term: str | None
    quote_id: int | None
    api_route_id: int | None
    plan_quote_ids: list[int]
    configuration: ShownConfiguration
    figures: ShownFigures
    cost_lines: dict[str, str]
    monthly_cost: str | None
    vendor_monthly_cost: str | None
    accepted_outputs_per_month: str | None
    effective_unit_cost: str | None
    meets_constraints: bool
    why_not: list[str]
    basis: str
    p95_latency_ms: str | None
    memory_headroom_gb: str | None
    layout: str | None
    paid_gpu_hours_per_month: str | None
    energy_kwh_per_month: str | None
    energy_j_per_output: str | None
    co2e_kg_per_month: str | None
    mix: list[ShownMixPart] | None
    pools: list[PlanJson] | None
    plan: PlanJson | None
    quote_age_days: int | None
    quote_stale: bool | None
    notes: list[str]
    # What the page adds (lines.candidate_table_display) and the charts (charts.label_rows).
    display_candidate: NotRequired[str]
    display_term: NotRequired[str]
    display_configuration: NotRequired[str]
    display_layout: NotRequired[str | None]
    display_unit_cost: NotRequired[str]
    display_monthly_cost: NotRequired[str]
    display_basis: NotRequired[str]
    display_reasons: NotRequired[list[str]]
    display_labour: NotRequired[str]
    display_lines: NotRequired[list[tuple[str, str]]]
    display_total_12: NotRequired[str]
    display_total_36: NotRequired[str]
    display_commitment: NotRequired[list[str]]
    display_energy: NotRequired[str]
    display_energy_per: NotRequired[str]
    display_facts: NotRequired[list[tuple[str, str]]]
    display_notes: NotRequired[list[str]]
    warning: NotRequired[str | None]
    chart_label: NotRequired[str]
    # The finance page's checklist cell (answered, total) for a quote's row (views.py).
    checklist: NotRequired[tuple[int, int] | None]


def shown_row(stored: Mapping[str, Any]) -> ShownRow:
    """A decision snapshot's stored row (the JSON ``selectors.row_json`` wrote when the record
    was frozen) read as a shown row: the one place stored JSON is taken for one. The same dict,
    not a copy."""
    return cast(ShownRow, stored)


def shown_rows(stored: Sequence[Mapping[str, Any]]) -> list[ShownRow]:
    """``shown_row`` for each of a snapshot's stored rows: the same list, not a copy."""
    return cast(list[ShownRow], stored)


# --- The rent / reserve / buy comparison (apps.finance.capacity) -------------------------------


class CapacityConfiguration(TypedDict):
    """The configuration the comparison costed (as the rows are: replicas raised for retries)."""

    gpu_count: int
    replicas: int
    paid_gpus: int


class CapacityOption(TypedDict):
    """One capacity option (rent on demand, rent spot, reserve, buy, API) at the brief's load."""

    option: str
    label: str
    quote_id: int | None
    api_route_id: int | None
    pricing_term: str | None
    hourly_rate_per_gpu: str | None
    monthly_cost: str | None
    effective_unit_cost: str | None
    meets_constraints: bool
    why_not: list[str]


class BreakEven(TypedDict):
    cheaper_below: str
    cheaper_above: str
    utilization: str | None
    explanation: str


class CurvePoint(TypedDict):
    """Each option's unit cost at one utilization (the chart's curve; not frozen), keyed by
    the option's code in lower case."""

    utilization: str
    at_brief: bool
    rent_on_demand: str | None
    rent_spot: str | None
    reserve_1y: str | None
    reserve_3y: str | None
    buy: str | None
    api: str | None


class CapacityModel(TypedDict, total=False):
    """``CandidateTable.capacity_model``: {} without a winner; ``winner`` and ``note`` alone when
    there is no comparison (``gpu`` too when its GPU has no option); else every key. Amounts in
    the table's unit."""

    winner: str
    note: str
    gpu: str | None
    configuration: CapacityConfiguration
    unit: str
    unit_scale: int
    unit_label: str
    currency: str
    utilization: str
    recommended: str | None
    recommended_label: str | None
    rationale: list[str]
    options: list[CapacityOption]
    break_evens: list[BreakEven]
    curve: list[CurvePoint]


# --- What would change the winner (apps.finance.sensitivity) -----------------------------------


class SensitivityTotal(TypedDict):
    """A leading candidate's all-in cost over ``months`` (commitment beyond them included)."""

    months: int
    running: str
    committed_beyond: str
    total: str
    commitment_months: int


class SensitivityLeading(TypedDict):
    key: str
    candidate_kind: str
    quote_id: int | None
    api_route_id: int | None
    label: str
    effective_unit_cost: str | None
    monthly_cost: str | None
    totals: list[SensitivityTotal]


class SensitivityChange(TypedDict):
    """The value of an assumption at which the winner changes, and who wins then."""

    value: str
    new_winner: str | None
    winner_utilization: str | None


class SensitivityFinding(TypedDict):
    assumption: str
    label: str
    subject: str | None
    base: str
    range: list[str]
    down: SensitivityChange | None
    up: SensitivityChange | None
    never: bool
    explanation: str


class TornadoBar(TypedDict):
    assumption: str
    label: str
    low_value: str
    high_value: str
    low_unit_cost: str | None
    high_unit_cost: str | None


class LeftOut(TypedDict):
    """A leading row the sensitivity could not cost again, and why."""

    candidate: str
    reason: str


class SensitivitySignature(TypedDict):
    """What the stored sensitivity was computed from (never sent): the table's fingerprint and,
    per leading row, [its key, its quote's or route's version, its unit cost]."""

    fingerprint: str
    rows: list[list[str | int | None]]


class Sensitivity(TypedDict, total=False):
    """``CandidateTable.sensitivity``: {} without a ranked row, else every key (``signature``
    only as stored; ``sensitivity.in_table_unit`` drops it and scales the unit costs)."""

    currency: str
    unit: str
    unit_scale: int
    unit_label: str
    winner: str
    leading: list[SensitivityLeading]
    findings: list[SensitivityFinding]
    summary: list[str]
    tornado: list[TornadoBar]
    left_out: list[LeftOut]
    costings: int
    signature: SensitivitySignature


# --- The ranking (apps.finance.selectors.ranking_for_brief) ------------------------------------


class NotCostedEntry(TypedDict):
    """A quote or API route the table could not cost (``state.NotCosted`` as stored JSON)."""

    reason: str
    quote_id: NotRequired[int | None]
    api_route_id: NotRequired[int | None]


class PlanNotListed(TypedDict):
    """A serving plan with no row, and why (``state.PlanMissing`` as stored JSON)."""

    candidate_kind: str
    reason: str


class CsvTable(TypedDict):
    """What the rankings CSV reads of a table (a ``Ranking`` is one; so is a frozen table)."""

    rows: list[ShownRow]
    currency: str | None
    unit: str | None


class Ranking(TypedDict):
    """A brief's ranking as the API (``RankingSerializer`` documents it), the CSV, the finance
    page and a decision snapshot read it."""

    brief: int
    computed_at: datetime | None
    stale: bool
    pending: bool
    currency: str | None
    unit: str | None
    success_unit: str | None
    unit_scale: int
    no_ranking_reason: str | None
    capacity_model: CapacityModel
    sensitivity: Sensitivity
    total_rows: int
    rows: list[ShownRow]
    not_costed: list[NotCostedEntry]
    serving_plans_not_listed: list[PlanNotListed]
