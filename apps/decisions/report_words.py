"""The words of a decision record's PDF for the codes and figures a record stores: statuses,
verdicts, roles, workloads, acceptance criteria, assumptions, layouts, dates and money
(apps.decisions.report and its sections use them; apps.core.formatting writes the numbers)."""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

from apps.briefs.choices import SuccessUnit, WorkloadType
from apps.catalog.selectors import preset_name
from apps.core import formatting
from apps.core.roles import Role

from .checklist import SECTIONS
from .models import ChecklistAnswer
from .report_data import Frozen


def when_words(value: Any) -> str:
    """A frozen date or time as a reader reads it ("2026-11-02 10:00:00"); "" for none."""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S UTC")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str) and "T" in value:
        return value.replace("T", " ")[:19]
    return "" if value is None else str(value)


def number_words(value: Any) -> str:
    """A frozen figure (apps.core.formatting.number); "-" for none."""
    if value is None:
        return "-"
    return formatting.number(value)


# --- Words for the codes a record stores ---------------------------------------------------

STATUS_WORDS = {
    "DRAFT": "Draft",
    "IN_REVIEW": "In review",
    "APPROVED": "Approved",
    "REJECTED": "Rejected",
    "SUPERSEDED": "Superseded",
}
VERDICT_WORDS = {"APPROVE": "Approved", "REJECT": "Rejected"}
ACTION_WORDS = {
    "CREATE": "Created",
    "REFRESH": "Evidence refreshed",
    "EDIT": "Edited",
    "SUBMIT": "Submitted for review",
    "APPROVE": "Approved",
    "REJECT": "Rejected",
    "SUPERSEDE": "Superseded",
}
WORKLOAD_WORDS = dict(WorkloadType.choices)
SUCCESS_UNIT_WORDS = dict(SuccessUnit.choices)
ROLE_WORDS = dict(Role.choices)
ANSWER_WORDS = dict(ChecklistAnswer.Answer.choices)
SECTION_WORDS = dict(SECTIONS)
CRITERIA_WORDS = {
    "latency_percentile": ("Latency percentile", ""),
    "ttft_target_ms": ("Time to first token target", " ms"),
    "itl_target_ms": ("Inter-token latency target", " ms"),
    "e2e_target_ms": ("End-to-end latency target", " ms"),
    "acceptance_rate": ("Acceptance rate", ""),
    "min_memory_headroom_gb": ("Minimum memory headroom", " GB"),
    "accepted_outputs_per_month": ("Accepted outputs a month", ""),
}
LATENCY_WORDS = {"ttft": "time to first token", "itl": "inter-token latency", "e2e": "end-to-end"}
ASSUMPTION_WORDS = {
    "reporting_currency": "Reporting currency",
    "labour_rate_per_hour": "Labour rate per hour",
    "observability_share": "Observability, share of the monthly cost",
    "retry_rate": "Retry rate",
    "failure_rate": "Failure rate",
    "acceptance_rate": "Acceptance rate",
    "power_price_per_kwh": "Electricity price per kWh",
    "pue": "Power usage effectiveness (PUE)",
    "hosting_per_kw_month": "Hosting per kW-month",
    "ops_hours_per_gpu_month": "Operations hours per owned GPU-month",
    "platform_hours_self_managed": "Platform hours a month per self-managed deployment",
    "labour_allocation": "Platform labour allocation",
    "platform_labour_pool_hours": "Platform team's hours a month (shared pool)",
    "self_managed_gpu_hours_per_month": "Self-managed GPU-hours a month (shared pool)",
}
SOURCE_WORDS = {
    "brief": "this brief's finance override",
    "organisation": "the organisation's finance assumptions",
    "built-in": "gpuselect's built-in default",
}
ALLOCATION_WORDS = {
    "PER_DEPLOYMENT": "per deployment",
    "SHARED_BY_GPU_HOURS": "shared by GPU-hours",
}
NOT_RECORDED = "not recorded"


def words(code: Any, vocabulary: dict[str, str]) -> str:
    """A stored code in words: its label, else the code with its underscores as spaces."""
    if code in (None, ""):
        return "-"
    text = str(code)
    return str(vocabulary.get(text) or text.replace("_", " ").capitalize())


def percent_words(share: Any) -> str:
    """0.0300 -> "3 %", 0.975 -> "97.5 %"."""
    return formatting.percent(share)


def figure_words(value: Any) -> str:
    """A figure someone typed (an assumption, a target) as they would write it."""
    return formatting.number(value)


def money_words(value: Any, currency: str) -> str:
    """Money as a buyer reads it (apps.core.formatting.money); "not recorded" for none."""
    if value is None:
        return NOT_RECORDED
    return formatting.money(value, currency)


def model_words(model: Frozen) -> str:
    """The brief's model as its card names it ("Llama 3.1 8B"), else the preset as written."""
    if not model:
        return "-"
    preset = model.get("preset")
    if preset:
        return preset_name(preset)
    return "a pasted config.json" if model.get("hf_config") else "custom"


def latency_words(target: Any) -> str:
    """{"ttft_p95_ms": 500} -> "time to first token 500 ms (p95)"."""
    if not target:
        return "-"
    if not isinstance(target, dict):
        return str(target)
    parts = []
    for key, value in target.items():
        kind, _, rest = str(key).partition("_")
        percentile = rest.removesuffix("_ms")
        parts.append(
            f"{LATENCY_WORDS.get(kind, kind)} {value} ms"
            + (f" ({percentile})" if percentile else "")
        )
    return ", ".join(parts)


def criterion_words(key: str, value: Any) -> tuple[str, str]:
    label, suffix = CRITERIA_WORDS.get(key, (words(key, {}), ""))
    if value in (None, ""):
        return label, "none"
    if key == "acceptance_rate":
        return label, percent_words(value)
    if key == "latency_percentile":
        return label, str(value).lower() if str(value).startswith("P") else words(value, {})
    return label, f"{figure_words(value)}{suffix}"


LAYOUT_TERMS = (
    ("DEP", "attention data-parallel with the experts split across the GPUs"),
    ("TP", "tensor parallel"),
    ("PP", "pipeline parallel"),
    ("DP", "independent engines"),
)


def layout_words(layout: Any) -> str:
    """A row's parallel layout: its label ("TP2xPP2", or the engine's layout as a dict of tp,
    pp, dep and replicas) followed by what its parts mean."""
    if isinstance(layout, dict):
        tp, pp, dep, dp = (int(layout.get(k) or 1) for k in ("tp", "pp", "dep", "replicas"))
        parts = [f"DP{dp}"] if dp > 1 else []
        if dep > 1:
            parts.append(f"DEP{dep}")
        else:
            parts += [f"TP{tp}"] if tp > 1 or pp == 1 else []
            parts += [f"PP{pp}"] if pp > 1 else []
        label = "x".join(parts)
    else:
        label = str(layout)
    meaning = [text for term, text in LAYOUT_TERMS if re.search(rf"\b{term}\d|x{term}\d", label)]
    return f"{label} ({'; '.join(meaning)})" if meaning else label
