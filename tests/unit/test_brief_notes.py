"""Engine notes on the brief page (apps.briefs.display.note_parts): codes in their vocabulary's
words, a tool's own identifiers kept as they are and marked as code."""

from apps.briefs.display import note_parts


def test_an_architecture_code_reads_in_words():
    parts = note_parts(
        "kernel efficiencies: per-architecture constants (HOPPER; no measured kernel table)"
    )
    assert parts == [
        (
            "kernel efficiencies: per-architecture constants (Hopper; no measured kernel table)",
            False,
        )
    ]


def test_a_tool_identifier_is_kept_and_marked_as_code():
    parts = note_parts("measured (AIConfigurator, system h100_sxm: GEMM vLLM 0.24.0)")
    assert parts == [
        ("measured (AIConfigurator, system ", False),
        ("h100_sxm", True),
        (": GEMM vLLM 0.24.0)", False),
    ]


def test_codes_no_vocabulary_has_stay_as_written():
    assert note_parts("TP8 over NVLink at FP8") == [("TP8 over NVLink at FP8", False)]
