"""The import's diff in words, for the command's output (the page renders its own table)."""

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from .api_prices import ImportPlan


def figure(value: Any) -> str:
    """A price per million tokens as a person reads it: at least two decimals and no trailing
    zeros past them ("0.20", "0.0375", "1,250.00"); "—" for none."""
    if value is None or value == "":
        return "—"
    if isinstance(value, Decimal):
        exact = value.normalize()
        places = max(2, -exact.as_tuple().exponent)  # type: ignore[operator]
        return f"{value:,.{places}f}"
    return str(value)


def share(value: Any) -> str:
    """A discount (a share, 0-1) as a percentage: "50%", "12.5%", "—" for none."""
    if value is None or value == "":
        return "—"
    return f"{(Decimal(value) * 100).normalize():f}%"


def change_text(label: str, value: Any) -> str:
    return share(value) if label == "batch discount" else figure(value)


def plan_lines(plan: ImportPlan, *, applied: bool) -> Iterator[str]:
    verb = "Imported" if applied else "Would import"
    yield f"{verb} from {plan.source}, prices in effect on {plan.day.isoformat()}:"
    yield (
        f"  new routes: {len(plan.new)}; changed: {len(plan.changed)}; "
        f"unchanged: {plan.unchanged}; price periods added to the history: "
        f"{plan.history_added}; briefs to recompute: {plan.affected_briefs}"
    )
    for route in plan.new:
        p = route.price
        yield (
            f"  + {route.provider_name} · {route.model}"
            f"{f' (serves {route.model_preset})' if route.model_preset else ''}: "
            f"input {figure(p.input_price_per_mtok)}, output {figure(p.output_price_per_mtok)}, "
            f"cached input {figure(p.cached_input_price_per_mtok)} USD per million tokens, "
            f"batch discount {share(p.batch_discount)}" + "".join(f"; {note}" for note in p.notes)
        )
    for change in plan.changed:
        what = "; ".join(
            f"{c.label} {change_text(c.label, c.old)} -> {change_text(c.label, c.new)}"
            for c in change.changes
        )
        yield f"  ~ {change.listed.provider_name} · {change.listed.model}: {what}"
    for reason in plan.skipped:
        yield f"  skipped: {reason}"
    if not plan.has_changes:
        yield "  Nothing to change."
