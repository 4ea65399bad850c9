"""The one shape of a shown row: a candidate row as the rankings (JSON and CSV), the finance
page, the charts and a decision record's snapshot give it (``selectors.row_json`` builds it).
Decimals travel as strings so that they round-trip exactly; the serving plan is its stored
JSON (``state.Row.plan_json``). A snapshot written by an older build may lack a key, so
readers of snapshot rows read with ``.get``; the page adds its ``display_*`` cells
(``lines.candidate_table_display``) and the charts a ``chart_label`` to the rows they show.

These are typed dicts, not dataclasses, because the same value is the API's JSON, the cached
ranking and the stored snapshot: no conversion per row on the hot path."""

from typing import Any, NotRequired, TypedDict, cast

# A serving plan's stored JSON (apps.finance.plans, encoded by ``state.Row.plan_json``): a JSON
# boundary, read key by key.
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


def shown_row(stored: dict[str, Any]) -> ShownRow:
    """A decision snapshot's stored row (the JSON ``selectors.row_json`` wrote when the record
    was frozen) read as a shown row: the one place stored JSON is taken for one. The same dict,
    not a copy."""
    return cast(ShownRow, stored)


def shown_rows(stored: list[dict[str, Any]]) -> list[ShownRow]:
    """``shown_row`` for each of a snapshot's stored rows: the same list, not a copy."""
    return cast(list[ShownRow], stored)
