"""A graph's lexicon: which words of its own questions name which relations, learned from answered questions, and
read by the zero-shot reader as it reads a shared stem."""

from __future__ import annotations

import json

import numpy as np
import pytest
from restaurant_kg import RESTAURANTS

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.reader import ReaderInput, ZeroShotReader
from gretriever_neo4j.reader.lexicon import (
    GraphLexicon,
    LexiconEntry,
    LexiconExample,
    LexiconSettings,
    RememberedWalk,
    gram_key,
    learn,
    lexicon_example,
)
from gretriever_neo4j.train.fewshot import answered_questions, fewshot_lexicon

from toy_kg import view_of


@pytest.fixture(scope="module")
def view(embedder):
    return view_of(RESTAURANTS, embedder)


def _read(view, embedder, question: str, anchor: str, lexicon=None):
    a = view.node_texts.index(anchor)
    masked = question.replace(anchor, "X")
    return ZeroShotReader(embedder.embed, lexicon=lexicon).read(question, view, [a], embedder.embed([masked])[0],
                                                                embedder.embed([question])[0])


def _answers(view, reading) -> list[str]:
    return [view.node_texts[n] for n in reading.answers]


def test_one_answered_question_teaches_a_word_no_embedder_relates(view, embedder):
    menu = "what's on the menu at Blue Door?"
    assert _answers(view, _read(view, embedder, menu, "Blue Door")) != ["Mushroom Risotto", "Lemon Tart"]
    taught = _read(view, embedder, "what's on the menu at Red Lantern?", "Red Lantern")
    gold = np.asarray([t == "Fish Stew" for t in view.node_texts])
    example = lexicon_example(taught, gold, ZeroShotReader(embedder.embed).texts)
    assert example.unnamed == ("served at",) and example.free == ("menu",)
    lexicon = learn([example])
    assert [(e.gram, e.relation) for e in lexicon.entries] == [("menu", "served at")]
    assert lexicon.walks == (RememberedWalk("what's on the menu at X?", (("served at", 1),)),)
    # the other restaurant's menu, asked the same way, now reads `<served at`
    assert sorted(_answers(view, _read(view, embedder, menu, "Blue Door", lexicon))) == ["Lemon Tart",
                                                                                        "Mushroom Risotto"]
    # by the word alone too, in a question it never saw
    words_only = GraphLexicon(entries=lexicon.entries, settings=lexicon.settings)
    assert sorted(_answers(view, _read(view, embedder, "which dishes are on the menu of Blue Door", "Blue Door",
                                       words_only))) == ["Lemon Tart", "Mushroom Risotto"]


def test_a_word_said_of_several_relations_names_none():
    examples = [LexiconExample(grams=("castle", "rule"), unnamed=("seat of",), free=("castle", "rule")),
                LexiconExample(grams=("castle", "command"), unnamed=("lord of",), free=("castle", "command")),
                LexiconExample(grams=("castle", "stand"), unnamed=("lies in",), free=("castle", "stand")),
                LexiconExample(grams=("rule",), unnamed=("seat of",), free=("rule",))]
    lexicon = learn(examples)
    pairs = {(e.gram, e.relation) for e in lexicon.entries}
    assert ("rule", "seat of") in pairs
    assert not any(gram == "castle" for gram, _ in pairs)
    # a pair seen too rarely is not kept
    assert not learn(examples, LexiconSettings(min_count=5.0)).entries


def test_naming_matrix_and_gram_keys():
    lexicon = GraphLexicon(entries=(LexiconEntry("dad", "parents", 2.0, 0.9),
                                    LexiconEntry("other half", "spouse", 1.0, 1.0)))
    assert gram_key("dads") == "dad" and gram_key("other halves") == "other half"
    matrix = lexicon.naming(["dads", "job", "other half"], ["spouse", "parents", "profession"])
    assert matrix[0, 1] == pytest.approx(0.6 * 0.9) and matrix[2, 0] == pytest.approx(0.6)
    assert matrix.sum() == pytest.approx(0.6 * 0.9 + 0.6)


def test_round_trip_and_bad_files(tmp_path):
    lexicon = GraphLexicon(entries=(LexiconEntry("menu", "served at", 1.0, 1.0),), questions=3,
                           walks=(RememberedWalk("what's on the menu at X?", (("served at", 1),)),),
                           settings=LexiconSettings(min_share=0.6))
    path = lexicon.save(tmp_path / "lexicon.json")
    assert GraphLexicon.load(path) == lexicon
    assert not (tmp_path / "lexicon.json.partial").exists()
    (tmp_path / "bad.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(ConfigError, match="not a gqa lexicon"):
        GraphLexicon.load(tmp_path / "bad.json")
    (tmp_path / "worse.json").write_text("{")
    with pytest.raises(ConfigError, match="not a readable lexicon"):
        GraphLexicon.load(tmp_path / "worse.json")
    data = lexicon.to_dict()
    data["settings"]["unknown"] = 1
    with pytest.raises(ConfigError, match="unknown"):
        GraphLexicon.from_dict(data)


def test_fewshot_cross_validates_and_adopts_only_what_measured_no_worse(view, embedder):
    asked = [("what's on the menu at Red Lantern?", "Red Lantern", ["Fish Stew"]),
             ("what's on the menu at Blue Door?", "Blue Door", ["Mushroom Risotto", "Lemon Tart"]),
             ("who cooks at Red Lantern?", "Red Lantern", ["Tom Reed"])]
    items = [ReaderInput(question=q, view=view, anchors=[view.node_texts.index(a)], masked=q.replace(a, "X"))
             for q, a, _ in asked]
    questions = answered_questions(items, [gold for _, _, gold in asked], embedder.embed)
    assert [int(q.is_gold.sum()) for q in questions] == [1, 2, 1]
    fit = fewshot_lexicon(questions, lambda lex: ZeroShotReader(embedder.embed, lexicon=lex))
    lexicon, details = fit.lexicon, fit.details
    assert len(fit.readings) == 3
    assert details["questions"] == 3 and details["folds"] == 3
    assert details["after"] >= details["before"] and details["adopted"]
    assert set(details["calibration"]) >= {"slope", "intercept", "temperature"}
    assert ("menu", "served at") in {(e.gram, e.relation) for e in lexicon.entries}
