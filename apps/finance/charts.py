"""Plotly figures for the finance page, as plain dicts built from the ranking."""

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any, Literal, cast

from apps.engine.costing_breakeven import CAPACITY_OPTION_LABELS, CapacityOption
from apps.quotes.models import TERM_LABELS

from .lines import PLAN_WORDS, line_label, plan_text, unit_amount_text
from .shown import CapacityModel, CurvePoint, Sensitivity, ShownRow

# A Plotly figure, or a part of one (a trace, an axis, a shape): plotly.js's own JSON, built
# here and handed to the page as it is.
PlotlyJson = dict[str, Any]

# The capacity model's curve keys (apps.finance.capacity) and the label a person reads.
OPTION_LABELS = {option.value.lower(): label for option, label in CAPACITY_OPTION_LABELS.items()}

# Series colours, one per series and never shared within a chart: Okabe & Ito's colour-blind
# safe qualitative palette ("Color Universal Design", https://jfly.uni-koeln.de/color/, black
# last, yellow after it: the least legible on white), then Paul Tol's "muted" scheme
# (https://personal.sron.nl/~pault/, "Qualitative colour schemes"), then Tol's grey.
PALETTE = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#000000",  # black
    "#F0E442",  # yellow
    "#332288",  # indigo
    "#999933",  # olive
    "#882255",  # wine
    "#DDCC77",  # sand
    "#117733",  # green
    "#CC6677",  # rose
    "#88CCEE",  # cyan
    "#AA4499",  # purple
    "#44AA99",  # teal
    "#BBBBBB",  # grey
)
MEETS_COLOUR, FAILS_COLOUR = PALETTE[0], "#b8bec8"  # fails: the table's greyed-out rows
# A cost line keeps its colour on every page; the lines that are usually the largest (compute,
# labour, idle capacity, API tokens) take the most distinct colours, so that neighbours differ.
LINE_COLOURS = dict(
    zip(
        (
            "gpu_compute",
            "platform_labour",
            "idle_capacity",
            "api_input_tokens",
            "api_output_tokens",
            "serving_stack",
            "observability",
            "storage",
            "network_egress",
            "retry_waste",
            "provider_extras",
            "checkpointing",
            "failed_run_waste",
            "failed_renders",
            "queue_overhead",
            "moderation",
            "operator_review",
        ),
        PALETTE,
        strict=False,
    )
)
# Each capacity option keeps its colour on every page too.
OPTION_COLOURS = dict(zip(OPTION_LABELS, PALETTE, strict=False))
BRIEF_COLOUR = "#000000"  # the brief's own utilization: black, which no option takes
BREAK_EVEN_COLOUR = "#555555"
# The legend beside the plot area, right of it (never over the data, nor over an axis title).
LEGEND_BESIDE = {"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1, "yanchor": "top"}
FONT = {"size": 13}


def gpu_text(slug: str | None) -> str:
    """A GPU slug as people write the name: "h100-sxm5-80gb" -> "H100 SXM5 80GB"."""
    return (slug or "").replace("-", " ").upper()


def candidate_chart_label(row: ShownRow, gpu_names: Mapping[str, str]) -> str:
    """A candidate as a chart names it, in words and without ids or slugs: "Neocloud B ·
    NVIDIA H100 SXM5 · Reserved 1 year" (with "2 \u00d7" before the GPU for more than one),
    "Model API D · llama-3.1-8b-instruct · model API" (the provider's model name, as its API
    takes it), "GPU mix by request size: …" for a serving plan. ``gpu_names``: slug -> the
    catalog's name (apps.finance.labels / the page's reads); a slug the map lacks reads as
    ``gpu_text`` makes it."""
    kind = row.get("candidate_kind")
    if kind == "API_ROUTE":
        return f"{row.get('provider')} · {row.get('api_model')} · model API"
    if kind in PLAN_WORDS:
        return f"{PLAN_WORDS[kind]}: {plan_text(row, dict(gpu_names))}"
    slug = row.get("gpu") or ""
    gpu = gpu_names.get(slug) or gpu_text(slug)
    count = row.get("gpu_count") or 1
    what = gpu if count == 1 else f"{count} \u00d7 {gpu}"
    term = row.get("pricing_term") or ""
    term_text = TERM_LABELS.get(term, term.replace("_", " ").capitalize())
    return " · ".join(p for p in (row.get("provider"), what, term_text) if p)


def candidate_chart_labels(rows: Sequence[ShownRow], gpu_names: Mapping[str, str]) -> list[str]:
    """``candidate_chart_label`` for each row, made unique without ids: two offers alike in
    provider, GPU and term are told apart by region, then by "offer 1", "offer 2" in the
    rows' order (so that no two bars or points share a label and none reads "quote #8")."""
    labels = [candidate_chart_label(row, gpu_names) for row in rows]
    counts = Counter(labels)
    with_region = [
        f"{label} · {row['region']}" if counts[label] > 1 and row.get("region") else label
        for label, row in zip(labels, rows, strict=True)
    ]
    counts = Counter(with_region)
    seen: Counter[str] = Counter()
    out = []
    for label in with_region:
        if counts[label] > 1:
            seen[label] += 1
            label = f"{label} · offer {seen[label]}"
        out.append(label)
    return out


def label_rows(rows: Sequence[ShownRow], gpu_names: Mapping[str, str]) -> None:
    """Give each row its ``chart_label`` (``candidate_chart_labels`` over all the rows at
    once), so that a candidate reads the same on every chart of the page."""
    for row, label in zip(rows, candidate_chart_labels(rows, gpu_names), strict=True):
        row["chart_label"] = label


def _labels(rows: Sequence[ShownRow]) -> list[str]:
    """The rows' chart labels: those ``label_rows`` gave them, else made here (GPU slugs read
    as ``gpu_text`` writes them)."""
    if all(row.get("chart_label") for row in rows):
        return [row["chart_label"] for row in rows]
    return candidate_chart_labels(rows, {})


def _colours(names: list[str], fixed: dict[str, str]) -> list[str]:
    """A distinct colour per name: its fixed colour where it has one and no earlier name took
    it, else the first palette colour still free."""
    taken: list[str] = []
    for name in names:
        colour = fixed.get(name)
        if colour is None or colour in taken:
            colour = next((c for c in PALETTE if c not in taken), PALETTE[len(taken) % 18])
        taken.append(colour)
    return taken


def _f(value: str | None) -> float | None:
    return None if value is None else float(value)


# The unit-cost bars stand on a linear axis from 0, so a bar's length is its cost: a candidate
# twice as dear has a bar twice as long. (The log axis they had drew the cheapest bar the
# shortest whatever the ratio: bar lengths on a log axis measure nothing a buyer compares.)
# Each bar has its cost written beside it, so a short bar still reads. When the dearest costs
# more than UNIT_COST_SPAN times the cheapest, the bars beyond that span are cut at the axis
# end, hatched, their cost written on them and their number in the title: no bar is then
# shorter than 1/UNIT_COST_SPAN of the axis (about 9 px of the page's ~900 px plot, still seen).
UNIT_COST_SPAN = 100
# Room past the longest whole bar for the cost written beside it, as a share of the axis.
BAR_TEXT_ROOM = 0.3
CUT_PATTERN = "/"  # Plotly's hatching: a bar longer than drawn
CUT_SOLIDITY = 0.15  # thin hatching lines (Plotly's default, 0.3, hides the text on the bar)
TEXT_COLOUR = "#1d2430"  # the page's text colour (static/css/site.css --ink)


def _unit_cost(row: ShownRow) -> float:
    """A costed row's unit cost (the charts keep only the rows that have one)."""
    cost = row["effective_unit_cost"]
    if cost is None:
        raise ValueError("a chart was given a row without a unit cost")
    return float(cost)


def unit_cost_figure(rows: Sequence[ShownRow], unit: str, currency: str) -> PlotlyJson:
    """Bars of the rows' unit costs on a linear axis from 0 (outliers cut and said so); ``unit``
    in words ("per 1M accepted tokens"): the rows' costs are already in it (apps.finance.units)."""
    costed = [r for r in rows if r["effective_unit_cost"] is not None]
    costs = [_unit_cost(r) for r in costed]
    positive = [c for c in costs if c > 0]
    ceiling = min(positive) * UNIT_COST_SPAN if positive else None
    cut = [ceiling is not None and c > ceiling for c in costs]
    whole = [c for c, is_cut in zip(costs, cut, strict=True) if not is_cut]
    axis_end = (max(whole, default=0) or 1) * (1 + BAR_TEXT_ROOM)
    shown = [axis_end if is_cut else c for c, is_cut in zip(costs, cut, strict=True)]
    # As the table writes them (four significant digits, with the currency).
    words = [unit_amount_text(r["effective_unit_cost"], currency) for r in costed]
    title = f"Effective cost {unit} (grey: fails the brief)"
    if any(cut):
        n = sum(cut)
        title += (
            f"<br><sub>{n} bar{'' if n == 1 else 's'} over {UNIT_COST_SPAN}\u00d7 the cheapest "
            "cut at the axis end (hatched), the cost written on "
            f"{'it' if n == 1 else 'each'}</sub>"
        )
    return {
        "data": [
            {
                "type": "bar",
                "orientation": "h",
                "y": _labels(costed),
                "x": shown,
                "text": [
                    f"{w} (cut: beyond the axis)" if is_cut else w
                    for w, is_cut in zip(words, cut, strict=True)
                ],
                "textposition": ["inside" if is_cut else "outside" for is_cut in cut],
                "insidetextanchor": "end",
                "constraintext": "none",  # the cost at the page's size, never shrunk to fit
                "textfont": {
                    "color": [
                        "#ffffff" if is_cut and r["meets_constraints"] else TEXT_COLOUR
                        for r, is_cut in zip(costed, cut, strict=True)
                    ]
                },
                "cliponaxis": False,
                "customdata": words,
                "marker": {
                    "color": [
                        MEETS_COLOUR if r["meets_constraints"] else FAILS_COLOUR for r in costed
                    ],
                    # Thin white hatching: the bar keeps its colour and its text stays legible.
                    "pattern": {
                        "shape": [CUT_PATTERN if is_cut else "" for is_cut in cut],
                        "fillmode": "overlay",  # over the bar's colour, not instead of it
                        "fgcolor": "#ffffff",
                        "solidity": CUT_SOLIDITY,
                    },
                },
                "hovertemplate": "%{y}<br>%{customdata} " + f"{unit}<extra></extra>",
            }
        ],
        "layout": {
            "title": {"text": title},
            "xaxis": {
                "title": {"text": f"{currency} {unit}"},
                "type": "linear",
                "range": [0, axis_end],
                "rangemode": "tozero",
                "tickformat": ",~r",
            },
            "yaxis": {"autorange": "reversed", "automargin": True},
            "margin": {"l": 20, "t": 70 if any(cut) else 50},
            "font": FONT,
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


# Every point on the scatter is labelled (issue 27: "every candidate on each scatter, with
# its label"); each label is placed where it covers no other label and no point, in the
# plot's pixels at the narrowest the finance page draws it at 1,440 px: beside its point at
# one of Plotly's text positions, else pulled out on a leader line (an annotation).
# The plot area's width and height in px: the 1,440 px page's content less the legend beside
# it and the axes' margins (the narrowest it is drawn: a wider plot only spreads the labels).
PLOT_WIDTH_PX, PLOT_HEIGHT_PX = 760, 300
# An 11 px label's glyphs average 0.6 em (Plotly's default Open Sans / Arial), its line 14 px.
LABEL_CHAR_PX, LABEL_LINE_PX = 6.6, 14.0
# A marker's half size (size 9) and the gap Plotly leaves between it and a text position.
MARKER_HALF_PX, TEXT_GAP_PX = 5.0, 4.0
# Plotly's text positions, tried in this order (beside first: reads as a list).
TEXT_POSITIONS = (
    "middle right", "middle left", "top center", "bottom center",
    "top right", "bottom right", "top left", "bottom left",
)  # fmt: skip
# The leader lines' lengths (px) and directions tried when no text position is free.
LEADER_PX = (28, 44, 60, 80, 104, 132, 164)
LEADER_DEGREES = (0, 180, 30, 330, 150, 210, 60, 300, 120, 240, 90, 270)
# The latency axis spans at least this share of the largest latency: candidates a few ms apart
# (replicas of one GPU) otherwise stretch 2 ms across the plot under repeated tick labels.
MIN_LATENCY_SPAN = 0.2
# Room left of the lowest latency for the candidates with no latency figure (a model API route
# publishes none), and right of the highest for the labels, as shares of the span.
NO_LATENCY_ROOM, LABEL_ROOM = 0.45, 0.9
NO_LATENCY_NAME = "No latency figure (left of the dotted line)"


def _nice_ticks(low: float, high: float, count: int = 6) -> list[float]:
    """About ``count`` round tick values (1, 2 or 5 times a power of ten apart) in [low, high]."""
    raw = (high - low) / count if high > low else 1.0
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) // step) + 1)]


# A log axis spanning less than this ratio is ticked at finer steps than 1, 2 and 5.
FINE_TICKS_BELOW = 10
COARSE_STEPS, FINE_STEPS = (1, 2, 5), (1, 1.5, 2, 3, 4, 5, 6, 8)


def _log_ticks(values: list[float]) -> PlotlyJson:
    """A log axis's ticks at round values (1, 2 and 5 times each power of ten; finer where the
    values span less than ``FINE_TICKS_BELOW`` times), each labelled in full ("20", "0.5"),
    and the axis ranged from the last tick at or below the lowest value to the first at or
    above the highest, so that both ends carry a label. (Plotly's own log ticks label 20 and
    30 as a small "2" and "3" beside "10", which reads as 2 and 3.)"""
    positive = [v for v in values if v and v > 0]
    if not positive:
        return {}
    low, high = min(positive), max(positive)
    steps = FINE_STEPS if high / low < FINE_TICKS_BELOW else COARSE_STEPS
    series = [
        m * 10.0**k
        for k in range(math.floor(math.log10(low)), math.floor(math.log10(high)) + 2)
        for m in steps
    ]
    first = max(i for i, t in enumerate(series) if t <= low * (1 + 1e-9))
    last = min(i for i, t in enumerate(series) if t >= high * (1 - 1e-9))
    if last == first:
        last += 1  # one value alone: a tick above it too
    ticks = [float(f"{t:.12g}") for t in series[first : last + 1]]
    return {
        "tickvals": ticks,
        "tickformat": ",~r",
        "range": [math.log10(ticks[0]), math.log10(ticks[-1])],
    }


Box = tuple[float, float, float, float]  # left, top, right, bottom (px, y down)


def labels_overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _text_box(px: float, py: float, width: float, position: str) -> Box:
    """The box Plotly draws a label in at ``position`` beside the point at (px, py)."""
    vertical, _, horizontal = position.partition(" ")
    off = MARKER_HALF_PX + TEXT_GAP_PX
    if horizontal == "right":
        left = px + (off if vertical == "middle" else TEXT_GAP_PX)
    elif horizontal == "left":
        left = px - (off if vertical == "middle" else TEXT_GAP_PX) - width
    else:
        left = px - width / 2
    if vertical == "top":
        top = py - off - LABEL_LINE_PX
    elif vertical == "bottom":
        top = py + off
    else:
        top = py - LABEL_LINE_PX / 2
    return (left, top, left + width, top + LABEL_LINE_PX)


def place_labels(
    points: list[tuple[float, float, str]], x_range: tuple[float, float],
    log_y_range: tuple[float, float],
) -> list[tuple[str, tuple[float, float] | None, Box]]:  # fmt: skip
    """Where each point's label goes, in the points' order (the best-ranked first gets the
    first choice): (text position, None) beside it, or ("", (ax, ay)) on a leader line of that
    pixel offset; with the box it takes. No box covers another, nor any point, wherever a
    free place exists among ``TEXT_POSITIONS`` and the leader lines; the last resort is the
    least crowded leader line."""
    x0, x1 = x_range
    y0, y1 = log_y_range
    xs = [(x - x0) / ((x1 - x0) or 1) * PLOT_WIDTH_PX for x, _, _ in points]
    ys = [
        (1 - (math.log10(y) - y0) / ((y1 - y0) or 1)) * PLOT_HEIGHT_PX if y > 0 else 0.0
        for _, y, _ in points
    ]
    taken: list[Box] = [
        (px - MARKER_HALF_PX, py - MARKER_HALF_PX, px + MARKER_HALF_PX, py + MARKER_HALF_PX)
        for px, py in zip(xs, ys, strict=True)
    ]
    out: list[tuple[str, tuple[float, float] | None, Box]] = []
    for (_, _, label), px, py in zip(points, xs, ys, strict=True):
        width = len(label) * LABEL_CHAR_PX
        own = (px - MARKER_HALF_PX, py - MARKER_HALF_PX, px + MARKER_HALF_PX, py + MARKER_HALF_PX)
        others = [b for b in taken if b != own]
        choices: list[tuple[str, tuple[float, float] | None, Box]] = [
            (position, None, _text_box(px, py, width, position)) for position in TEXT_POSITIONS
        ]
        for length in LEADER_PX:
            for degrees in LEADER_DEGREES:
                ax = length * math.cos(math.radians(degrees))
                ay = -length * math.sin(math.radians(degrees))
                # Plotly centres the text on the leader's end; beside, it reaches outwards.
                cx = px + ax + (width / 2 if ax > 1 else -width / 2 if ax < -1 else 0)
                cy = py + ay
                box = (cx - width / 2, cy - LABEL_LINE_PX / 2, cx + width / 2,
                       cy + LABEL_LINE_PX / 2)  # fmt: skip
                choices.append(("", (cx - px, ay), box))
        inside = [
            c for c in choices
            if c[2][1] >= -LABEL_LINE_PX and c[2][3] <= PLOT_HEIGHT_PX + LABEL_LINE_PX
        ] or choices  # fmt: skip
        free = next((c for c in inside if not any(labels_overlap(c[2], b) for b in others)), None)
        if free is None:
            free = min(inside, key=lambda c: sum(labels_overlap(c[2], b) for b in others))
        out.append(free)
        taken.append(free[2])
    return out


def cost_vs_latency_figure(rows: Sequence[ShownRow], currency: str, unit: str = "") -> PlotlyJson:
    """Each candidate's unit cost against its p95 latency, every costed candidate on it with
    its label: one without a latency figure (a model API route) left of a dotted line, in the
    legend as such. Each label sits beside its point where it covers no other label or point,
    else on a leader line (``place_labels``); every point names itself on hover too. The
    Pareto front runs only through candidates that meet the brief (one that fails it is no
    trade-off on offer) and have a latency."""
    costed = [r for r in rows if r["effective_unit_cost"] is not None]
    labels = _labels(costed)
    known = [float(r["p95_latency_ms"]) for r in costed if r["p95_latency_ms"] is not None]
    lo, hi = (min(known), max(known)) if known else (0.0, 0.0)
    span = max(hi - lo, MIN_LATENCY_SPAN * hi, 1.0)
    divider = lo - NO_LATENCY_ROOM * span / 2
    no_latency_x = lo - NO_LATENCY_ROOM * span * 3 / 4

    def x_of(r: ShownRow) -> float:
        return float(r["p95_latency_ms"]) if r["p95_latency_ms"] is not None else no_latency_x

    left = no_latency_x - NO_LATENCY_ROOM * span / 4 if any(
        r["p95_latency_ms"] is None for r in costed
    ) else lo - 0.1 * span  # fmt: skip
    xaxis: PlotlyJson = {
        "title": {"text": "p95 end-to-end latency (ms)"},
        "tickformat": ",~r",
        "range": [left, hi + LABEL_ROOM * span],
    }
    y_ticks = _log_ticks([_unit_cost(r) for r in costed]) if costed else {}
    placed = place_labels(
        [(x_of(r), _unit_cost(r), label) for r, label in zip(costed, labels, strict=True)],
        (xaxis["range"][0], xaxis["range"][1]),
        tuple(y_ticks.get("range") or (0.0, 1.0)),  # type: ignore[arg-type]
    )

    def points(meets: bool | None) -> list[tuple[float, float, str, int]]:
        out = []
        for i, (r, label) in enumerate(zip(costed, labels, strict=True)):
            latency = r["p95_latency_ms"]
            has = latency is not None
            if (meets is None) == has or (has and bool(r["meets_constraints"]) is not meets):
                continue
            out.append((x_of(r), _unit_cost(r), label, i))
        return out

    meeting, failing, unknown = points(True), points(False), points(None)
    front = pareto_front([(x, y, label) for x, y, label, _ in meeting])
    units = f"{currency} {unit}".strip()

    def markers(name: str, pts: list[tuple[float, float, str, int]], colour: str, hover: str):
        return {
            "type": "scatter",
            "mode": "markers+text",
            "name": name,
            "x": [p[0] for p in pts],
            "y": [p[1] for p in pts],
            # Beside its point where that covers nothing; else on a leader line (annotations).
            "text": [p[2] if placed[p[3]][0] else "" for p in pts],
            "customdata": [p[2] for p in pts],
            "textposition": [placed[p[3]][0] or "middle right" for p in pts],
            "textfont": {"size": 11, "color": TEXT_COLOUR},
            "cliponaxis": False,
            "marker": {"color": colour, "size": 9},
            "hovertemplate": "%{customdata}<br>" + hover + "<extra></extra>",
        }

    annotations = [
        {
            # Plotly places annotations on a log axis by the log of the value.
            "x": x, "y": math.log10(y), "xref": "x", "yref": "y", "text": label,
            "ax": round(offset[0]), "ay": round(offset[1]), "showarrow": True,
            "arrowhead": 0, "arrowwidth": 1, "arrowcolor": BREAK_EVEN_COLOUR,
            "font": {"size": 11, "color": TEXT_COLOUR},
        }
        for x, y, label, i in meeting + failing + unknown
        if (offset := placed[i][1]) is not None
    ]  # fmt: skip
    data: list[PlotlyJson] = [
        {
            "type": "scatter",
            "mode": "lines+markers",  # a front of one candidate is still seen
            "name": "Pareto front (meets the brief)",
            "x": [p[0] for p in front],
            "y": [p[1] for p in front],
            "line": {"shape": "hv", "color": PALETTE[1], "width": 2},
            "marker": {"color": PALETTE[1], "size": 13},
            "hoverinfo": "skip",
        },
        markers("Meets the brief", meeting, MEETS_COLOUR, "p95 %{x:,.0f} ms, %{y:.4g} " + units),
    ]
    if failing:
        data.append(
            markers("Fails the brief", failing, FAILS_COLOUR, "p95 %{x:,.0f} ms, %{y:.4g} " + units)
        )
    shapes: list[PlotlyJson] = []
    if unknown:
        trace = markers(
            NO_LATENCY_NAME, unknown, PALETTE[2], "no latency figure, %{y:.4g} " + units
        )
        trace["marker"]["symbol"] = "diamond"
        data.append(trace)
        shapes.append(
            {
                "type": "line", "x0": divider, "x1": divider, "yref": "paper", "y0": 0, "y1": 1,
                "line": {"dash": "dot", "width": 1, "color": BREAK_EVEN_COLOUR},
            }
        )  # fmt: skip
    if known:
        # Ticks only right of the dotted line: none at a latency no candidate can have.
        xaxis["tickvals"] = _nice_ticks(max(divider, 0.0) if unknown else left, xaxis["range"][1])
    else:
        xaxis["showticklabels"] = False  # no candidate has a latency: the axis has no scale
    return {
        "data": data,
        "layout": {
            "title": {"text": f"Unit cost vs p95 end-to-end latency ({units})"},
            "xaxis": xaxis,
            "yaxis": {"title": {"text": units}, "type": "log", **y_ticks},
            "shapes": shapes,
            "annotations": annotations,
            "legend": LEGEND_BESIDE,
            "height": 440,
            "font": FONT,
        },
    }


def cost_breakdown_figure(rows: Sequence[ShownRow], currency: str) -> PlotlyJson:
    """Each candidate's monthly cost stacked by line, a colour per line; candidates on the
    y axis (long names read horizontally), the legend under the plot."""
    names: list[str] = []
    for row in rows:
        names += [n for n in row["cost_lines"] if n not in names]
    labels = _labels(rows)
    colours = _colours(names, LINE_COLOURS)
    return {
        "data": [
            {
                "type": "bar",
                "orientation": "h",
                "name": line_label(name),
                "y": labels,
                "x": [float(r["cost_lines"].get(name, 0)) for r in rows],
                "marker": {"color": colour},
                "hovertemplate": "%{y}<br>"
                + line_label(name)
                + ": %{x:,.2f} "
                + f"{currency} a month<extra></extra>",
            }
            for name, colour in zip(names, colours, strict=True)
        ],
        "layout": {
            "barmode": "stack",
            "title": {"text": f"Monthly cost by line ({currency})"},
            "xaxis": {"title": {"text": f"{currency} a month"}, "tickformat": ",.0f"},
            "yaxis": {"autorange": "reversed", "automargin": True},
            "legend": LEGEND_BESIDE,
            "margin": {"l": 20, "t": 50},
            # a bar per candidate, and room for the legend's column of lines beside them
            "height": max(160 + 34 * len(rows), 140 + 21 * len(names)),
            "font": FONT,
        },
    }


def _option_cost(point: CurvePoint, option: str) -> float | None:
    """An option's unit cost at a curve point (``option``: its code in lower case, a key of
    OPTION_LABELS); None where it has none."""
    value = cast(Mapping[str, str | None], point).get(option)  # an option's key: a figure
    return None if value is None else float(value)


def _cost_at(curve: list[CurvePoint], key: str, utilization: float) -> float | None:
    """An option's cost per output at ``utilization``, read off the curve (linear between its
    points); None off the curve or where the option has no figure."""
    pts = [
        (float(p["utilization"]), cost) for p in curve if (cost := _option_cost(p, key)) is not None
    ]
    pts.sort()
    for (x0, y0), (x1, y1) in pairwise(pts):
        if x0 <= utilization <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (utilization - x0) / (x1 - x0)
    return None


def utilization_figure(
    capacity_model: CapacityModel, currency: str, gpu_name: str = ""
) -> PlotlyJson | None:
    """Each option's cost per accepted output against the utilization of committed GPU-hours,
    in the candidate table's unit, with the break-evens and the brief's own utilization.

    No text is written on the plot (labels there collide): each break-even is a marker on the
    curves whose hover says which option is cheaper either side, the brief's utilization a
    marker on each curve; both are legend entries, and the legend sits under the plot.
    ``gpu_name``: the catalog's name of the GPU compared (else its slug in capitals)."""
    curve = capacity_model.get("curve") or []
    if not curve:
        return None
    # The curve is in the table's unit already (apps.finance.capacity).
    unit_label = capacity_model.get("unit_label") or "per accepted output"
    units = f"{currency} {unit_label}"
    xs = [float(p["utilization"]) for p in curve]
    traces: list[PlotlyJson] = []
    keys = [k for k in OPTION_LABELS if any(_option_cost(p, k) is not None for p in curve)]
    for key, colour in zip(keys, _colours(keys, OPTION_COLOURS), strict=True):
        label = OPTION_LABELS[key]
        ys = [_option_cost(p, key) for p in curve]
        traces.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": label,
                "x": xs,
                "y": ys,
                "line": {"color": colour, "width": 2},
                "hovertemplate": f"{label}: " + "%{y:.4g} " + units + " at %{x:.0%}<extra></extra>",
            }
        )

    def line(x: float, dash: str, color: str) -> PlotlyJson:
        return {
            "type": "line",
            "x0": x,
            "x1": x,
            "yref": "paper",
            "y0": 0,
            "y1": 1,
            "line": {"dash": dash, "width": 1, "color": color},
        }

    # The break-evens that cross, at the utilization they cross at.
    marks = [
        (float(crossing), b)
        for b in capacity_model.get("break_evens", [])
        if (crossing := b["utilization"]) is not None
    ]
    shapes = [line(u, "dot", BREAK_EVEN_COLOUR) for u, _ in marks]
    even_x, even_y, even_text = [], [], []
    for u, b in marks:
        cost = _cost_at(curve, b["cheaper_below"].lower(), u)
        if cost is None:
            cost = _cost_at(curve, b["cheaper_above"].lower(), u)
        if cost is None:
            continue
        even_x.append(u)
        even_y.append(cost)
        even_text.append(
            b.get("explanation")
            or f"{_option_label(b['cheaper_below'])} is cheaper below {u:.0%}, "
            f"{_option_label(b['cheaper_above'])} above"
        )
    if even_x:
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": "Break-even (hover: cheaper either side)",
                "x": even_x,
                "y": even_y,
                "text": even_text,
                "marker": {"symbol": "diamond", "size": 11, "color": BREAK_EVEN_COLOUR},
                "hovertemplate": "%{text}<extra></extra>",
            }
        )
    brief = next((p for p in curve if p.get("at_brief")), None)
    if brief is not None:
        u = float(brief["utilization"])
        shapes.append(line(u, "solid", BRIEF_COLOUR))
        at = [(OPTION_LABELS[k], c) for k in keys if (c := _option_cost(brief, k)) is not None]
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": f"This brief ({u:.0%})",
                "x": [u] * len(at),
                "y": [c for _, c in at],
                "text": [name for name, _ in at],
                "marker": {"symbol": "circle-open", "size": 12, "color": BRIEF_COLOUR},
                "hovertemplate": "%{text} at this brief's %{x:.0%}: %{y:.4g} "
                + units
                + "<extra></extra>",
            }
        )
    return {
        "data": traces,
        "layout": {
            "title": {
                "text": f"Cost {unit_label} vs utilization: rent, reserve, buy or API "
                f"({gpu_name or gpu_text(capacity_model['gpu'])})"
            },
            "xaxis": {
                "title": {"text": "Utilization of committed GPU-hours"},
                "tickformat": ".0%",
                "range": [0, 1.02],
            },
            "yaxis": {
                "title": {"text": units},
                "type": "log",
                **_log_ticks([y for t in traces for y in t["y"] if y is not None]),
            },
            "shapes": shapes,
            "legend": LEGEND_BESIDE,
            "margin": {"t": 60},
            "height": 480,
            "font": FONT,
        },
    }


def tornado_figure(sensitivity: Sensitivity) -> PlotlyJson | None:
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

    def trace(end: Literal["low", "high"], name: str, color: str) -> PlotlyJson:
        low = end == "low"
        costs = [float(str(b["low_unit_cost"] if low else b["high_unit_cost"])) for b in bars]
        return {
            "type": "bar",
            "orientation": "h",
            "name": name,
            "y": labels,
            "x": [c - base for c in costs],
            "base": base,
            "marker": {"color": color},
            "customdata": [
                [b["low_value"] if low else b["high_value"], c]
                for b, c in zip(bars, costs, strict=True)
            ],
            "hovertemplate": "%{y} at %{customdata[0]}: %{customdata[1]:.4g} "
            + f"{currency} {unit_label}<extra></extra>",
        }

    return {
        "data": [
            trace("low", "Assumption 20 % lower", PALETTE[0]),
            trace("high", "Assumption 20 % higher", PALETTE[1]),
        ],
        "layout": {
            "title": {
                "text": f"The winner's cost ({currency} {unit_label}) with each assumption "
                "20 % lower or higher"
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
            "legend": LEGEND_BESIDE,
            "margin": {"l": 20, "t": 50},
            "height": 180 + 36 * len(bars),
            "font": FONT,
        },
    }


def _option_label(code: str) -> str:
    try:
        return CAPACITY_OPTION_LABELS[CapacityOption(code)]
    except ValueError:
        return code
