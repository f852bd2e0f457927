"""A toy KG with no questions: the reader trained on questions synthesized from the graph's own relation paths
answers held-out questions phrased by people ("which movies did X direct"), which no template wrote."""

from __future__ import annotations

import pytest

from gretriever_neo4j.reader import reader_input
from gretriever_neo4j.reader.model import ReaderConfig
from gretriever_neo4j.reader.training import build_examples, score, train_reader
from gretriever_neo4j.retrieval.synthesize import SynthesisConfig, split_by_path, synthesize

from toy_kg import PEOPLE, TITLES, questions, toy_kg, whole_graph_result


@pytest.fixture(scope="module")
def kg(embedder):
    return toy_kg(embedder)


@pytest.mark.slow
def test_trained_on_its_own_paths_it_answers_human_questions(kg, embedder):
    synthesis = synthesize(kg, SynthesisConfig(questions=400, seed=0, max_hops=2, hub_quantile=1.0))
    train, val = split_by_path(synthesis.questions, 0.15, seed=0)
    result = whole_graph_result(kg)

    def inputs(rows):
        vectors = embedder.embed([text for text, _ in rows])
        return [reader_input(text, result, vector, hints=[topic]) for (text, topic), vector in zip(rows, vectors)]

    config = ReaderConfig(epochs=30, batch_questions=16, learning_rate=3e-3, hidden=64)
    train_set = build_examples(inputs([(q.text, q.topic) for q in train]), [q.answers for q in train],
                               embedder.embed, config)
    val_set = build_examples(inputs([(q.text, q.topic) for q in val]), [q.answers for q in val], embedder.embed,
                             config, nodes=train_set.nodes, relations=train_set.relations)
    module, history = train_reader(train_set, val_set, config)
    human = questions(kg, TITLES, PEOPLE)  # the toy KG's hand-written templates: none of them was synthesized
    assert not {text for text, _, _ in human} & {q.text for q in synthesis.questions}
    test_set = build_examples(inputs([(text, topic) for text, topic, _ in human]), [a for _, _, a in human],
                              embedder.embed, config, nodes=train_set.nodes, relations=train_set.relations)
    scores = score(module, test_set, history.threshold)
    assert scores.strict_hit_at_1 >= 0.8, scores
