"""Evidence chains: shortest paths from the named entities to an answer, directions kept, in words."""

import numpy as np

from gretriever_neo4j.reader.evidence import answer_evidence, shortest_paths

# 0 Ewan McGregor, 1 Trainspotting, 2 Danny Boyle, 3 Shallow Grave, 4 Big Fish, 5 Tim Burton, 6 1996
TEXTS = ["Ewan McGregor", "Trainspotting", "Danny Boyle", "Shallow Grave", "Big Fish", "Tim Burton", "1996"]
EDGES = [(1, "starred_actors", 0), (1, "directed_by", 2), (3, "starred_actors", 0), (3, "directed_by", 2),
         (4, "starred_actors", 0), (4, "directed_by", 5), (1, "release_year", 6)]
SRC = np.array([e[0] for e in EDGES])
DST = np.array([e[2] for e in EDGES])
RELATION = [e[1] for e in EDGES]


def test_two_hop_chain_reads_from_the_named_entity_to_the_answer():
    paths = shortest_paths(SRC, DST, [0], 5)
    assert [p.text(TEXTS, RELATION) for p in paths] == [
        "Ewan McGregor ← starred_actors — Big Fish — directed_by → Tim Burton"]
    assert paths[0].nodes == [0, 4, 5]


def test_every_shortest_path_is_kept_up_to_the_limit():
    texts = {p.text(TEXTS, RELATION) for p in shortest_paths(SRC, DST, [0], 2)}
    assert texts == {"Ewan McGregor ← starred_actors — Trainspotting — directed_by → Danny Boyle",
                     "Ewan McGregor ← starred_actors — Shallow Grave — directed_by → Danny Boyle"}
    assert len(shortest_paths(SRC, DST, [0], 2, max_paths=1)) == 1


def test_no_path_for_an_anchor_or_beyond_reach():
    assert shortest_paths(SRC, DST, [0], 0) == []
    assert shortest_paths(SRC, DST, [0], 6, max_hops=1) == []
    assert shortest_paths(SRC, DST, [0], 6, max_hops=2)[0].nodes == [0, 1, 6]


def test_walk_edges_first_then_the_whole_subgraph():
    via_walk = answer_evidence(SRC, DST, [0], 2, walk_edges=[2, 3])  # the reader walked through Shallow Grave
    assert [p.nodes for p in via_walk] == [[0, 3, 2]]
    fallback = answer_evidence(SRC, DST, [0], 5, walk_edges=[0, 1])  # the walk does not reach Tim Burton
    assert [p.nodes for p in fallback] == [[0, 4, 5]]
    data = fallback[0].to_dict(TEXTS, RELATION, SRC, DST)
    assert data["edges"] == [[4, "starred_actors", 0], [4, "directed_by", 5]]
