"""`train.fewshot.fewshot_walk_encoder`: the general walk encoder's adapters, tuned further on a graph's own
questions, learn the graph's word for a relation ("kribble" for `owned by`) that the general one never saw, and are
kept only where cross-validation on those questions measured them better (the mean of the folds' encoders, or one
tuned again on every question); too few questions keep the general one."""

from __future__ import annotations

import numpy as np
import pytest
from reader.toy_kg import view_of

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.reader import ReaderInput, ZeroShotReader
from gretriever_neo4j.reader.learned import GENERAL
from gretriever_neo4j.reader.walk_encoder import WalkEncoder, write_saved
from gretriever_neo4j.train.fewshot import AnsweredQuestion, EncoderAdaptation, fewshot_walk_encoder

PLACES = ["Blue Door", "Red Lantern", "Green Gate", "Old Mill", "Salt House", "Fig Tree", "Copper Pot", "Lark Inn",
          "Stone Arch", "Wild Plum", "Tide Table", "Iron Kettle"]
DISHES = ["Risotto", "Fish Stew", "Pear Cake", "Lamb Pie", "Pea Soup", "Fig Tart", "Crab Salad", "Duck Ragu",
          "Plum Crumble", "Bean Chili", "Oyster Roll", "Beet Salad"]
TRIPLES = [t for i, place in enumerate(PLACES) for t in (
    (DISHES[i], "served at", place), (f"Chef {i}", "chef of", place), (place, "located in", f"Street {i % 4}"),
    (place, "owned by", f"Owner {i}"), (f"Chef {i}", "trained at", PLACES[(i + 1) % len(PLACES)]))]


def _questions(view, embedder, texts_and_gold):
    out = []
    for text, anchor, gold in texts_and_gold:
        masked = text.replace(anchor, "X")
        vectors = embedder.embed([masked, text])
        item = ReaderInput(question=text, view=view, anchors=[view.node_texts.index(anchor)], masked=masked)
        out.append(AnsweredQuestion(item, vectors[0], vectors[1],
                                    np.asarray([t == gold for t in view.node_texts], dtype=bool)))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("final", ["soup", "tuned"])
def test_a_graphs_own_word_is_learned_and_kept_where_cross_validation_measured_it(embedder, final, tmp_path):
    general = WalkEncoder.load(GENERAL)
    if general.config.adapter != "lora":
        pytest.skip("the shipped walk encoder has no adapters")
    view = view_of(TRIPLES, embedder)
    questions = _questions(view, embedder, [(f"what's {p}'s kribble?", p, f"Owner {i}") for i, p in enumerate(PLACES)]
                           + [(f"who cooks at {p}?", p, f"Chef {i}") for i, p in enumerate(PLACES[:6])])

    def reader_for(lexicon, encoder):
        return ZeroShotReader(embedder.embed, lexicon=lexicon, walk_encoder=encoder)

    settings = EncoderAdaptation(folds=3, epochs=6, final=final)
    learned_on = []  # each fold read with the graph's lexicon learned without it (none here: it would learn it)
    saved, details = fewshot_walk_encoder(questions, reader_for, general, settings,
                                          lexicon_of=lambda rows: learned_on.append(list(rows)))
    assert len(learned_on) == 3 and all(len(rows) == 12 for rows in learned_on)
    assert sorted(i for rows in learned_on for i in set(range(18)) - set(rows)) == list(range(18))
    assert details["questions"] == 18 and details["before"] < 0.8, details  # the general one misreads "kribble"
    assert details["adopted"] and details["after"] > details["before"] and saved is not None, details
    assert "intercept" in details["calibration"]  # the tuned reader's confidence, fitted on its held-out readings
    config, state = saved
    assert config.rank == general.config.rank * (3 if final == "soup" else 1)  # a soup stacks the folds' adapters
    write_saved(config, state, tmp_path / "encoder")  # as `gqa train` keeps it, and `gqa ask` reads it
    tuned = reader_for(None, WalkEncoder.load(tmp_path / "encoder", onnx=False))
    unseen = _questions(view, embedder, [("what's Blue Door's kribble?", "Blue Door", "Owner 0")])[0]
    reading = tuned.read(unseen.item.question, view, unseen.item.anchors, unseen.masked_vector, unseen.full_vector)
    assert view.node_texts[reading.answers[0]] == "Owner 0"

    few, why = fewshot_walk_encoder(questions[:4], reader_for, general, settings)
    assert few is None and not why["adopted"] and "fewer than" in why["why"]


def test_what_is_kept_is_a_soup_or_a_tuning_and_nothing_else():
    assert EncoderAdaptation().final == "soup"
    with pytest.raises(ConfigError, match="'final'"):
        EncoderAdaptation(final="merged")
