"""The reader's and the linking's tuned numbers live in one frozen config each (reader/tuning.py,
retrieval/tuning.py; relation paths' in `PathConfig`), never as a number written in a module."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from gretriever_neo4j.reader.tuning import TUNING, ReaderTuning
from gretriever_neo4j.retrieval.tuning import LINKING

PACKAGE = Path(__file__).resolve().parents[2] / "gretriever_neo4j"
# The modules whose numbers were tuned by hand on read graphs (the others' are sizes and numerics: block sizes, an
# epsilon, the paper's defaults)
TUNED = [*sorted((PACKAGE / "reader").glob("*.py")), PACKAGE / "retrieval" / "linking.py",
         PACKAGE / "retrieval" / "naming.py", PACKAGE / "retrieval" / "relation_paths.py"]


@pytest.mark.parametrize("path", TUNED, ids=lambda p: p.name)
def test_no_module_writes_a_fractional_number_of_its_own(path):
    if path.name == "tuning.py":
        return
    written = [f"{path.name}:{node.lineno}" for node in ast.parse(path.read_text(encoding="utf-8")).body
               if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Constant)
               and isinstance(node.value.value, float)]
    assert not written, "a tuned number belongs in ReaderTuning, LinkingTuning or PathConfig"


def test_the_configs_are_frozen_and_what_the_modules_read():
    from gretriever_neo4j.reader import coverage, wording
    from gretriever_neo4j.retrieval import linking

    with pytest.raises(dataclasses.FrozenInstanceError):
        TUNING.word_names = 0.5  # type: ignore[misc]
    assert coverage.WORD_NAMES == TUNING.word_names and wording.STEM == TUNING.stem
    assert linking.BETTER_KNOWN == LINKING.better_known
    assert ReaderTuning(stem=5).stem == 5 and TUNING == ReaderTuning()
