"""apps.core.json_guard: what JSON is refused, where the refusal says it is, and what is kept."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.core.json_guard import MAX_BODY_DEPTH, MAX_JSON_DEPTH, JsonRefused, loads, problem

SURROGATE_DFFF = "Surrogate characters are not allowed: U+DFFF."


def nested_list(depth: int) -> str:
    return "[" * depth + "]" * depth


class TestDepth:
    def test_the_limit_itself_is_kept_and_one_more_level_is_refused(self):
        assert loads(nested_list(MAX_JSON_DEPTH), max_depth=MAX_JSON_DEPTH)
        with pytest.raises(JsonRefused, match=f"nested more than {MAX_JSON_DEPTH} levels deep"):
            loads(nested_list(MAX_JSON_DEPTH + 1), max_depth=MAX_JSON_DEPTH)

    @pytest.mark.parametrize("text", ["[" * 100_000, '{"a":' * 100_000, nested_list(5000)])
    def test_any_depth_is_refused_without_a_recursion_error(self, text):
        with pytest.raises(JsonRefused) as caught:
            loads(text)
        assert caught.value.message == f"nested more than {MAX_BODY_DEPTH} levels deep"

    def test_the_path_names_the_object_that_is_too_deep(self):
        deep = {"model": {"hf_config": {"a": [[[]]]}}}
        assert problem(deep, max_depth=5) == (
            "model.hf_config.a[0][0]",
            "nested more than 5 levels deep",
        )

    def test_the_body_limit_leaves_room_for_a_free_form_object_at_its_own_limit(self):
        config = json.loads(nested_list(MAX_JSON_DEPTH))
        body = {"model": {"hf_config": {"x": config[0]}}}
        assert problem(body, max_depth=MAX_BODY_DEPTH) is None


class TestNumbers:
    @pytest.mark.parametrize(
        ("text", "shown"),
        [("1e400", "1e400"), ("-1e400", "-1e400"), ("NaN", "NaN"), ("Infinity", "Infinity"),
         ("-Infinity", "-Infinity"), ("1" + "0" * 400, "this integer")],
    )  # fmt: skip
    def test_a_number_outside_a_doubles_range_is_refused_naming_where(self, text, shown):
        with pytest.raises(JsonRefused) as caught:
            loads('{"a": {"b": [0, ' + text + "]}}")
        assert caught.value.path == "a.b[1]"
        assert caught.value.message.endswith(f"{shown} is not.")

    @pytest.mark.parametrize("text", ["1.7976931348623157e308", "-1e-400", "0", "1" + "0" * 300])
    def test_the_largest_double_and_underflow_to_zero_are_kept(self, text):
        assert loads(f"[{text}]") == [json.loads(text)]

    def test_booleans_are_not_numbers_here(self):
        assert loads("[true, false, null]") == [True, False, None]


class TestText:
    @pytest.mark.parametrize(
        ("text", "path", "said"),
        [
            ('{"a": "x\\u0000y"}', "a", "Null characters are not allowed."),
            ('{"a\\u0000": 1}', "a\x00", "in this key: Null characters are not allowed."),
            ('{"a": ["\\ud800"]}', "a[0]", "Surrogate characters are not allowed: U+D800."),
            ('{"\\udfff": 1}', "\\udfff", "in this key: " + SURROGATE_DFFF),
            ('"\\udc00\\ud800"', "", "Surrogate characters are not allowed: U+DC00."),
        ],
    )  # fmt: skip
    def test_nul_and_lone_surrogates_are_refused_naming_where(self, text, path, said):
        with pytest.raises(JsonRefused) as caught:
            loads(text)
        assert (caught.value.path, caught.value.message) == (path, said)

    def test_the_path_can_be_sent_as_utf8(self):
        with pytest.raises(JsonRefused) as caught:
            loads('{"\\ud800": {"k": NaN}}')
        caught.value.path.encode("utf-8")

    def test_a_surrogate_pair_is_one_character_and_is_kept(self):
        assert loads('["\\ud83e\\udd99"]') == ["\U0001f999"]


@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.integers()
        | st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00")),
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(
                st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00")),
                children,
                max_size=3,
            )
        ),
        max_leaves=20,
    )
)
def test_any_clean_document_within_the_limits_round_trips(value):
    assert loads(json.dumps(value)) == value
