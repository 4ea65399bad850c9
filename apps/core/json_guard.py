"""JSON a client (or a pasted config.json) sends, checked before anything keeps it.

Pure Python, shared by the API's JSON parser (apps/core/api.py) and the page forms that take
pasted JSON. It refuses, naming the place in the document:

- nesting deeper than a limit: Python's ``json`` recurses once per level and raises
  ``RecursionError`` (a 500) near 1,000; so do ``json.dumps`` in the database adapter and the
  canonical-JSON hash of a decision snapshot, which embeds free-form objects;
- NaN and Infinity (not JSON; PostgreSQL's jsonb refuses them) and numbers outside a double's
  range, such as ``1e400`` (Python reads it as ``inf``, which then cannot be stored either);
- NUL (``\\u0000``) in a string or a key: PostgreSQL refuses it in text and jsonb, SQLite
  keeps it, so the two databases would disagree;
- lone surrogates (``"\\ud800"``): not Unicode text; they cannot be encoded as UTF-8, so
  SQLite fails after the row is inserted and every page that shows them fails too.
"""

import json
import math
import re
import sys
from dataclasses import dataclass
from typing import Any

#: How deeply a free-form object (a pasted Hugging Face config.json, acceptance criteria, a
#: hand-entered run's results) may nest. Real config.json files nest 3-4 levels
#: (``text_config`` → ``rope_scaling`` → a list); 32 is ample room for them and keeps every
#: recursive reader far below Python's default recursion limit of 1,000 frames.
MAX_JSON_DEPTH = 32
#: How deeply a whole request body may nest: a free-form object plus the fixed envelope
#: around it (the deepest today is a brief: body → model → hf_config, 2 levels), with room.
MAX_BODY_DEPTH = MAX_JSON_DEPTH + 8
#: How much of one key a path in an error message shows (a key may be megabytes long).
MAX_KEY_SHOWN = 40

#: The largest magnitude a JSON number may have: a double's (IEEE 754 binary64), the range
#: of every JSON reader that turns numbers into floats (JavaScript reads 1e400 as Infinity).
MAX_NUMBER = sys.float_info.max

SURROGATE = re.compile("[\ud800-\udfff]")


# --- How much a free-form field may hold ---------------------------------------------------
# Nesting alone does not bound the work a value costs: 4,800 keys of 1 kB each nest one level
# and are 4.8 MB, which a decision record then freezes, hashes and draws into its PDF (issue 24:
# 40 s a download). Each free-form field has a size and an element count (keys plus list items,
# at every level) a few dozen times what real values hold.


@dataclass(frozen=True)
class SizeLimit:
    """The most a free-form value may hold: ``max_bytes`` as compact UTF-8 JSON and
    ``max_elements`` keys and list items, counted at every level."""

    max_bytes: int
    max_elements: int


#: A pasted Hugging Face config.json or ModelOpt hf_quant_config.json. The largest real ones
#: on file (tests/data/hf_configs) are 3.1 kB and 120 keys and items (Llama 4 Scout); an MoE
#: export listing every excluded module runs to a few thousand. 256 KiB and 10,000 leave room
#: for those many times over.
HF_CONFIG_LIMIT = SizeLimit(max_bytes=256 * 1024, max_elements=10_000)
#: A decision record's acceptance criteria: the record form writes 7 (apps.decisions.forms
#: CRITERIA); a team's own quality gates and SLOs add a few dozen. Each is a line of the PDF,
#: so 16 KiB (about four pages) and 200 keys keep the record readable and its PDF quick.
ACCEPTANCE_CRITERIA_LIMIT = SizeLimit(max_bytes=16 * 1024, max_elements=200)
#: A hand-entered benchmark run's conditions (framework, versions, flags): a dozen keys.
BENCHMARK_CONDITIONS_LIMIT = SizeLimit(max_bytes=16 * 1024, max_elements=200)
#: A hand-entered benchmark run's results: the metrics a phase checks plus a tool's summary
#: (percentiles per metric); a few hundred numbers at most.
BENCHMARK_RESULTS_LIMIT = SizeLimit(max_bytes=64 * 1024, max_elements=2_000)

#: A whole JSON request body's elements, counted while it is read (apps.core.parsers; its
#: bytes are bounded there by settings.DATA_UPLOAD_MAX_MEMORY_SIZE): a brief with its
#: config.json and quant config at their limits, or a record with its criteria, plus the
#: envelope, hold far fewer than 50,000. Past it the body is refused without reading the rest:
#: 18 MB of ``[{}, {}, ...]`` costs a few hundred kB of reading, not 12-28 s of parsing
#: (issue 24). Counted: each ``{``, ``[`` and ``,`` outside a string, one per key or item.
MAX_BODY_ELEMENTS = 50_000
#: How much of a body is read at a time while it is checked.
READ_CHUNK_BYTES = 64 * 1024


class BodyTooLarge(ValueError):
    """A request body over its byte limit; raised before the rest of it is read."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"Request body too large: the limit for a JSON body is {limit:,} bytes. "
            "Nothing was saved."
        )
        self.limit = limit


# Inside a string: everything up to the next unescaped quote (an escape is a backslash and
# the byte after it). Outside one: the structural bytes counted, and the quote opening a string.
_STRING_BODY = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
_STRUCTURE = re.compile(rb'[\[\]{},"]')
_OPENERS = frozenset(b"[{")
_CLOSERS = frozenset(b"]}")
_COMMA = ord(",")


class StreamingCheck:
    """Checks a JSON text as its bytes arrive, chunk by chunk, without parsing it: counts its
    elements (``{``, ``[`` and ``,`` outside strings) and follows its nesting, raising
    :class:`JsonRefused` (for the document as a whole) as soon as either passes its limit. A
    string may span chunks, escapes too. The work per chunk is bounded by the limits: every
    byte it looks at one by one is a counted element, a bracket within ``max_depth``, or a
    closing bracket that an opening one paid for."""

    def __init__(self, *, max_elements: int, max_depth: int) -> None:
        self.max_elements = max_elements
        self.max_depth = max_depth
        self.elements = 0
        self.depth = 0
        self.in_string = False
        self.escape_pending = False  # the last chunk ended on a backslash inside a string

    def feed(self, chunk: bytes) -> None:
        i, n = 0, len(chunk)
        while i < n:
            if self.in_string:
                if self.escape_pending:
                    self.escape_pending = False
                    i += 1
                    continue
                match = _STRING_BODY.match(chunk, i)
                i = match.end() if match else i
                if i >= n:
                    return
                if chunk[i] != ord('"'):  # a backslash ending the chunk
                    self.escape_pending = True
                else:
                    self.in_string = False
                i += 1
                continue
            for token in _STRUCTURE.finditer(chunk, i):
                byte = chunk[token.start()]
                if byte == ord('"'):
                    self.in_string = True
                    i = token.end()
                    break
                self._structural(byte)
            else:
                return

    def _structural(self, byte: int) -> None:
        if byte in _CLOSERS:
            self.depth -= 1
            if self.depth < 0:
                raise JsonRefused("", "a closing bracket without its opening one")
            return
        self.elements += 1
        if self.elements > self.max_elements:
            raise JsonRefused(
                "",
                f"more than {self.max_elements:,} keys and items; the body was not read further",
            )
        if byte in _OPENERS:
            self.depth += 1
            if self.depth > self.max_depth:
                raise JsonRefused("", f"nested more than {self.max_depth} levels deep")


def read_bounded(
    stream: Any,
    *,
    max_bytes: int,
    max_elements: int = MAX_BODY_ELEMENTS,
    max_depth: int = MAX_BODY_DEPTH,
) -> bytes:
    """A JSON body read from ``stream`` in chunks, refused as soon as it passes ``max_bytes``
    (:class:`BodyTooLarge`), ``max_elements`` or ``max_depth`` (:class:`JsonRefused` for the
    document), so that an oversized body is never read whole nor parsed."""
    check = StreamingCheck(max_elements=max_elements, max_depth=max_depth)
    parts: list[bytes] = []
    size = 0
    while True:
        chunk = stream.read(READ_CHUNK_BYTES)
        if not chunk:
            return b"".join(parts)
        size += len(chunk)
        if size > max_bytes:
            raise BodyTooLarge(max_bytes)
        check.feed(chunk)
        parts.append(chunk)


def size_problem(value: Any, limit: SizeLimit) -> str | None:
    """Why ``value`` is over ``limit`` (in words with the limit), or None. Counts without
    recursion and stops at the first element past the limit."""
    elements = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            elements += len(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            elements += len(item)
            stack.extend(item)
        if elements > limit.max_elements:
            return (
                f"Too many keys and items: at most {limit.max_elements:,} are accepted "
                "(counting every level)."
            )
    size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode())
    if size > limit.max_bytes:
        return f"Too large: {size:,} bytes as JSON; at most {limit.max_bytes:,} are accepted."
    return None


# The messages DRF's CharField uses for the same characters, so a client sees one wording.
NUL_MESSAGE = "Null characters are not allowed."
SURROGATE_MESSAGE = "Surrogate characters are not allowed: U+{:X}."
NOT_FINITE_MESSAGE = "Numbers must be finite and at most 1.8e308 in size (a double); {} is not."


class JsonRefused(ValueError):
    """The document is refused; ``path`` names where (``""``: the document as a whole)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


class _NonFinite:
    """Stands in for NaN, Infinity or an overflowing float until the walk names its place;
    `literal` for the NaN / Infinity / -Infinity constants (not a number that overflows)."""

    def __init__(self, text: str, literal: bool = False) -> None:
        self.text = text
        self.literal = literal


def _constant(text: str) -> _NonFinite:
    return _NonFinite(text, literal=True)


def _parse_float(text: str) -> float | _NonFinite:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text[:40])


#: Where a request body may carry a Hugging Face config as published: ``config.json`` files
#: hold ``Infinity`` and ``NaN`` literals (Python's ``json.dumps`` writes them, e.g.
#: Nemotron-H's ``"time_step_limit": [0.0, Infinity]``). There those literals are kept as the
#: strings "Infinity", "-Infinity" and "NaN" (storable, and shown back as written) instead of
#: refused; a number that overflows a double (``1e400``) is refused there too.
CONFIG_PATHS = ("model.hf_config", "model.hf_quant_config")


def non_finite_as_text(value: Any, prefixes: tuple[str, ...], path: str = "") -> Any:
    """``value`` with each non-finite number at or under one of ``prefixes`` (dotted paths,
    ``""``: the whole document) replaced by its literal text. Walks without recursion."""

    def under(p: str) -> bool:
        return any(
            pre == "" or p == pre or p.startswith(pre + ".") or p.startswith(pre + "[")
            for pre in prefixes
        )

    def text(item: Any) -> Any:
        if isinstance(item, _NonFinite):
            return item.text if item.literal else item  # 1e400 is refused still
        if isinstance(item, float) and not math.isfinite(item):
            return "NaN" if item != item else ("Infinity" if item > 0 else "-Infinity")
        return item

    if not prefixes:
        return value
    root = [value]
    stack: list[tuple[Any, str]] = [(root, "")]
    first = True
    while stack:
        container, cpath = stack.pop()
        if first:
            items: Any = [(0, path)]
            first = False
        elif isinstance(container, list):
            items = [(i, f"{cpath}[{i}]") for i in range(len(container))]
        else:
            items = [(k, f"{cpath}.{k}" if cpath else str(k)) for k in container]
        for key, p in items:
            child = container[key]
            if isinstance(child, dict | list):
                stack.append((child, p))
            elif under(p):
                container[key] = text(child)
    return root[0]


def loads(
    text: str | bytes, *, max_depth: int = MAX_BODY_DEPTH, configs_under: tuple[str, ...] = ()
) -> Any:
    """``json.loads`` that refuses what :func:`problem` finds, raising :class:`JsonRefused`.
    Under ``configs_under`` (dotted paths, ``""``: the whole document) non-finite numbers are
    kept as text (see ``CONFIG_PATHS``) rather than refused.

    Malformed JSON raises ``json.JSONDecodeError`` (or ``ValueError`` for an integer of more
    digits than Python converts), as ``json.loads`` does."""
    try:
        value = json.loads(text, parse_constant=_constant, parse_float=_parse_float)
    except RecursionError:
        raise JsonRefused("", f"nested more than {max_depth} levels deep") from None
    value = non_finite_as_text(value, configs_under)
    found = problem(value, max_depth=max_depth)
    if found:
        raise JsonRefused(*found)
    return value


def _shown(key: str) -> str:
    """A key as an error message can carry it (a lone surrogate cannot be sent as UTF-8)."""
    return key[:MAX_KEY_SHOWN].encode("utf-8", "backslashreplace").decode("utf-8")


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return NUL_MESSAGE
    bad = SURROGATE.search(text)
    if bad:
        return SURROGATE_MESSAGE.format(ord(bad.group()))
    return None


def problem(value: Any, *, max_depth: int = MAX_JSON_DEPTH) -> tuple[str, str] | None:
    """The first ``(path, why)`` that makes parsed JSON unfit to keep, or None.

    ``path`` is dotted keys and ``[index]``es from ``value`` (``""`` for ``value`` itself).
    Walks without recursion, so it can look at what it refuses."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= max_depth:
                return path, f"nested more than {max_depth} levels deep"
            if isinstance(item, list):
                children = [(v, f"{path}[{i}]") for i, v in enumerate(item)]
            else:
                children = []
                for key, child in item.items():
                    name = f"{path}.{_shown(str(key))}" if path else _shown(str(key))
                    why = _text_problem(str(key))
                    if why:
                        return name, f"in this key: {why}"
                    children.append((child, name))
            stack.extend((child, name, depth + 1) for child, name in reversed(children))
        elif isinstance(item, str):
            why = _text_problem(item)
            if why:
                return path, why
        elif isinstance(item, _NonFinite):
            return path, NOT_FINITE_MESSAGE.format(item.text)
        elif isinstance(item, float) and not math.isfinite(item):
            return path, NOT_FINITE_MESSAGE.format(item)
        elif isinstance(item, int) and not isinstance(item, bool) and abs(item) > MAX_NUMBER:
            return path, NOT_FINITE_MESSAGE.format("this integer")
    return None
