"""`train.hop_reader`: a question's label is the hop count of its answering walk; trained on questions whose hop
count is known, the hop reader reads it in phrasings it was not trained on, and the command writes what the reader
loads."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gretriever_neo4j.reader.hop_reading import HopReader
from gretriever_neo4j.reader.signature_weights import FEATURES
from gretriever_neo4j.train.hop_reader import hop_questions, main

HOPS_COLUMN = list(FEATURES).index("extra_hops")
ONE = ["who is X's father", "who is the mother of X", "what does X do for a living", "where was X born",
       "who is X married to", "which city is X in", "who is X's mother", "where does X live"]
TWO = ["who is the father of X's teacher", "where was the founder of X born", "who is married to X's coach",
       "which city is the club of X in", "what does the mother of X's boss do", "who coaches the team X plays for",
       "who is the mother of X's teacher", "where does the founder of X live"]


def _collect_file(path, questions: list[tuple[str, int]]) -> None:
    """A `collect` file: each question with a one-hop and a two-hop walk, the one of its hop count answering."""
    features, f1, owner, masked, texts = [], [], [], [], []
    for q, (text, hops) in enumerate(questions):
        for walk_hops in (1, 2):
            row = np.zeros(len(FEATURES))
            row[HOPS_COLUMN] = walk_hops - 1
            features.append(row)
            f1.append(1.0 if walk_hops == hops else 0.0)
            owner.append(q)
            masked.append(text)
            texts.append(f"walk of {walk_hops} hops")
    np.savez(path, features=np.asarray(features), f1=np.asarray(f1), question=np.asarray(owner),
             shortlisted=np.ones(len(f1), dtype=bool), graph=np.asarray("toy"), walk_text=np.asarray(texts),
             masked=np.asarray(masked), end_names=np.asarray([""] * len(f1)))


def test_a_questions_label_is_the_fewest_hops_among_its_answering_walks(tmp_path):
    _collect_file(tmp_path / "toy.npz", [("who is X's father", 1), ("who is the father of X's teacher", 2)])
    labels = [(q.masked, q.label, sorted(q.hops.tolist())) for q in hop_questions([tmp_path / "toy.npz"])]
    assert sorted(labels) == [("who is X's father", 1, [1, 2]), ("who is the father of X's teacher", 2, [1, 2])]


@pytest.mark.slow
def test_trained_on_known_hop_counts_it_reads_new_phrasings_and_the_reader_loads_it(tmp_path):
    _collect_file(tmp_path / "train.npz", [(t, 1) for t in ONE[:6]] + [(t, 2) for t in TWO[:6]])
    _collect_file(tmp_path / "test.npz", [(t, 1) for t in ONE[6:]] + [(t, 2) for t in TWO[6:]])
    main([str(tmp_path / "train.npz"), str(tmp_path / "test.npz"), "--test", str(tmp_path / "test.npz"),
          "--epochs", "10", "--batch", "4", "--weights", "0,1", "--save", str(tmp_path / "hops"),
          "--out", str(tmp_path / "r.json")])
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["trained_on"] == ["train.npz"] and result["measured_on"] == ["test.npz"]
    assert result["hops_read_right"] >= 0.75  # phrasings it never saw
    assert result["choice_hit"]["1.0"] > result["choice_hit"]["0.0"]
    assert result["command"].startswith("python -m train.hop_reader")
    reader = HopReader.load(tmp_path / "hops", onnx=False)
    assert reader.config.training["questions"] == 12
    assert reader.probabilities("who is the father of X's teacher").argmax() == 1
    assert reader.probabilities("who is X's father").argmax() == 0
