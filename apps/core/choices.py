"""Django choices derived from the engine's enums: one home per vocabulary.

The engine defines each vocabulary (its values, in its order); the Django apps add only the
words a person reads. A value the engine gains is a choice at once, labelled from its name until
a label is written (tests/unit/test_vocabulary.py asks for one).

Every derived choice set is also registered here by name, with the apps' own vocabularies
(``register``), so that a page, chart or PDF reads any value's words from the one place that
defines them (``label_of``; apps.core.formatting.label is what the pages call).
"""

import sys
from collections.abc import Mapping
from enum import Enum, StrEnum
from typing import Any

from django.db import models

#: Every vocabulary a person may read a value of: its name -> {value: words}.
VOCABULARIES: dict[str, dict[str, str]] = {}


def register(
    vocabulary: Any, labels: Mapping[str, str] | None = None, *, name: str | None = None
) -> None:
    """Register a vocabulary's words: a ``TextChoices`` (its labels), or an engine enum with
    ``labels`` for a vocabulary no Django field stores (a fit verdict, a bound). ``labels``
    overrides the words of the values it names (a model's choices written without words,
    whose labels a migration would otherwise carry)."""
    if isinstance(vocabulary, type) and issubclass(vocabulary, models.Choices):
        words = {str(value): str(text) for value, text in vocabulary.choices}
    elif isinstance(vocabulary, type) and issubclass(vocabulary, Enum):
        words = {str(member.value): default_label(member.name) for member in vocabulary}
    else:
        raise TypeError(f"not a vocabulary: {vocabulary!r}")
    unknown = sorted(set(labels or {}) - set(words))
    if unknown:
        raise ValueError(f"{vocabulary.__name__}: labels for values it does not have: {unknown}")
    words.update(labels or {})
    key = name or getattr(vocabulary, "__qualname__", vocabulary.__name__)
    VOCABULARIES[key] = words
    engine_enum = getattr(vocabulary, "engine_enum", None)
    if engine_enum is not None and engine_enum.__name__ not in VOCABULARIES:
        VOCABULARIES[engine_enum.__name__] = words  # the engine enum's name finds it too


def _vocabulary_name(vocabulary: Any) -> str:
    if isinstance(vocabulary, str):
        return vocabulary
    return str(getattr(vocabulary, "__qualname__", getattr(vocabulary, "__name__", vocabulary)))


def label_of(value: str, vocabulary: Any = None) -> str | None:
    """The words for ``value``: in ``vocabulary`` (a choices class, an engine enum, or the
    name either is registered under: "PricingTerm", "DecisionRecord.Status") when given;
    else in whichever vocabularies hold it, when they all say the same. None: no vocabulary
    has the value, or several give it different words and none was named."""
    if vocabulary is not None:
        name = _vocabulary_name(vocabulary)
        words = VOCABULARIES.get(name) or VOCABULARIES.get(name.rpartition(".")[2])
        if words is None:
            raise KeyError(f"no vocabulary named {name!r}")
        return words.get(value)
    found = {words[value] for words in VOCABULARIES.values() if value in words}
    return found.pop() if len(found) == 1 else None


def ambiguous_values() -> dict[str, set[str]]:
    """Values that two vocabularies word differently: value -> the vocabularies' names (a page
    names the vocabulary for these)."""
    seen: dict[str, dict[str, str]] = {}
    for name, words in VOCABULARIES.items():
        for value, text in words.items():
            seen.setdefault(value, {})[name] = text
    return {
        value: set(by_name) for value, by_name in seen.items() if len(set(by_name.values())) > 1
    }


def default_label(name: str) -> str:
    """The label Django gives a choice declared without one (so stored migrations stay as
    they are): the member name, words title-cased."""
    return name.replace("_", " ").title()


def text_choices(
    enum: type[StrEnum], labels: Mapping[str, str] | None = None, *, name: str | None = None
) -> type[models.TextChoices]:
    """A ``TextChoices`` with the engine enum's members, values and order; ``labels`` maps a
    value to its label (None: Django's default label for every member)."""
    written = dict(labels or {})
    unknown = sorted(set(written) - {member.value for member in enum})
    if unknown:
        raise ValueError(f"{enum.__name__}: labels for values it does not have: {unknown}")
    members = [
        (member.name, (member.value, written.get(member.value) or default_label(member.name)))
        for member in enum
    ]
    qualname = name or enum.__name__
    module = sys._getframe(1).f_globals.get("__name__", __name__)
    choices = models.TextChoices(  # type: ignore[call-overload]
        qualname.rpartition(".")[2], members, module=module, qualname=qualname
    )
    choices.engine_enum = enum
    choices.unlabelled = tuple(m.value for m in enum if labels is not None and m not in written)
    register(choices, name=qualname)
    return choices  # type: ignore[no-any-return]
