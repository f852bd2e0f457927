"""Paths the loader tests share: the read-only benchmark data beside the repo, and our small fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _existing_shared_path(*parts: str) -> Path:
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared benchmark data not available: {path}")
    return path


@pytest.fixture(scope="session")
def shared_path():
    """`shared_path("webqsp", "x.jsonl")`: a path under shared/data; the test is skipped if it is absent."""
    return _existing_shared_path


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
