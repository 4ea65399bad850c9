"""Helpers for tests that import the real results files under tests/data/benchmarks.

Those files were run on several models (Llama 3.1 8B, Qwen3 8B, Qwen2.5 7B, gpt-oss-20b...),
and a run belongs to its model: a file of another model than the brief's is refused unless it
is imported as a proxy. Tests about parsing, supersede or storage import the files of other
models as proxies (``needs_proxy``); tests about MEASURED rows use a file of the brief's model.
"""

from apps.benchmarks.importers import parse_result_file
from apps.benchmarks.model_identity import brief_model_names, model_key, model_named_in


def needs_proxy(brief, raw: bytes) -> bool:
    """True when the file names a model that is not the brief's (so it imports as a proxy)."""
    try:
        runs = parse_result_file(raw)
    except Exception:  # a bad file: let the import itself refuse it
        return False
    named = {model_key(model_named_in(run.conditions)) for run in runs} - {""}
    return bool(named - brief_model_names(brief))
