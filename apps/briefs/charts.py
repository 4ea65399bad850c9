"""Plotly figures for the brief pages, as plain dicts built from engine output."""

from typing import Any

# (key, label, colour): a colour per part, Okabe & Ito's colour-blind safe palette ("Color
# Universal Design", https://jfly.uni-koeln.de/color/), as the finance charts use it
# (apps/finance/charts.py); black is left for the capacity marker.
MEMORY_PARTS = (
    ("weights_gb", "Weights", "#0072B2"),
    ("kv_cache_gb", "KV cache", "#E69F00"),
    ("activations_gb", "Activations", "#009E73"),
    ("gradients_gb", "Gradients", "#D55E00"),
    ("optimizer_gb", "Optimizer states", "#CC79A7"),
    ("adapters_gb", "Adapters", "#56B4E9"),
    ("overhead_gb", "Runtime overhead", "#F0E442"),
    ("safety_margin_gb", "Safety margin", "#999933"),
)
CAPACITY_COLOUR = "#111111"


def short_name(name: str) -> str:
    """A GPU's catalog name short enough for an axis: "NVIDIA H100 SXM5" -> "H100 SXM5",
    "NVIDIA GB200 (per Blackwell GPU in NVL72)" -> "GB200"."""
    for vendor in ("NVIDIA ", "AMD Instinct ", "AMD "):
        name = name.removeprefix(vendor)
    return name.split(" (")[0]


def memory_breakdown_figure(
    estimates: list[dict[str, Any]], names: dict[str, str] | None = None
) -> dict[str, Any]:
    """Stacked bar per GPU (at the count shown) of memory needed per GPU, with its capacity;
    ``names``: the GPUs' catalog names by slug (else the slugs)."""
    names = names or {}
    labels = [
        f"{short_name(names.get(e['gpu'], e['gpu']))} \u00d7{e['gpu_count']}" for e in estimates
    ]
    traces: list[dict[str, Any]] = []
    for key, name, colour in MEMORY_PARTS:
        values = [round(e["memory"].get(key, 0) / e["gpu_count"], 2) for e in estimates]
        if any(values):
            traces.append(
                {
                    "type": "bar",
                    "name": name,
                    "x": labels,
                    "y": values,
                    "marker": {"color": colour},
                    "hovertemplate": f"%{{x}}<br>{name}: %{{y:,.1f}} GB<extra></extra>",
                }
            )
    traces.append(
        {
            "type": "scatter",
            "mode": "markers",
            "name": "Capacity per GPU",
            "x": labels,
            "y": [round(e["memory"]["capacity_gb"] / e["gpu_count"], 1) for e in estimates],
            "marker": {"symbol": "line-ew-open", "size": 26, "color": CAPACITY_COLOUR},
            "hovertemplate": "%{x}<br>Capacity per GPU: %{y:,.1f} GB<extra></extra>",
        }
    )
    return {
        "data": traces,
        "layout": {
            "barmode": "stack",
            "title": {"text": "Memory needed per GPU"},
            "yaxis": {"title": {"text": "GB per GPU"}, "tickformat": ",~r"},
            "xaxis": {"tickangle": -35, "automargin": True},
            # beside the plot, right of it: never over the bars nor over the GPU names
            "legend": {"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1},
            "margin": {"t": 50},
        },
    }
