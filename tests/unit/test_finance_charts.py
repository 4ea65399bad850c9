"""The finance page's figures (apps.finance.charts): in the table's unit, labels in words, a
colour per series, the Pareto front only through candidates that meet the brief, and no text
drawn over the plot where it could collide."""

import math
import re

import pytest

from apps.finance import charts
from apps.finance.lines import LINE_LABELS

CODE_NAME = re.compile(r"\b[A-Z]+_[A-Z0-9_]+\b|\b[a-z]+_[a-z0-9_]+\b")  # ON_DEMAND, gpu_compute


def row(quote_id, cost, latency, meets=True, term="ON_DEMAND", lines=None, **extra):
    return {
        "candidate_kind": "GPU",
        "provider": "Neocloud B",
        "gpu": "h100-sxm5-80gb",
        "gpu_count": 2,
        "pricing_term": term,
        "quote_id": quote_id,
        "api_model": None,
        "effective_unit_cost": None if cost is None else str(cost),
        "p95_latency_ms": None if latency is None else str(latency),
        "meets_constraints": meets,
        "cost_lines": lines or {"gpu_compute": "100", "storage": "10"},
        **extra,
    }


def api_row(cost, latency, meets=True):
    return {
        **row(None, cost, latency, meets, term=""),
        "candidate_kind": "API_ROUTE",
        "provider": "Model API D",
        "api_model": "llama-3.1-8b-instruct",
    }


def visible_text(figure) -> list[str]:
    """Every string a person reads on the figure: titles, trace names, category labels."""
    layout = figure["layout"]
    texts = [layout["title"]["text"]]
    texts += [layout[a]["title"]["text"] for a in ("xaxis", "yaxis") if "title" in layout[a]]
    for trace in figure["data"]:
        texts.append(trace.get("name", ""))
        for axis in ("x", "y"):
            values = trace.get(axis) or []
            texts += [v for v in values if isinstance(v, str)]
    texts += [a["text"] for a in layout.get("annotations", [])]
    return texts


def trace_colours(figure) -> list[str]:
    out = []
    for trace in figure["data"]:
        colour = (trace.get("marker") or {}).get("color") or (trace.get("line") or {}).get("color")
        assert isinstance(colour, str), f"{trace['name']} has no explicit colour"
        out.append(colour)
    return out


def legend_is_beside_the_plot(layout) -> bool:
    """Right of the plot area, where it covers no data (Plotly's x is a share of the plot)."""
    legend = layout.get("legend") or {}
    return legend.get("x", 0) > 1 and legend.get("xanchor") == "left"


CAPACITY = {
    "gpu": "h100-sxm5-80gb",
    "unit_scale": 1000000,  # the curve is in the table's unit already
    "unit_label": "per 1M accepted tokens",
    "curve": [
        {
            "utilization": "0.1",
            "at_brief": False,
            "rent_on_demand": "4",
            "reserve_1y": "20",
            "buy": "30",
            "api": "2",
        },
        {
            "utilization": "0.5",
            "at_brief": True,
            "rent_on_demand": "4",
            "reserve_1y": "4",
            "buy": "6",
            "api": "2",
        },
        {
            "utilization": "1.0",
            "at_brief": False,
            "rent_on_demand": "4",
            "reserve_1y": "2",
            "buy": "1",
            "api": "2",
        },
    ],
    "break_evens": [
        {
            "cheaper_below": "RENT_ON_DEMAND",
            "cheaper_above": "RESERVE_1Y",
            "utilization": "0.5",
            "explanation": "Reserve 1 year is cheaper than Rent on demand above 50.0% utilization",
        },
        {
            "cheaper_below": "API",
            "cheaper_above": "BUY",
            "utilization": "0.8",
            "explanation": "Buy (owned) is cheaper than Model API above 80.0% utilization",
        },
        {
            "cheaper_below": "RESERVE_1Y",
            "cheaper_above": "BUY",
            "utilization": None,
            "explanation": "never",
        },
    ],
}


class TestParetoFront:
    def test_runs_only_through_candidates_that_meet_the_brief(self):
        rows = [
            row(1, 4.0, 900),
            row(2, 1.0, 500, meets=False),  # cheaper and faster, but fails the brief
            row(3, 2.0, 1200),
            row(4, 3.0, 2000),  # dominated by quote 3
        ]
        figure = charts.cost_vs_latency_figure(rows, "USD", "per 1M accepted tokens")
        by_name = {t["name"]: t for t in figure["data"]}
        front = next(t for name, t in by_name.items() if name.startswith("Pareto front"))
        assert front["x"] == [900.0, 1200.0]
        assert front["y"] == [4.0, 2.0]
        assert by_name["Fails the brief"]["x"] == [500.0]
        assert by_name["Meets the brief"]["x"] == [900.0, 1200.0, 2000.0]

    def test_a_candidate_without_a_latency_is_drawn_left_of_a_dotted_line(self):
        rows = [row(1, 4.0, 900), row(2, 2.0, 1200), api_row(1.0, None)]
        figure = charts.cost_vs_latency_figure(rows, "USD", "per 1M accepted tokens")
        (none,) = [t for t in figure["data"] if t["name"] == charts.NO_LATENCY_NAME]
        assert none["y"] == [1.0] and none["text"] == [
            "Model API D · llama-3.1-8b-instruct · model API"
        ]
        (divider,) = figure["layout"]["shapes"]
        assert none["x"][0] < divider["x0"] < 900
        # The API route is the cheapest but has no latency: no trade-off, not on the front.
        front = figure["data"][0]
        assert front["x"] == [900.0, 1200.0]
        ticks = figure["layout"]["xaxis"]["tickvals"]
        assert ticks and min(ticks) >= divider["x0"]

    def test_every_point_is_labelled_and_no_two_labels_cover_each_other(self):
        # 30 candidates crowded into two clusters (replicas of a few GPUs a few ms apart),
        # each with its own words.
        rows = [
            row(i, (1.0 if i % 2 else 3.0) + 0.01 * i, (500 if i % 2 else 900) + 2 * i,
                meets=i % 3 != 0, provider=f"Provider {i}")
            for i in range(30)
        ] + [api_row(0.8, None)]  # fmt: skip
        charts.label_rows(rows, {})
        figure = charts.cost_vs_latency_figure(rows, "USD")
        beside = [t for tr in figure["data"][1:] for t in tr["text"] if t]
        leaders = [a["text"] for a in figure["layout"]["annotations"]]
        names = [c for tr in figure["data"][1:] for c in tr["customdata"]]
        # every candidate's label drawn once: beside its point or on a leader line
        assert sorted(beside + leaders) == sorted(names) and len(names) == 31
        print(f"{len(beside)} beside their points, {len(leaders)} on leader lines")
        assert all(
            a["showarrow"] and (a["ax"], a["ay"]) != (0, 0) for a in figure["layout"]["annotations"]
        )

        xaxis, yaxis = figure["layout"]["xaxis"], figure["layout"]["yaxis"]
        costed = [r for r in rows if r["effective_unit_cost"] is not None]
        points = [
            (float(r["p95_latency_ms"]) if r["p95_latency_ms"] else figure["data"][-1]["x"][0],
             float(r["effective_unit_cost"]), label)
            for r, label in ((r, r["chart_label"]) for r in costed)
        ]  # fmt: skip
        boxes = [box for _, _, box in charts.place_labels(points, xaxis["range"], yaxis["range"])]
        crossing = [
            (points[i][2], points[j][2])
            for i in range(len(boxes)) for j in range(i + 1, len(boxes))
            if charts.labels_overlap(boxes[i], boxes[j])
        ]  # fmt: skip
        assert crossing == []

    def test_two_points_closer_than_a_label_get_different_places(self):
        placed = charts.place_labels(
            [(500.0, 1.0, "Neocloud B · H100 · On demand"),
             (501.0, 1.001, "Neocloud C · H100 · On demand")],
            (400.0, 700.0), (-0.5, 0.5),
        )  # fmt: skip
        assert placed[0][:2] != placed[1][:2]
        assert not charts.labels_overlap(placed[0][2], placed[1][2])

    def test_latencies_a_few_ms_apart_keep_a_readable_axis(self):
        rows = [row(1, 4.0, 8840.2), row(2, 2.0, 8840.4)]
        xaxis = charts.cost_vs_latency_figure(rows, "USD")["layout"]["xaxis"]
        low, high = xaxis["range"]
        assert high - low >= 0.2 * 8840
        ticks = xaxis["tickvals"]
        assert len(set(ticks)) == len(ticks) >= 3 and all(t == round(t) for t in ticks)

    def test_no_front_when_nothing_meets_the_brief(self):
        figure = charts.cost_vs_latency_figure([row(1, 1.0, 500, meets=False)], "USD")
        front = next(t for t in figure["data"] if t["name"].startswith("Pareto front"))
        assert front["x"] == []

    def test_in_the_table_s_unit_with_distinct_colours_and_the_legend_beside_the_plot(self):
        rows = [row(1, 4.0, 900), row(2, 1.0, 500, meets=False)]
        figure = charts.cost_vs_latency_figure(rows, "EUR", "per 1M accepted tokens")
        assert figure["layout"]["yaxis"]["title"]["text"] == "EUR per 1M accepted tokens"
        colours = trace_colours(figure)
        assert len(set(colours)) == len(colours)
        assert legend_is_beside_the_plot(figure["layout"])


class TestUnitCostBars:
    """A linear axis from 0, so that a bar's length is its cost; outliers cut and said so."""

    def bars(self, *costs, meets=True):
        rows = [row(i, c, 900, meets=meets) for i, c in enumerate(costs, start=1)]
        figure = charts.unit_cost_figure(rows, "per 1M accepted tokens", "USD")
        return figure["data"][0], figure["layout"]

    def test_lengths_are_costs_on_a_linear_axis_from_zero(self):
        bars, layout = self.bars("2.00", "2.40", "9.5")

        assert layout["xaxis"]["type"] == "linear"
        assert layout["xaxis"]["range"][0] == 0
        assert bars["x"] == [2.0, 2.4, 9.5]  # 2.40 is 1.2 times as long as 2.00, as it costs
        assert layout["xaxis"]["range"][1] > 9.5  # room for the cost written beside the bar

    def test_each_bar_has_its_cost_written_as_the_table_writes_it(self):
        bars, _ = self.bars("12.5", "14.567", "1234.5")

        assert bars["text"] == ["USD\u00a012.5", "USD\u00a014.57", "USD\u00a01,235"]
        assert bars["customdata"] == bars["text"]  # the hover says the same
        assert bars["textposition"] == ["outside"] * 3
        assert bars["cliponaxis"] is False

    def test_a_range_within_the_span_is_drawn_whole(self):
        bars, layout = self.bars("1", "100")  # exactly 100 times: nothing cut

        assert bars["x"] == [1.0, 100.0]
        assert bars["marker"]["pattern"]["shape"] == ["", ""]
        assert "cut" not in layout["title"]["text"]

    def test_bars_beyond_the_span_are_cut_at_the_axis_end_hatched_and_noted(self):
        bars, layout = self.bars("0.5", "3", "40", "900", "5000")
        end = layout["xaxis"]["range"][1]

        assert bars["x"][:3] == [0.5, 3.0, 40.0]
        assert bars["x"][3:] == [end, end]  # 900 and 5,000: over 100 x 0.5
        assert end == pytest.approx(40 * (1 + charts.BAR_TEXT_ROOM))
        assert bars["marker"]["pattern"]["shape"] == ["", "", "", "/", "/"]
        assert bars["text"][3:] == [
            "USD\u00a0900 (cut: beyond the axis)", "USD\u00a05,000 (cut: beyond the axis)",
        ]  # fmt: skip
        assert bars["textposition"] == ["outside"] * 3 + ["inside"] * 2
        assert bars["customdata"][3:] == ["USD\u00a0900", "USD\u00a05,000"]  # the hover too
        assert "2 bars over 100\u00d7 the cheapest cut at the axis end" in layout["title"]["text"]
        # The cheapest bar is at least a hundredth of the axis: seen, not a sliver.
        assert bars["x"][0] / end >= 1 / (charts.UNIT_COST_SPAN * (1 + charts.BAR_TEXT_ROOM))

    def test_failing_candidates_stay_grey_whatever_their_length(self):
        bars, _ = self.bars("1", "500", meets=False)
        assert bars["marker"]["color"] == [charts.FAILS_COLOUR] * 2


class TestLabelsInWords:
    @pytest.mark.parametrize(
        ("term", "words"),
        [
            ("ON_DEMAND", "On demand"),
            ("RESERVED_1Y", "Reserved 1 year"),
            ("OWNED", "Owned (bought)"),
        ],
    )
    def test_a_candidate_reads_provider_gpus_and_term(self, term, words):
        (label,) = charts.unit_cost_figure([row(7, 2.5, 900, term=term)], "x", "USD")["data"][0][
            "y"
        ]
        assert label == f"Neocloud B · 2 \u00d7 H100 SXM5 80GB · {words}"  # no "(quote #7)"

    def test_every_chart_names_a_candidate_as_label_rows_did(self):
        rows = [row(7, 2.5, 900), row(8, 3.0, 800, term="SPOT"), api_row(1.0, None)]
        charts.label_rows(rows, {"h100-sxm5-80gb": "NVIDIA H100 SXM5"})
        words = [r["chart_label"] for r in rows]
        assert words[0] == "Neocloud B · 2 \u00d7 NVIDIA H100 SXM5 · On demand"
        assert charts.unit_cost_figure(rows, "x", "USD")["data"][0]["y"] == words
        assert charts.cost_breakdown_figure(rows, "USD")["data"][0]["y"] == words
        scatter = charts.cost_vs_latency_figure(rows, "USD", "x")
        shown = [c for t in scatter["data"][1:] for c in t["customdata"]]
        assert sorted(shown) == sorted(words)

    def test_no_code_names_on_any_finance_chart(self):
        lines = {name: "5" for name in LINE_LABELS}
        rows = [row(1, 2.0, 900, lines=lines), row(2, 3.0, 800, term="SPOT"), api_row(1.0, 700)]
        figures = [
            charts.unit_cost_figure(rows, "per 1M accepted tokens", "USD"),
            charts.cost_vs_latency_figure(rows, "USD", "per 1M accepted tokens"),
            charts.cost_breakdown_figure(rows, "USD"),
            charts.utilization_figure(CAPACITY, "USD"),
        ]
        for figure in figures:
            for text in visible_text(figure):
                assert not CODE_NAME.search(text), text


class TestBreakdown:
    def test_every_cost_line_has_its_own_colour_and_keeps_it(self):
        every_line = {name: "5" for name in LINE_LABELS}
        figure = charts.cost_breakdown_figure([row(1, 2.0, 900, lines=every_line)], "USD")
        colours = trace_colours(figure)
        assert len(colours) == len(LINE_LABELS)
        assert set(charts.LINE_COLOURS) == set(LINE_LABELS)  # no line left to a fallback
        assert len(set(colours)) == len(colours)
        # The same line, the same colour, whatever else the page shows.
        alone = charts.cost_breakdown_figure([row(1, 2.0, 900, lines={"storage": "1"})], "USD")
        assert trace_colours(alone) == [colours[list(LINE_LABELS).index("storage")]]

    def test_the_legend_is_beside_the_bars(self):
        figure = charts.cost_breakdown_figure([row(1, 2.0, 900)], "USD")
        assert legend_is_beside_the_plot(figure["layout"])


class TestUtilization:
    def test_curves_in_the_table_s_unit_with_a_colour_per_option(self):
        figure = charts.utilization_figure(CAPACITY, "USD")
        curves = [t for t in figure["data"] if t["mode"] == "lines"]
        assert [t["name"] for t in curves] == [
            "Rent on demand",
            "Reserve 1 year",
            "Buy (owned)",
            "Model API",
        ]
        assert curves[0]["y"] == pytest.approx([4.0, 4.0, 4.0])  # 0.000004 x 1M
        colours = trace_colours(figure)
        assert len(set(colours)) == len(colours)
        assert figure["layout"]["yaxis"]["title"]["text"] == "USD per 1M accepted tokens"

    def test_break_evens_are_hover_markers_not_text_on_the_plot(self):
        figure = charts.utilization_figure(CAPACITY, "USD")
        assert not figure["layout"].get("annotations")  # nothing written where it can collide
        (marks,) = [t for t in figure["data"] if t["name"].startswith("Break-even")]
        assert marks["x"] == [0.5, 0.8]  # the one without a utilization is not drawn
        assert marks["y"][0] == pytest.approx(4.0)  # on the curves where they cross
        assert marks["y"][1] == pytest.approx(2.0)
        assert marks["text"][0].startswith("Reserve 1 year is cheaper than Rent on demand")
        dotted = [s for s in figure["layout"]["shapes"] if s["line"]["dash"] == "dot"]
        assert [s["x0"] for s in dotted] == [0.5, 0.8]

    def test_the_brief_s_utilization_is_marked_on_each_curve(self):
        figure = charts.utilization_figure(CAPACITY, "USD")
        (brief,) = [t for t in figure["data"] if t["name"].startswith("This brief")]
        assert brief["name"] == "This brief (50%)"
        assert brief["x"] == [0.5] * 4
        assert brief["y"] == pytest.approx([4.0, 4.0, 6.0, 2.0])
        assert legend_is_beside_the_plot(figure["layout"])

    def test_no_curve_no_chart(self):
        assert charts.utilization_figure({"gpu": "x", "curve": []}, "USD") is None


class TestTornado:
    def test_two_colours_words_and_the_legend_beside_the_plot(self):
        sensitivity = {
            "currency": "USD",
            "unit_label": "per 1M accepted tokens",
            "winner": "a",
            "leading": [{"key": "a", "effective_unit_cost": "2.0"}],
            "tornado": [
                {
                    "label": "Price",
                    "low_unit_cost": "1.6",
                    "high_unit_cost": "2.4",
                    "low_value": "0.8",
                    "high_value": "1.2",
                },
            ],
        }
        figure = charts.tornado_figure(sensitivity)
        assert [t["name"] for t in figure["data"]] == [
            "Assumption 20 % lower",
            "Assumption 20 % higher",
        ]
        colours = trace_colours(figure)
        assert len(set(colours)) == 2
        assert legend_is_beside_the_plot(figure["layout"])
        assert figure["data"][0]["x"] == pytest.approx([-0.4])  # around today's 2.0


class TestLogAxes:
    def test_ticks_at_one_two_five_labelled_in_full(self):
        axis = charts.utilization_figure(CAPACITY, "USD")["layout"]["yaxis"]
        assert axis["type"] == "log"
        assert axis["tickvals"] == [1.0, 2.0, 5.0, 10.0, 20.0, 50.0]  # the curve spans 1 to 30
        assert axis["tickformat"] == ",~r"
        assert axis["range"] == pytest.approx([0.0, math.log10(50)])  # a label at each end

    def test_a_narrow_span_is_ticked_finer_and_labelled_at_both_ends(self):
        rows = [row(1, 0.5624, 900), row(2, 0.9428, 800), row(3, 0.9842, 700)]
        axis = charts.cost_vs_latency_figure(rows, "USD")["layout"]["yaxis"]
        assert axis["tickvals"] == [0.5, 0.6, 0.8, 1.0]
        assert axis["range"] == pytest.approx([math.log10(0.5), 0.0])
