"""A candidate table's state: one typed, versioned object, and its one codec to storage.

    TableState                the table as stored, for what reads or re-costs it
      inputs    TableInputs   what the rows were computed from: input versions, the assumption
                              values and FX rates applied, what could not be costed, the serving
                              plans' inputs (stored in CandidateTable.inputs)
      answer    EngineAnswer  the engine's answer for the brief, typed: each GPU's ladder of
                              Estimates and the answers at each configuration's per-replica load
                              (CandidateTable.estimates)
      standing  Standing      where its ranking stands: rank 1, the best GPU row, the GPU the
                              rent / reserve / buy answer is for (read from its rows)
    Row, ...                  each candidate: its Configuration, the Figures the engine gives at
                              it, its cost lines and verdict (CandidateRow, one per row)

Every reader and writer of a table goes through these types: the full recompute
(apps.finance.candidates) builds the inputs, answer and Rows; a price change's re-costing is the
plain function ``apps.finance.candidates.recost`` (a TableState + the changed quotes -> what to
write); apps.finance.rows writes Rows, apps.finance.selectors reads them back as Rows, and the
rent / reserve / buy comparison, the sensitivity and the decision snapshot read Rows. JSON
exists only at the storage edge (``apps.engine.codec``: exact, so a figure read back is the
figure computed) and at the API's.

``STATE_FORMAT`` is the version of this shape: a table stored in another format is recomputed in
full rather than read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import StrEnum
from typing import Any

from apps.core import formatting
from apps.engine import Estimate
from apps.engine.codec import CodecError, decode, encode
from apps.engine.costing import FinanceAssumptions
from apps.engine.costing_types import VENDOR_LINES
from apps.engine.deployment import shown
from apps.engine.measured import Measurement
from apps.engine.request_sizes import SizeBucket

__all__ = [
    "STATE_FORMAT",
    "Assumptions",
    "BucketCapacities",
    "CandidateKind",
    "CodecError",
    "Configuration",
    "DisaggPlan",
    "DisaggPool",
    "EngineAnswer",
    "Figures",
    "FrontierEntry",
    "FxApplied",
    "GpuAnswer",
    "MixPart",
    "MixPlan",
    "NotCosted",
    "PlanBucket",
    "PlanInputs",
    "PlanMissing",
    "Row",
    "Standing",
    "TableInputs",
    "TableState",
    "Versions",
    "answer_from_json",
    "answer_to_json",
    "inputs_from_json",
    "inputs_to_json",
    "plan_from_json",
    "shown",
]

# Bumped whenever a type below changes shape: tables stored before are recomputed in full.
# 3: the quote and route versions stored once a set (apps.finance.version_sets), not per table.
STATE_FORMAT = 3


class CandidateKind(StrEnum):
    """What a row is: one quote's GPUs, one model/API route, or a serving plan of several
    quotes (apps.finance.plans)."""

    GPU = "GPU"
    API_ROUTE = "API_ROUTE"
    MIX = "MIX"
    DISAGG = "DISAGG"


PLAN_KINDS = (CandidateKind.MIX, CandidateKind.DISAGG)


# --- a row ---------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class Configuration:
    """What a row is costed at, and what it pays for.

    ``gpus_per_replica`` x ``replicas`` GPUs serve (or train) at once; ``paid_gpus`` are the GPUs
    billed, each for ``hours_billed_per_month`` (730 on a committed term; the brief's active
    hours on a pay-per-use term for capacity kept up through them; the job's own hours for
    pay-per-use batch work and training), so the row's paid GPU-hours are their product.
    An API route has no GPUs (all None / 0); a serving plan names its parts in ``Row.plan``."""

    gpu: str | None
    gpus_per_replica: int | None
    replicas: int | None
    paid_gpus: int
    layout: str
    pricing_term: str
    hours_billed_per_month: Decimal | None

    def text(self) -> str:
        """ "18 GPUs (18 replicas x 1)", "8 GPUs (1 replica x 8)", "" for an API route
        (apps.core.formatting.gpus)."""
        if not self.paid_gpus:
            return ""
        return formatting.gpus(self.paid_gpus, self.replicas, self.gpus_per_replica)


@dataclass(frozen=True, kw_only=True, slots=True)
class Figures:
    """Every figure a row shows, as the engine gives it at the row's configuration, each
    replica carrying its share of the load (``in_flight_per_replica`` sequences for LLM
    serving). Latencies are p95 estimates (or measured tails on a MEASURED row); ``throughput``
    is for all the replicas together, in ``throughput_unit``. Rounded as shown and stored."""

    fit: str | None = None  # FITS / TIGHT / NO per replica; None for an API route
    ttft_p95_ms: Decimal | None = None
    itl_p95_ms: Decimal | None = None
    latency_p95_ms: Decimal | None = None  # one request's, image's or clip's end to end
    throughput: Decimal | None = None
    throughput_unit: str = ""
    memory_headroom_gb: Decimal | None = None  # per replica
    in_flight_per_replica: int | None = None
    time_to_train_days: Decimal | None = None
    energy_kwh_per_month: Decimal | None = None
    energy_j_per_output: Decimal | None = None
    co2e_kg_per_month: Decimal | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class PlanBucket:
    input_tokens: int
    output_tokens: int
    share: float


@dataclass(frozen=True, kw_only=True, slots=True)
class MixPart:
    """One GPU type of a MIX plan: ``replicas`` of ``gpu_count`` GPUs on one quote, serving
    ``request_share`` of the requests (``bucket_shares``: of each bucket's)."""

    quote_id: int
    gpu: str
    gpu_count: int
    replicas: int
    pricing_term: str
    request_share: float
    bucket_shares: tuple[float, ...]
    monthly_cost: Decimal
    batch: int | None = None  # sequences in flight on a replica (the energy model's)


@dataclass(frozen=True, kw_only=True, slots=True)
class MixPlan:
    rate_rps: float
    bucket_source: str
    buckets: tuple[PlanBucket, ...]
    parts: tuple[MixPart, ...]
    best_single: MixPart | None
    saving_monthly: Decimal | None
    saving_share: Decimal | None
    committed: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class DisaggPool:
    role: str  # "prefill" or "decode"
    quote_id: int
    gpu: str
    gpus_per_instance: int
    instances: int
    layout: str
    pricing_term: str
    requests_per_s_per_instance: float
    batch: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class DisaggPlan:
    pools: tuple[DisaggPool, ...]
    ttft_ms: float
    ttft_mean_ms: float
    transfer_ms: float
    itl_ms: float
    committed: bool


# Not frozen, unlike the rest of the state: a table builds ~2,000 rows each compute, and a
# frozen dataclass's __init__ sets each of its 17 fields through object.__setattr__ (measured
# 6.8 us against 0.9 us a row on this project's machine, Python 3.13). Nothing changes a row
# after it is built (treat it as immutable); it is compared, never hashed.
@dataclass(kw_only=True, slots=True)
class Row:
    """One candidate of the table, in the reporting currency. A row that misses the brief has
    no unit cost (``why_not`` says which target binds) and is listed after the ranked ones."""

    kind: CandidateKind
    quote_id: int | None
    api_route_id: int | None
    gpu_id: int | None
    configuration: Configuration
    figures: Figures
    cost_lines: dict[str, Decimal]
    monthly_cost: Decimal
    accepted_outputs_per_month: Decimal
    effective_unit_cost: Decimal | None
    meets_constraints: bool
    why_not: tuple[str, ...]
    notes: tuple[str, ...]
    basis: str
    paid_gpu_hours_per_month: Decimal | None
    mix: MixPlan | None = None
    disagg: DisaggPlan | None = None

    @property
    def vendor_monthly_cost(self) -> Decimal:
        """What the provider bills a month (GPU-hours at its rate, storage, network and its own
        extras), apart from the all-in cost's labour, observability and the rest
        (apps.engine.costing_types.VENDOR_LINES)."""
        return sum((v for k, v in self.cost_lines.items() if k in VENDOR_LINES), Decimal(0))

    @property
    def key(self) -> str:
        """ "quote:7", "api_route:3", "mix", "disagg": names the row across recomputes."""
        if self.quote_id is not None:
            return f"quote:{self.quote_id}"
        if self.api_route_id is not None:
            return f"api_route:{self.api_route_id}"
        return self.kind.value.lower()

    @property
    def plan_quote_ids(self) -> tuple[int, ...]:
        """The quotes a serving plan's parts run on (its pools'), in order, each once."""
        ids: list[int] = []
        if self.mix is not None:
            ids = [p.quote_id for p in self.mix.parts]
        elif self.disagg is not None:
            ids = [p.quote_id for p in self.disagg.pools]
        return tuple(dict.fromkeys(ids))

    def plan_json(self) -> dict[str, Any]:
        """The serving plan as the row's ``plan`` JSON ({} for a GPU or API row)."""
        found = self.mix if self.mix is not None else self.disagg
        return {} if found is None else encode(found)  # type: ignore[no-any-return]


def plan_from_json(
    kind: str, data: dict[str, Any] | None
) -> tuple[MixPlan | None, DisaggPlan | None]:
    """A row's stored ``plan`` JSON read back as its typed plan."""
    if not data:
        return None, None
    if kind == CandidateKind.MIX:
        return decode(MixPlan, data), None
    if kind == CandidateKind.DISAGG:
        return None, decode(DisaggPlan, data)
    return None, None


# --- the table's inputs --------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class FxApplied:
    """The FX rate that applied to a currency: ``rate`` units of the base currency per unit."""

    id: int
    rate: Decimal
    as_of: str
    source: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Assumptions:
    """The finance assumptions a table was costed with: the engine's typed values (organisation
    defaults, the brief's overrides, built-in fallbacks), where each came from, the FX rates
    applied and the versions of the rows they were read from."""

    finance: FinanceAssumptions
    sources: dict[str, str]
    fx_rates: dict[str, FxApplied]
    versions: tuple[int, ...]

    @property
    def currency(self) -> str:
        return self.finance.reporting_currency


@dataclass(frozen=True, kw_only=True, slots=True)
class NotCosted:
    """A quote or route the table could not cost, and why (a missing FX rate names it)."""

    reason: str
    quote_id: int | None = None
    api_route_id: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class FrontierEntry:
    """A quote the serving plans could choose from, at one GPU count, with its costs."""

    quote_id: int
    gpu: str
    gpu_count: int
    replica_cost: Decimal
    fixed_cost: Decimal


@dataclass(frozen=True, kw_only=True, slots=True)
class PlanMissing:
    candidate_kind: str
    reason: str


@dataclass(frozen=True, kw_only=True, slots=True)
class BucketCapacities:
    """Requests a second one replica of each (GPU, count) completes at the latency target in
    each request-size bucket, and the sequences it then has in flight ("slug|count" keys)."""

    key: str
    rates: dict[str, tuple[float, ...]]
    batches: dict[str, tuple[int, ...]]


@dataclass(frozen=True, kw_only=True, slots=True)
class PlanInputs:
    """What the serving plans were chosen from (apps.finance.plans)."""

    frontier: tuple[FrontierEntry, ...] = ()
    missing: tuple[PlanMissing, ...] = ()
    not_eligible: str | None = None
    capacities: BucketCapacities | None = None
    buckets: tuple[PlanBucket, ...] = ()
    bucket_source: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class RequestLog:
    """The request sizes of a benchmark run's request log, and where they are from."""

    buckets: tuple[SizeBucket, ...]
    source: str


@dataclass(frozen=True, slots=True)
class Versions:
    """Quote (or route) id -> the version a table costed, and the digest that names the set
    (apps.finance.version_sets stores each set once for every table that saw it). Never
    mutated: the tables of a team share one object."""

    digest: str
    of: dict[str, int]

    @classmethod
    def of_map(cls, versions: dict[str, int]) -> Versions:
        return cls(digest=versions_digest(versions), of=versions)

    def changes_to(self, now: Versions) -> tuple[list[int], list[int]]:
        """(changed or new ids, ids gone) between these versions (a table's) and ``now``."""
        if self.digest == now.digest:
            return [], []
        seen = self.of
        changed = [int(k) for k, v in now.of.items() if seen.get(k) != v]
        gone = [int(k) for k in seen if k not in now.of]
        return changed, gone


def versions_digest(versions: Mapping[str, int]) -> str:
    """The name of a set of versions: the SHA-256 of its ids and versions in id order."""
    text = ",".join(f"{k}:{versions[k]}" for k in sorted(versions, key=int))
    return hashlib.sha256(text.encode()).hexdigest()


NO_VERSIONS = Versions.of_map({})


@dataclass(frozen=True, kw_only=True, slots=True)
class TableInputs:
    """The versions of everything the rows were computed from, and what a price change needs
    to re-cost changed quotes without reading anything else (apps.finance.repricing). The
    quote and route versions are stored apart, as sets named by their digest
    (``CandidateTable.quote_set`` / ``route_set``, apps.finance.version_sets)."""

    format: int
    fingerprint: str
    brief_version: int
    quotes: Versions
    api_routes: Versions
    assumptions: Assumptions
    engine_stamp: str
    not_costed: tuple[NotCosted, ...]
    plans: PlanInputs


@dataclass(frozen=True, kw_only=True, slots=True)
class Standing:
    """Where a stored table's ranking stands: rank 1's unit cost and key ("quote:<id>",
    "api_route:<id>", "mix" or "disagg"; None when nothing meets the brief), the best GPU row's
    unit cost (the rent / reserve / buy comparison is for its GPU when rank 1 is an API route)
    and the GPU that comparison is for."""

    winner_cost: Decimal | None = None
    winner_key: str | None = None
    best_gpu_cost: Decimal | None = None
    capacity_gpu: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class TableState:
    """A candidate table as stored (see the module's docstring)."""

    inputs: TableInputs
    answer: EngineAnswer
    standing: Standing
    # ``inputs`` as stored (their JSON), when read from the table: a re-costing writes back
    # the parts it did not change as they were (``inputs_to_json``).
    inputs_json: dict[str, Any] | None = None


def winner_key_of(quote_id: int | None, route_id: int | None, kind: str) -> str:
    """The key of a ranked row, as Standing.winner_key names it."""
    if quote_id:
        return f"quote:{quote_id}"
    return f"api_route:{route_id}" if route_id else kind.lower()


#: The parts of TableInputs stored apart from its JSON (by digest: apps.finance.version_sets).
VERSION_PARTS = ("quotes", "api_routes")


def inputs_to_json(
    inputs: TableInputs, stored: tuple[TableInputs, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """``inputs`` as stored JSON, without the versions (stored as sets: the caller writes
    ``inputs.quotes.digest`` and ``inputs.api_routes.digest`` beside it). With ``stored`` (the
    inputs a re-costing started from, and their JSON), each part it left as it was (the same
    object) is written as stored, not encoded again: a price change re-encodes what it
    changed, not the assumptions and plans of every table it touches."""
    before, data = stored if stored is not None else (None, {})
    out: dict[str, Any] = {}
    for name in TableInputs.__dataclass_fields__:
        if name in VERSION_PARTS:
            continue
        value = getattr(inputs, name)
        same = before is not None and name in data and value is getattr(before, name)
        out[name] = data[name] if same else encode(value)
    return out


def inputs_from_json(
    data: Any, quotes: Versions | None, routes: Versions | None
) -> TableInputs | None:
    """A table's stored inputs with the version sets it names (read by the caller), or None
    when they are of another format, unreadable or a set is missing: the table is then
    recomputed in full."""
    if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
        return None
    if quotes is None or routes is None:
        return None
    try:
        # The versions are not in the JSON: decode the rest with empty ones, then put the
        # sets read by the caller in their place (no walk over thousands of versions).
        placeholder = {name: {"digest": "", "of": {}} for name in VERSION_PARTS}
        decoded = decode(TableInputs, {**data, **placeholder})
    except (CodecError, ArithmeticError):
        return None
    return replace(decoded, quotes=quotes, api_routes=routes)


# --- the engine's answer -------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class GpuAnswer:
    """The engine's answer for one GPU: every size it could be deployed at (``ladder``, one
    Estimate per GPUs-per-replica count, the engine's own pick at ``pick`` with its notes), the
    benchmark run measured at ``measured_count`` (its figures are laid over that rung), and the
    runs that calibrated it."""

    gpu: str
    pick: int
    ladder: tuple[Estimate, ...]
    measurement: Measurement | None = None
    measured_count: int | None = None
    calibrated_from: tuple[int, ...] = ()

    def rung(self, gpu_count: int) -> Estimate | None:
        return next((e for e in self.ladder if e.gpu_count == gpu_count), None)

    @property
    def chosen(self) -> Estimate:
        """The engine's own pick for the GPU (the per-GPU answer)."""
        found = self.rung(self.pick)
        assert found is not None  # noqa: S101 - the pick is always a rung
        return found


@dataclass(frozen=True, kw_only=True, slots=True)
class EngineAnswer:
    """The engine's answer for a brief: one GpuAnswer per catalog GPU, and the answers at the
    per-replica loads the table's configurations asked for (``at_load``: "slug|count|in flight"
    keys, filled as configurations are chosen; kept, so a price change asks the engine again
    only for a configuration no quote needed before)."""

    key: str
    gpus: tuple[GpuAnswer, ...]
    at_load: dict[str, Estimate] = field(default_factory=dict)

    def for_gpu(self, slug: str) -> GpuAnswer | None:
        for answer in self.gpus:
            if answer.gpu == slug:
                return answer
        return None


class AnswerCache:
    """Decoded engine answers by key (a hash of everything an answer depends on: one key always
    names the same answer), so that a worker re-costing price change after price change decodes
    each table's large stored answer once, not at every change; the answers a full recompute
    worked out are kept too (apps.finance.writes). Cleared when full. Used on PostgreSQL only
    (its ids are never reused; SQLite's are after a rollback, as in the tests)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._by_key: dict[str, EngineAnswer] = {}

    def get(self, key: str) -> EngineAnswer | None:
        return self._by_key.get(key)

    def __contains__(self, key: str) -> bool:
        return key in self._by_key

    def keep(self, answers: list[EngineAnswer]) -> None:
        if len(self._by_key) + len(answers) > self.size:
            self._by_key.clear()
        for answer in answers:
            if answer.key:
                self._by_key[answer.key] = answer

    def clear(self) -> None:
        self._by_key.clear()


ANSWERS = AnswerCache(size=1024)


def answer_to_json(answer: EngineAnswer) -> dict[str, Any]:
    return {"format": STATE_FORMAT, **encode(answer)}


def answer_from_json(data: Any) -> EngineAnswer | None:
    """A table's stored engine answer, or None when it is of another format (or unreadable)."""
    if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
        return None
    try:
        return decode(EngineAnswer, {k: v for k, v in data.items() if k != "format"})
    except (CodecError, ArithmeticError):
        return None


# --- a row in storage (CandidateRow) -------------------------------------------------------------

# The figures kept in typed columns of their own (read by queries and the admin); the rest of a
# row's figures and its configuration's billing hours travel in its ``figures`` JSON column.
_FIGURE_COLUMNS = {
    "latency_p95_ms": "p95_latency_ms",
    "memory_headroom_gb": "memory_headroom_gb",
    "energy_kwh_per_month": "energy_kwh_per_month",
    "energy_j_per_output": "energy_j_per_output",
    "co2e_kg_per_month": "co2e_kg_per_month",
}
ROW_COLUMNS = (
    "candidate_kind", "quote_id", "api_route_id", "gpu_id", "gpu_count", "replicas",
    "paid_gpus", "pricing_term", "cost_lines", "monthly_cost", "accepted_outputs_per_month",
    "effective_unit_cost", "meets_constraints", "why_not", "basis", "p95_latency_ms",
    "memory_headroom_gb", "layout", "paid_gpu_hours_per_month", "energy_kwh_per_month",
    "energy_j_per_output", "co2e_kg_per_month", "notes", "plan", "figures",
)  # fmt: skip
# What a reader selects to read a row back (``row_from_columns``): the columns, and the slug of
# the GPU the configuration names.
ROW_READ = (*ROW_COLUMNS, "gpu__slug")


#: The figures that travel in the ``figures`` JSON column (the rest have columns of their own).
FIGURES_IN_JSON = tuple(
    name for name in Figures.__dataclass_fields__ if name not in _FIGURE_COLUMNS
)
LAYOUT_CHARS = 40  # CandidateRow.layout's max_length


def figures_json(figures: Figures, hours_billed_per_month: Decimal | None) -> dict[str, Any]:
    """The row's ``figures`` JSON column: the figures without a column of their own, and the
    configuration's billing hours; a figure the row has not (None) is left out (read back as
    None: ``row_from_columns``), about half of it on most rows."""
    rest = {
        name: encode(value)
        for name in FIGURES_IN_JSON
        if (value := getattr(figures, name)) is not None
    }
    if hours_billed_per_month is not None:
        rest["hours_billed_per_month"] = encode(hours_billed_per_month)
    return rest


def cost_lines_json(lines: dict[str, Decimal]) -> dict[str, str]:
    """The row's ``cost_lines`` JSON column (amounts as decimal text)."""
    return {name: str(value) for name, value in lines.items()}


def row_columns(row: Row) -> dict[str, Any]:
    """The row's CandidateRow column values (JSON columns as plain data). The COPY writer
    (apps.finance.rows) writes the same columns from the row's fields, with these helpers."""
    figures = row.figures
    config = row.configuration
    return {
        "candidate_kind": row.kind.value,
        "quote_id": row.quote_id,
        "api_route_id": row.api_route_id,
        "gpu_id": row.gpu_id,
        "gpu_count": config.gpus_per_replica,
        "replicas": config.replicas,
        "paid_gpus": config.paid_gpus,
        "pricing_term": config.pricing_term,
        "layout": config.layout[:LAYOUT_CHARS],
        "cost_lines": cost_lines_json(row.cost_lines),
        "monthly_cost": row.monthly_cost,
        "accepted_outputs_per_month": row.accepted_outputs_per_month,
        "effective_unit_cost": row.effective_unit_cost,
        "meets_constraints": row.meets_constraints,
        "why_not": list(row.why_not),
        "basis": row.basis,
        "paid_gpu_hours_per_month": row.paid_gpu_hours_per_month,
        **{column: getattr(figures, name) for name, column in _FIGURE_COLUMNS.items()},
        "notes": list(row.notes),
        "plan": row.plan_json(),
        "figures": figures_json(figures, config.hours_billed_per_month),
    }


def _dec(value: Any) -> Decimal | None:
    return None if value is None else Decimal(str(value))


def row_from_columns(values: dict[str, Any]) -> Row:
    """A stored row read back (``values`` with every ``ROW_READ`` name)."""
    stored = values.get("figures") or {}
    figures = decode(
        Figures,
        {
            **{k: v for k, v in stored.items() if k in Figures.__dataclass_fields__},
            **{name: encode(values[column]) for name, column in _FIGURE_COLUMNS.items()},
        },
    )
    kind = CandidateKind(values["candidate_kind"])
    mix, disagg = plan_from_json(kind, values.get("plan"))
    return Row(
        kind=kind,
        quote_id=values["quote_id"],
        api_route_id=values["api_route_id"],
        gpu_id=values["gpu_id"],
        configuration=Configuration(
            gpu=values.get("gpu__slug"),
            gpus_per_replica=values["gpu_count"],
            replicas=values["replicas"],
            paid_gpus=values.get("paid_gpus") or 0,
            layout=values.get("layout") or "",
            pricing_term=values.get("pricing_term") or "",
            hours_billed_per_month=_dec(stored.get("hours_billed_per_month")),
        ),
        figures=figures,
        cost_lines={k: Decimal(v) for k, v in (values.get("cost_lines") or {}).items()},
        monthly_cost=values["monthly_cost"],
        accepted_outputs_per_month=values["accepted_outputs_per_month"],
        effective_unit_cost=values["effective_unit_cost"],
        meets_constraints=values["meets_constraints"],
        why_not=tuple(values.get("why_not") or ()),
        notes=tuple(values.get("notes") or ()),
        basis=values.get("basis") or "ESTIMATED",
        paid_gpu_hours_per_month=values.get("paid_gpu_hours_per_month"),
        mix=mix,
        disagg=disagg,
    )
