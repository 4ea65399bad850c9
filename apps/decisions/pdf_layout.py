"""The decision PDF's layout: a typed document (``Document``: sections of facts, paragraphs,
tables and bar charts, every value already in words) drawn with fpdf2. What the document says
is built once, from the record's frozen evidence, in apps.decisions.report; nothing here reads
the record or formats a figure.

Core fonts are Latin-1 only, so every string passes through ``latin1`` first and nothing a user
types (arrows, dashes, names in any script) can make rendering fail. Nor can its length: a
paragraph is cut at ``MAX_PARAGRAPH_CHARS`` and a table cell at ``MAX_CELL_LINES`` wrapped lines,
each with a visible mark saying how much was left out and where the full text is (the record's
page and its JSON in the API), so that any record the app accepted always has a PDF. Long
unbroken words (URLs, hashes) wrap by character."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from fpdf import FPDF
from fpdf.enums import MethodReturnValue, XPos, YPos
from fpdf.fonts import FontFace

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


# --- The document ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class Facts:
    """Label: value lines."""

    items: tuple[tuple[str, str], ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class Paragraph:
    text: str
    size: int = 9
    style: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class Table:
    """A table across the printable width; a row given as one string is a group title that
    spans every column. ``widths``: the columns' proportions."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...] | str, ...]
    widths: tuple[int, ...]
    size: int = 8


@dataclass(frozen=True, kw_only=True, slots=True)
class Bar:
    """One bar of a chart: its label, its value (the bar's length) and the value in words;
    ``kind``: "chosen", "meets" or "misses" (its colour)."""

    label: str
    value: float
    text: str
    kind: str


@dataclass(frozen=True, kw_only=True, slots=True)
class BarChart:
    title: str
    bars: tuple[Bar, ...]
    top_text: str
    caption: str


Block = Facts | Paragraph | Table | BarChart


@dataclass(frozen=True, kw_only=True, slots=True)
class Section:
    heading: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class Document:
    title: str
    subtitle: str
    hash_line: str
    footer: str
    sections: tuple[Section, ...] = field(default_factory=tuple)
    # The last section ends with the full content hash in a fixed-width font.
    content_hash: str = ""
    hash_label: str = ""


ACCENT = (31, 95, 191)
GREY = (184, 190, 200)
LIGHT = (120, 150, 200)
INK = (33, 37, 41)
MUTED = (110, 117, 125)
# A heading is kept with at least this much of its section (mm): a heading alone at the foot
# of a page reads as a missing section.
KEEP_WITH_HEADING_MM = 18
# The label column of a list of facts: room for "Accepted outputs a month" in 9 pt bold.
FACT_LABEL_MM = 50
# A chart gets at least this many bars on the page it starts on (else a new page).
MIN_CHART_BARS = 5
BAR_COLOURS = {"chosen": ACCENT, "meets": LIGHT, "misses": GREY}


class _Pdf(FPDF):
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


def _facts(pdf: FPDF, facts: Sequence[tuple[str, str]]) -> None:
    for label, value in facts:
        pdf.set_font("Helvetica", "B", 9)
        pdf.cell(FACT_LABEL_MM, 4.8, fit_width(pdf, latin1(label), FACT_LABEL_MM))
        pdf.set_font("Helvetica", size=9)
        pdf.multi_cell(
            0, 4.8, latin1(clip(value)) or "-", align="L", new_x=XPos.LMARGIN, new_y=YPos.NEXT
        )


def _table(
    pdf: FPDF,
    header: Sequence[str],
    rows: Sequence[Sequence[str] | str],
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


def _bar_chart(pdf: FPDF, chart: BarChart) -> None:
    """Horizontal bars drawn with rect and line (linear scale), as many as the page has room
    for (at least MIN_CHART_BARS, else on a new page)."""
    if not chart.bars:
        return
    label_w, value_w, bar_h, gap = 70.0, 22.0, 3.6, 1.2
    left = pdf.l_margin
    bar_x = left + label_w
    bar_w = pdf.w - pdf.r_margin - bar_x - value_w
    room = pdf.h - pdf.b_margin - pdf.get_y() - 16
    fits = int(room // (bar_h + gap))
    bars = list(chart.bars)
    if fits < min(MIN_CHART_BARS, len(bars)):
        pdf.add_page()
        fits = len(bars)
    bars = bars[:fits]
    top = max(b.value for b in bars) or 1.0
    _para(pdf, chart.title, style="B")
    y0 = pdf.get_y() + 1
    pdf.set_font("Helvetica", size=7)
    for i, bar in enumerate(bars):
        y = y0 + i * (bar_h + gap)
        pdf.set_xy(left, y)
        pdf.cell(label_w - 2, bar_h, fit_width(pdf, latin1(bar.label), label_w - 2), align="R")
        pdf.set_fill_color(*BAR_COLOURS.get(bar.kind, GREY))
        width = max(bar_w * bar.value / top, 0.4)
        pdf.rect(bar_x, y, width, bar_h, style="F")
        pdf.set_xy(bar_x + width + 1, y)
        pdf.cell(value_w, bar_h, latin1(bar.text))
    bottom = y0 + len(bars) * (bar_h + gap)
    pdf.set_draw_color(*MUTED)
    pdf.line(bar_x, y0 - 1, bar_x, bottom)
    pdf.line(bar_x, bottom, bar_x + bar_w, bottom)
    pdf.set_xy(bar_x, bottom + 0.5)
    pdf.cell(bar_w / 2, 4, "0")
    pdf.cell(bar_w / 2, 4, latin1(chart.top_text), align="R")
    pdf.set_xy(left, bottom + 5)
    pdf.set_font("Helvetica", "I", 7)
    caption = chart.caption
    if len(bars) < len(chart.bars):
        caption += f" The {len(bars)} cheapest shown; all are in the table."
    pdf.cell(0, 4, latin1(caption), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("Helvetica", size=9)
    # Back to white: fpdf2 tables paint their cells in the current fill colour, so the last bar's
    # colour would otherwise fill every table drawn after the chart.
    pdf.set_fill_color(255, 255, 255)


def draw(document: Document) -> bytes:
    """The document as a PDF (A4, portrait)."""
    pdf = _Pdf(orientation="portrait", format="A4")
    pdf.footer_text = document.footer
    pdf.set_title(latin1(document.title))
    pdf.set_author("gpuselect")
    pdf.set_auto_page_break(auto=True, margin=16)
    pdf.alias_nb_pages()
    pdf.add_page()
    pdf.set_text_color(*INK)
    pdf.set_font("Helvetica", "B", 16)
    pdf.multi_cell(0, 8, latin1(clip(document.title)), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("Helvetica", size=10)
    pdf.multi_cell(0, 6, latin1(document.subtitle), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("Helvetica", size=8)
    pdf.set_text_color(*MUTED)
    pdf.multi_cell(0, 4.5, latin1(document.hash_line), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_text_color(*INK)
    for section in document.sections:
        _heading(pdf, section.heading)
        for block in section.blocks:
            if isinstance(block, Facts):
                _facts(pdf, block.items)
            elif isinstance(block, Paragraph):
                _para(pdf, block.text, size=block.size, style=block.style)
            elif isinstance(block, Table):
                _table(pdf, block.header, block.rows, block.widths, size=block.size)
            else:
                pdf.ln(2)
                _bar_chart(pdf, block)
    if document.content_hash:
        pdf.set_font("Helvetica", "B", 9)
        pdf.cell(0, 5, latin1(document.hash_label), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        pdf.set_font("Courier", size=9)
        pdf.cell(0, 5, latin1(document.content_hash), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    return bytes(pdf.output())
