"""Self-supervised questions from a KG: the path sampler (directions, hubs, opaque nodes, multi-answer paths), the
question templates, and the rows `gqa ingest questions` reads. Pure: no database, no model."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.retrieval.kg import KnowledgeGraph
from gretriever_neo4j.retrieval.synthesize import (
    SynthesisConfig,
    phrase_questions,
    sample_walk,
    split_by_path,
    synthesize,
    to_rows,
)
from gretriever_neo4j.retrieval.weak_labels import BACKWARD, FORWARD


def movie_kg(extra=()) -> KnowledgeGraph:
    triples = [("Alpha", "directed_by", "Ann"), ("Beta", "directed_by", "Ann"), ("Gamma", "directed_by", "Bob"),
               ("Alpha", "release_year", "1990"), ("Beta", "release_year", "1991"), ("Gamma", "release_year", "1990"),
               ("Ann", "spouse_s", "m.0abc"), ("m.0abc", "spouse", "Cal")]
    return KnowledgeGraph.from_triples(triples + list(extra))


def kg_relation(kg, text):
    return kg.relation_texts.index(text)


def test_every_question_is_answered_by_its_path_from_its_topic():
    kg = movie_kg()
    synthesis = synthesize(kg, SynthesisConfig(questions=60, seed=3, hub_quantile=1.0))
    assert synthesis.questions and synthesis.paths == len({q.qid.rsplit("-", 1)[0] for q in synthesis.questions})
    for q in synthesis.questions:
        assert q.topic not in q.answers
        assert not any(a.startswith("m.") for a in q.answers)  # opaque ids are ways through, never answers
        assert kg.node_texts[kg.key_to_index[q.topic]] in q.text
    # Ann directed two films: "<directed_by" from Ann is one path with both as answers (multi-answer)
    ann = [q for q in synthesis.questions if q.topic == "Ann" and q.signature == ((kg_relation(kg, "directed_by"),
                                                                                 BACKWARD),)]
    assert ann and all(sorted(q.answers) == ["Alpha", "Beta"] for q in ann)
    # directions: from a film, directed_by is followed forward and answers the director
    films = [q for q in synthesis.questions if q.topic == "Gamma" and len(q.signature) == 1
             and q.signature[0] == (kg_relation(kg, "directed_by"), FORWARD)]
    assert films and all(q.answers == ["Bob"] for q in films)
    # two-hop: the films of the director of Gamma's release years etc. exist among the paths
    assert any(q.hops == 2 for q in synthesis.questions)
    assert synthesis.report()["paths_per_signature"]


def test_opaque_nodes_do_not_count_as_hops():
    kg = movie_kg()
    rng = np.random.default_rng(0)
    opaque = np.asarray([t.startswith("m.") for t in kg.node_texts])
    spouse_walks = set()
    for _ in range(200):
        walk = sample_walk(kg, kg.key_to_index["Cal"], 1, SynthesisConfig(max_steps=3), opaque, rng)
        if walk is not None:
            spouse_walks.add(walk)
    # from Cal the only relation leads to the compound node, so a one-hop question takes two steps
    assert spouse_walks == {((kg_relation(kg, "spouse"), BACKWARD), (kg_relation(kg, "spouse_s"), BACKWARD))}


def test_hubs_are_no_starts_and_hub_paths_are_dropped():
    films = [f"Film {i}" for i in range(40)]
    kg = movie_kg([(f, "has_genre", "Drama") for f in films] + [("Alpha", "has_genre", "Drama")])
    synthesis = synthesize(kg, SynthesisConfig(questions=200, seed=1, hub_quantile=0.95, max_answers=10))
    assert all(q.topic != "Drama" for q in synthesis.questions)  # the hub starts nothing
    assert all(len(q.answers) <= 10 for q in synthesis.questions)  # "films of the genre of Film 3" is dropped
    assert synthesis.dropped.get("too many answers (hub)", 0) > 0


def test_templates_phrase_directions_differently_and_vary():
    kg = movie_kg()
    rng = np.random.default_rng(0)
    forward = phrase_questions(kg, ((kg_relation(kg, "directed_by"), FORWARD),), "Gamma", 3, rng)
    backward = phrase_questions(kg, ((kg_relation(kg, "directed_by"), BACKWARD),), "Ann", 3, rng)
    assert len(set(forward)) == 3 and all("directed by" in q and "Gamma" in q for q in forward)
    assert all("directed by" in q and "Ann" in q for q in backward)
    assert not set(q.replace("Gamma", "Ann") for q in forward) & set(backward)  # the directions read differently
    two = phrase_questions(kg, ((kg_relation(kg, "directed_by"), BACKWARD), (kg_relation(kg, "release_year"), FORWARD)),
                           "Ann", 2, rng)
    assert all(q.index("release year") < q.index("directed by") for q in two)  # outermost step said first


def test_phrasings_of_one_path_stay_on_one_side_of_the_split():
    synthesis = synthesize(movie_kg(), SynthesisConfig(questions=60, seed=3, hub_quantile=1.0))
    train, val = split_by_path(synthesis.questions, 0.3, seed=0)
    assert train and val
    path = lambda q: q.qid.rsplit("-", 1)[0]
    assert not {path(q) for q in train} & {path(q) for q in val}


def test_rows_are_what_gqa_ingest_questions_reads(tmp_path):
    from gretriever_neo4j.loaders import questions as questions_loader

    synthesis = synthesize(movie_kg(), SynthesisConfig(questions=20, seed=0, hub_quantile=1.0))
    source = tmp_path / "synthetic.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in to_rows(synthesis.questions, "train")))
    records = list(questions_loader.read(source, graph="toy"))
    assert len(records) == len(synthesis.questions)
    assert records[0].answers == synthesis.questions[0].answers and records[0].split == "train"
    assert records[0].topic_entities == [synthesis.questions[0].topic]


def test_a_graph_without_edges_is_a_clear_error():
    with pytest.raises(InputError, match="no edges"):
        synthesize(KnowledgeGraph.from_triples([], nodes=["lonely"]))
    with pytest.raises(InputError):
        SynthesisConfig(questions=0)
