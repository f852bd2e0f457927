"""`python -m train.general_reader ablate`: what each hand-set walk feature adds to the walk chosen, on collect
files (no Neo4j: the files are written here)."""

from __future__ import annotations

import json

import numpy as np

from gretriever_neo4j.reader.signature_weights import FEATURES
from gretriever_neo4j.train.general_reader import ablation, main

COLUMN = {name: i for i, name in enumerate(FEATURES)}


def _collected(path, graph: str, questions: int) -> None:
    """Two walks a question: the answering one is named better (`explained`); the other has a longer walk that
    the question's words do not explain (`extra_hops_unexplained`); `kin` is 0 everywhere, so it decides
    nothing."""
    features = np.zeros((2 * questions, len(FEATURES)))
    features[0::2, COLUMN["explained"]] = 0.6  # the answering walk
    features[1::2, COLUMN["explained"]] = 0.7  # named a little better, but one hop longer and unexplained
    features[1::2, COLUMN["extra_hops_unexplained"]] = 1.0
    f1 = np.tile([1.0, 0.0], questions)
    np.savez(path, features=features, f1=f1, question=np.repeat(np.arange(questions), 2),
             shortlisted=np.ones(2 * questions, bool), graph=np.asarray(graph))


def test_ablation_names_the_feature_that_decides_and_those_that_decide_nothing(tmp_path):
    paths = []
    for graph in ("g-one", "g-two"):
        paths.append(tmp_path / f"{graph}.npz")
        _collected(paths[-1], graph, questions=5)
    result = ablation(paths)
    assert result["hit"] == 1.0 and result["questions"] == 10 and result["graphs"] == ["g-one", "g-two"]
    assert result["zeroed_alone"]["extra_hops_unexplained"] == -1.0  # without it the unexplained hop wins
    assert result["zeroed_alone"]["kin"] == 0.0 and "kin" in result["idle"]
    assert "extra_hops_unexplained" not in result["idle"] and "tuned_reading" in result["zeroed_alone"]
    assert result["idle_zeroed_together"] == 0.0


def test_ablate_prints_and_writes_the_measurement_with_its_command(tmp_path, capsys):
    _collected(tmp_path / "g.npz", "g", questions=3)
    out = tmp_path / "ablation.json"
    main(["ablate", str(tmp_path / "g.npz"), "--out", str(out)])
    printed = capsys.readouterr().out
    assert "extra_hops_unexplained" in printed and "-100.0 points" in printed
    written = json.loads(out.read_text())
    assert written["command"].startswith("python -m train.general_reader ablate") and written["hit"] == 1.0
