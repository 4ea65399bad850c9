"""CSV that is safe to open in a spreadsheet and round-trips decimals exactly."""

import io
import re
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

# A text cell starting with one of these is run as a formula by Excel or LibreOffice
# (OWASP "CSV injection": = + - @ tab CR); a leading apostrophe makes it plain text. The
# semicolon too: where it is the list separator (German or French Excel, LibreOffice's
# import dialog) a cell ";=1+1" is an empty cell then the formula "=1+1".
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", ";")
# A cell is quoted when RFC 4180 needs it (a comma, a double quote, a line break) and also
# when it holds a semicolon, wherever: a reader that splits on semicolons then keeps "a;=1+1"
# as one text cell. Other cells are written bare, as before.
NEEDS_QUOTES = re.compile(r'[,";\r\n]')


def safe_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, int | float):
        return repr(value)
    text = str(value)
    if text.startswith(FORMULA_STARTS):
        return "'" + text
    return text


def _field(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if NEEDS_QUOTES.search(text) else text


def _line(cells: Iterable[Any]) -> str:
    return ",".join(_field(safe_cell(v)) for v in cells) + "\r\n"


def to_csv(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """RFC 4180 CSV (CRLF line ends), every cell through ``safe_cell``."""
    out = io.StringIO()
    out.write(_line(header))
    for row in rows:
        out.write(_line(row))
    return out.getvalue()
