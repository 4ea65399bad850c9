"""What the brief page shows: the fit table by workload type, in words and readable numbers.

A training or fine-tuning brief is decided by time to train, training throughput, GPUs and
memory; a serving brief by latency, throughput, concurrency and context; a media brief by
images or clips per hour. Each kind gets its own columns (``columns_for``), and the rows are
sorted by what decides: meets the brief first, then GPUs needed, then cost where the candidate
table has one, else throughput per GPU.
"""

import math
import re
from decimal import Decimal
from typing import Any

from django.db.models import Min, Q

from apps.catalog.selectors import gpu_specs
from apps.core import choices, formatting
from apps.engine import EngineInputError, ModelSpec
from apps.engine import types as engine
from apps.engine.costing import SuccessUnit
from apps.engine.model_summary import model_summary, model_summary_to_dict
from apps.engine.request import parse_model
from apps.engine.units import table_unit

from .choices import MEDIA_TYPES, TOKEN_SERVING_TYPES, TRAINING_TYPES
from .contract import model_body
from .models import WorkloadBrief

TRAINING, SERVING, MEDIA, RECORDS = "training", "serving", "media", "records"
# Success units whose table cost is the cost of one run (scale 1: one output per unit cost).
PER_RUN_UNITS = frozenset({SuccessUnit.TRAINING_RUN, SuccessUnit.CHECKPOINT})
# Above two days a time to train also reads in days.
DAYS_FROM_HOURS = 48


def kind_of(workload_type: str) -> str:
    if workload_type in TRAINING_TYPES:
        return TRAINING
    if workload_type in MEDIA_TYPES:
        return MEDIA
    if workload_type in TOKEN_SERVING_TYPES:
        return SERVING
    return RECORDS  # embeddings


def number(value: Any, digits: int = 3) -> str:
    """A figure to read: 3 significant figures below 1,000, whole numbers with thousands
    separators above ("1,234,568", "12.3", "0.0457"); "—" when there is none."""
    if value is None or isinstance(value, bool):
        return "—"
    x = float(value)
    if not math.isfinite(x):
        return "—"
    if x == 0:
        return "0"
    if abs(x) >= 10 ** (digits - 1) * 10:
        return f"{round(x):,}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    text = f"{x:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def hours(value: Any) -> str:
    """A time to train: "237 h (9.88 days)", "3.5 h", "—"."""
    if value is None:
        return "—"
    x = float(value)
    if x >= DAYS_FROM_HOURS:
        return f"{number(x)} h ({number(x / 24)} days)"
    return f"{number(x)} h"


def money(value: Decimal | None, currency: str) -> str:
    if value is None:
        return "—"
    return f"{number(value)} {currency}" if value < 1000 else f"{value:,.0f} {currency}"


def weights_in_words(weight_precision: str, model: ModelSpec) -> tuple[str, str]:
    """(the precision the weights are sized at, where it came from, in words)."""
    ck = model.checkpoint
    if weight_precision:
        if ck is not None and weight_precision != ck.precision:
            return weight_precision, (
                f"as given in the brief; the config's quantization_config says {ck.label}"
            )
        return weight_precision, "as given in the brief"
    if ck is not None:
        return str(ck.precision), f"from the config's quantization_config: {ck.label}"
    if model.native_precision is not None:
        return str(model.native_precision), "from the config's torch_dtype"
    return str(engine.Precision.BF16), "the default: the model states no precision"


def best_costs(brief: WorkloadBrief) -> tuple[dict[str, Decimal], str, Any] | None:
    """(the lowest unit cost of each GPU among the candidate rows that meet the brief,
    the table's currency, its unit), or None when the brief has no costed table. Rows of
    quotes confidential to another team are not read."""
    # Read through the brief's own relation: finance sits above briefs (pyproject's layers).
    table = getattr(brief, "candidate_table", None)
    if table is None or not table.success_unit:
        return None
    rows = (
        table.rows.filter(
            candidate_kind="GPU",
            meets_constraints=True,
            effective_unit_cost__isnull=False,
        )
        .filter(Q(quote__confidential_to__isnull=True) | Q(quote__confidential_to=brief.team_id))
        .values("gpu__slug")
        .annotate(best=Min("effective_unit_cost"))
    )
    unit = table_unit(table.success_unit)
    costs = {r["gpu__slug"]: unit.scaled(r["best"]) for r in rows if r["gpu__slug"]}
    if not costs:
        return None
    return costs, table.currency, unit


def _per_gpu(value: Any, count: int) -> float | None:
    return None if value is None or not count else float(value) / count


def fit_rows(brief: WorkloadBrief, configured: list[dict[str, Any]]) -> dict[str, Any]:
    """The fit table: its columns and its rows (every cell already in words), sorted. Each row
    is a GPU at the configuration its candidate rows are costed at (apps.finance.configuration
    .fit_row, passed in by the page: finance sits above briefs), with the figures the engine
    gives at it and the verdict taken on them."""
    kind = kind_of(brief.workload_type)
    names = {spec.slug: spec.name for spec in gpu_specs()}
    priced = best_costs(brief)
    costs, currency, unit = priced if priced else ({}, "", None)
    per_run = unit is not None and unit.success_unit in PER_RUN_UNITS
    video = brief.workload_type == engine.WorkloadType.VIDEO_GENERATION
    rows = []
    for c in configured:
        e = c["estimate"]
        figures = c["figures"]
        memory = e.get("memory") or {}
        count = int(c["gpus_per_replica"])
        total = int(c["gpus"])
        meets = bool(c["meets"])
        cost = costs.get(c["gpu"])
        fit = figures["fit"] or "NO"
        throughput = figures["throughput"]
        days = figures["time_to_train_days"]
        row = {
            "slug": c["gpu"],
            "name": names.get(c["gpu"], c["gpu"]),
            "fit": fit,
            "fits": fit != "NO",
            "fit_advice": e.get("fit_advice"),
            "meets": meets,
            "why_not": "; ".join(c["why_not"]),
            "gpu_count": count,
            "replicas": c["replicas"],
            "gpus_total": total,
            "configuration": formatting.gpus(total, int(c["replicas"]), count),
            "layout": c["layout"] or "—",
            "memory_per_gpu": f"{number(_per_gpu(memory.get('total_gb'), count))} / "
            f"{number(e.get('memory_capacity_gb') or _per_gpu(memory.get('capacity_gb'), count))}",
            "memory_source": e.get("memory_capacity_source") or "datasheet",
            "cost": number(cost) if cost is not None else "—",
            "basis": str(c["basis"]).capitalize(),
            "time_to_train": hours(days * 24 if days is not None else None),
            "training_tps_per_gpu": number(_per_gpu(throughput, total)),
            "ttft": number(figures["ttft_p95_ms"]),
            "itl": number(figures["itl_p95_ms"]),
            "latency": number(figures["latency_p95_ms"]),
            "in_flight": number(figures["in_flight_per_replica"]),
            "tokens_per_s": number(throughput),
            "tokens_per_s_per_gpu": number(_per_gpu(throughput, total)),
            "context": number(e.get("max_context_tokens")),
            "media_per_hour": number(throughput),
            "records_per_s": number(throughput),
            "_key": (
                not meets,
                total,
                float(cost) if cost is not None else math.inf,
                -(_per_gpu(throughput, total) or 0.0),
                c["gpu"],
            ),
        }
        rows.append(row)
    rows.sort(key=lambda r: r["_key"])
    if per_run:
        cost_header = f"Cost per run ({currency})"
    elif unit is not None:
        cost_header = f"Best cost ({currency} {unit.label})"
    else:
        cost_header = ""
    return {
        "kind": kind,
        "rows": rows,
        "show_cost": bool(costs),
        "cost_header": cost_header,
        "media_header": "Clips per hour" if video else "Images per hour",
        "order": [r["slug"] for r in rows],
        "names": names,
    }


# Bytes as the page writes them (decimal units, as GB is 10^9 bytes everywhere in gpuselect).
BYTE_UNITS = ((10**9, "GB"), (10**6, "MB"), (10**3, "kB"))


def byte_text(value: Any) -> str:
    """A size in bytes in the unit that keeps it readable: "65.5 kB", "1.2 MB", "512 bytes"."""
    d = formatting.decimal_or_none(value)
    if d is None:
        return formatting.NONE
    for size, unit in BYTE_UNITS:
        if abs(d) >= size:
            return formatting.figure(d / size, unit)
    return formatting.figure(d, "bytes")


def read_as(summary: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The model as the engine read it, in words: the estimate response's top-level ``model``
    summary (apps.engine.model_summary) as the brief page's "read as" panel shows it. The
    weight precision itself is stated once, in the brief's facts; here only the weights' size
    and, where tensor groups differ, each group's precision."""
    if not summary:
        return []
    b = formatting.NBSP + "B"
    params = f"{formatting.number(summary['total_params_billion'])}{b} in all"
    active = summary["active_params_billion"]
    if active != summary["total_params_billion"]:
        params += f"; {formatting.number(active)}{b} active per token (embedding lookup excluded)"
    if summary["experts"] > 1:
        params += f"; {summary['experts']} experts, {summary['active_experts']} routed per token"
    groups = summary.get("weights_by_tensor_group") or {}
    weights = formatting.figure(summary["weights_gb"], "GB")
    if len(set(groups.values())) > 1:
        weights += " (" + ", ".join(f"{g} at {p}" for g, p in groups.items()) + ")"
    if summary.get("checkpoint"):
        weights += f"; the checkpoint as published: {summary['checkpoint']}"
    layers = summary.get("attention_layers") or {}
    kv = f"{byte_text(summary['kv_bytes_per_token'])} per token of context"
    if summary.get("kv_window_bytes_per_token"):
        kv += (
            f"; {byte_text(summary['kv_window_bytes_per_token'])} per token up to "
            f"{formatting.count(summary['window_tokens'])} tokens in the windowed layers"
        )
    if summary.get("state_bytes_per_sequence"):
        kv += f"; {byte_text(summary['state_bytes_per_sequence'])} of state per sequence"
    rows = [("Parameters", params), ("Weights", weights), ("KV cache", kv)]
    if layers:
        rows.append(
            ("Layers", ", ".join(f"{formatting.count(n)} {kind}" for kind, n in layers.items()))
        )
    return rows


def model_alone(brief: WorkloadBrief) -> dict[str, Any] | None:
    """The ``model`` summary of a brief whose request the engine cannot build yet (a field
    still missing), at the precision the brief's facts state (``weights_in_words``) and the
    KV cache at the brief's or the weights' precision; None where the model itself does not
    read."""
    body = model_body(brief)
    if body is None:
        return None
    try:
        model = parse_model(body)
        weights = engine.Precision(weights_in_words(brief.weight_precision, model)[0])
        kv = engine.Precision(brief.kv_cache_precision) if brief.kv_cache_precision else weights
    except (EngineInputError, ValueError):
        return None
    return model_summary_to_dict(model_summary(model, weights, kv))


def model_in_words(brief: WorkloadBrief) -> str:
    """The brief's model as its facts and the brief list name it: a preset by its name
    (elsewhere), a pasted config.json by its architecture, explicit numbers by their size."""
    config = brief.model_hf_config
    if config:
        arch = (config.get("architectures") or [None])[0] or config.get("model_type")
        return f"Pasted config.json ({arch})" if arch else "Pasted config.json"
    if brief.params_billion:
        return f"Explicit shape, {formatting.number(brief.params_billion)}\u00a0B parameters"
    return formatting.NONE


# In an engine note: a code (HOPPER, ON_DEMAND) and a tool's own identifier (AIConfigurator's
# system "h100_sxm"), which the page writes as code.
_NOTE_CODE = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*\b")
_NOTE_IDENTIFIER = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")


def note_parts(note: str) -> list[tuple[str, bool]]:
    """An engine note as the brief page writes it: each vocabulary's code in its words
    (HOPPER -> Hopper: apps.core.choices' one home), and a tool's identifier kept as it is but
    marked as code; returns (text, is_code) parts in order."""

    def words(match: re.Match[str]) -> str:
        code = match.group(0)
        found = choices.label_of(code)
        return found if found is not None else code

    text = _NOTE_CODE.sub(words, str(note))
    parts: list[tuple[str, bool]] = []
    at = 0
    for match in _NOTE_IDENTIFIER.finditer(text):
        if match.start() > at:
            parts.append((text[at : match.start()], False))
        parts.append((match.group(0), True))
        at = match.end()
    if at < len(text):
        parts.append((text[at:], False))
    return parts
