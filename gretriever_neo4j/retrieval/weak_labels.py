"""Weak supervision for the learned retriever: which triples lead from a question's topic entities to its answers.

`shortest_path_edges` is the textbook label (as SubgraphRAG's): every triple on a shortest undirected path of at
most `max_hops` from a source to an answer. On a knowledge graph with hubs that label is noisy: in MetaQA, "which
years were the films starring the actors of [X] released" has every year at distance 3 through the genre hub
"Drama" as well as through the actors, so most shortest-path triples are irrelevant to the question.

`pattern_edges` refines it without knowing any relation name. Each shortest path has a relation pattern (the
sequence of relation texts and directions it follows). Following a pattern from the sources over the whole graph
reaches a set of nodes; a pattern that reaches the answers and little else (high F1 against the answer set) is the
question's reasoning path, a hub pattern that reaches everything is not. The label is the triples on walks that
follow the best-matching patterns and end at an answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.retrieval.kg import KnowledgeGraph

FORWARD, BACKWARD = 0, 1
Step = tuple[int, int]  # (relation id, FORWARD | BACKWARD): one traversed triple, as a walk sees it


@dataclass(frozen=True, eq=False)
class WeakLabels:
    edges: np.ndarray  # sorted, distinct edge indices of the KG
    answers_reached: int  # answers (other than the sources) the labelled triples lead to
    patterns: list[tuple[Step, ...]] = field(default_factory=list)  # chosen patterns (pattern_edges only)
    pattern_f1: float = 0.0
    distances: np.ndarray | None = None  # hop distance of every node from the sources (-1: beyond max_hops)


def _node_array(kg: KnowledgeGraph, nodes: Iterable[int] | np.ndarray, name: str) -> np.ndarray:
    array = np.unique(np.asarray(list(nodes) if not isinstance(nodes, np.ndarray) else nodes, dtype=np.int64))
    if array.size and (array.min() < 0 or array.max() >= kg.num_nodes):
        raise InputError(f"a node index is out of range for {kg.num_nodes} nodes", field=name)
    return array


def _check_hops(max_hops: int) -> None:
    if not isinstance(max_hops, int) or max_hops < 0:
        raise InputError(f"must be an integer >= 0, got {max_hops!r}", field="max_hops")


def shortest_path_dag(kg: KnowledgeGraph, sources, answers, max_hops: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """(distances, per level d = 1..L the edges from level d-1 to level d that lie on a shortest path from a
    source to an answer). Answers that are sources, or farther than `max_hops`, contribute nothing."""
    _check_hops(max_hops)
    sources = _node_array(kg, sources, "sources")
    answers = _node_array(kg, answers, "answers")
    dist = kg.distances(sources, max_hops)
    targets = answers[dist[answers] > 0]
    if targets.size == 0:
        return dist, []
    deepest = int(dist[targets].max())
    levels: list[np.ndarray] = [np.zeros(0, np.int64)] * deepest
    on_path = np.zeros(0, dtype=np.int64)
    for level in range(deepest, 0, -1):
        nodes = np.union1d(on_path, targets[dist[targets] == level])
        incident = kg.incident(nodes)
        closer = dist[incident.neighbour] == level - 1
        levels[level - 1] = np.unique(incident.edge[closer])
        on_path = np.unique(incident.neighbour[closer])
    return dist, levels


def shortest_path_edges(kg: KnowledgeGraph, sources, answers, max_hops: int) -> WeakLabels:
    """Every triple on a shortest undirected path (at most `max_hops` long) from a source to an answer."""
    dist, levels = shortest_path_dag(kg, sources, answers, max_hops)
    answers = _node_array(kg, answers, "answers")
    edges = np.unique(np.concatenate(levels)) if levels else np.zeros(0, np.int64)
    reached = int(np.count_nonzero(dist[answers] > 0)) if levels else 0
    return WeakLabels(edges=edges, answers_reached=reached, distances=dist)


# -- patterns ---------------------------------------------------------------------------------------

def _steps(kg: KnowledgeGraph, edges: np.ndarray, from_nodes: np.ndarray) -> np.ndarray:
    """Step code (relation * 2 + direction) of traversing each edge away from `from_nodes`."""
    backward = kg.head[edges] != from_nodes
    return kg.relation[edges] * 2 + backward.astype(np.int64)


def path_patterns(kg: KnowledgeGraph, sources, answers, max_hops: int) -> list[tuple[Step, ...]]:
    """The distinct relation patterns of the shortest paths from the sources to the answers, shortest first."""
    return _path_patterns(kg, sources, answers, max_hops)[1]


def _path_patterns(kg: KnowledgeGraph, sources, answers, max_hops: int) -> tuple[np.ndarray, list[tuple[Step, ...]]]:
    dist, levels = shortest_path_dag(kg, sources, answers, max_hops)
    if not levels:
        return dist, []
    answer_set = _node_array(kg, answers, "answers")
    # (node, pattern id) pairs reachable along the DAG; pattern ids index `patterns`.
    patterns: list[tuple[int, ...]] = [()]
    pair_node = _node_array(kg, sources, "sources")
    pair_pattern = np.zeros(len(pair_node), dtype=np.int64)
    found: dict[tuple[int, ...], None] = {}
    for level, edges in enumerate(levels, start=1):
        if edges.size == 0:
            break
        # Orient each DAG edge from its level-1 end to its level end.
        head_closer = dist[kg.head[edges]] == level - 1
        start = np.where(head_closer, kg.head[edges], kg.tail[edges])
        end = np.where(head_closer, kg.tail[edges], kg.head[edges])
        step = kg.relation[edges] * 2 + (~head_closer).astype(np.int64)
        order = np.argsort(pair_node, kind="stable")
        sorted_nodes = pair_node[order]
        lo = np.searchsorted(sorted_nodes, start, side="left")
        hi = np.searchsorted(sorted_nodes, start, side="right")
        counts = hi - lo
        edge_of = np.repeat(np.arange(len(edges)), counts)
        first = np.cumsum(counts) - counts
        pair_positions = order[np.arange(int(counts.sum())) - np.repeat(first, counts) + np.repeat(lo, counts)]
        combined = np.stack([pair_pattern[pair_positions], step[edge_of]], axis=1)
        distinct, inverse = np.unique(combined, axis=0, return_inverse=True)
        new_ids = np.empty(len(distinct), dtype=np.int64)
        for i, (parent, code) in enumerate(distinct.tolist()):
            new_ids[i] = len(patterns)
            patterns.append(patterns[parent] + (code,))
        pairs = np.unique(np.stack([end[edge_of], new_ids[inverse.reshape(-1)]], axis=1), axis=0)
        pair_node, pair_pattern = pairs[:, 0], pairs[:, 1]
        at_answer = np.isin(pair_node, answer_set)
        for pattern_id in np.unique(pair_pattern[at_answer]).tolist():
            found[patterns[pattern_id]] = None
    return dist, [tuple((code // 2, code % 2) for code in codes) for codes in found]


def follow(kg: KnowledgeGraph, sources, pattern: Sequence[Step]) -> tuple[list[np.ndarray], list[tuple]]:
    """Walk `pattern` from the sources over the whole graph: (node sets per level, per step the arrays
    (from node, edge, to node) of the traversals taken)."""
    level_nodes = [_node_array(kg, sources, "sources")]
    traversals = []
    for relation, direction in pattern:
        incident = kg.incident(level_nodes[-1])
        owners = level_nodes[-1][incident.owner]
        matches = (kg.relation[incident.edge] == relation) & (_steps(kg, incident.edge, owners) % 2 == direction)
        traversals.append((owners[matches], incident.edge[matches], incident.neighbour[matches]))
        level_nodes.append(np.unique(incident.neighbour[matches]))
    return level_nodes, traversals


def _f1(reached: np.ndarray, answers: np.ndarray) -> float:
    hits = np.intersect1d(reached, answers).size
    return 0.0 if hits == 0 else 2.0 * hits / (reached.size + answers.size)


def pattern_edges(kg: KnowledgeGraph, sources, answers, max_hops: int, *, keep_ratio: float = 0.8,
                  max_patterns: int = 32) -> WeakLabels:
    """Triples on walks that follow the best relation patterns (F1 of their reach against the answers, among
    the patterns of shortest paths) from a source to an answer. Patterns scoring at least `keep_ratio` times
    the best are all kept. Falls back to nothing when no answer is within `max_hops`."""
    if not 0.0 < keep_ratio <= 1.0:
        raise InputError(f"must lie in (0, 1], got {keep_ratio}", field="keep_ratio")
    sources = _node_array(kg, sources, "sources")
    answers = _node_array(kg, answers, "answers")
    dist, candidates = _path_patterns(kg, sources, answers, max_hops)
    candidates = candidates[:max_patterns]
    if not candidates:
        return WeakLabels(edges=np.zeros(0, np.int64), answers_reached=0, distances=dist)
    walked = [follow(kg, sources, pattern) for pattern in candidates]
    scores = [_f1(np.setdiff1d(levels[-1], sources), answers) for levels, _ in walked]
    best = max(scores)
    chosen = [i for i, score in enumerate(scores) if score >= keep_ratio * best]
    labelled: list[np.ndarray] = []
    reached: set[int] = set()
    for i in chosen:
        _, traversals = walked[i]
        keep = np.setdiff1d(answers, sources)
        reached.update(np.intersect1d(walked[i][0][-1], keep).tolist())
        for start, edge, end in reversed(traversals):
            used = np.isin(end, keep)
            labelled.append(edge[used])
            keep = np.unique(start[used])
    edges = np.unique(np.concatenate(labelled)) if labelled else np.zeros(0, np.int64)
    return WeakLabels(edges=edges, answers_reached=len(reached), patterns=[candidates[i] for i in chosen],
                      pattern_f1=float(best), distances=dist)


def describe_pattern(kg: KnowledgeGraph, pattern: Sequence[Step]) -> str:
    """E.g. `starred_actors> <starred_actors release_year>`: `>` forward, `<` against the edge's direction."""
    return " ".join(f"{kg.relation_texts[r]}>" if d == FORWARD else f"<{kg.relation_texts[r]}" for r, d in pattern)
