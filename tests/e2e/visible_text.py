"""What a person must not read on a page, checked on every page a browser journey visits.

- a raw float: a figure of more than ``MAX_DIGITS`` significant digits, or a whole number of
  five digits or more without thousands separators (0.9703196347031963470319634703, 6000000);
- scientific notation (7.606e+04, 0e-7);
- a code name: UPPER_SNAKE (``REALTIME_INFERENCE``), snake_case (``ttft_p95_ms``), or a
  one-word code a vocabulary words otherwise (``HOPPER``, ``PARTIAL``, ``TRAINING``: every value
  of apps.core.choices' registry whose words differ from it);
- a catalog slug where the catalog has a name (``rtx-4090-24gb``, ``llama-3.1-8b``, ``sdxl``);
- a form field whose value has a unit, labelled without one ("Hourly price per gpu", "Pue").

Text inside code-like elements (``code``, ``pre``, ``kbd``, ``samp``: a CSV column, a content
hash, a value to type), inside text inputs, hidden, or in a closed disclosure is not read; the
options of each visible select are (a person opens them).

"""

import re
from dataclasses import dataclass, field

from apps.catalog.models import Gpu, GpuSystem, ModelPreset
from apps.core import choices

#: A figure with more significant digits than this is the code's float, not a reading.
MAX_DIGITS = 6
NUMBER_TOKEN = re.compile(r"(?<![\w.,])\d[\d.,]*(?![\w])")
# Numbers that are names, not figures: a standard's number (ISO 27001).
NAMED_NUMBER = re.compile(r"\b(?:ISO|IEC|RFC|SOC)\s?$")
#: A candidate named by its id ("quote #12", "API route #3"): the decision record and its PDF
#: name candidates in words (apps.decisions.candidate_words), so the journeys reject ids there.
CANDIDATE_ID = re.compile(r"\b(?:quote|API route) #\d+", re.IGNORECASE)
SCIENTIFIC = re.compile(r"(?<![\w.])\d+(?:\.\d+)?[eE][+-]?\d+(?![\w.])")
UPPER_SNAKE = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
SNAKE_CASE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
# Names a person reads in their own files, so the page says them as the file does: the key of a
# Hugging Face config.json that sets the weight precision (the brief form's help text), and
# NVIDIA ModelOpt's hf_quant_config.json (the brief form's second file).
FILE_KEYS = frozenset({"quantization_config", "config.json", "hf_quant_config"})
# Tools named as their projects write them (SGLang's bench_serving script).
TOOL_NAMES = frozenset({"bench_serving"})
# One-word codes that are also the words people write: acronyms and names.
PLAIN_WORDS = frozenset({"API", "GPU", "SGD", "MTP", "EAGLE", "FSDP", "NO"})
# Inputs whose value is a count of the thing its label names (layers, heads): no other unit.
UNITLESS_FIELDS = frozenset(
    {
        "layers", "hidden_size", "attention_heads", "kv_heads", "head_dim", "intermediate_size",
        "experts", "active_experts", "lora_rank", "speculative_tokens", "target_eval_score",
        "gpus_per_node", "page", "limit",
    }
)  # fmt: skip
# A label names its unit: in parentheses, a percentage, "per ...", "a month", or a unit word.
UNIT_IN_LABEL = re.compile(
    r"\(.+\)|%|\bper\b|/|\ba (?:month|year|day|second|minute)\b|\ban hour\b|"
    r"\b(?:ms|s|h|GB|TB|MiB|kW|kWh|px|USD|EUR)\b"
)
UNIT_WORD_IN_LABEL = re.compile(
    r"\b(?:tokens?|months?|minutes?|hours?|days?|GPUs?|years?|images?|clips?|requests?|"
    r"records?|replicas?|steps?|seconds?)\b",
    re.IGNORECASE,
)

VISIBLE_TEXT_JS = """() => {
  const skip = "code, pre, kbd, samp, script, style, noscript, template, textarea";
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const el = node.parentElement;
    if (!el || el.closest(skip)) continue;
    if (el.closest("select")) continue;
    if (!el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) continue;
    const text = node.textContent.trim();
    if (text) out.push(text);
  }
  for (const select of document.querySelectorAll("select")) {
    if (!select.checkVisibility()) continue;
    for (const option of select.options) out.push(option.textContent.trim());
  }
  return out;
}"""

# Each visible number input (and decimal text input) with its name and its label's text.
NUMBER_FIELDS_JS = """() => {
  const out = [];
  const inputs = document.querySelectorAll(
    "input[type=number], input[inputmode=decimal], input[inputmode=numeric]");
  for (const input of inputs) {
    if (!input.checkVisibility()) continue;
    const label = input.id ? document.querySelector(`label[for="${input.id}"]`) : null;
    const text = label ? label.textContent.trim() : (input.getAttribute("aria-label") || "");
    const name = (input.name || "").replace(/^.*-/, "");
    out.push([name, text]);
  }
  return out;
}"""


def raw_figures(text: str) -> list[str]:
    """Figures written as the code holds them: more than MAX_DIGITS significant digits, or a
    whole number of five digits or more without separators. Versions (1.2.3) are not figures."""
    found = []
    for match in NUMBER_TOKEN.finditer(text):
        token = match.group(0).rstrip(".,")
        if token.count(".") > 1:
            continue
        if "," in token:
            continue  # separated: written for a reader
        if NAMED_NUMBER.search(text[max(0, match.start() - 4) : match.start()]):
            continue
        digits = token.replace(".", "").lstrip("0")
        if len(digits) > MAX_DIGITS or ("." not in token and len(token) >= 5):
            found.append(token)
    return found


def enum_codes() -> frozenset[str]:
    """One-word codes a vocabulary words otherwise (HOPPER -> Hopper), uppercase only."""
    codes = set()
    for words in choices.VOCABULARIES.values():
        for value, text in words.items():
            if re.fullmatch(r"[A-Z][A-Z0-9]*", value) and text != value:
                codes.add(value)
    return frozenset(codes - PLAIN_WORDS)


def catalog_slugs() -> frozenset[str]:
    """Slugs of the catalog's GPUs, systems and model presets whose name is not the slug."""
    pairs = [
        *Gpu.objects.values_list("slug", "name"),
        *GpuSystem.objects.values_list("slug", "name"),
        *ModelPreset.objects.values_list("slug", "name"),
    ]
    return frozenset(slug for slug, name in pairs if slug != name)


@dataclass
class Findings:
    where: str
    problems: dict[str, list[str]] = field(default_factory=dict)

    def add(self, what: str, found: list[str]) -> None:
        if found:
            self.problems.setdefault(what, []).extend(found)

    def message(self) -> str:
        lines = [f"{self.where}:"]
        for what, found in self.problems.items():
            lines.append(f"  {what}: {sorted(set(found))[:12]}")
        return "\n".join(lines)


def text_findings(
    text: str,
    where: str,
    *,
    allow: tuple[str, ...] = (),
    slugs: frozenset[str] = frozenset(),
    ids: bool = False,
) -> Findings:
    """What a person must not read in ``text`` (see the module's docstring); with ``ids``,
    candidates named by their ids ("quote #12") too."""
    findings = Findings(where)
    if ids:
        findings.add("candidate ids", CANDIDATE_ID.findall(text))
    allowed = {*allow, *FILE_KEYS, *TOOL_NAMES}
    for pattern, what in ((UPPER_SNAKE, "code names"), (SNAKE_CASE, "code names")):
        findings.add(what, [m for m in pattern.findall(text) if m not in allowed])
    raw = [t for t in raw_figures(text) if t not in allowed]
    findings.add("raw floats", [t for t in raw if "." in t])
    findings.add("raw figures", [t for t in raw if "." not in t])
    findings.add("scientific notation", [m for m in SCIENTIFIC.findall(text) if m not in allowed])
    codes = enum_codes()
    findings.add(
        "enum codes",
        [w for w in re.findall(r"\b[A-Z][A-Z0-9]*\b", text) if w in codes and w not in allowed],
    )
    for slug in slugs:
        if slug in allowed:
            continue
        if re.search(rf"(?<![\w.\-]){re.escape(slug)}(?![\w\-]|\.\w)", text):
            findings.add("slugs", [slug])
    return findings


def label_findings(fields: list[list[str]], where: str) -> Findings:
    """Number fields labelled without their unit."""
    findings = Findings(where)
    findings.add(
        "labels without units",
        [
            f"{name}: {text!r}"
            for name, text in fields
            if name not in UNITLESS_FIELDS
            and not UNIT_IN_LABEL.search(text)
            and not UNIT_WORD_IN_LABEL.search(text)
        ],
    )
    return findings


def check_page(page, where: str, *, allow: tuple[str, ...] = (), ids: bool = False) -> str:
    """Fail with every finding on the page as it is now (with ``ids``, candidate ids too);
    returns the visible text."""
    text = "\n".join(page.evaluate(VISIBLE_TEXT_JS))
    findings = text_findings(
        text,
        where,
        allow=allow,
        slugs=catalog_slugs(),
        ids=ids,
    )
    for what, found in label_findings(page.evaluate(NUMBER_FIELDS_JS), where).problems.items():
        findings.add(what, found)
    assert not findings.problems, findings.message()
    return text
