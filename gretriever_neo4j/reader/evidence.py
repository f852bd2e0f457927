"""Why a node is an answer, in words a person reads: chains of node and relation texts from an entity the question
names to the answer, e.g. "Ewan McGregor ← starred_actors — Trainspotting — directed_by → Danny Boyle".

Pure functions over a subgraph's edge arrays (local node ids, as the textualization numbers them). The chains are
the shortest paths from the anchors to the answer over the edges the reader's best walk used (its evidence),
else over the whole subgraph, so what is shown is what the answer rests on.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Step:
    edge: int  # local edge id
    node: int  # the node this step reaches
    forward: bool  # walked along the edge's direction (src -> dst)


@dataclass(frozen=True)
class EvidencePath:
    start: int  # the anchor it starts from
    steps: tuple[Step, ...]

    @property
    def nodes(self) -> list[int]:
        return [self.start] + [step.node for step in self.steps]

    def text(self, node_texts: Sequence[str], relation_of: Sequence[str]) -> str:
        parts = [node_texts[self.start]]
        for step in self.steps:
            relation = relation_of[step.edge]
            parts.append(f"— {relation} →" if step.forward else f"← {relation} —")
            parts.append(node_texts[step.node])
        return " ".join(parts)

    def to_dict(self, node_texts: Sequence[str], relation_of: Sequence[str], src: np.ndarray,
                dst: np.ndarray) -> dict:
        return {"text": self.text(node_texts, relation_of), "nodes": self.nodes,
                "edges": [[int(src[s.edge]), relation_of[s.edge], int(dst[s.edge])] for s in self.steps]}


def shortest_paths(src: np.ndarray, dst: np.ndarray, anchors: Sequence[int], target: int, *,
                   edges: Sequence[int] | None = None, max_hops: int = 4, max_paths: int = 3) -> list[EvidencePath]:
    """Up to `max_paths` distinct shortest paths (by hops, over `edges` or every edge, either direction) from any
    anchor to `target`; none when the target is an anchor or out of reach within `max_hops`."""
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    allowed = range(len(src)) if edges is None else dict.fromkeys(int(e) for e in edges)
    adjacency: dict[int, list[Step]] = {}
    for edge in allowed:
        a, b = int(src[edge]), int(dst[edge])
        adjacency.setdefault(a, []).append(Step(edge, b, True))
        if a != b:
            adjacency.setdefault(b, []).append(Step(edge, a, False))
    anchors = list(dict.fromkeys(int(a) for a in anchors))
    if target in anchors:
        return []
    # Breadth-first with every shortest-path parent kept, then the paths read back from the target.
    depth = {a: 0 for a in anchors}
    parents: dict[int, list[tuple[int, Step]]] = {}
    frontier = deque(anchors)
    while frontier:
        node = frontier.popleft()
        if depth[node] >= max_hops or (target in depth and depth[node] >= depth[target]):
            continue
        for step in adjacency.get(node, []):
            seen = depth.get(step.node)
            if seen is None:
                depth[step.node] = depth[node] + 1
                parents[step.node] = [(node, step)]
                frontier.append(step.node)
            elif seen == depth[node] + 1:
                parents[step.node].append((node, step))
    if target not in depth:
        return []
    found: list[EvidencePath] = []

    def unwind(node: int, suffix: tuple[Step, ...]) -> None:
        if len(found) >= max_paths:
            return
        if depth[node] == 0:
            found.append(EvidencePath(node, suffix))
            return
        for parent, step in parents.get(node, []):
            unwind(parent, (step,) + suffix)

    unwind(target, ())
    return found


def answer_evidence(src: np.ndarray, dst: np.ndarray, anchors: Sequence[int], answer: int, walk_edges: Sequence[int],
                    *, max_hops: int = 4, max_paths: int = 3) -> list[EvidencePath]:
    """The answer's chains: over the edges of the reader's walks when they connect it to an anchor, else over
    the whole subgraph (a trained reader's best walk may not be kept whole)."""
    paths = shortest_paths(src, dst, anchors, answer, edges=walk_edges, max_hops=max_hops, max_paths=max_paths)
    return paths or shortest_paths(src, dst, anchors, answer, max_hops=max_hops, max_paths=max_paths)
