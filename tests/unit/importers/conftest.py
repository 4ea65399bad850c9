from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "data" / "benchmarks"


@pytest.fixture
def fixture_bytes():
    def load(name: str) -> bytes:
        return (DATA / name).read_bytes()

    return load
