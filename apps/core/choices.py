"""Django choices derived from the engine's enums: one home per vocabulary.

The engine defines each vocabulary (its values, in its order); the Django apps add only the
words a person reads. A value the engine gains is a choice at once, labelled from its name until
a label is written (tests/unit/test_vocabulary.py asks for one).
"""

import sys
from collections.abc import Mapping
from enum import StrEnum

from django.db import models


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
    return choices  # type: ignore[no-any-return]
