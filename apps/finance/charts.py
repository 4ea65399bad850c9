"""Plotly figures for the finance page, as plain dicts built from the ranking."""

from typing import Any

from apps.engine.costing_breakeven import CAPACITY_OPTION_LABELS, CapacityOption

from .lines import line_label

# The capacity model's curve keys (apps.finance.capacity) and the label a person reads.
OPTION_LABELS = {option.value.lower(): label for option, label in CAPACITY_OPTION_LABELS.items()}


def _label(row: dict[str, Any]) -> str:
    if row["candidate_kind"] == "API_ROUTE":
        return f"{row['provider']} · {row['api_model']} (API)"
    term = (row["pricing_term"] or "").replace("_", " ").lower()
    return f"{row['provider']} · {row['gpu_count']}x {row['gpu']} · {term} (#{row['quote_id']})"


def _f(value: str | None) -> float | None:
    return None if value is None else float(value)


def unit_cost_figure(rows: list[dict[str, Any]], unit: str, currency: str) -> dict[str, Any]:
    """Bars of the rows' unit costs; ``unit`` in words ("per 1M accepted tokens"): the rows'
    costs are already in it (apps.finance.units)."""
    costed = [r for r in rows if r["effective_unit_cost"] is not None]
    return {
        "data": [
            {
                "type": "bar",
                "orientation": "h",
                "y": [_label(r) for r in costed],
                "x": [_f(r["effective_unit_cost"]) for r in costed],
                "marker": {
                    "color": ["#1f5fbf" if r["meets_constraints"] else "#b8bec8" for r in costed]
                },
                "hovertemplate": "%{y}<br>%{x:.4g} " + f"{currency} {unit}<extra></extra>",
            }
        ],
        "layout": {
            "title": {"text": f"Effective cost {unit} (grey: fails a constraint)"},
            "xaxis": {"title": {"text": f"{currency} {unit}"}, "type": "log"},
            "yaxis": {"autorange": "reversed", "automargin": True},
            "margin": {"l": 20, "t": 50},
            "height": 120 + 26 * len(costed),
        },
    }


def pareto_front(points: list[tuple[float, float, str]]) -> list[tuple[float, float, str]]:
    """Candidates no other candidate beats on both cost and latency (lower is better)."""
    front: list[tuple[float, float, str]] = []
    for latency, cost, label in sorted(points):
        if not front or cost < front[-1][1]:
            front.append((latency, cost, label))
    return front


def cost_vs_latency_figure(
    rows: list[dict[str, Any]], currency: str, unit: str = ""
) -> dict[str, Any]:
    points = [
        (float(r["p95_latency_ms"]), float(r["effective_unit_cost"]), _label(r))
        for r in rows
        if r["p95_latency_ms"] is not None and r["effective_unit_cost"] is not None
    ]
    front = pareto_front(points)
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "markers",
                "name": "Candidates",
                "x": [p[0] for p in points],
                "y": [p[1] for p in points],
                "text": [p[2] for p in points],
                "hovertemplate": "%{text}<br>%{x:.0f} ms, %{y:.4g}<extra></extra>",
            },
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "Pareto front",
                "x": [p[0] for p in front],
                "y": [p[1] for p in front],
                "text": [p[2] for p in front],
                "line": {"shape": "hv"},
            },
        ],
        "layout": {
            "title": {"text": "Unit cost vs p95 end-to-end latency"},
            "xaxis": {"title": {"text": "p95 latency (ms)"}},
            "yaxis": {"title": {"text": f"{currency} {unit}".strip()}, "type": "log"},
        },
    }


def cost_breakdown_figure(rows: list[dict[str, Any]], currency: str) -> dict[str, Any]:
    names: list[str] = []
    for row in rows:
        names += [n for n in row["cost_lines"] if n not in names]
    labels = [_label(r) for r in rows]
    return {
        "data": [
            {
                "type": "bar",
                "name": line_label(name),
                "x": labels,
                "y": [float(r["cost_lines"].get(name, 0)) for r in rows],
            }
            for name in names
        ],
        "layout": {
            "barmode": "stack",
            "title": {"text": f"Monthly cost by line ({currency})"},
            "xaxis": {"tickangle": -30, "automargin": True},
            "legend": {"orientation": "h", "y": -0.6},
            "height": 560,
        },
    }


def utilization_figure(capacity_model: dict[str, Any], currency: str) -> dict[str, Any] | None:
    """Each option's cost per accepted output against the utilization of committed GPU-hours,
    in the candidate table's unit, with the break-evens and the brief's own utilization."""
    curve = capacity_model.get("curve") or []
    if not curve:
        return None
    scale = float(capacity_model.get("unit_scale") or 1)
    unit_label = capacity_model.get("unit_label") or "per accepted output"
    xs = [float(p["utilization"]) for p in curve]
    traces: list[dict[str, Any]] = []
    for key, label in OPTION_LABELS.items():
        ys = [None if p.get(key) is None else float(p[key]) * scale for p in curve]
        if any(y is not None for y in ys):
            traces.append({"type": "scatter", "mode": "lines", "name": label, "x": xs, "y": ys})

    def line(x: float, dash: str, color: str) -> dict[str, Any]:
        return {
            "type": "line",
            "x0": x,
            "x1": x,
            "yref": "paper",
            "y0": 0,
            "y1": 1,
            "line": {"dash": dash, "width": 1, "color": color},
        }

    marks = [b for b in capacity_model.get("break_evens", []) if b["utilization"] is not None]
    shapes = [line(float(b["utilization"]), "dot", "#555") for b in marks]
    annotations = [
        {
            "x": float(b["utilization"]),
            "yref": "paper",
            "y": 1.02 + 0.05 * (i % 3),
            "text": f"{_option_label(b['cheaper_below'])} | {_option_label(b['cheaper_above'])}",
            "showarrow": False,
            "font": {"size": 10},
        }
        for i, b in enumerate(marks)
    ]
    brief = next((p for p in curve if p.get("at_brief")), None)
    if brief is not None:
        shapes.append(line(float(brief["utilization"]), "solid", "#1f5fbf"))
        annotations.append(
            {
                "x": float(brief["utilization"]),
                "yref": "paper",
                "y": -0.12,
                "text": "this brief",
                "showarrow": False,
                "font": {"size": 10, "color": "#1f5fbf"},
            }
        )
    return {
        "data": traces,
        "layout": {
            "title": {"text": f"Cost per accepted output vs utilization ({capacity_model['gpu']})"},
            "xaxis": {"title": {"text": "utilization of committed GPU-hours"}, "tickformat": ".0%"},
            "yaxis": {"title": {"text": f"{currency} {unit_label}"}, "type": "log"},
            "shapes": shapes,
            "annotations": annotations,
            "margin": {"t": 90},
        },
    }


def tornado_figure(sensitivity: dict[str, Any]) -> dict[str, Any] | None:
    """The winner's unit cost (in the table's unit) at each assumption's low and high value
    (apps.finance.sensitivity), widest swing on top, around today's figure; None without one."""
    bars = [
        b
        for b in sensitivity.get("tornado") or []
        if b["low_unit_cost"] is not None and b["high_unit_cost"] is not None
    ]
    leading = {c["key"]: c for c in sensitivity.get("leading") or []}
    winner = leading.get(sensitivity.get("winner") or "")
    if not bars or winner is None or winner["effective_unit_cost"] is None:
        return None
    base = float(winner["effective_unit_cost"])  # in the table's unit (in_table_unit)
    currency, unit_label = sensitivity["currency"], sensitivity["unit_label"]
    labels = [b["label"] for b in bars]

    def trace(end: str, name: str, color: str) -> dict[str, Any]:
        costs = [float(b[f"{end}_unit_cost"]) for b in bars]
        return {
            "type": "bar",
            "orientation": "h",
            "name": name,
            "y": labels,
            "x": [c - base for c in costs],
            "base": base,
            "marker": {"color": color},
            "customdata": [[b[f"{end}_value"], c] for b, c in zip(bars, costs, strict=True)],
            "hovertemplate": "%{y} at %{customdata[0]}: %{customdata[1]:.4g} "
            + f"{currency} {unit_label}<extra></extra>",
        }

    return {
        "data": [
            trace("low", "assumption -20 %", "#1f5fbf"),
            trace("high", "assumption +20 %", "#d9822b"),
        ],
        "layout": {
            "title": {
                "text": f"Winner's cost per accepted output ({currency} {unit_label}), ±20 %"
            },
            "barmode": "overlay",
            "xaxis": {"title": {"text": f"{currency} {unit_label}"}},
            "yaxis": {"autorange": "reversed", "automargin": True},
            "shapes": [
                {
                    "type": "line",
                    "x0": base,
                    "x1": base,
                    "yref": "paper",
                    "y0": 0,
                    "y1": 1,
                    "line": {"dash": "dot", "width": 1, "color": "#555"},
                }
            ],
            "legend": {"orientation": "h", "y": -0.25},
            "margin": {"l": 20, "t": 50},
            "height": 160 + 36 * len(bars),
        },
    }


def _option_label(code: str) -> str:
    try:
        return CAPACITY_OPTION_LABELS[CapacityOption(code)]
    except ValueError:
        return code
