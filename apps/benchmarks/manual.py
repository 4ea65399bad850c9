"""Runs entered by hand: the shape of Phase 1 (memory fit) and Phase 3 (failure and operations)
results and conditions, checked the same way for the API and the page."""

import math
from typing import Any, Final

from django.core.exceptions import ValidationError

#: Phase 3 checks, in the order they are shown: key -> what is checked.
FAILURE_OPS_CHECKS: Final = {
    "kill_worker": "Kill a worker",
    "drain_node": "Drain a node",
    "restart_serving_stack": "Restart the serving stack",
    "bad_deploy": "Bad deploy (roll back)",
    "checkpoint_recovery": "Checkpoint recovery",
    "cold_start_model_load": "Cold start and model-load time",
    "logs_metrics_available": "Logs and metrics available",
    "cost_attribution_retries": "Cost attribution survives retries",
}
#: Conditions a run may record; anything else is refused so that typos do not pass silently.
CONDITION_FIELDS: Final = {
    "model": str,
    "precision": str,
    "framework": str,
    "framework_version": str,
    "input_tokens": int,
    "output_tokens": int,
    "concurrency": int,
    "request_rate": float,
    "burst_profile": str,
}
MEMORY_FIT_FIELDS: Final = ("peak_memory_gb", "oom_rate", "headroom_gb")
#: The least request rate a run may state (one request every 1,000 s); 0 would be no load.
MIN_REQUEST_RATE: Final = 0.001
MAX_TEXT: Final = 2000


def _number(value: Any, where: str, *, lo: float = 0.0, hi: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationError({where: "must be a number"})
    result = float(value)
    if not math.isfinite(result):
        raise ValidationError({where: "must be a finite number (no NaN or infinity)"})
    if result < lo:
        raise ValidationError({where: f"must be at least {lo:g}"})
    if hi is not None and result > hi:
        raise ValidationError({where: f"must be at most {hi:g}"})
    return result


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ValidationError({where: "must be text"})
    if len(value) > MAX_TEXT:
        raise ValidationError({where: f"must be at most {MAX_TEXT} characters"})
    return value.replace("\x00", "")


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValidationError({where: "must be a JSON object"})
    return value


def _no_unknown(data: dict[str, Any], known: Any, where: str) -> None:
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ValidationError(
            {where: f"unknown field {unknown[0]!r}; expected: {', '.join(known)}"}
        )


def conditions_clean(raw: Any) -> dict[str, Any]:
    """Conditions entered by hand: the known fields, typed; blanks dropped."""
    data = _object(raw if raw is not None else {}, "conditions")
    _no_unknown(data, CONDITION_FIELDS, "conditions")
    out: dict[str, Any] = {}
    for name, kind in CONDITION_FIELDS.items():
        value = data.get(name)
        if value is None or value == "":
            continue
        where = f"conditions.{name}"
        if kind is str:
            out[name] = _text(value, where)[:200]
        elif kind is int:
            number = _number(value, where, lo=1)
            if number != math.floor(number):
                raise ValidationError({where: "must be a whole number"})
            out[name] = int(number)
        else:
            out[name] = _number(value, where)
    return out


def memory_fit_results_clean(raw: Any) -> dict[str, Any]:
    data = _object(raw, "results")
    _no_unknown(data, MEMORY_FIT_FIELDS, "results")
    missing = [name for name in MEMORY_FIT_FIELDS if data.get(name) is None]
    if missing:
        raise ValidationError({f"results.{missing[0]}": "is required for a memory-fit run"})
    return {
        "peak_memory_gb": _number(data["peak_memory_gb"], "results.peak_memory_gb", hi=1e6),
        "oom_rate": _number(data["oom_rate"], "results.oom_rate", hi=1.0),
        "headroom_gb": _number(data["headroom_gb"], "results.headroom_gb", hi=1e6),
    }


def failure_ops_results_clean(raw: Any) -> dict[str, Any]:
    data = _object(raw, "results")
    _no_unknown(data, ("checks",), "results")
    checks = _object(data.get("checks"), "results.checks")
    _no_unknown(checks, FAILURE_OPS_CHECKS, "results.checks")
    if not checks:
        raise ValidationError({"results.checks": "give at least one check"})
    out: dict[str, dict[str, Any]] = {}
    for key in FAILURE_OPS_CHECKS:
        if key not in checks:
            continue
        where = f"results.checks.{key}"
        check = _object(checks[key], where)
        _no_unknown(check, ("passed", "time_s", "notes"), where)
        if not isinstance(check.get("passed"), bool):
            raise ValidationError({f"{where}.passed": "must be true or false"})
        time_s = check.get("time_s")
        out[key] = {
            "passed": check["passed"],
            "time_s": None if time_s is None else _number(time_s, f"{where}.time_s", hi=1e7),
            "notes": _text(check.get("notes") or "", f"{where}.notes"),
        }
    passed = sum(1 for c in out.values() if c["passed"])
    return {"checks": out, "checks_passed": passed, "checks_failed": len(out) - passed}


def manual_results_clean(phase: str, raw: Any) -> dict[str, Any]:
    """Checked results for a run entered by hand (raises ``ValidationError`` naming the field)."""
    if phase == "MEMORY_FIT":
        return memory_fit_results_clean(raw)
    if phase == "FAILURE_OPS":
        return failure_ops_results_clean(raw)
    raise ValidationError(
        {"phase": "runs entered by hand are MEMORY_FIT or FAILURE_OPS; import a results file"}
    )
