"""Plotly figures for the brief pages, as plain dicts built from engine output."""

from typing import Any

MEMORY_PARTS = (
    ("weights_gb", "Weights"),
    ("kv_cache_gb", "KV cache"),
    ("activations_gb", "Activations"),
    ("gradients_gb", "Gradients"),
    ("optimizer_gb", "Optimizer states"),
    ("adapters_gb", "Adapters"),
    ("overhead_gb", "Runtime overhead"),
    ("safety_margin_gb", "Safety margin"),
)


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
    for key, name in MEMORY_PARTS:
        values = [round(e["memory"].get(key, 0) / e["gpu_count"], 2) for e in estimates]
        if any(values):
            traces.append({"type": "bar", "name": name, "x": labels, "y": values})
    traces.append(
        {
            "type": "scatter",
            "mode": "markers",
            "name": "Capacity per GPU",
            "x": labels,
            "y": [round(e["memory"]["capacity_gb"] / e["gpu_count"], 1) for e in estimates],
            "marker": {"symbol": "line-ew-open", "size": 26, "color": "#111"},
        }
    )
    return {
        "data": traces,
        "layout": {
            "barmode": "stack",
            "title": {"text": "Memory needed per GPU"},
            "yaxis": {"title": {"text": "GB per GPU"}},
            "xaxis": {"tickangle": -35},
            "legend": {"orientation": "h", "y": -0.35},
            "margin": {"t": 50, "b": 140},
        },
    }
