"""Cost lines as people read them, and the warning when one assumption carries a candidate.

A row's cost lines (apps.engine.costing_types.LINES_BY_KIND) keep their stable keys in the API
and the CSV; pages, charts and the PDF show them in words. Most lines come from an assumption
finance sets rather than from the quote's price: when one of them is more than half of a
candidate's monthly cost, its unit cost says more about that assumption than about the GPU,
and the finance page says so (``dominant_assumption``).
"""

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation

from django.core.exceptions import FieldDoesNotExist

from apps.briefs.choices import SuccessUnit, WorkloadType
from apps.catalog.models import Gpu, GpuSystem
from apps.core import formatting
from apps.core.currency import Currency
from apps.engine.energy import energy_per_output
from apps.engine.sensitivity import Total
from apps.quotes.models import TERM_LABELS

from .assumptions import AssumptionValue
from .forms import ASSUMPTION_LABELS, MONEY_FIELDS, SHARE_ASSUMPTIONS
from .models import CandidateRow, FinanceAssumptions, LabourAllocation
from .shown import PlanJson, ShownRow
from .state import Assumptions
from .totals import row_totals
from .units import count_text, money_text

LINE_LABELS = {
    "gpu_compute": "GPU compute",
    "checkpointing": "Checkpointing",
    "failed_run_waste": "Failed-run waste",
    "retry_waste": "Retry waste",
    "serving_stack": "Serving stack",
    "failed_renders": "Failed renders",
    "queue_overhead": "Queue overhead",
    "moderation": "Moderation",
    "operator_review": "Operator review",
    "idle_capacity": "Idle capacity",
    "storage": "Storage",
    "network_egress": "Network and egress",
    "provider_extras": "Provider extras",
    "observability": "Observability",
    "platform_labour": "Platform labour",
    "api_input_tokens": "API input tokens",
    "api_output_tokens": "API output tokens",
}

# The assumption behind each line that finance (not the quote) sets, in the warning's words.
# GPU compute and API tokens are the quote's price times the engine's work: not listed.
ASSUMPTION_BEHIND = {
    "platform_labour": "the platform labour assumption (hours a month x labour rate, as "
    "finance allocates them)",
    "idle_capacity": "paying for committed GPUs the brief's duty cycle leaves idle (utilization)",
    "operator_review": "the operator review share, minutes and reviewer rate",
    "moderation": "the moderation price per image or video minute",
    "observability": "the observability share",
    "storage": "the storage assumption (terabytes x the quote's storage price)",
    "retry_waste": "the retry rate",
    "failed_run_waste": "the interruption rate of training runs",
    "failed_renders": "the failure rate",
    "serving_stack": "the serving-stack share",
    "queue_overhead": "the queue-overhead share",
    "checkpointing": "the checkpoint interval",
    "provider_extras": "the quote's fixed monthly extras",
    "network_egress": "the egress volume assumption",
}
# The assumption (a field of the assumptions table, where finance sets it) each such line
# depends on first: the warning links to its row.
ASSUMPTION_FIELD = {
    "platform_labour": "platform_hours_self_managed",
    "operator_review": "operator_review_share",
    "moderation": "moderation_cost_per_image",
    "observability": "observability_share",
    "retry_waste": "retry_rate",
    "failed_renders": "failure_rate",
    "serving_stack": "serving_stack_share",
    "queue_overhead": "queue_overhead_share",
}
# "More than half of a candidate's cost" (issue 14, item 6).
DOMINANT_SHARE = Decimal("0.5")


# The line that is shown on its own on the candidate table, beside the monthly cost.
OWN_LINE = "platform_labour"


def line_label(name: str) -> str:
    return LINE_LABELS.get(name, name.replace("_", " ").capitalize())


def _d(value: object) -> Decimal | None:
    try:
        return None if value in (None, "") else Decimal(str(value))
    except InvalidOperation:
        return None


def dominant_line(row: ShownRow) -> str | None:
    """The assumption-driven line that is more than half of the row's monthly cost, or None."""
    monthly = _d(row.get("monthly_cost"))
    if not monthly or monthly <= 0:
        return None
    for name, value in (row.get("cost_lines") or {}).items():
        amount = _d(value)
        if name in ASSUMPTION_BEHIND and amount is not None and amount / monthly > DOMINANT_SHARE:
            return name
    return None


def dominant_assumption_field(row: ShownRow) -> str | None:
    """The assumption to change for a row one assumption dominates (the assumptions table's
    row id), or None."""
    line = dominant_line(row)
    return ASSUMPTION_FIELD.get(line) if line else None


def dominant_assumption(row: ShownRow, currency: str) -> str | None:
    """A warning in words when one assumption-driven line is more than half of the row's
    monthly cost, else None."""
    monthly = _d(row.get("monthly_cost"))
    if not monthly or monthly <= 0:
        return None
    for name, value in (row.get("cost_lines") or {}).items():
        amount = _d(value)
        if name not in ASSUMPTION_BEHIND or amount is None:
            continue
        share = amount / monthly
        if share > DOMINANT_SHARE:
            # "100%" only when it is all of it.
            percent = f"{share:.1%}" if Decimal("0.995") <= share < 1 else f"{share:.0%}"
            return (
                f"{line_label(name)} is {percent} of this candidate's monthly cost "
                f"({money_text(amount)} of {money_text(monthly)} {currency}): its unit cost "
                f"depends mostly on {ASSUMPTION_BEHIND[name]}, not on the price quoted."
            )
    return None


def labour_policy_text(values: Mapping[str, AssumptionValue], sources: dict[str, str]) -> str:
    """How platform labour is allocated for this brief's table, in words (``values``: by name,
    as ``assumptions.assumption_values`` gives them)."""
    currency = str(values["reporting_currency"])
    rate = formatting.rate(values["labour_rate_per_hour"], currency, "h")
    where = sources.get("labour_allocation", "built-in")
    if values.get("labour_allocation") == "SHARED_BY_GPU_HOURS":
        return (
            f"Platform labour is shared by GPU-hours ({where}): the platform team's "
            f"{count_text(values['platform_labour_pool_hours'])} h a month at {rate} are split "
            f"over the {count_text(values['self_managed_gpu_hours_per_month'])} GPU-hours a "
            "month that self-managed deployments are expected to hold; each self-managed "
            "candidate bears the share its paid GPU-hours are of that total."
        )
    return (
        f"Platform labour is charged per self-managed deployment ({where}): "
        f"{count_text(values['platform_hours_self_managed'])} h a month at {rate} on every "
        "self-managed candidate, whatever its size. Finance can share the platform team by "
        "GPU-hours instead, on the organisation assumptions."
    )


BASIS_LABELS = dict(CandidateRow.Basis.choices)
# Codes an engine note or reason may carry, in the words the pages use for them.
CODE_WORDS = {
    **TERM_LABELS,
    **dict(WorkloadType.choices),
    **{value: label.lower() for value, label in SuccessUnit.choices},
    **BASIS_LABELS,
}
_CODE = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*\b")
_SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
# A number standing on its own: not part of a name (h100, 80gb), a date or an id (#12).
_NUMBER = re.compile(r"(?<![\w#.\-/])\d+(?:\.\d+)?(?![\w\-]|\.\d)")
# Units inside a field name, as they are written ("power_kw_per_gpu": power kW per GPU).
UNIT_WORDS = {"gpu": "GPU", "kw": "kW", "kwh": "kWh", "gb": "GB", "tb": "TB", "pue": "PUE"}
# Shown figures keep this many significant digits (issue 15: "3-4 significant figures").
SHOWN_DIGITS = 4


def figure_text(value: Decimal | str | float | int | None, digits: int = SHOWN_DIGITS) -> str:
    """A figure as people read it: apps.core.formatting.number at ``digits`` significant
    digits (0.9382, 27.19, 6.33, 5,520); "—" for none."""
    return formatting.number(value, digits)


def count_words(value: Decimal | str | float | None) -> str:
    """A large count as people say it: 1.883 billion, 45.6 million; below a million thousands
    separated (180,320); "—" for none."""
    d = _d(value)
    if d is None:
        return "—"
    for size, word in ((Decimal(10**9), "billion"), (Decimal(10**6), "million")):
        if abs(d) >= size:
            shown = figure_text(d / size)
            return f"{shown.rstrip('0').rstrip('.') if '.' in shown else shown} {word}"
    return count_text(d)


def amount_text(value: Decimal | str | float | None, currency: str) -> str:
    """Money with its currency, as every page writes it (apps.core.formatting.money: USD 6,117.67,
    USD 12,346); "—" for none."""
    return formatting.money(value, currency)


def unit_amount_text(value: Decimal | str | float | None, currency: str) -> str:
    """A unit cost with its currency (apps.core.formatting.unit_cost, ``SHOWN_DIGITS``
    significant digits); "—" for none."""
    return formatting.unit_cost(value, currency, SHOWN_DIGITS)


def _number(match: re.Match[str]) -> str:
    text = match.group(0)
    d = Decimal(text)
    if "." not in text:
        return f"{d:,f}" if d >= 10_000 else text
    whole, fraction = text.split(".")
    if abs(d) >= 1000:
        return f"{d:,.0f}"
    # Cents stay as written (120.00 USD/h); other figures keep SHOWN_DIGITS digits.
    digits = len((whole + fraction).lstrip("0"))
    if len(fraction) == 2 or digits <= SHOWN_DIGITS:
        return text
    return figure_text(d)


def _code(match: re.Match[str]) -> str:
    return CODE_WORDS.get(match.group(0), match.group(0))


def _snake(match: re.Match[str]) -> str:
    name = match.group(0)
    if name in LINE_LABELS:
        label = LINE_LABELS[name]  # "GPU compute" keeps its capitals mid-sentence
        return label if label[:2].isupper() else label[:1].lower() + label[1:]
    try:
        return str(getattr(FinanceAssumptions._meta.get_field(name), "verbose_name", name))
    except FieldDoesNotExist:
        return " ".join(UNIT_WORDS.get(w, w) for w in name.split("_"))


# Money as an engine or API text writes it: the figure, then its currency ("7,635.34 USD").
# Only the currencies a quote may be in (apps.core.currency): "1 GPU" is no amount.
MONEY_AFTER = re.compile(r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?) (" + "|".join(Currency.values) + r")\b")


def currency_first(text: str) -> str:
    """A text's amounts with their currency first, digits untouched ("1.387 USD per 1M
    accepted tokens" -> "USD 1.387 per 1M accepted tokens"), as every figure on the page is
    written."""
    return MONEY_AFTER.sub(lambda m: f"{m.group(2)}{formatting.NBSP}{m.group(1)}", text)


def readable(text: str) -> str:
    """An engine note or reason in a page's words: codes by their labels (SPOT -> Spot /
    preemptible), field names in words, long figures to ``SHOWN_DIGITS`` significant digits
    and thousands separated, money currency first (USD 16,679.50), "<=" and " x " as
    signs."""
    text = _CODE.sub(_code, str(text))
    text = _SNAKE.sub(_snake, text)
    text = currency_first(_NUMBER.sub(_number, text))
    return text.replace("<=", "\u2264").replace(" x ", " \u00d7 ")


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def configuration_text(row: ShownRow) -> str:
    """The GPUs paid for and how they serve, as every page says it ("18 GPUs (18 replicas x 1)",
    apps.core.formatting.gpus); a serving plan's GPUs in all ("338 GPUs in 338 replicas",
    "6 GPUs: 2 prefill and 1 decode instances"); "—" for an API route."""
    count = row.get("gpu_count")
    if not count:
        return "—"
    config = row.get("configuration") or {}
    if row.get("candidate_kind") == "MIX":
        return f"{_plural(count, 'GPU')} in {_plural(row['replicas'] or 1, 'replica')}"
    if row.get("candidate_kind") == "DISAGG":
        pools = {p["role"]: p["instances"] for p in plan_parts(row)}
        return (
            f"{_plural(count, 'GPU')}: {pools.get('prefill', 0)} prefill and "
            f"{_plural(pools.get('decode', 0), 'decode instance')}"
        )
    paid = config.get("paid_gpus") or count * (row.get("replicas") or 1)
    return formatting.gpus(int(paid), int(row.get("replicas") or 1), int(count))


# The layout of an engine on one GPU (apps.engine's label for tp=1, pp=1, one replica).
NO_PARALLELISM = "TP1"


def layout_text(row: ShownRow) -> str | None:
    """The row's parallel layout (tensor / pipeline / expert), when the engine gave one: on the
    row or in its configuration."""
    layout = row.get("layout") or (row.get("configuration") or {}).get("layout")
    if not layout or str(layout) == NO_PARALLELISM:
        return None  # one GPU per engine says nothing a reader needs
    return readable(str(layout))


# The serving plans' rows (apps.finance.plans), in words.
PLAN_WORDS = {
    "MIX": "GPU mix by request size",
    "DISAGG": "Disaggregated prefill and decode pools",
}


def plan_parts(row: ShownRow) -> list[PlanJson]:
    """A plan row's parts: a mix's GPU types, or the prefill and decode pools."""
    plan = row.get("plan") or {}
    if row.get("candidate_kind") == "DISAGG":
        return list(plan.get("pools") or [])
    return list(plan.get("parts") or [])


def plan_text(row: ShownRow, gpu_names: dict[str, str]) -> str:
    """A plan in words, its GPUs by type: "2 x H100 SXM + 3 x L4" (with a times sign), or
    "Prefill 2 x H100 SXM, decode 1 x H200"."""
    parts = []
    for part in plan_parts(row):
        gpu = gpu_names.get(part["gpu"], part["gpu"])
        if row.get("candidate_kind") == "DISAGG":
            count = part["instances"] * part["gpus_per_instance"]
            parts.append(f"{part['role'].capitalize()} {count} \u00d7 {gpu}")
        else:
            parts.append(f"{part['replicas'] * part['gpu_count']} \u00d7 {gpu}")
    joiner = ", " if row.get("candidate_kind") == "DISAGG" else " + "
    return joiner.join(parts) or PLAN_WORDS.get(row.get("candidate_kind") or "", "")


def catalog_names(rows: Sequence[ShownRow]) -> tuple[dict[str, str], dict[str, str]]:
    """(GPU names, system names) by slug, for the rows' candidates: two queries in all."""
    gpus = {r["gpu"] for r in rows if r.get("gpu")}
    gpus |= {p["gpu"] for r in rows for p in plan_parts(r)}
    systems = {r["system"] for r in rows if r.get("system")}
    return (
        dict(Gpu.objects.filter(slug__in=gpus).values_list("slug", "name")) if gpus else {},
        dict(GpuSystem.objects.filter(slug__in=systems).values_list("slug", "name"))
        if systems
        else {},
    )


def _total_texts(total: Total | None, currency: str) -> tuple[str, str | None]:
    """(a horizon's total, what its commitment adds, in words or None)."""
    if total is None:
        return "—", None
    text = amount_text(total.total, currency)
    if not total.committed_beyond:
        return text, None
    return text, (
        f"{total.months} months: {amount_text(total.running, currency)} running + "
        f"{amount_text(total.committed_beyond, currency)} still owed on the "
        f"{total.commitment_months}-month commitment"
    )


def candidate_table_display(
    rows: Sequence[ShownRow],
    *,
    currency: str,
    values: Assumptions | None = None,
    outputs: str = "accepted outputs",
    output: str = "accepted output",
    success_unit: str = "",
) -> tuple[list[str], list[str]]:
    """Ready the shown rows for the page: each row gets its cells in words and formatted
    (``display_candidate``, ``display_term``, ``display_configuration``, ``display_layout``,
    ``display_unit_cost``, ``display_monthly_cost``, ``display_total_12`` / ``_36``,
    ``display_basis``, ``display_reasons``, ``display_labour``) and what its disclosure
    holds (``display_lines``, ``display_facts``, ``display_notes``, ``display_commitment``),
    and its ``warning``
    (``dominant_assumption``, rows that meet the brief). Returns every cost line's key among
    the rows and its label. With ``values`` (the brief's resolved assumptions) the 12- and
    36-month totals are computed (apps.finance.totals); without, they read "—"."""
    names: list[str] = []
    for row in rows:
        names += [n for n in row["cost_lines"] if n not in names]
    gpu_names, system_names = catalog_names(rows)
    totals = row_totals(rows, values) if values is not None else {}
    for i, row in enumerate(rows):
        lines = row["cost_lines"]
        term = row.get("pricing_term")
        if row["candidate_kind"] == "API_ROUTE":
            row["display_candidate"] = f"{row['provider']} \u00b7 {row['api_model']}"
            row["display_term"] = "Model API, priced per token"
        elif row["candidate_kind"] in PLAN_WORDS:
            row["display_candidate"] = plan_text(row, gpu_names)
            row["display_term"] = PLAN_WORDS[row["candidate_kind"]]
        else:
            slug = row["gpu"]
            gpu = gpu_names.get(slug, slug) if slug else "GPU"
            system_slug = row.get("system")
            system = system_names.get(system_slug) if system_slug else None
            row["display_candidate"] = f"{row['provider']} \u00b7 {gpu}" + (
                f" ({system})" if system else ""
            )
            row["display_term"] = TERM_LABELS.get(term, term) if term else "—"
        row["display_configuration"] = configuration_text(row)
        row["display_layout"] = layout_text(row)
        row["display_unit_cost"] = unit_amount_text(row["effective_unit_cost"], currency)
        row["display_monthly_cost"] = amount_text(row["monthly_cost"], currency)
        row["display_basis"] = BASIS_LABELS.get(row["basis"], row["basis"])
        row["display_reasons"] = [readable(w) for w in row["why_not"]] or (
            [] if row["effective_unit_cost"] is not None else ["no accepted outputs a month"]
        )
        row["display_labour"] = money_text(lines.get(OWN_LINE))
        # In the engine's order for the row's kind of work (apps.engine.costing_types).
        row["display_lines"] = [(line_label(n), amount_text(v, currency)) for n, v in lines.items()]
        row_total = totals.get(i, {})
        row["display_total_12"], beyond_12 = _total_texts(row_total.get(12), currency)
        row["display_total_36"], beyond_36 = _total_texts(row_total.get(36), currency)
        row["display_commitment"] = [t for t in (beyond_12, beyond_36) if t]
        row["display_energy"], row["display_energy_per"] = energy_texts(row, output, success_unit)
        row["display_facts"] = _facts(row, outputs)
        row["display_notes"] = [readable(n) for n in row["notes"]]
        # Only for rows that meet the brief: the others have no unit cost to mislead.
        row["warning"] = dominant_assumption(row, currency) if row["meets_constraints"] else None
    return names, [line_label(n) for n in names]


def _plan_facts(row: ShownRow) -> list[tuple[str, str]]:
    """A plan row's make-up, for its disclosure: what each part serves, and the saving."""
    plan = row.get("plan") or {}
    out: list[tuple[str, str]] = []
    if row.get("candidate_kind") == "MIX":
        buckets = plan.get("buckets") or []
        for part in plan.get("parts") or []:
            sizes = ", ".join(
                f"{figure_text(b['input_tokens'])} in / {figure_text(b['output_tokens'])} out"
                for b, served in zip(buckets, part["bucket_shares"], strict=False)
                if served > 0
            )
            out.append(
                (
                    f"Quote #{part['quote_id']}: {_plural(part['replicas'], 'replica')} of "
                    f"{_plural(part['gpu_count'], 'GPU')}",
                    f"{Decimal(str(part['request_share'])) * 100:.1f}% of requests "
                    f"(prompt and output tokens {sizes})",
                )
            )
        if plan.get("saving_share") is not None:
            single = plan.get("best_single") or {}
            replicas = _plural(single.get("replicas") or 0, "replica")
            out.append(
                (
                    "Against the best single quote",
                    f"saves {Decimal(plan['saving_share']) * 100:.1f}% a month "
                    f"(quote #{single.get('quote_id')}, {replicas}, same request sizes)",
                )
            )
    elif row.get("candidate_kind") == "DISAGG":
        for pool in plan.get("pools") or []:
            out.append(
                (
                    f"{pool['role'].capitalize()} pool, quote #{pool['quote_id']}",
                    f"{_plural(pool['instances'], 'instance')} of "
                    f"{_plural(pool['gpus_per_instance'], 'GPU')} ({pool['layout']})",
                )
            )
        out.append(
            (
                "Time to first token",
                f"{figure_text(plan.get('ttft_ms'))} ms (p95 estimate), of which "
                f"{figure_text(plan.get('transfer_ms'))} ms moves the KV cache",
            )
        )
    return out


def energy_per_output_text(joules: Decimal | str, success_unit: str) -> str:
    """An energy per accepted output as the pages and the PDF write it: joules for a small
    output (4.628 J per token), else in Wh, kWh or MWh, whichever keeps it readable
    (apps.core.formatting.energy: 128 MWh per training run, not 128,100,000 Wh)."""
    figure, unit = energy_per_output(Decimal(joules), success_unit)
    if unit == "Wh":
        return formatting.energy(figure / 1000)
    return formatting.figure(figure, unit, SHOWN_DIGITS)


def energy_texts(row: ShownRow, output: str, success_unit: str) -> tuple[str, str]:
    """(kWh a month, energy per accepted output) of a row in words; "—" for an API route,
    whose provider does not publish its energy."""
    kwh, joules = row.get("energy_kwh_per_month"), row.get("energy_j_per_output")
    if kwh is None:
        return "—", ""
    per = ""
    if joules is not None:
        per = f"{energy_per_output_text(joules, success_unit)} per {output}"
    # In the unit that keeps it readable (apps.core.formatting.energy: 1.24 MWh, 850 kWh).
    return formatting.energy(kwh), per


def _facts(row: ShownRow, outputs: str) -> list[tuple[str, str]]:
    """What else a row holds, in words: (label, value) pairs for its disclosure."""
    facts = [(f"{outputs.capitalize()} a month", count_words(row["accepted_outputs_per_month"]))]
    p95 = row.get("p95_latency_ms")
    if p95 is not None:
        ms = Decimal(p95)
        latency = f"{figure_text(ms / 1000)} s" if ms >= 1000 else f"{figure_text(ms)} ms"
        facts.append(("p95 latency", latency))
    if row.get("memory_headroom_gb") is not None:
        facts.append(("Memory headroom", f"{figure_text(row['memory_headroom_gb'], 3)} GB"))
    if row.get("paid_gpu_hours_per_month") is not None:
        facts.append(("GPU-hours paid a month", figure_text(row["paid_gpu_hours_per_month"])))
    facts += _plan_facts(row)
    if row.get("co2e_kg_per_month") is not None:
        facts.append(("CO2e a month", f"{figure_text(row['co2e_kg_per_month'])} kg"))
    if row.get("quote_id"):
        age = row.get("quote_age_days")
        quoted = f"quote #{row['quote_id']}"
        if age is not None:
            quoted += f", {_plural(age, 'day')} old"
        if row.get("quote_stale"):
            quoted += " (stale: ask for a new quote)"
        facts.append(("Price from", quoted))
    elif row.get("api_route_id"):
        facts.append(("Price from", f"API route #{row['api_route_id']}"))
    return facts


def assumption_label(name: str) -> str:
    """An assumption's name in words (the form's label, else its model field's verbose name)."""
    if name in ASSUMPTION_LABELS:
        return ASSUMPTION_LABELS[name]
    label = str(getattr(FinanceAssumptions._meta.get_field(name), "verbose_name", name))
    return label[:1].upper() + label[1:]


def assumption_value(name: str, value: AssumptionValue, currency: str = "") -> str:
    """An assumption's value in words: a choice by its label, money with ``currency`` as it was
    typed (USD 115, USD 0.08), none as "—"."""
    if value in (None, ""):
        return "—"
    if name == "labour_allocation":
        return str(LabourAllocation(str(value)).label)
    d = _d(value) if not isinstance(value, str) or value[:1].isdigit() else None
    if d is None:
        return str(value)
    if name in SHARE_ASSUMPTIONS:
        d *= 100
    # An input as it was given (0.08, 1.56, 115), not padded to a figure's digits.
    d = d.normalize()
    if name in MONEY_FIELDS and currency:
        return formatting.quoted(d, currency)
    text = f"{d:,.0f}" if d == d.to_integral_value() else f"{d:,f}"
    return f"{text} %" if name in SHARE_ASSUMPTIONS else text
