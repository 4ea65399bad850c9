"""The browser journeys' checker of what a person reads (tests/e2e/visible_text.py): it finds
each thing issue 27 saw on the pages, and passes text written as people read it."""

import pytest

from tests.e2e.visible_text import label_findings, raw_figures, text_findings

SLUGS = frozenset({"rtx-4090-24gb", "h100-sxm5-80gb", "llama-3.1-8b", "sdxl"})


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("0.9703196347031963470319634703 USD an hour", "raw floats"),
        ("per token 0.000002616282601000", "raw floats"),
        ("128100000 Wh per completed training run", "raw figures"),
        ("1202293.49 USD", "raw floats"),
        ("rising to 0e-7 USD per GPU-hour", "scientific notation"),
        ("7.606e+04 USD", "scientific notation"),
        ("Architecture: HOPPER", "enum codes"),
        ("Answer: PARTIAL", "enum codes"),
        ("a TRAINING brief", "enum codes"),
        ("REALTIME_INFERENCE", "code names"),
        ("ttft_p95_ms must be set", "code names"),
        ("NVIDIA GeForce RTX 4090 (rtx-4090-24gb)", "slugs"),
        ("model: llama-3.1-8b", "slugs"),
        ("Preset: sdxl", "slugs"),
    ],
)
def test_each_thing_issue_27_saw_is_found(text, what):
    findings = text_findings(text, "page", slugs=SLUGS)
    assert what in findings.problems, findings.problems


@pytest.mark.parametrize(
    "text",
    [
        "USD 5,120.70 a month; USD 12,346 over 12 months",
        "0.9703 USD an hour; 0.000002616 per token; 2,259 days",
        "Hopper · CDNA 4 · Reserved 1 year · Partial · FP8 · API docs · GPU",
        "Are the required certifications (SOC 2, ISO 27001) current?",
        "2026-11-17 (20 days ago) · version 0.30.0 · quote #12",
        "llama-3.1-8b-instruct (the provider's model name) · us-east · 128 MWh",
        "NVIDIA GeForce RTX 4090 · 1,202,293 tokens",
    ],
)
def test_text_written_for_people_passes(text):
    findings = text_findings(text, "page", slugs=SLUGS)
    assert not findings.problems, findings.problems


def test_every_page_is_held_to_the_same_rule():
    # The finance page once read "7.606e+04 USD", architectures as codes and slugs.
    problems = text_findings("7.606e+04 USD · HOPPER · rtx-4090-24gb", "finance", slugs=SLUGS)
    assert {"scientific notation", "enum codes", "slugs"} <= set(problems.problems)
    assert text_findings("0.000002616282601", "finance").problems


def test_raw_figures_skip_versions_and_separated_figures():
    assert raw_figures("1.2.3 and 10,000,000 and 2026") == []
    assert raw_figures("10000000 and 12345") == ["10000000", "12345"]


@pytest.mark.parametrize(
    ("name", "label", "bad"),
    [
        ("hourly_price_per_gpu", "Hourly price per gpu", False),  # "per" names a unit
        ("pue", "Pue", True),
        ("electricity_per_kwh", "Electricity (quote currency per kWh)", False),
        ("retry_rate", "Retry rate (%)", False),
        ("retry_rate", "Retry rate", True),
        ("layers", "Layers", False),  # a count of what it names
        ("rate_limit_rpm", "Rate limit rpm", True),
        ("rate_limit_rpm", "Rate limit (requests a minute)", False),
    ],
)
def test_a_number_field_must_name_its_unit(name, label, bad):
    assert bool(label_findings([[name, label]], "form").problems) is bad


def test_candidate_ids_are_found_where_the_journey_asks():
    text = "Acme · NVIDIA H100 SXM5 (quote #12); Tokens Inc (API route #3)"
    assert text_findings(text, "record", ids=True).problems["candidate ids"] == [
        "quote #12", "API route #3",
    ]  # fmt: skip
    assert not text_findings(text, "quotes list").problems
    words = "Acme · NVIDIA H100 SXM5 · On demand · us-east · 8 GPUs (1 replica \u00d7 8)"
    assert not text_findings(words, "record", ids=True).problems
