"""The learned retriever on a small synthetic movie graph, in memory: training, beam, selection, checkpoints."""

import dataclasses
from collections import deque

import numpy as np
import pytest

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.retrieval.kg import KnowledgeGraph
from gretriever_neo4j.retrieval.learned import (
    BeamResult,
    LearnedRetriever,
    RetrieverConfig,
    TrainingQuestion,
    answer_coverage,
    answer_hit,
    load_checkpoint,
    save_checkpoint,
    structure_features,
    subgraph_size,
    train_retriever,
)
from gretriever_neo4j.retrieval.textualize import textualize

DIM = 16
MOVIES = 24


def movie_world(seed: int = 3):
    """Movies with a director, a year and a genre; random unit vectors for entities and relations; questions
    whose vectors are their relation's vector (what is asked) plus the topic's (what it is asked about)."""
    rng = np.random.default_rng(seed)
    triples = []
    for i in range(MOVIES):
        triples += [(f"Movie {i}", "directed_by", f"Director {i % 6}"),
                    (f"Movie {i}", "release_year", f"Year {2000 + i % 4}"),
                    (f"Movie {i}", "has_genre", f"Genre {i % 2}")]
    kg = KnowledgeGraph.from_triples(triples)

    def unit(rows):
        rows = np.asarray(rows, dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=-1, keepdims=True)

    kg = kg.with_embeddings(unit(rng.standard_normal((kg.num_nodes, DIM))),
                            unit(rng.standard_normal((len(kg.relation_texts), DIM))))
    ask = {"director": kg.relation_embeddings[kg.relation_texts.index("directed_by")],
           "year": kg.relation_embeddings[kg.relation_texts.index("release_year")],
           "same director": unit(rng.standard_normal(DIM))}

    def question(kind: str, i: int):
        movie = f"Movie {i}"
        if kind == "director":
            answers = [f"Director {i % 6}"]
        elif kind == "year":
            answers = [f"Year {2000 + i % 4}"]
        else:
            answers = [f"Movie {j}" for j in range(MOVIES) if j % 6 == i % 6 and j != i]
        vector = unit(ask[kind] + 0.5 * kg.node_embeddings[kg.key_to_index[movie]]
                      + 0.05 * rng.standard_normal(DIM))
        return TrainingQuestion(f"{kind} of {movie}", [movie], answers), vector

    return kg, question


@pytest.fixture(scope="module")
def trained():
    kg, question = movie_world()
    pairs = [question(kind, i) for i in range(18) for kind in ("director", "year", "same director")]
    config = RetrieverConfig(max_hops=2, hidden=32, epochs=25, batch_size=128, learning_rate=1e-2, beam_nodes=8,
                             max_edges=4, mask_topics=False)  # the synthetic question vectors come with no text
    model, history = train_retriever(kg, [q for q, _ in pairs], None, config,
                                     question_vectors=np.stack([v for _, v in pairs]), threads=1)
    return kg, question, config, model, history


def connected_to_seeds(result) -> bool:
    """Every node of the subgraph is reachable from a seed over the subgraph's edges."""
    keys = result.subgraph.node_keys
    adjacency = {i: set() for i in range(len(keys))}
    for edge in result.subgraph.edges:
        adjacency[edge.src].add(edge.dst)
        adjacency[edge.dst].add(edge.src)
    seen = {keys.index(s) for s in result.seed_keys}
    queue = deque(seen)
    while queue:
        for other in adjacency[queue.popleft()] - seen:
            seen.add(other)
            queue.append(other)
    return len(seen) == len(keys)


def test_training_reports_its_work(trained):
    _, _, _, _, history = trained
    assert history.questions == 54 and history.questions_labelled == 54
    assert history.examples > 54
    assert len(history.epoch_losses) == 25
    assert history.epoch_losses[-1] < 0.5 * history.epoch_losses[0]


@pytest.mark.parametrize("kind, budget", [("director", 1), ("year", 1), ("same director", 4)])
def test_held_out_questions_get_their_answer_within_budget(trained, kind, budget):
    kg, question, config, model, _ = trained
    retriever = LearnedRetriever(model, config, kg)
    for i in range(18, MOVIES):
        q, vector = question(kind, i)
        result = retriever.retrieve(q.text, vector, seeds=q.topic_keys, max_edges=budget)
        assert answer_hit(result, q.answer_keys), (kind, i, result.text)
        assert len(result.subgraph.edges) <= budget
        assert connected_to_seeds(result)


def test_result_is_the_generator_s_input(trained):
    kg, question, config, model, _ = trained
    q, vector = question("director", 20)
    result = LearnedRetriever(model, config, kg).retrieve(q.text, vector, seeds=q.topic_keys)
    assert result.seed_keys == ["Movie 20"]
    assert result.subgraph.node_keys[0] == "Movie 20"
    assert result.text == textualize(result.candidate, result.selection.node_indices,
                                     result.selection.edge_indices).text
    assert result.text.startswith("node_id,node_attr\n0,Movie 20\n")
    assert ("Movie 20", "directed_by", "Director 2") in {
        (result.subgraph.node_keys[e.src], e.text, result.subgraph.node_keys[e.dst]) for e in result.subgraph.edges}
    assert len(result.subgraph.edges) == config.max_edges == 4
    assert set(result.timings_ms) == {"seeds", "embed_masked", "scoring", "selection", "textualize"}
    assert subgraph_size(result)["edges"] == 4
    assert answer_coverage(result, ["Director 2", "Nobody"]) == 0.5


def test_unknown_seeds_give_an_empty_subgraph(trained):
    kg, question, config, model, _ = trained
    result = LearnedRetriever(model, config, kg).retrieve("q", np.ones(DIM, np.float32), seeds=["nowhere"])
    assert result.subgraph.node_keys == [] and result.subgraph.edges == []
    assert result.text == "node_id,node_attr\n\nsrc,edge_attr,dst\n"


def test_an_empty_graph_gives_an_empty_subgraph(trained):
    _, _, config, model, _ = trained
    empty = KnowledgeGraph.from_triples([]).with_embeddings(np.zeros((0, DIM), np.float32),
                                                            np.zeros((0, DIM), np.float32))
    result = LearnedRetriever(model, config, empty).retrieve("who directed Movie 1", np.ones(DIM, np.float32))
    assert result.seed_keys == [] and result.subgraph.edges == []
    assert result.text == "node_id,node_attr\n\nsrc,edge_attr,dst\n"


def test_checkpoint_round_trip_scores_identically(trained, tmp_path):
    kg, question, config, model, _ = trained
    path = save_checkpoint(tmp_path / "retriever.pt", model, config, "test-embedder")
    loaded, loaded_config, embedder_name, prior = load_checkpoint(path)
    assert loaded_config == config and embedder_name == "test-embedder" and prior is None
    q, vector = question("same director", 19)
    before = LearnedRetriever(model, config, kg).retrieve(q.text, vector, seeds=q.topic_keys)
    after = LearnedRetriever.from_checkpoint(path, kg).retrieve(q.text, vector, seeds=q.topic_keys)
    assert after.text == before.text
    np.testing.assert_array_equal(after.selection.edge_prizes, before.selection.edge_prizes)


def test_foreign_files_are_not_checkpoints(tmp_path):
    (tmp_path / "x.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(ConfigError, match="not a retriever checkpoint"):
        load_checkpoint(tmp_path / "x.pt")
    with pytest.raises(ConfigError, match="no retriever checkpoint"):
        load_checkpoint(tmp_path / "missing.pt")


def test_selection_keeps_chains_and_budget():
    # Seed 0; edge 10 admits node 1, edge 11 admits node 2 from 1, edge 12 goes from 2 to 3.
    relevance, answer = np.array([0.1, 0.2, 0.9, 0.5]), np.array([0.0, 0.0, -1.0, 3.0])
    beam = BeamResult(edges=np.array([10, 11, 12, 13]), logits=np.stack([relevance, answer], axis=1),
                      via=np.array([0, 1, 2, 0]), parent={1: (10, 0), 2: (11, 1)})
    select = LearnedRetriever.select
    assert select(beam, relevance, 3) == [10, 11, 12]
    assert select(beam, relevance, 2) == [13, 10]  # 12 and 11 need longer chains
    assert select(beam, relevance, 4) == [10, 11, 12, 13]
    assert select(beam, relevance, 0) == []
    assert select(beam, relevance, 3, chosen=[13]) == [13, 10, 11]  # 12's chain of three no longer fits
    assert select(beam, answer, 1) == [13]


def test_mixed_selection_spends_a_share_of_the_budget_on_each_head(trained):
    kg, _, config, model, _ = trained
    relevance, answer = np.array([0.1, 0.2, 0.9, 0.5]), np.array([0.0, 0.0, -1.0, 3.0])
    beam = BeamResult(edges=np.array([10, 11, 12, 13]), logits=np.stack([relevance, answer], axis=1),
                      via=np.array([0, 1, 2, 0]), parent={1: (10, 0), 2: (11, 1)})
    choose = lambda **change: LearnedRetriever(model, dataclasses.replace(config, **change), kg).choose(beam, 4)
    assert choose(selection="mixed", answer_share=0.25) == [13, 10, 11, 12]
    assert choose(selection="answer") == [13, 10, 11, 12]
    assert choose(selection="relevance") == [10, 11, 12, 13]
    assert LearnedRetriever(model, dataclasses.replace(config, selection="mixed"), kg).choose(beam, 2) == [13, 10]


def test_structure_features():
    config = RetrieverConfig(max_hops=2)
    features = structure_features(np.array([0, 2, -1]), np.array([1, 5, 2]), np.array([0, 10, 1]),
                                  np.array([3, 0, 0]), config)
    assert features.shape == (3, 10)
    assert features[0, :4].tolist() == [1, 0, 0, 0] and features[0, 4:8].tolist() == [0, 1, 0, 0]
    assert features[1, :4].tolist() == [0, 0, 1, 0] and features[1, 4:8].tolist() == [0, 0, 0, 1]
    assert features[2, :4].tolist() == [0, 0, 0, 1]  # unreached -> "farther"
    assert features[1, 8] == pytest.approx(np.log1p(10) / 10)


def test_masking_retrievers_need_an_embed_function(trained):
    kg, _, config, model, _ = trained
    with pytest.raises(ConfigError, match="embed="):
        LearnedRetriever(model, RetrieverConfig(max_hops=2, hidden=32), kg)


def test_config_is_validated():
    with pytest.raises(InputError, match="max_hops"):
        RetrieverConfig(max_hops=0)
    with pytest.raises(InputError, match="labels"):
        RetrieverConfig(labels="gold")
    with pytest.raises(InputError, match="selection"):
        RetrieverConfig(selection="best")
    with pytest.raises(InputError, match="answer_share"):
        RetrieverConfig(answer_share=1.5)
    with pytest.raises(ConfigError, match="unknown retriever settings"):
        RetrieverConfig.from_dict({"max_hops": 2, "colour": "red"})
    assert RetrieverConfig.from_dict({"max_hops": 2}).max_hops == 2


def test_training_needs_a_labelled_question():
    kg, question = movie_world()
    orphan = TrainingQuestion("q", ["Movie 0"], ["not a node"])
    with pytest.raises(InputError, match="no training question"):
        train_retriever(kg, [orphan], None, RetrieverConfig(epochs=1), question_vectors=np.ones((1, DIM), np.float32))
    with pytest.raises(InputError, match="embeddings"):
        train_retriever(KnowledgeGraph.from_triples([("a", "r", "b")]), [orphan], None, RetrieverConfig())
