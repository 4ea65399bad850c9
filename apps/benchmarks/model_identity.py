"""Which model a brief is about and which model a results file names, and whether they are the
same model. A benchmark run belongs to a model: it measures, and calibrates, only that model.

How model ids are compared (``model_key``): the last path segment (``meta-llama/Llama-3.1-70B``
and ``/models/Llama-3.1-70B`` name the same model), lower case, spaces and underscores as
hyphens, a leading ``meta-`` dropped (``Meta-Llama-3.1-70B``), then chat / packaging suffixes
dropped from the end (``-instruct``, ``-chat``, ``-it``, ``-hf``, ``-base`` and a Mistral-style
``-v0.3``; ``DeepSeek-V3`` keeps its ``-v3``: that is another model). So
``meta-llama/Meta-Llama-3.1-70B-Instruct`` is the preset ``llama-3.1-70b`` (named "Llama 3.1
70B"). A brief's names are its preset's slug and name, or its pasted config's
``_name_or_path``. A quantised checkpoint's suffix (``-FP8``, ``-AWQ``) is kept: it is another
checkpoint, so it can only be a proxy of the brief's model.
"""

import re
from typing import Any, Final

from apps.briefs.models import WorkloadBrief
from apps.engine import PRESETS

#: Suffixes that name a variant of one set of weights (chat tuning aside, the shape and the
#: speed are the model's), dropped from the end of a normalised id, repeatedly.
VARIANT_SUFFIX: Final = re.compile(r"-(instruct|chat|it|hf|base|v0\.\d+)$")
#: The org-style prefix Meta's repositories put before the family name.
META_PREFIX: Final = "meta-"
#: Keys of a Hugging Face config.json (or of a pasted config) that name the checkpoint.
CONFIG_NAME_KEYS: Final = ("_name_or_path", "name_or_path", "model_id", "model_name")
#: Keys of a run's conditions where the importers record the model the tool was pointed at.
CONDITION_MODEL_KEYS: Final = ("model", "model_id")
#: Longest model identity stored on a run (BenchmarkRun.model / model_named).
MODEL_ID_MAX_CHARS: Final = 200


def model_key(name: Any) -> str:
    """The normalised form two model ids are compared in ("" for no usable name)."""
    if not isinstance(name, str):
        return ""
    text = name.strip().rstrip("/").rsplit("/", 1)[-1].lower()
    text = re.sub(r"[\s_]+", "-", text)
    if text.startswith(META_PREFIX):
        text = text[len(META_PREFIX) :]
    while True:
        shorter = VARIANT_SUFFIX.sub("", text)
        if shorter == text:
            break
        text = shorter
    return text[:MODEL_ID_MAX_CHARS]


def brief_model_identity(brief: WorkloadBrief) -> str:
    """The identity runs of this brief's model are stored and looked up under: the preset's
    slug, else the pasted config's normalised name; "" when the brief names no model (its model
    is given as bare numbers: the import must then say which model it is)."""
    if brief.model_preset:
        return brief.model_preset
    config = brief.model_hf_config if isinstance(brief.model_hf_config, dict) else {}
    for key in CONFIG_NAME_KEYS:
        found = model_key(config.get(key))
        if found:
            return found
    return ""


def brief_model_names(brief: WorkloadBrief) -> set[str]:
    """Every normalised name the brief's model goes by (empty when it names none)."""
    identity = brief_model_identity(brief)
    if not identity:
        return set()
    names = {model_key(identity)}
    preset = PRESETS.get(brief.model_preset) if brief.model_preset else None
    if preset is not None:
        names.add(model_key(preset.name))
    return names - {""}


def model_named_in(conditions: dict[str, Any]) -> str:
    """The model id a results file names (as the tool recorded it), or ""."""
    for key in CONDITION_MODEL_KEYS:
        value = conditions.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()[:MODEL_ID_MAX_CHARS]
    return ""
