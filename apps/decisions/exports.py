"""A decision record as CSV (its frozen candidate table) and as a PDF report (fpdf2).

The PDF is drawn from plain data (``selectors.decision_record_report``) with a core font; core
fonts are Latin-1 only, so every string passes through ``latin1`` first and nothing a user
types (arrows, dashes, names in any script) can make rendering fail.

Nor can its length: a paragraph is cut at ``MAX_PARAGRAPH_CHARS`` and a table cell at
``MAX_CELL_LINES`` wrapped lines, each with a visible mark saying how much was left out and where
the full text is (the record's page and its JSON in the API), so that any record the app
accepted always has a PDF. Long unbroken words (URLs, hashes) wrap by character."""

import unicodedata
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, cast

from fpdf import FPDF
from fpdf.enums import MethodReturnValue, XPos, YPos
from fpdf.fonts import FontFace

from apps.finance.exports import ranking_csv
from apps.finance.units import unit_of_snapshot, unit_words

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


class _Report(FPDF):
    footer_text = ""

    def footer(self) -> None:
        self.set_y(-12)
        self.set_font("Helvetica", size=7)
        self.set_text_color(*MUTED)
        self.cell(0, 5, latin1(f"{self.footer_text}  -  page {self.page_no()}/{{nb}}"), align="C")
        self.set_text_color(*INK)


def _heading(pdf: FPDF, text: str) -> None:
    pdf.ln(3)
    pdf.set_font("Helvetica", "B", 12)
    pdf.cell(0, 7, latin1(text), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("Helvetica", size=9)


def _para(pdf: FPDF, text: str, *, size: int = 9, style: str = "") -> None:
    pdf.set_font("Helvetica", style, size)
    pdf.multi_cell(0, 4.6, latin1(clip(text)), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("Helvetica", size=9)


def _facts(pdf: FPDF, facts: list[tuple[str, str]]) -> None:
    for label, value in facts:
        pdf.set_font("Helvetica", "B", 9)
        pdf.cell(42, 4.8, fit_width(pdf, latin1(label), 42))
        pdf.set_font("Helvetica", size=9)
        pdf.multi_cell(0, 4.8, latin1(clip(value)) or "-", new_x=XPos.LMARGIN, new_y=YPos.NEXT)


def _table(
    pdf: FPDF, header: list[str], rows: list[list[str]], widths: tuple[int, ...], *, size: int = 8
) -> None:
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
            for column, value in enumerate(values):
                row.cell(text(value, column))
    pdf.set_font("Helvetica", size=9)


def _bar_chart(pdf: FPDF, rows: list[dict[str, Any]], *, currency: str, unit: str) -> None:
    """Horizontal bars of the effective unit cost, drawn with rect and line (linear scale);
    the chosen candidate in the accent colour, candidates that fail a constraint in grey."""
    costed = [r for r in rows if r.get("effective_unit_cost") is not None][:MAX_CHART_BARS]
    if not costed:
        _para(pdf, "No candidate has a unit cost to chart.")
        return
    values = [float(r["effective_unit_cost"]) for r in costed]
    top = max(values) or 1.0
    label_w, value_w, bar_h, gap = 70.0, 22.0, 4.2, 1.6
    left = pdf.l_margin
    bar_x = left + label_w
    bar_w = pdf.w - pdf.r_margin - bar_x - value_w
    height = len(costed) * (bar_h + gap) + 10
    if pdf.get_y() + height > pdf.h - pdf.b_margin:
        pdf.add_page()
    _para(pdf, f"Effective unit cost, {currency} {unit}", style="B")
    y0 = pdf.get_y() + 1
    pdf.set_font("Helvetica", size=7)
    for i, (row, value) in enumerate(zip(costed, values, strict=True)):
        y = y0 + i * (bar_h + gap)
        pdf.set_xy(left, y)
        label = fit_width(pdf, latin1(row.get("label", "")), label_w - 2)
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
        "Blue: the chosen candidate. Light blue: meets every constraint. Grey: fails one.",
        new_x=XPos.LMARGIN,
        new_y=YPos.NEXT,
    )
    pdf.set_font("Helvetica", size=9)
    # Back to white: fpdf2 tables paint their cells in the current fill colour, so the last bar's
    # colour would otherwise fill every table drawn after the chart.
    pdf.set_fill_color(255, 255, 255)


def decision_record_pdf(report: dict[str, Any]) -> bytes:
    """A readable PDF of a decision record from ``selectors.decision_record_report``."""
    pdf = _Report(orientation="portrait", format="A4")
    pdf.footer_text = f"Decision record #{report['id']} - {report['content_hash']}"
    pdf.set_title(latin1(report["title"]))
    pdf.set_author("gpuselect")
    pdf.set_auto_page_break(auto=True, margin=16)
    pdf.alias_nb_pages()
    pdf.add_page()
    pdf.set_text_color(*INK)

    pdf.set_font("Helvetica", "B", 16)
    pdf.multi_cell(0, 8, latin1(report["title"]), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("Helvetica", size=10)
    pdf.cell(
        0,
        6,
        latin1(f"Decision record #{report['id']} - status {report['status']}"),
        new_x=XPos.LMARGIN,
        new_y=YPos.NEXT,
    )

    brief = report["brief"]
    model = brief.get("model") or {}
    model_name = (model.get("preset") or model.get("hf_config") or "custom") if model else "-"
    _heading(pdf, "Brief")
    _facts(
        pdf,
        [
            (
                "Brief",
                f"{brief.get('name')} (#{brief.get('id')}, version {brief.get('inputs_version')})",
            ),
            ("Team", report["team"]),
            ("Workload", str(brief.get("workload_type") or "-")),
            ("Model", str(model_name)),
            ("Success unit", str(brief.get("success_unit") or "-")),
            ("Concurrency", str(brief.get("concurrency") or "-")),
            ("Latency target", _latency(brief.get("latency_target"))),
        ],
    )

    chosen = report["chosen"]
    row = chosen.get("row") or {}
    unit = unit_words(report["unit"])  # one unit for the whole report
    _heading(pdf, "Decision")
    _facts(
        pdf,
        [
            ("Chosen candidate", chosen["label"]),
            ("Provider", str(chosen.get("provider") or "-")),
            ("Capacity model", report["capacity_model"]),
            ("Rank", str(row.get("rank") if row.get("rank") is not None else "-")),
            (
                "Unit cost",
                f"{_num(row.get('effective_unit_cost'))} {report['currency']} {unit}",
            ),
            ("Platform labour", _labour(row, report["currency"])),
            ("Monthly cost", f"{_num(row.get('monthly_cost'))} {report['currency']}"),
            ("Alternatives", "; ".join(report["alternatives"]) or "none recorded"),
            ("Required roles", ", ".join(report["required_roles"])),
            ("Rationale", report["rationale"] or "-"),
        ],
    )
    criteria = report["acceptance_criteria"] or {}
    if criteria:
        _heading(pdf, "Acceptance criteria")
        _facts(pdf, [(k, "-" if v is None else str(v)) for k, v in criteria.items()])

    _heading(pdf, "Candidate table (frozen)")
    _para(
        pdf,
        f"Computed {_when(report['computed_at']) or 'never'}; costs in {report['currency']}, "
        f"unit costs {unit}; monthly costs include platform labour, shown on its own.",
    )
    rows = report["rows"]
    if rows:
        _table(
            pdf,
            [
                "Rank",
                "Candidate",
                "Term",
                f"Unit cost ({unit})",
                "Monthly cost",
                "Platform labour",
                "Meets constraints",
            ],
            [
                [
                    str(r.get("rank") if r.get("rank") is not None else "-"),
                    ("> " if r.get("chosen") else "") + r["label"],
                    str(r.get("pricing_term") or "per token"),
                    _num(r.get("effective_unit_cost")),
                    _num(r.get("monthly_cost")),
                    _num((r.get("cost_lines") or {}).get("platform_labour")),
                    "yes" if r.get("meets_constraints") else "no",
                ]
                for r in rows
            ],
            (12, 66, 22, 24, 22, 22, 22),
        )
        pdf.ln(3)
        _bar_chart(pdf, rows, currency=report["currency"], unit=unit)
    else:
        _para(pdf, "The candidate table was empty when the record was frozen.")

    _owned_hardware(pdf, report.get("owned_hardware") or [])

    checklist = report["checklist"]
    _heading(pdf, f"Procurement checklist ({checklist['answered']}/{checklist['total']} answered)")
    if checklist["answers"]:
        _table(
            pdf,
            ["Section", "Question", "Answer", "Evidence", "By"],
            [
                [
                    a.get("section", ""),
                    a.get("text", ""),
                    a.get("answer") or "unanswered",
                    a.get("evidence") or "",
                    a.get("answered_by") or "",
                ]
                for a in checklist["answers"]
            ],
            (22, 78, 22, 44, 24),
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
                [a["role"], a["verdict"], a["user"], _when(a["created_at"]), a["reason"]]
                for a in report["approvals"]
            ],
            (26, 22, 30, 40, 72),
        )
    else:
        _para(pdf, "No approvals yet.")

    _heading(pdf, "Audit trail")
    _table(
        pdf,
        ["When", "Action", "From", "To", "Role", "By", "Reason"],
        [
            [
                _when(e["created_at"]),
                e["action"],
                e["from_status"],
                e["to_status"],
                e["role"],
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


def _owned_hardware(pdf: FPDF, owned: list[dict[str, Any]]) -> None:
    """The capex inputs of every owned row: what the quote gave, and the defaults it took."""
    if not owned:
        return
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
        ["Quote", "Capex / GPU", "Months", "kW / GPU", "PUE", "Power / kWh", "Host / kW-mo",
         "Ops h", "Per GPU-month"],
        [
            [
                f"#{e['quote_id']}",
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
        (14, 28, 14, 18, 14, 22, 24, 16, 40),
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


def _latency(target: Any) -> str:
    if not target:
        return "-"
    if isinstance(target, dict):
        return ", ".join(f"{k} {v}" for k, v in target.items())
    return str(target)
