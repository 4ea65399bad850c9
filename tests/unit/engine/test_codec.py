"""apps.engine.codec: what is encoded reads back as the same typed object, and a stored value
of the wrong type is refused by name (the plain str -> int / str mappings a table keeps by the
thousand included, which take a fast path both ways)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.engine.codec import CodecError, decode, encode


class Colour(StrEnum):
    RED = "RED"
    BLUE = "BLUE"


@dataclass(frozen=True, kw_only=True)
class Inner:
    amount: Decimal
    ratio: float
    colour: Colour = Colour.RED


@dataclass(frozen=True, kw_only=True)
class Outer:
    versions: dict[str, int]
    words: dict[str, str]
    colours: dict[str, Colour] = field(default_factory=dict)
    inner: tuple[Inner, ...] = ()
    note: str | None = None


texts = st.text(max_size=12)


@given(
    st.dictionaries(texts, st.integers(), max_size=30),
    st.dictionaries(texts, texts, max_size=10),
    st.dictionaries(texts, st.sampled_from(list(Colour)), max_size=5),
    st.lists(
        st.builds(
            Inner,
            amount=st.decimals(allow_nan=False, places=4),
            ratio=st.floats(allow_nan=False),
            colour=st.sampled_from(list(Colour)),
        ),
        max_size=3,
    ).map(tuple),
    st.none() | texts,
)
def test_what_is_encoded_reads_back_the_same(versions, words, colours, inner, note):
    value = Outer(versions=versions, words=words, colours=colours, inner=inner, note=note)
    data = encode(value)
    assert decode(Outer, data) == value
    assert all(isinstance(v, str) for v in data["colours"].values())  # enums as their values


def test_a_stored_mapping_is_a_copy_not_the_stored_object():
    stored = {"versions": {"7": 2}, "words": {}}
    got = decode(Outer, stored)
    got.versions["8"] = 1
    assert stored["versions"] == {"7": 2}


@pytest.mark.parametrize(
    ("versions", "words"),
    [
        ({"7": True}, {}),  # a bool is not a version
        ({"7": 2.5}, {}),
        ({"7": "2"}, {}),
        ({}, {"a": 3}),
    ],
)
def test_a_wrong_value_in_a_plain_mapping_is_refused(versions, words):
    with pytest.raises(CodecError):
        decode(Outer, {"versions": versions, "words": words})


def test_an_enum_in_a_plain_looking_mapping_is_written_as_its_value():
    data = encode({"a": Colour.BLUE, "b": 3})
    assert data == {"a": "BLUE", "b": 3}
    assert type(data["a"]) is str
