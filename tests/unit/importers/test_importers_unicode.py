"""A result file that carries a lone surrogate (the JSON escape ``"\\ud800"`` not followed by
its low half) is refused with a message that names where; it is not Unicode text, cannot be
encoded as UTF-8, and used to fail only after the run was inserted (SQLite) or at the insert
(PostgreSQL). A proper pair (an emoji written as two escapes) is one character and is kept."""

import pytest

from apps.benchmarks.importers import ImportFormatError, parse_result_file

from .test_importers_errors import FIXTURES

NAMES = sorted(FIXTURES)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "\\udc00\\ud800"])
def test_a_lone_surrogate_in_the_first_string_is_refused(fixture_bytes, name, escape):
    raw = fixture_bytes(name)
    hostile = raw.replace(b'": "', b'": "a' + escape.encode() + b"b", 1)
    assert hostile != raw
    with pytest.raises(ImportFormatError, match=r"not Unicode text: a lone surrogate \(U\+D"):
        parse_result_file(hostile)


@pytest.mark.parametrize("name", NAMES)
def test_a_lone_surrogate_in_a_key_is_refused_naming_it(fixture_bytes, name):
    raw = fixture_bytes(name)
    hostile = raw.replace(b'"', b'"\\ud800', 1)  # the first key of the file
    with pytest.raises(ImportFormatError, match=r"in the key \\ud800"):
        parse_result_file(hostile)


def test_the_message_names_the_place_in_the_file(fixture_bytes):
    raw = fixture_bytes("vllm_benchmark_serving_v0_6_4.json").replace(
        b'"model_id": "meta-llama/Llama-3.1-8B-Instruct"', b'"model_id": "a\\ud800b"'
    )
    with pytest.raises(ImportFormatError) as caught:
        parse_result_file(raw)
    assert caught.value.message == "not Unicode text: a lone surrogate (U+D800) in model_id"


def test_a_surrogate_pair_is_one_character_and_is_kept(fixture_bytes):
    raw = fixture_bytes("vllm_benchmark_serving_v0_6_4.json").replace(
        b'"model_id": "meta-llama/Llama-3.1-8B-Instruct"', b'"model_id": "llama-\\ud83e\\udd99"'
    )
    (run,) = parse_result_file(raw)
    assert run.conditions["model_id"] == "llama-\U0001f999"
