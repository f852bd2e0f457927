"""End-to-end reference retrieval over in-memory graphs."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.retrieval.candidates import CandidateGraph
from gretriever_neo4j.retrieval.in_memory import STAGES, find_seeds, retrieve, retrieve_from_candidates
from gretriever_neo4j.retrieval.neighbourhood import IncidentEdge, expand, order_incident
from gretriever_neo4j.retrieval.params import RetrievalParams, params_for, params_to_dict, with_overrides
from gretriever_neo4j.retrieval.pcst import DEFAULTS, PcstParams
from gretriever_neo4j.retrieval.seeds import cosine_to_query


def axis(i: int, dim: int = 8) -> list[float]:
    v = [0.0] * dim
    v[i] = 1.0
    return v


@pytest.fixture
def movies() -> CandidateGraph:
    return CandidateGraph.from_records(
        [("inception", "Inception", axis(0)), ("nolan", "Christopher Nolan", axis(1)),
         ("dicaprio", "Leonardo DiCaprio", axis(2)), ("titanic", "Titanic", axis(3)),
         ("cameron", "James Cameron", axis(4)), ("2010", "2010", axis(5))],
        [("inception", "directed_by", "nolan", axis(0)), ("inception", "starred_actors", "dicaprio", axis(6)),
         ("titanic", "starred_actors", "dicaprio", axis(6)), ("titanic", "directed_by", "cameron", axis(0)),
         ("inception", "release_year", "2010", axis(7))],
        node_refs=[f"4:n:{i}" for i in range(6)], edge_refs=[f"5:e:{i}" for i in range(5)])


QUESTION = np.array([1.0, 0.3, 0.1, 0, 0, 0, 0, 0], dtype=np.float32)  # "who directed inception?"


def test_small_end_to_end(movies):
    params = RetrievalParams(seed_k=1, seed_k_edges=1, hops=3, pcst=DEFAULTS["webqsp"])
    result = retrieve(movies, QUESTION, params)
    # Best node, then both ends of the best edge (two directed_by edges tie; the key decides).
    assert result.seed_keys == ["inception", "nolan"]
    assert result.candidate.node_keys == ["inception", "nolan", "dicaprio", "2010", "titanic", "cameron"]
    assert result.selection.node_prizes.tolist() == [3.0, 2.0, 1.0, 0.0, 0.0, 0.0]
    assert result.text == (
        "node_id,node_attr\n"
        "0,Inception\n1,Christopher Nolan\n2,Leonardo DiCaprio\n3,Titanic\n4,James Cameron\n"
        "\n"
        "src,edge_attr,dst\n"
        "0,directed_by,1\n0,starred_actors,2\n3,starred_actors,2\n3,directed_by,4\n")
    assert result.subgraph.node_refs == ["4:n:0", "4:n:1", "4:n:2", "4:n:3", "4:n:4"]
    assert [e.ref for e in result.subgraph.edges] == ["5:e:0", "5:e:1", "5:e:2", "5:e:3"]


def test_result_is_json_serialisable_with_all_stage_timings(movies):
    result = retrieve(movies, QUESTION, RetrievalParams(seed_k=1, seed_k_edges=1))
    as_dict = json.loads(json.dumps(result.to_dict()))
    assert set(as_dict) == {"seed_keys", "candidate", "selection", "subgraph", "timings_ms"}
    assert list(as_dict["timings_ms"]) == list(STAGES)
    assert all(ms >= 0 for ms in as_dict["timings_ms"].values())
    assert as_dict["subgraph"]["text"] == result.text
    assert as_dict["candidate"]["edges"][0] == {"src": 0, "text": "directed_by", "dst": 1, "ref": "5:e:0"}
    assert as_dict["selection"]["edge_indices"] == result.selection.edge_indices.tolist()


def test_bounds_shape_the_candidate_graph(movies):
    result = retrieve(movies, QUESTION, RetrievalParams(seed_k=1, seed_k_edges=0, hops=1, max_nodes=3))
    assert result.seed_keys == ["inception"]
    assert result.candidate.node_keys == ["inception", "nolan", "dicaprio"]
    assert result.candidate.num_edges == 2


def test_whole_graph_mode_skips_seeds_and_expansion(movies):
    result = retrieve(movies, QUESTION, params_for("explagraphs"))
    assert result.seed_keys == [] and result.selection.whole_graph
    assert result.candidate is movies
    assert result.subgraph.node_keys == movies.node_keys
    assert result.text.count("\n") == 1 + 6 + 1 + 1 + 5
    assert result.timings_ms["seeds"] == 0.0 and result.timings_ms["neighbourhood"] == 0.0


def test_whole_graph_mode_with_pcst_as_for_scene_graphs(movies):
    params = params_for("scenegraphs")
    assert params.whole_graph and params.pcst == PcstParams(3, 3, 0.5)
    result = retrieve(movies, QUESTION, params)
    assert not result.selection.whole_graph
    assert result.subgraph.node_keys[:2] == ["inception", "nolan"]


def test_same_result_whatever_the_storage_order(make_kg, shuffle):
    graph = make_kg(seed=21, num_nodes=80, num_edges=400, num_relations=5)
    params = RetrievalParams(seed_k=3, seed_k_edges=3, hops=2, fanout=6, max_nodes=40, max_edges=60,
                             pcst=PcstParams(3, 5, 0.5))
    q = np.random.default_rng(4).standard_normal(graph.dim).astype(np.float32)
    first, second = (retrieve(g, q, params) for g in (graph, shuffle(graph, seed=8)))
    assert first.seed_keys == second.seed_keys and len(first.seed_keys) >= 4
    assert first.candidate.node_keys == second.candidate.node_keys
    assert len(first.candidate.node_keys) == 40
    assert first.text == second.text and first.text.count("\n") > 8


def test_a_backend_ordering_rows_itself_gets_the_same_result(make_kg):
    """The Neo4j path's shape: its own seed search and incident callback, then `retrieve_from_candidates`."""
    graph = make_kg(seed=33)
    params = RetrievalParams(seed_k=2, seed_k_edges=2, fanout=5, max_nodes=30, max_edges=45)
    q = np.random.default_rng(6).standard_normal(graph.dim).astype(np.float32)
    node_sim = dict(zip(graph.node_keys, cosine_to_query(graph.node_embeddings, q).tolist()))
    edge_sim = cosine_to_query(graph.edge_embeddings, q).tolist()
    rows = [(graph.edge_ids[e], graph.node_keys[s], graph.edge_texts[e], graph.node_keys[d], edge_sim[e])
            for e, (s, d) in enumerate(zip(graph.edge_src.tolist(), graph.edge_dst.tolist()))]

    def incident(frontier: list[str], within=None) -> dict[str, list[IncidentEdge]]:
        answer = {}
        for key in frontier:
            touching = [(IncidentEdge(i, s, d, t, d if s == key else s), sim) for i, s, t, d, sim in rows
                        if key in (s, d) and (within is None or (d if s == key else s) in within)]
            answer[key] = order_incident([e for e, _ in touching],
                                         [sim + node_sim[e.neighbour_key] for e, sim in touching], params.fanout)
        return answer

    seeds = find_seeds(graph, q, params)
    node_keys, edge_ids = expand(seeds, params.hops, params.fanout, params.max_nodes, params.max_edges, incident)
    candidate = graph.subgraph([graph.key_to_index[k] for k in node_keys],
                               [graph.edge_id_to_index[e] for e in edge_ids])
    theirs = retrieve_from_candidates(candidate, q, params, seed_keys=seeds)
    ours = retrieve(graph, q, params)
    assert theirs.text == ours.text
    assert theirs.candidate.node_keys == ours.candidate.node_keys
    assert theirs.selection.edge_indices.tolist() == ours.selection.edge_indices.tolist()


@pytest.mark.parametrize("whole_graph", [False, True])
def test_empty_graph(whole_graph):
    result = retrieve(CandidateGraph.empty(dim=8), QUESTION, RetrievalParams(whole_graph=whole_graph))
    assert result.seed_keys == [] and result.candidate.num_nodes == 0
    assert result.text == "node_id,node_attr\n\nsrc,edge_attr,dst\n"
    json.dumps(result.to_dict())


def test_question_of_the_wrong_width_is_rejected(movies):
    with pytest.raises(InputError) as error:
        retrieve(movies, np.ones(5, dtype=np.float32), RetrievalParams())
    assert error.value.field == "question_embedding"


def test_params_validation_and_defaults():
    with pytest.raises(InputError) as error:
        RetrievalParams(hops=-1)
    assert error.value.field == "hops"
    with pytest.raises(ConfigError):
        params_for("nope")
    assert not params_for("webqsp").whole_graph and params_for("metaqa").pcst == DEFAULTS["metaqa"]
    as_dict = json.loads(json.dumps(params_to_dict(params_for("webqsp"))))
    assert as_dict["pcst"] == {"topk": 3, "topk_e": 5, "cost_e": 0.5} and as_dict["fanout"] == 50
    # a stored graph's kind decides the search, whatever its dataset; a user's dataset gets WebQSP's PCST setting
    assert (params_for("my-triples", "per-sample").whole_graph
            and params_for("my-triples", "kg").pcst == DEFAULTS["webqsp"])
    assert with_overrides(params_for("webqsp"), {"hops": 1, "fanout": None}) == replace(params_for("webqsp"), hops=1)
    assert with_overrides(params_for("metaqa"), {"cost_e": 0.1}).pcst == PcstParams(topk=3, topk_e=5, cost_e=0.1)
    with pytest.raises(ConfigError, match="unknown retrieval parameter"):
        with_overrides(params_for("webqsp"), {"hopz": 1})
