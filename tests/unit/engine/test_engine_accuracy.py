"""The engine against published measurements (tests/data/published_measurements.csv)."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_accuracy_data import (
    FIT_METRICS,
    MEASUREMENTS_CSV,
    is_current_architecture,
    load_comparisons,
    load_rows,
    load_skipped,
)

COMPARISONS = load_comparisons()
SKIPPED = load_skipped()

# Issue 12's bar: at least this many points about today's architectures (MoE, MLA, windowed
# attention, FP4/FP8 checkpoints, Blackwell, MI300X/MI355X).
MIN_CURRENT_ARCHITECTURE_POINTS = 30


def test_the_table_has_at_least_15_published_points() -> None:
    assert len(COMPARISONS) >= 15


def test_the_table_covers_todays_architectures() -> None:
    current = [r for r in load_rows() if is_current_architecture(r)]
    assert len(current) >= MIN_CURRENT_ARCHITECTURE_POINTS


@pytest.mark.parametrize("c", COMPARISONS, ids=[c.id for c in COMPARISONS])
def test_each_point_is_within_35_percent_unless_marked(c) -> None:  # type: ignore[no-untyped-def]
    if c.expected_miss:
        pytest.skip(f"expected miss: {c.expected_miss[:80]}")
    assert abs(c.error) <= 0.35, f"{c.id}: published {c.published}, estimated {c.estimated:.1f}"


def test_every_memory_fit_fact_is_right() -> None:
    """What fits where is issue 12's bar: no fit fact may be wrong or excused."""
    facts = [c for c in COMPARISONS if c.metric in FIT_METRICS]
    assert facts
    wrong = [c.id for c in facts if c.error != 0 or c.expected_miss]
    assert not wrong, f"fit facts the engine gets wrong: {wrong}"


def test_most_points_are_within_20_percent() -> None:
    within = sum(1 for c in COMPARISONS if abs(c.error) <= 0.20)
    assert within / len(COMPARISONS) >= 0.6


def test_every_expected_miss_names_its_missing_mechanism() -> None:
    """Issue 25: a point outside ±35% is a to-do, so its reason names what the engine lacks."""
    unnamed = [
        c.id
        for c in COMPARISONS
        if c.expected_miss and "missing mechanism" not in c.expected_miss.lower()
    ]
    assert not unnamed, unnamed


def test_every_expected_miss_is_really_a_miss() -> None:
    for c in COMPARISONS:
        if c.expected_miss:
            assert abs(c.error) > 0.35, f"{c.id} is marked expected_miss but is within 35%"


@pytest.mark.parametrize("s", SKIPPED, ids=[s.id for s in SKIPPED])
def test_points_on_gpus_the_catalog_lacks_are_skipped(s) -> None:  # type: ignore[no-untyped-def]
    pytest.skip(s.reason)


def test_an_unknown_gpu_slug_is_skipped_with_a_reason_not_an_error(tmp_path: Path) -> None:
    lines = MEASUREMENTS_CSV.read_text().splitlines()
    header, first = lines[0], lines[1]
    unknown = first.replace("h100-sxm5-80gb", "no-such-gpu-1gb", 1)
    csv_path = tmp_path / "m.csv"
    csv_path.write_text("\n".join([header, first, unknown]) + "\n")
    assert [c.id for c in load_comparisons(csv_path)] == [first.split(",")[0]]
    skipped = load_skipped(csv_path)
    assert len(skipped) == 1
    assert "no-such-gpu-1gb" in skipped[0].reason
