"""What a candidate table keeps of its last compute besides its rows, so that a change to
quotes alone can be re-costed without reading the assumptions or asking the engine again
(apps.finance.repricing): the assumption values as JSON, and a stamp of what the engine's
answer depends on that no recompute request announces."""

from decimal import Decimal
from typing import Any

from .assumptions import FIELDS
from .configuration import LADDER_VERSION
from .estimates import estimates_key


def engine_stamp() -> str:
    """What an engine answer depends on besides the brief and its benchmark runs: the catalog
    as the engine sees it, the engine's version, the configurations' format (the parts of
    ``estimates_key`` that no recompute request announces)."""
    return estimates_key(None, {"configurations": LADDER_VERSION})


def values_encode(values: dict[str, Any]) -> dict[str, Any] | None:
    """The resolved assumption values as JSON (a Decimal as ``{"decimal": "0.05"}``), kept in
    a table's inputs so that re-costing a changed quote needs no assumption queries; None if
    a value is of a type this does not know (the table is then always recomputed in full)."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        if isinstance(value, Decimal):
            out[name] = {"decimal": str(value)}
        elif value is None or isinstance(value, str | int | float | bool):
            out[name] = value
        elif name == "fx_rates" and isinstance(value, dict):
            out[name] = value  # already strings (apps.finance.fx.fx_rates_applied)
        else:
            return None
    return out


def values_decode(stored: Any) -> dict[str, Any] | None:
    """``values_encode``'s inverse; None when nothing usable was stored (or an assumption
    added since is missing): the caller recomputes in full."""
    if not isinstance(stored, dict) or any(name not in stored for name in FIELDS):
        return None
    return {
        name: Decimal(v["decimal"]) if isinstance(v, dict) and "decimal" in v else v
        for name, v in stored.items()
    }
