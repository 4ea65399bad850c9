"""Plotly figures for the benchmark pages, as plain dicts: measured vs estimated per run."""

from typing import Any, Final

#: (figure key, chart id, title, axis title)
METRICS: Final = (
    ("output_tokens_per_s", "tps-chart", "Output tokens/s: measured vs estimated", "tokens/s"),
    ("ttft_ms", "ttft-chart", "Time to first token (p50, else mean)", "ms"),
    ("tpot_ms", "tpot-chart", "Time per output token, first excluded (p50, else mean)", "ms"),
)
MEASURED_COLOUR = "#1f5fbf"
ESTIMATED_COLOUR = "#b8bec8"


def measured_vs_estimated_figure(
    rows: list[dict[str, Any]], figure: str, title: str, unit: str
) -> dict[str, Any]:
    labels = [r["label"] + (" (superseded)" if r["superseded"] else "") for r in rows]
    return {
        "data": [
            {
                "type": "bar",
                "name": "Measured",
                "x": labels,
                "y": [r["measured"][figure] for r in rows],
                "marker": {"color": MEASURED_COLOUR},
                "hovertemplate": "%{x}<br>measured %{y:.4g} " + unit + "<extra></extra>",
            },
            {
                "type": "bar",
                "name": "Estimated at import",
                "x": labels,
                "y": [r["estimated"][figure] for r in rows],
                "marker": {"color": ESTIMATED_COLOUR},
                "hovertemplate": "%{x}<br>estimated %{y:.4g} " + unit + "<extra></extra>",
            },
        ],
        "layout": {
            "title": {"text": title},
            "barmode": "group",
            "yaxis": {"title": {"text": unit}, "rangemode": "tozero", "tickformat": ",~r"},
            "xaxis": {"automargin": True},
            "margin": {"t": 50},
            "height": 360,
        },
    }


def run_figures(rows: list[dict[str, Any]]) -> list[tuple[str, str, dict[str, Any]]]:
    """(chart id, json_script id, figure) for each metric, or none without throughput runs."""
    if not rows:
        return []
    return [
        (chart_id, f"{chart_id}-data", measured_vs_estimated_figure(rows, figure, title, unit))
        for figure, chart_id, title, unit in METRICS
    ]
