"""A decision record as CSV (its frozen candidate table) and as a PDF report (fpdf2).

The PDF is drawn from plain data (``selectors.decision_record_report``) with a core font; core
fonts are Latin-1 only, so every string passes through ``latin1`` first and nothing a user
types (arrows, dashes, names in any script) can make rendering fail.

Nor can its length: a paragraph is cut at ``MAX_PARAGRAPH_CHARS`` and a table cell at
``MAX_CELL_LINES`` wrapped lines, each with a visible mark saying how much was left out and where
the full text is (the record's page and its JSON in the API), so that any record the app
accepted always has a PDF. Long unbroken words (URLs, hashes) wrap by character."""

import re
import unicodedata
from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, cast

from fpdf import FPDF
from fpdf.enums import MethodReturnValue, XPos, YPos
from fpdf.fonts import FontFace

from apps.briefs.choices import SuccessUnit, WorkloadType
from apps.catalog.selectors import preset_name
from apps.core.currency import BASE_CURRENCY
from apps.core.roles import Role
from apps.engine.energy import energy_per_output
from apps.finance.exports import ranking_csv
from apps.finance.lines import PLAN_WORDS, plan_parts, plan_text
from apps.finance.units import unit_for, unit_of_snapshot, unit_words
from apps.quotes.models import Quote

from .checklist import SECTIONS
from .models import ChecklistAnswer

# --- CSV ------------------------------------------------------------------------------------


def decision_record_csv(snapshot: dict[str, Any]) -> str:
    """The frozen candidate table, in the rankings CSV's columns (decimals exact, formulas
    neutralised)."""
    table = snapshot.get("candidate_table", {})
    unit, _ = unit_of_snapshot(table)
    return ranking_csv(
        {"rows": table.get("rows", []), "currency": table.get("currency"), "unit": unit}
    )


# --- Text for a core font -------------------------------------------------------------------

# Written as escapes so that the look-alike characters stay unambiguous in the source.
REPLACEMENTS = {
    "\u2192": "->",  # RIGHTWARDS ARROW
    "\u2190": "<-",  # LEFTWARDS ARROW
    "\u2194": "<->",  # LEFT RIGHT ARROW
    "\u21d2": "=>",  # RIGHTWARDS DOUBLE ARROW
    "\u00d7": "x",  # MULTIPLICATION SIGN
    "\u2014": "-",  # EM DASH
    "\u2013": "-",  # EN DASH
    "\u2012": "-",  # FIGURE DASH
    "\u2212": "-",  # MINUS SIGN
    "\u2010": "-",  # HYPHEN
    "\u2011": "-",  # NON-BREAKING HYPHEN
    "\u2026": "...",  # HORIZONTAL ELLIPSIS
    "\u2018": "'",  # LEFT SINGLE QUOTATION MARK
    "\u2019": "'",  # RIGHT SINGLE QUOTATION MARK
    "\u201a": ",",  # SINGLE LOW-9 QUOTATION MARK
    "\u201c": '"',  # LEFT DOUBLE QUOTATION MARK
    "\u201d": '"',  # RIGHT DOUBLE QUOTATION MARK
    "\u201e": '"',  # DOUBLE LOW-9 QUOTATION MARK
    "\u2022": "*",  # BULLET
    "\u2265": ">=",  # GREATER-THAN OR EQUAL TO
    "\u2264": "<=",  # LESS-THAN OR EQUAL TO
    "\u2248": "~",  # ALMOST EQUAL TO
    "\u2260": "!=",  # NOT EQUAL TO
    "\u20ac": "EUR",  # EURO SIGN
    "\u2122": "(TM)",  # TRADE MARK SIGN
    "\u2713": "yes",  # CHECK MARK
    "\u2717": "no",  # BALLOT X
    "\u0141": "L",  # LATIN CAPITAL LETTER L WITH STROKE
    "\u0142": "l",  # LATIN SMALL LETTER L WITH STROKE
    "\u0110": "D",  # LATIN CAPITAL LETTER D WITH STROKE
    "\u0111": "d",  # LATIN SMALL LETTER D WITH STROKE
    "\u0152": "OE",  # LATIN CAPITAL LIGATURE OE
    "\u0153": "oe",  # LATIN SMALL LIGATURE OE
    "\u0131": "i",  # LATIN SMALL LETTER DOTLESS I
    "\u00a0": " ",  # NO-BREAK SPACE
    "\u200b": "",  # ZERO WIDTH SPACE
}


def latin1(value: Any) -> str:
    """Any value as text a core PDF font can draw: common symbols spelled out, accents kept
    where Latin-1 has them (else dropped), anything else becomes '?'."""
    text = "" if value is None else str(value)
    out = []
    for ch in text:
        if ch in REPLACEMENTS:
            out.append(REPLACEMENTS[ch])
            continue
        try:
            ch.encode("latin-1")
        except UnicodeEncodeError:
            base = "".join(
                c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c)
            )
            try:
                out.append(base.encode("latin-1").decode("latin-1") if base else "?")
            except UnicodeEncodeError:
                out.append("?")
        else:
            out.append(ch if ch.isprintable() or ch in "\n" else " ")
    return "".join(out)


def _when(value: Any) -> str:
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S UTC")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str) and "T" in value:
        return value.replace("T", " ")[:19]
    return "" if value is None else str(value)


def _num(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    try:
        d = Decimal(str(value))
    except InvalidOperation:
        return str(value)
    if d == 0:
        return "0"
    if abs(d) >= 100:
        return f"{d:,.0f}"
    if abs(d) >= 1:
        return f"{d:.2f}"
    return format(Decimal(f"{float(d):.4g}"), "f")


# --- Long text ------------------------------------------------------------------------------

# A paragraph or fact (title, rationale, a criterion) shows at most this many characters: about
# two A4 pages of 9 pt text, far more than a readable report needs, and small enough that a
# megabyte of pasted text cannot make the PDF slow (fpdf2 lays out ~60k characters a second).
MAX_PARAGRAPH_CHARS = 6000
# ... and at most this many line breaks (two pages of 9 pt lines): 6,000 newlines would
# otherwise make a hundred pages of nothing.
MAX_PARAGRAPH_LINES = 110
# A table cell shows at most this many wrapped lines. fpdf2 cannot split one table row across
# pages, so a row must fit a page: 30 lines at the largest table font (8 pt, 4 mm a line) is
# 120 mm, under half of an A4 page's 265 mm printable height, so even a row that starts halfway
# down a page moves to the next one whole instead of failing.
MAX_CELL_LINES = 30
# Narrowest Helvetica glyph ("i", "l", ".": 0.222 em) as a share of the font size; a column of
# width w holds at most w / (size * this) characters a line, the bound a cell is pre-cut to before
# it is measured (so measuring a megabyte note costs no more than measuring a page).
NARROWEST_GLYPH_EM = 0.222
PT_TO_MM = 25.4 / 72
WHERE_FULL_TEXT_IS = "full text on the record's page and in its API JSON"


def truncation_mark(left_out: int) -> str:
    """What a cut text ends with: how much was left out and where to read it all."""
    return f"... (truncated: {left_out:,} more characters; {WHERE_FULL_TEXT_IS})"


def clip(text: str, limit: int = MAX_PARAGRAPH_CHARS) -> str:
    """``text`` whole if it has at most ``limit`` characters and ``MAX_PARAGRAPH_LINES`` line
    breaks, else its start and the mark."""
    breaks = 0
    for position, ch in enumerate(text[:limit]):
        if ch == "\n":
            breaks += 1
            if breaks > MAX_PARAGRAPH_LINES:
                limit = position
                break
    if len(text) <= limit:
        return text
    return text[:limit] + " " + truncation_mark(len(text) - limit)


def fit_width(pdf: FPDF, text: str, width: float) -> str:
    """One line of ``text`` (already Latin-1) that fits ``width`` mm in the current font,
    ending in "..." when cut (a single-line cell never wraps, so it would overlap its neighbour)."""
    text = text.replace("\n", " ")[
        : int(width / (pdf.font_size_pt * PT_TO_MM * NARROWEST_GLYPH_EM))
    ]
    room = width - 2 * pdf.c_margin
    if pdf.get_string_width(text) <= room:
        return text
    while text and pdf.get_string_width(text + "...") > room:
        text = text[:-1]
    return text.rstrip() + "..."


def _line_count(pdf: FPDF, width: float, line_height: float, text: str) -> int:
    lines = pdf.multi_cell(width, line_height, text, dry_run=True, output=MethodReturnValue.LINES)
    return len(cast(list[str], lines))  # LINES: the lines it would write


def clip_to_lines(pdf: FPDF, value: Any, *, width: float, line_height: float) -> str:
    """``value`` as Latin-1 text cut so that it wraps to at most ``MAX_CELL_LINES`` lines of
    ``width`` mm in the current font, the mark included; measured with fpdf2's own wrapping."""
    raw = "" if value is None else str(value)
    max_chars = int(width / (pdf.font_size_pt * PT_TO_MM * NARROWEST_GLYPH_EM)) + 1
    bound = max_chars * MAX_CELL_LINES
    whole = latin1(raw[:bound])
    if len(raw) <= bound and _line_count(pdf, width, line_height, whole) <= MAX_CELL_LINES:
        return whole

    def cut(n: int) -> str:
        return latin1(raw[:n]).rstrip() + " " + latin1(truncation_mark(len(raw) - n))

    # The longest start that still fits with the mark after it (binary search on its length).
    lo, hi = 0, min(len(raw), bound)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _line_count(pdf, width, line_height, cut(mid)) <= MAX_CELL_LINES:
            lo = mid
        else:
            hi = mid - 1
    return cut(lo)


# --- PDF ------------------------------------------------------------------------------------

ACCENT = (31, 95, 191)
GREY = (184, 190, 200)
LIGHT = (120, 150, 200)
INK = (33, 37, 41)
MUTED = (110, 117, 125)
MAX_CHART_BARS = 15
MIN_CHART_BARS = 5


class _Report(FPDF):
    footer_text = ""

    def footer(self) -> None:
        self.set_y(-12)
        self.set_font("Helvetica", size=7)
        self.set_text_color(*MUTED)
        self.cell(0, 5, latin1(f"{self.footer_text}  -  page {self.page_no()}/{{nb}}"), align="C")
        self.set_text_color(*INK)


def _heading(pdf: FPDF, text: str) -> None:
    if pdf.get_y() + 10 + KEEP_WITH_HEADING_MM > pdf.h - pdf.b_margin:
        pdf.add_page()  # not a heading alone at the foot of a page
    else:
        pdf.ln(3)
    pdf.set_font("Helvetica", "B", 12)
    pdf.cell(0, 7, latin1(text), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("Helvetica", size=9)


def _para(pdf: FPDF, text: str, *, size: int = 9, style: str = "") -> None:
    pdf.set_font("Helvetica", style, size)
    pdf.multi_cell(0, 4.6, latin1(clip(text)), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("Helvetica", size=9)


# The label column of a list of facts: room for "Accepted outputs a month" in 9 pt bold.
FACT_LABEL_MM = 50


def _facts(pdf: FPDF, facts: list[tuple[str, str]]) -> None:
    for label, value in facts:
        pdf.set_font("Helvetica", "B", 9)
        pdf.cell(FACT_LABEL_MM, 4.8, fit_width(pdf, latin1(label), FACT_LABEL_MM))
        pdf.set_font("Helvetica", size=9)
        pdf.multi_cell(
            0, 4.8, latin1(clip(value)) or "-", align="L", new_x=XPos.LMARGIN, new_y=YPos.NEXT
        )


def _table(
    pdf: FPDF,
    header: list[str],
    rows: Sequence[list[str] | str],
    widths: tuple[int, ...],
    *,
    size: int = 8,
) -> None:
    """A table across the printable width; a row given as one string is a group title that
    spans every column."""
    pdf.set_font("Helvetica", size=size)
    line_height = size * 0.5
    # Column widths in mm: the table spans the printable width, shared in these proportions.
    scale = pdf.epw / sum(widths)
    room = [w * scale - 2 * pdf.c_margin for w in widths]

    def text(value: str, column: int) -> str:
        return clip_to_lines(pdf, value, width=room[column], line_height=line_height)

    with pdf.table(
        col_widths=widths,
        text_align="LEFT",
        line_height=line_height,
        headings_style=FontFace(emphasis="BOLD", fill_color=(238, 241, 245)),
        first_row_as_headings=True,
    ) as table:
        head = table.row()
        for cell in header:
            head.cell(latin1(cell))
        for values in rows:
            row = table.row()
            if isinstance(values, str):
                row.cell(
                    fit_width(pdf, latin1(values), pdf.epw),
                    colspan=len(header),
                    style=FontFace(emphasis="BOLD", fill_color=(248, 249, 251)),
                )
                continue
            for column, value in enumerate(values):
                row.cell(text(value, column))
    pdf.set_font("Helvetica", size=9)


def _bar_chart(
    pdf: FPDF, rows: list[dict[str, Any]], *, currency: str, unit: str, report: dict[str, Any]
) -> None:
    """Horizontal bars of the effective unit cost, drawn with rect and line (linear scale);
    the chosen candidate in the accent colour, candidates that fail a constraint in grey."""
    costed = [r for r in rows if r.get("effective_unit_cost") is not None][:MAX_CHART_BARS]
    if not costed:
        _para(pdf, "No candidate has a unit cost to chart.")
        return
    values = [float(r["effective_unit_cost"]) for r in costed]
    top = max(values) or 1.0
    label_w, value_w, bar_h, gap = 70.0, 22.0, 3.6, 1.2
    left = pdf.l_margin
    bar_x = left + label_w
    bar_w = pdf.w - pdf.r_margin - bar_x - value_w
    # As many bars as the page has room for (at least MIN_CHART_BARS, else a new page): a
    # chart pushed whole to the next page would leave most of this one empty.
    room = pdf.h - pdf.b_margin - pdf.get_y() - 16
    fits = int(room // (bar_h + gap))
    if fits < min(MIN_CHART_BARS, len(costed)):
        pdf.add_page()
        fits = MAX_CHART_BARS
    shown_all = fits >= len(costed)
    costed = costed[:fits]
    values = values[:fits]
    top = max(values) or 1.0
    _para(pdf, f"Effective unit cost, {currency} {unit}", style="B")
    y0 = pdf.get_y() + 1
    pdf.set_font("Helvetica", size=7)
    for i, (row, value) in enumerate(zip(costed, values, strict=True)):
        y = y0 + i * (bar_h + gap)
        pdf.set_xy(left, y)
        label = fit_width(pdf, latin1(row_label(row, report)), label_w - 2)
        pdf.cell(label_w - 2, bar_h, label, align="R")
        colour = GREY
        if row.get("chosen"):
            colour = ACCENT
        elif row.get("meets_constraints"):
            colour = LIGHT
        pdf.set_fill_color(*colour)
        width = max(bar_w * value / top, 0.4)
        pdf.rect(bar_x, y, width, bar_h, style="F")
        pdf.set_xy(bar_x + width + 1, y)
        pdf.cell(value_w, bar_h, latin1(_num(row["effective_unit_cost"])))
    bottom = y0 + len(costed) * (bar_h + gap)
    pdf.set_draw_color(*MUTED)
    pdf.line(bar_x, y0 - 1, bar_x, bottom)
    pdf.line(bar_x, bottom, bar_x + bar_w, bottom)
    pdf.set_xy(bar_x, bottom + 0.5)
    pdf.cell(bar_w / 2, 4, "0")
    pdf.cell(bar_w / 2, 4, latin1(_num(top)), align="R")
    pdf.set_xy(left, bottom + 5)
    pdf.set_font("Helvetica", "I", 7)
    pdf.cell(
        0,
        4,
        "Blue: the chosen candidate. Light blue: meets the brief. Grey: does not."
        + ("" if shown_all else f" The {len(costed)} cheapest shown; all are in the table."),
        new_x=XPos.LMARGIN,
        new_y=YPos.NEXT,
    )
    pdf.set_font("Helvetica", size=9)
    # Back to white: fpdf2 tables paint their cells in the current fill colour, so the last bar's
    # colour would otherwise fill every table drawn after the chart.
    pdf.set_fill_color(255, 255, 255)


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
TERM_WORDS = dict(Quote.PricingTerm.choices)
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
SHARES = frozenset({"observability_share", "retry_rate", "failure_rate", "acceptance_rate"})
SOURCE_WORDS = {
    "brief": "this brief's finance override",
    "organisation": "the organisation's finance assumptions",
    "built-in": "built-in default (cited in apps/engine/costing_constants.py)",
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


def _pct(share: Any) -> str:
    """0.0300 -> "3 %", 0.975 -> "97.5 %"."""
    try:
        return f"{_figure(Decimal(str(share)) * 100)} %"
    except InvalidOperation:
        return str(share)


def _figure(value: Any) -> str:
    """A figure someone typed (an assumption, a target) as they would write it: no trailing
    zeros, separators, at most 4 significant figures after the point (40.00 -> "40")."""
    try:
        d = Decimal(str(value))
    except InvalidOperation:
        return str(value)
    if d == d.to_integral_value():
        return f"{d:,.0f}"
    return format(Decimal(f"{float(d):.4g}").normalize(), ",f")


def _money(value: Any, currency: str) -> str:
    """Money as a buyer reads it: separators, cents below 1,000, whole units above."""
    if value is None:
        return NOT_RECORDED
    try:
        d = Decimal(str(value))
    except InvalidOperation:
        return str(value)
    return f"{d:,.0f} {currency}" if abs(d) >= 1000 else f"{d:,.2f} {currency}"


def _model_words(model: dict[str, Any]) -> str:
    """The brief's model as its card names it ("Llama 3.1 8B"), else the preset as written."""
    if not model:
        return "-"
    preset = model.get("preset")
    if preset:
        return preset_name(preset)
    return "a pasted config.json" if model.get("hf_config") else "custom"


def _latency(target: Any) -> str:
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


def _criterion(key: str, value: Any) -> tuple[str, str]:
    label, suffix = CRITERIA_WORDS.get(key, (words(key, {}), ""))
    if value in (None, ""):
        return label, "none"
    if key == "acceptance_rate":
        return label, _pct(value)
    if key == "latency_percentile":
        return label, str(value).lower() if str(value).startswith("P") else words(value, {})
    return label, f"{_figure(value)}{suffix}"


# --- The report's rows, labelled as a buyer reads them --------------------------------------


def _quotes_by_id(report: dict[str, Any]) -> dict[Any, dict[str, Any]]:
    return {q.get("id"): q for q in report.get("quotes") or []}


def _routes_by_id(report: dict[str, Any]) -> dict[Any, dict[str, Any]]:
    return {r.get("id"): r for r in report.get("api_routes") or []}


def _gpu_words(row: dict[str, Any], quote: dict[str, Any] | None) -> str:
    quote = quote or {}
    return str(quote.get("gpu_name") or row.get("gpu") or quote.get("gpu") or "-")


def _gpus(row: dict[str, Any]) -> str:
    """ "18 GPUs (18 replicas x 1)": the GPUs the row pays for and how they serve."""
    config = row.get("configuration") or {}
    if config.get("text"):
        return str(config["text"])
    count, replicas = row.get("gpu_count"), row.get("replicas")
    if not count:
        return "-"
    total = int(count) * int(replicas or 1)
    text = f"{total} GPU" + ("s" if total != 1 else "")
    if replicas and int(replicas) > 1:
        text += f" ({replicas} replicas x {count})"
    return text


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


def _gpus_short(row: dict[str, Any]) -> str:
    """ "6 (3 replicas x 2)" or "1": the candidate table's GPUs column, the GPUs paid for (a
    serving plan's in all)."""
    config = row.get("configuration") or {}
    paid = config.get("paid_gpus") or row.get("paid_gpus")
    count, replicas = row.get("gpu_count"), row.get("replicas")
    if paid and (row.get("candidate_kind") in PLAN_WORDS or not count):
        return str(paid)
    if not count:
        return "-"
    total = int(paid or int(count) * int(replicas or 1))
    if replicas and int(replicas) > 1:
        return f"{total} ({replicas} replicas x {count})"
    return str(total)


def row_label(row: dict[str, Any], report: dict[str, Any]) -> str:
    """provider - GPU name (system) (quote #n), or provider - model (API route #n), or a
    serving plan's kind and GPUs."""
    if row.get("candidate_kind") in PLAN_WORDS:
        names = {q.get("gpu"): q.get("gpu_name") for q in report.get("quotes") or [] if q}
        return f"{PLAN_WORDS[row['candidate_kind']]}: {plan_text(row, names)}"
    if row.get("candidate_kind") == "API_ROUTE":
        return (
            f"{row.get('provider')} - {row.get('api_model')} (API route #{row.get('api_route_id')})"
        )
    quote = _quotes_by_id(report).get(row.get("quote_id"))
    system = (quote or {}).get("system_name") or row.get("system")
    return (
        f"{row.get('provider')} - {_gpu_words(row, quote)}"
        + (f" in {system}" if system else "")
        + f" (quote #{row.get('quote_id')})"
    )


def _term(row: dict[str, Any]) -> str:
    if row.get("candidate_kind") == "API_ROUTE":
        return "Per token (API)"
    if row.get("candidate_kind") in PLAN_WORDS:
        terms = sorted({words(p.get("pricing_term"), TERM_WORDS) for p in plan_parts(row)})
        return ", ".join(terms) or "-"
    return words(row.get("pricing_term"), TERM_WORDS)


def _why_not_words(reasons: list[Any], report: dict[str, Any], row: dict[str, Any]) -> str:
    """The engine's reasons, with its latency shorthand spelled out against the targets."""
    criteria = report.get("acceptance_criteria") or {}
    out = []
    for reason in reasons:
        text = str(reason)
        if "TTFT/ITL" in text or "latency target" in text:
            targets = [
                f"{label.lower().removesuffix(' target')} {criteria[key]} ms"
                for key, (label, _) in CRITERIA_WORDS.items()
                if key.endswith("_target_ms") and criteria.get(key)
            ]
            text = "misses the latency target" + (": " + ", ".join(targets) if targets else "")
            if row.get("p95_latency_ms"):
                text += f" (estimated p95 {_num(row['p95_latency_ms'])} ms)"
        out.append(text)
    return "; ".join(out)


def _not_costed_words(reason: Any) -> str:
    """ "no FX rate for JPY (to convert ...)" -> "not costed: no FX rate for JPY"."""
    text = str(reason or "no reason recorded").split(" (", 1)[0]
    return f"not costed: {text}"


def why_it_lost(
    row: dict[str, Any] | None, chosen: dict[str, Any] | None, unit: str, report: dict[str, Any]
) -> str:
    """Why an alternative was not chosen, in words, against the chosen row."""
    if row is None:
        return "not in the frozen candidate table"
    if not row.get("meets_constraints"):
        return _why_not_words(row.get("why_not") or ["does not meet the brief"], report, row)
    cost, base = row.get("effective_unit_cost"), (chosen or {}).get("effective_unit_cost")
    if cost is None or base in (None, "") or Decimal(str(base)) == 0:
        return "no unit cost to compare"
    change = (Decimal(str(cost)) / Decimal(str(base)) - 1) * 100
    if change >= Decimal("0.5"):
        return f"costs {change:.0f} % more {unit}"
    if change <= Decimal("-0.5"):
        return f"costs {-change:.0f} % less {unit}; passed over for the reasons in the rationale"
    return f"costs the same {unit}; passed over for the reasons in the rationale"


def alternatives_lost(report: dict[str, Any], unit: str) -> list[dict[str, str]]:
    """Each alternative the record names (else the table's other leading rows), with the
    reason it lost; every quote the table could not cost is listed with why."""
    rows = report.get("rows") or []
    chosen_row = (report.get("chosen") or {}).get("row")
    refs = report.get("alternative_refs")
    not_costed = {e.get("quote_id"): e for e in report.get("not_costed") or [] if e.get("quote_id")}
    picked: list[tuple[dict[str, Any] | None, str]] = []
    if refs:
        for ref in refs:
            qid, rid = ref.get("quote_id"), ref.get("api_route_id")
            found = next(
                (
                    r for r in rows
                    if (qid is not None and r.get("quote_id") == qid)
                    or (qid is None and rid is not None and r.get("api_route_id") == rid)
                ),
                None,
            )  # fmt: skip
            fallback = f"quote #{qid}" if qid is not None else f"API route #{rid}"
            picked.append((found, fallback))
    elif refs is None and report.get("alternatives"):  # a report from before alternative_refs
        by_label = {r.get("label"): r for r in rows}
        picked = [(by_label.get(label), label) for label in report["alternatives"]]
    else:
        others = [r for r in rows if not r.get("chosen")][:MAX_IMPLIED_ALTERNATIVES]
        picked = [(r, "") for r in others]
    out = []
    seen_quotes = set()
    for row, fallback in picked:
        if row is None:
            qid = int(fallback.split("#")[1]) if fallback.startswith("quote #") else None
            entry = not_costed.get(qid)
            seen_quotes.add(qid)
            quote = _quotes_by_id(report).get(qid) or {}
            out.append(
                {
                    "label": _quote_label(quote, qid) if quote else fallback,
                    "term": words(quote.get("pricing_term"), TERM_WORDS) if quote else "-",
                    "unit_cost": "-",
                    "monthly": "-",
                    "reason": _not_costed_words(entry.get("reason"))
                    if entry
                    else "not in the frozen candidate table",
                }
            )
            continue
        seen_quotes.add(row.get("quote_id"))
        out.append(
            {
                "label": row_label(row, report),
                "term": _term(row),
                "unit_cost": _num(row.get("effective_unit_cost")),
                "monthly": _money(row.get("monthly_cost"), report["currency"]),
                "reason": why_it_lost(row, chosen_row, unit, report),
            }
        )
    quotes = _quotes_by_id(report)
    for qid, entry in not_costed.items():
        if qid in seen_quotes:
            continue
        quote = quotes.get(qid) or {}
        out.append(
            {
                "label": _quote_label(quote, qid),
                "term": words(quote.get("pricing_term"), TERM_WORDS) if quote else "-",
                "unit_cost": "-",
                "monthly": "-",
                "reason": _not_costed_words(entry.get("reason")),
            }
        )
    return out


def _quote_label(quote: dict[str, Any], qid: Any) -> str:
    """A frozen quote without a candidate row: provider - GPU, region (quote #n)."""
    if not quote:
        return f"quote #{qid}"
    gpu = quote.get("gpu_name") or quote.get("gpu") or quote.get("system_name") or "-"
    region = f", {quote['region']}" if quote.get("region") else ""
    return f"{quote.get('provider')} - {gpu}{region} (quote #{qid})"


# The alternatives shown when the record names none: the table's next rows (the rest are in
# the candidate table further on).
MAX_IMPLIED_ALTERNATIVES = 5


# --- Commercial summary --------------------------------------------------------------------


def _rate_of(report: dict[str, Any], currency: str) -> dict[str, Any] | None:
    return next((r for r in report.get("fx_rates") or [] if r.get("currency") == currency), None)


def _converted(report: dict[str, Any], amount: Any, currency: str) -> str:
    """``amount`` of ``currency`` also in the reporting currency, at the frozen FX rate."""
    reporting = report["currency"]
    if amount is None or not currency or currency == reporting:
        return ""
    to_base = Decimal(1) if currency == BASE_CURRENCY else None
    found = _rate_of(report, currency)
    if found is not None:
        to_base = Decimal(str(found["rate"]))
    from_base = Decimal(1) if reporting == BASE_CURRENCY else None
    found_reporting = _rate_of(report, reporting)
    if found_reporting is not None:
        from_base = Decimal(str(found_reporting["rate"]))
    if to_base is None or not from_base:
        return f" (no frozen FX rate to convert {currency} into {reporting})"
    value = Decimal(str(amount)) * to_base / from_base
    return f" (= {_money(value, reporting)} at the frozen FX rate)"


def _totals(report: dict[str, Any], row: dict[str, Any], commitment: int) -> dict[int, Decimal]:
    """The chosen row's 12- and 36-month cost: the sensitivity block's totals when it holds the
    row (commitment beyond the horizon included), else monthly x max(months, commitment)."""
    key = (
        f"quote:{row.get('quote_id')}"
        if row.get("quote_id") is not None
        else f"api_route:{row.get('api_route_id')}"
    )
    leading = (report.get("sensitivity") or {}).get("leading") or []
    frozen = next((c for c in leading if c.get("key") == key), None)
    out: dict[int, Decimal] = {}
    for months in (12, 36):
        total = next(
            (
                t.get("total")
                for t in (frozen or {}).get("totals") or []
                if t.get("months") == months
            ),
            None,
        )
        if total is None and row.get("monthly_cost") is not None:
            total = Decimal(str(row["monthly_cost"])) * max(months, commitment)
        if total is not None:
            out[months] = Decimal(str(total))
    return out


def commercial_summary(report: dict[str, Any]) -> list[tuple[str, str]]:
    """Page 1's facts: what is bought, from whom, on what terms, for how much."""
    chosen = report.get("chosen") or {}
    row = chosen.get("row") or {}
    currency = report["currency"]
    evidence = chosen.get("evidence") or {}
    if chosen.get("kind") == "quote":
        evidence = _quotes_by_id(report).get(chosen.get("quote_id")) or evidence
    else:
        evidence = _routes_by_id(report).get(chosen.get("api_route_id")) or evidence
    facts: list[tuple[str, str]] = [
        ("Provider", str(chosen.get("provider") or evidence.get("provider") or NOT_RECORDED))
    ]
    if chosen.get("kind") == "api_route":
        quote_currency = evidence.get("currency") or currency
        facts += [
            ("Model API", str(evidence.get("model") or row.get("api_model") or NOT_RECORDED)),
            ("Pricing term", "Per token (model API), no GPUs rented"),
            (
                "Price per 1M tokens",
                f"input {_money(evidence.get('input_price_per_mtok'), quote_currency)}, "
                f"output {_money(evidence.get('output_price_per_mtok'), quote_currency)}"
                if evidence
                else NOT_RECORDED,
            ),
            ("Quote date", _when(evidence.get("quote_date")) or NOT_RECORDED),
            ("Commitment", "none (billed per token)"),
        ]
    else:
        quote_currency = evidence.get("currency") or currency
        term = row.get("pricing_term") or evidence.get("pricing_term")
        commitment = evidence.get("minimum_commitment_months")
        facts += [
            (
                "GPU",
                f"{_gpu_words(row, evidence)}, {_gpus(row)}" if row else _gpu_words(row, evidence),
            ),
        ]
        system = evidence.get("system_name") or evidence.get("system")
        if system:
            facts.append(("System", str(system)))
        if row.get("layout"):
            facts.append(("Layout", layout_words(row["layout"])))
        facts += [
            ("Pricing term", words(term, TERM_WORDS)),
            ("Region", str(evidence.get("region") or NOT_RECORDED)),
        ]
        if term == "OWNED":
            owned: dict[str, Any] = next(
                (o for o in report.get("owned_hardware") or []
                 if o.get("quote_id") == chosen.get("quote_id")),
                {},
            )  # fmt: skip
            capex = owned.get("capex_per_gpu") or evidence.get("capex_per_gpu")
            facts.append(
                (
                    "Capex per GPU",
                    f"{_money(capex, quote_currency)}{_converted(report, capex, quote_currency)}"
                    if capex
                    else NOT_RECORDED,
                )
            )
        else:
            price = evidence.get("hourly_price_per_gpu")
            facts.append(
                (
                    "Price per GPU-hour",
                    f"{_money(price, quote_currency)}{_converted(report, price, quote_currency)}"
                    if price is not None
                    else NOT_RECORDED,
                )
            )
        valid = _when(evidence.get("valid_until"))
        if valid:
            valid += _days_left(evidence.get("valid_until"), report.get("frozen_at"))
        facts += [
            ("Quote date", _when(evidence.get("quote_date")) or NOT_RECORDED),
            (
                "Valid until",
                valid or ("no end date" if "valid_until" in evidence else NOT_RECORDED),
            ),
            (
                "Minimum commitment",
                NOT_RECORDED
                if commitment is None
                else (f"{commitment} months" if commitment else "none (pay as you go)"),
            ),
        ]
    monthly = row.get("monthly_cost")
    facts.append(
        (
            "Monthly cost",
            f"{_money(monthly, currency)} (all cost lines, platform labour included)"
            if monthly is not None
            else NOT_RECORDED,
        )
    )
    commitment = int(evidence.get("minimum_commitment_months") or 0)
    totals = _totals(report, row, commitment) if row else {}
    for months in (12, 36):
        facts.append(
            (
                f"{months}-month cost",
                _money(totals[months], currency) if months in totals else NOT_RECORDED,
            )
        )
    known = chosen.get("kind") == "api_route" or "minimum_commitment_months" in evidence
    facts.append(
        (
            "Total contract value",
            _contract_value(report, row, evidence, commitment)
            if known or (row.get("pricing_term") == "OWNED")
            else f"{NOT_RECORDED} (the quote's commitment was not frozen)",
        )
    )
    energy = energy_words(row, (report.get("brief") or {}).get("success_unit") or "")
    if energy:
        facts.append(("Energy", energy))
    return facts


def energy_words(row: dict[str, Any], success_unit: str) -> str | None:
    """A GPU row's modelled energy in words (None for an API route or a row frozen before
    energy was costed): kWh a month, per accepted output, and kg CO2e when finance gave a
    carbon intensity."""
    kwh = row.get("energy_kwh_per_month")
    if kwh is None:
        return None
    text = f"{_figure(Decimal(kwh).quantize(Decimal(1)))} kWh a month"
    if row.get("energy_j_per_output") is not None:
        figure, unit = energy_per_output(Decimal(row["energy_j_per_output"]), success_unit)
        output = unit_for(success_unit)
        text += f" ({_figure(figure)} {unit} per {output.output if output else 'accepted output'})"
    if row.get("co2e_kg_per_month") is not None:
        text += f"; {_figure(Decimal(row['co2e_kg_per_month']).quantize(Decimal(1)))} kg CO2e"
    return text + " (modelled from TDP and utilisation, facility PUE included)"


def _days_left(valid_until: Any, frozen_at: Any) -> str:
    """ " (25 days left when frozen)" or " (expired when frozen)"; "" when either is unknown."""
    try:
        end = date.fromisoformat(str(valid_until)[:10])
        frozen = date.fromisoformat(_when(frozen_at)[:10])
    except ValueError:
        return ""
    left = (end - frozen).days
    return " (expired when frozen)" if left < 0 else f" ({left} days left when frozen)"


def _contract_value(
    report: dict[str, Any], row: dict[str, Any], evidence: dict[str, Any], commitment: int
) -> str:
    currency = report["currency"]
    if (row.get("pricing_term") or evidence.get("pricing_term")) == "OWNED":
        capex = evidence.get("capex_per_gpu")
        count = int(row.get("gpu_count") or 0) * int(row.get("replicas") or 1)
        if not capex or not count:
            return NOT_RECORDED
        quote_currency = evidence.get("currency") or currency
        total = Decimal(str(capex)) * count
        return (
            f"{_money(total, quote_currency)}{_converted(report, total, quote_currency)} "
            f"capex ({count} GPUs x {_money(capex, quote_currency)}), running costs monthly"
        )
    monthly = row.get("monthly_cost")
    if monthly is None:
        return NOT_RECORDED
    if commitment:
        total = Decimal(str(monthly)) * commitment
        return f"{_money(total, currency)} (monthly cost x {commitment}-month commitment)"
    return "no commitment: billed as used (see the 12- and 36-month costs)"


# --- The PDF -------------------------------------------------------------------------------

# A heading is kept with at least this much of its section (mm): a heading alone at the foot
# of a page reads as a missing section.
KEEP_WITH_HEADING_MM = 18


def decision_record_pdf(report: dict[str, Any]) -> bytes:
    """A readable PDF of a decision record from ``selectors.decision_record_report``: the
    commercial summary and the alternatives on page 1, then the evidence."""
    pdf = _Report(orientation="portrait", format="A4")
    pdf.footer_text = f"Decision record #{report['id']} - {report['content_hash']}"
    pdf.set_title(latin1(report["title"]))
    pdf.set_author("gpuselect")
    pdf.set_auto_page_break(auto=True, margin=16)
    pdf.alias_nb_pages()
    pdf.add_page()
    pdf.set_text_color(*INK)
    currency = report["currency"]
    unit = unit_words(report["unit"])  # one unit for the whole report

    pdf.set_font("Helvetica", "B", 16)
    pdf.multi_cell(0, 8, latin1(clip(report["title"])), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("Helvetica", size=10)
    pdf.multi_cell(
        0,
        6,
        latin1(
            f"Decision record #{report['id']} - {words(report['status'], STATUS_WORDS)} - "
            f"team {report['team']} - frozen {_when(report['frozen_at']) or 'not yet'}"
        ),
        new_x=XPos.LMARGIN,
        new_y=YPos.NEXT,
    )

    pdf.set_font("Helvetica", size=8)
    pdf.set_text_color(*MUTED)
    pdf.multi_cell(
        0,
        4.5,
        latin1(f"Content hash (SHA-256 of the frozen evidence): {report['content_hash']}"),
        new_x=XPos.LMARGIN,
        new_y=YPos.NEXT,
    )
    pdf.set_text_color(*INK)

    chosen = report["chosen"]
    row = chosen.get("row") or {}
    label = row_label(row, report) if row else chosen["label"]
    _heading(pdf, "Commercial summary")
    _facts(pdf, commercial_summary(report))

    _heading(pdf, "Decision")
    rank = row.get("rank")
    ranked = sum(1 for r in report["rows"] if r.get("rank") is not None)
    _facts(
        pdf,
        [
            ("Chosen candidate", label),
            ("Capacity model", report["capacity_model"]),
            (
                "Unit cost",
                f"{_num(row.get('effective_unit_cost'))} {currency} {unit}"
                + (f", rank {rank} of {ranked} that meet the brief" if rank is not None else ""),
            ),
            ("Platform labour", _labour(row, currency)),
            ("Rationale", report["rationale"] or "-"),
        ],
    )
    lost = alternatives_lost(report, unit)
    _heading(pdf, "Alternatives and why they lost")
    if lost:
        _para(pdf, f"Unit costs in {currency} {unit}; monthly costs in {currency}.", size=8)
        _table(
            pdf,
            ["Alternative", "Term", "Unit cost", "Monthly cost", "Why it lost"],
            [[a["label"], a["term"], a["unit_cost"], a["monthly"], a["reason"]] for a in lost],
            (54, 24, 18, 22, 72),
        )
    else:
        _para(pdf, "No alternatives were recorded and the table holds no other candidate.")

    brief = report["brief"]
    model = brief.get("model") or {}
    model_name = _model_words(model)
    _heading(pdf, "Brief")
    _facts(
        pdf,
        [
            (
                "Brief",
                f"{brief.get('name')} (#{brief.get('id')}, version {brief.get('inputs_version')})",
            ),
            ("Workload", words(brief.get("workload_type"), WORKLOAD_WORDS)),
            ("Model", str(model_name)),
            ("Success unit", words(brief.get("success_unit"), SUCCESS_UNIT_WORDS)),
            ("Concurrency", _num(brief.get("concurrency")) if brief.get("concurrency") else "-"),
            ("Latency target", _latency(brief.get("latency_target"))),
            (
                "Required approvals",
                ", ".join(words(r, ROLE_WORDS) for r in report["required_roles"]),
            ),
        ],
    )
    criteria = report["acceptance_criteria"] or {}
    if criteria:
        _heading(pdf, "Acceptance criteria")
        _facts(pdf, [_criterion(k, v) for k, v in criteria.items()])

    _heading(pdf, "Candidate table (frozen)")
    _para(
        pdf,
        f"Computed {_when(report['computed_at']) or 'never'}; costs in {currency}, "
        f"unit costs {unit}; monthly costs include platform labour, shown on its own.",
    )
    rows = report["rows"]
    if rows:
        _table(
            pdf,
            ["Rank", "Candidate", "Term", "GPUs", "Unit cost", "Monthly cost",
             "Platform labour", "Meets the brief"],
            [
                [
                    str(r.get("rank") if r.get("rank") is not None else "-"),
                    ("> " if r.get("chosen") else "") + row_label(r, report),
                    _term(r),
                    _gpus_short(r),
                    _num(r.get("effective_unit_cost")),
                    _num(r.get("monthly_cost")),
                    _num((r.get("cost_lines") or {}).get("platform_labour")),
                    "yes" if r.get("meets_constraints") else "no",
                ]
                for r in rows
            ],
            (10, 60, 22, 22, 20, 20, 20, 16),
        )  # fmt: skip
        _para(pdf, "> marks the chosen candidate.", size=7)
        for r in rows:
            if not r.get("meets_constraints"):
                reason = _why_not_words(r.get("why_not") or [], report, r) or "no reason recorded"
                _para(pdf, f"{row_label(r, report)} does not meet the brief: {reason}.", size=7)
        pdf.ln(2)
        _bar_chart(pdf, rows, currency=currency, unit=unit, report=report)
    else:
        _para(pdf, "The candidate table was empty when the record was frozen.")

    summary = (report.get("sensitivity") or {}).get("summary") or []
    if summary:
        _heading(pdf, "What would change the decision")
        for line in summary:
            _para(pdf, f"- {line}")

    _owned_hardware(
        pdf,
        report.get("owned_hardware") or [],
        {q.get("id"): str(q.get("provider")) for q in report.get("quotes") or []},
    )
    _assumptions(pdf, report.get("assumptions") or {})
    _fx_rates(pdf, report)

    checklist = report["checklist"]
    _heading(pdf, f"Procurement checklist ({checklist['answered']}/{checklist['total']} answered)")
    if checklist["answers"]:
        _table(
            pdf,
            ["Question", "Answer", "Evidence", "By"],
            _checklist_rows(checklist["answers"]),
            (100, 18, 50, 22),
            size=7,
        )
    else:
        _para(pdf, "No checklist applies (an API route was chosen).")

    _heading(pdf, "Approvals")
    if report["approvals"]:
        _table(
            pdf,
            ["Role", "Verdict", "By", "When", "Reason"],
            [
                [
                    words(a["role"], ROLE_WORDS),
                    words(a["verdict"], VERDICT_WORDS),
                    a["user"],
                    _when(a["created_at"]),
                    a["reason"],
                ]
                for a in report["approvals"]
            ],
            (26, 22, 30, 40, 72),
        )
    else:
        _para(pdf, "No approvals yet.")
    decided = {a["role"] for a in report["approvals"]}
    pending = [words(r, ROLE_WORDS) for r in report["required_roles"] if r not in decided]
    if pending:
        _para(pdf, f"Still to give a verdict: {', '.join(pending)}.", size=8)

    _heading(pdf, "Audit trail")
    _table(
        pdf,
        ["When", "Action", "From", "To", "Role", "By", "Reason"],
        [
            [
                _when(e["created_at"]),
                words(e["action"], ACTION_WORDS),
                words(e["from_status"], STATUS_WORDS) if e["from_status"] else "-",
                words(e["to_status"], STATUS_WORDS) if e["to_status"] else "-",
                words(e["role"], ROLE_WORDS) if e["role"] else "-",
                e["actor"],
                e["reason"],
            ]
            for e in report["audit_trail"]
        ],
        (36, 30, 22, 22, 20, 24, 36),
        size=7,
    )

    _heading(pdf, "Integrity")
    _facts(
        pdf,
        [
            ("Engine version", str(report["engine_version"] or "-")),
            ("Frozen at", _when(report["frozen_at"]) or "-"),
        ],
    )
    pdf.set_font("Helvetica", "B", 9)
    pdf.cell(
        0,
        5,
        "Content hash (SHA-256 of the canonical snapshot):",
        new_x=XPos.LMARGIN,
        new_y=YPos.NEXT,
    )
    pdf.set_font("Courier", size=9)
    pdf.cell(0, 5, latin1(report["content_hash"]), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    return bytes(pdf.output())


def _checklist_rows(answers: list[dict[str, Any]]) -> list[list[str] | str]:
    """The answers under a title row per section, in the order frozen."""
    out: list[list[str] | str] = []
    section = None
    for a in answers:
        if a.get("section") != section:
            section = a.get("section")
            out.append(words(section, SECTION_WORDS))
        out.append(
            [
                a.get("text", ""),
                words(a.get("answer"), ANSWER_WORDS) if a.get("answer") else "unanswered",
                a.get("evidence") or "",
                a.get("answered_by") or "",
            ]
        )
    return out


def _assumptions(pdf: FPDF, assumptions: dict[str, Any]) -> None:
    values = assumptions.get("values") or {}
    sources = assumptions.get("sources") or {}
    if not values:
        return
    _heading(pdf, "Finance assumptions and their sources")
    rows = []
    for name, value in values.items():
        if name == "fx_rates":
            continue
        if value is None:
            shown = "not set"
        elif name in SHARES:
            shown = _pct(value)
        elif name == "labour_allocation":
            shown = words(value, ALLOCATION_WORDS)
        else:
            shown = _figure(value) if name != "reporting_currency" else str(value)
        rows.append([words(name, ASSUMPTION_WORDS), shown, words(sources.get(name), SOURCE_WORDS)])
    _table(pdf, ["Assumption", "Value", "Source"], rows, (72, 34, 84))


def _fx_rates(pdf: FPDF, report: dict[str, Any]) -> None:
    _heading(pdf, "FX rates used")
    rates = report.get("fx_rates") or []
    if not rates:
        _para(pdf, f"None: every frozen figure is in {BASE_CURRENCY}, the base currency.")
        return
    _table(
        pdf,
        ["Currency", "Rate", "As of", "Source"],
        [
            [
                str(r.get("currency")),
                f"1 {r.get('currency')} = {r.get('rate')} {BASE_CURRENCY}",
                _when(r.get("as_of")),
                str(r.get("source") or NOT_RECORDED),
            ]
            for r in rates
        ],
        (24, 50, 30, 86),
    )


def _owned_hardware(
    pdf: FPDF, owned: list[dict[str, Any]], providers: dict[Any, str] | None = None
) -> None:
    """The capex inputs of every owned row: what the quote gave, and the defaults it took."""
    if not owned:
        return
    providers = providers or {}
    _heading(pdf, "Owned hardware (capex inputs)")
    _para(
        pdf,
        "Monthly cost of an owned GPU = capex / depreciation months + kW x PUE x 730 h x "
        "electricity + kW x hosting per kW-month + hands-on hours x labour rate. Figures marked "
        "* are finance defaults, not the quote's.",
    )

    def cell(entry: dict[str, Any], name: str) -> str:
        mark = "*" if name in (entry.get("from_finance_defaults") or []) else ""
        return f"{_num(entry.get(name))}{mark}"

    _table(
        pdf,
        ["Quote", "Capex per GPU", "Depreciation months", "kW per GPU", "PUE",
         "Electricity per kWh", "Hosting per kW-month", "Ops hours a month", "Per GPU-month"],
        [
            [
                f"{providers[e['quote_id']]} (#{e['quote_id']})"
                if e.get("quote_id") in providers
                else f"#{e['quote_id']}",
                f"{_num(e.get('capex_per_gpu'))} {e.get('currency') or e.get('quote_currency')}",
                str(e.get("depreciation_months") or "-"),
                cell(e, "power_kw_per_gpu"),
                cell(e, "pue"),
                cell(e, "electricity_per_kwh"),
                cell(e, "hosting_per_kw_month"),
                cell(e, "ops_hours_per_month"),
                _num(e.get("total_per_gpu_month")) if "total_per_gpu_month" in e
                else str(e.get("not_costed") or "-"),
            ]
            for e in owned
        ],
        (30, 24, 22, 16, 12, 20, 22, 18, 26),
        size=7,
    )  # fmt: skip


def _labour(row: dict[str, Any], currency: str) -> str:
    """The chosen row's platform labour line and its share of the monthly cost."""
    labour = (row.get("cost_lines") or {}).get("platform_labour")
    monthly = row.get("monthly_cost")
    if labour is None or not monthly or Decimal(str(monthly)) == 0:
        return "-"
    share = Decimal(str(labour)) / Decimal(str(monthly))
    return f"{_num(labour)} {currency} a month ({share:.0%} of the monthly cost)"
