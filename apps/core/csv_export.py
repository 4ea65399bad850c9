"""CSV that is safe to open in a spreadsheet and round-trips decimals exactly."""

import csv
import io
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

# A text cell starting with one of these is run as a formula by Excel or LibreOffice
# (OWASP "CSV injection": = + - @ tab CR); a leading apostrophe makes it plain text. The
# semicolon too: where it is the list separator (German or French Excel, LibreOffice's
# import dialog) a cell ";=1+1" is an empty cell then the formula "=1+1".
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", ";")
# Every cell is quoted (OWASP's advice), so a reader that splits on semicolons keeps
# "a;=1+1", wherever the semicolon is, as one text cell.
QUOTING = csv.QUOTE_ALL


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


def to_csv(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n", quoting=QUOTING)
    writer.writerow([safe_cell(h) for h in header])
    for row in rows:
        writer.writerow([safe_cell(v) for v in row])
    return out.getvalue()
