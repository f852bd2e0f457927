"""What the reader reads: a retrieved subgraph, the question's anchor nodes, and the relation walks from them.

The unit of an answer is a node of the retrieved subgraph, reached from the entities the question names (its
*anchors*) by a walk whose relation *signature* (the sequence of relation texts and directions it follows)
says how the node relates to them: "who directed the films X starred in" is `<starred_actors directed_by>`
from X. The reader scores signatures against the question, so every answer comes with the walk that justifies
it (its evidence), and nodes reached by the same signature are answered together.

Everything here is a pure function of arrays; nothing talks to a database or a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.retrieval.linking import STOP_WORDS, analyzer_tokens, same_word, strip_topic_markers
from gretriever_neo4j.retrieval.naming import asked_kind

FORWARD, BACKWARD = 0, 1
Step = tuple[int, int]  # (relation id, FORWARD | BACKWARD)


@dataclass(frozen=True, eq=False)
class SubgraphView:
    """The retrieved subgraph with local node ids 0..N-1: the ids of its textualization (what the LLM reads
    and what citations name). Edges carry a relation id into `relation_texts` (edges with one text share it)."""

    node_keys: list[str]
    node_texts: list[str]
    node_vectors: np.ndarray  # (N, d) float32
    src: np.ndarray  # (E,) int64 local node ids
    dst: np.ndarray  # (E,) int64
    relation: np.ndarray  # (E,) int64
    relation_texts: list[str]
    relation_vectors: np.ndarray  # (R, d) float32
    edge_refs: list[str | None] | None = None
    categorical: frozenset[tuple[int, int]] = frozenset()  # (relation id, direction) steps to a category

    @property
    def num_nodes(self) -> int:
        return len(self.node_keys)

    @property
    def num_edges(self) -> int:
        return int(len(self.src))

    @property
    def dim(self) -> int:
        return int(self.node_vectors.shape[1]) if self.node_vectors.ndim == 2 else 0

    @classmethod
    def from_result(cls, result) -> SubgraphView:
        """From a `RetrievalResult` (any retriever): its textualized subgraph, with the candidate's vectors."""
        candidate, sub = result.candidate, result.subgraph
        dim = int(candidate.node_embeddings.shape[1]) if candidate.node_embeddings.ndim == 2 else 0
        node_idx = list(sub.node_indices)
        edge_idx = list(sub.edge_indices)
        texts: dict[str, int] = {}
        vectors: list[np.ndarray] = []
        relation = []
        for e in edge_idx:
            text = candidate.edge_texts[e]
            if text not in texts:
                texts[text] = len(texts)
                vectors.append(np.asarray(candidate.edge_embeddings[e], dtype=np.float32))
            relation.append(texts[text])
        return cls(
            node_keys=list(sub.node_keys),
            node_texts=[candidate.node_texts[i] for i in node_idx],
            node_vectors=(np.asarray(candidate.node_embeddings[node_idx], dtype=np.float32) if node_idx
                          else np.zeros((0, dim), np.float32)),
            src=np.asarray([e.src for e in sub.edges], dtype=np.int64),
            dst=np.asarray([e.dst for e in sub.edges], dtype=np.int64),
            relation=np.asarray(relation, dtype=np.int64),
            relation_texts=list(texts),
            relation_vectors=np.stack(vectors) if vectors else np.zeros((0, dim), np.float32),
            edge_refs=[e.ref for e in sub.edges],
            categorical=frozenset((texts[text], direction) for text, direction in getattr(result, "categorical", ())
                                  if text in texts))


# -- anchors ---------------------------------------------------------------------------------------------

def _contains(haystack: tuple[str, ...], needle: tuple[str, ...]) -> int:
    """Start of the first occurrence of `needle` in `haystack` as a contiguous token run, or -1."""
    n = len(needle)
    for start in range(len(haystack) - n + 1):
        if haystack[start:start + n] == needle:
            return start
    return -1


def named_nodes(question: str, node_texts: Sequence[str]) -> list[int]:
    """Nodes whose whole name occurs in the question (as analyzer tokens, so case and punctuation do not
    matter), dropping a name that lies inside a longer named span ("Hanks" inside "Tom Hanks"). Names made
    only of stop words never count."""
    words = analyzer_tokens(strip_topic_markers(question))
    spans = []
    for i, text in enumerate(node_texts):
        tokens = analyzer_tokens(text)
        if not tokens or all(t in STOP_WORDS for t in tokens):
            continue
        start = _contains(words, tokens)
        if start >= 0:
            spans.append((start, start + len(tokens), i))
    return [i for s, e, i in spans
            if not any(s2 <= s and e <= e2 and (e2 - s2) > (e - s) for s2, e2, _ in spans)]


def find_anchors(question: str, view: SubgraphView, question_vector: np.ndarray | None = None,
                 hints: Sequence[str] = (), also_named: bool = False) -> list[int]:
    """The nodes the question is about, as local ids.

    1. `hints` (node keys a linker already chose, e.g. the learned retriever's seeds) that are in the subgraph;
       with `also_named`, followed by the other nodes named in the question but the noun it asks for
       (`asked_kind`: "what kind of *cancer*"): a linker keeps one entity where the question may name two;
    2. else nodes named in the question (`named_nodes`);
    3. else the node sharing the largest share of its non-stop words with the question ("ben franklin" for
       "Benjamin Franklin"), ties broken by similarity to the question;
    4. else the node most similar to the question.
    An empty subgraph has no anchor."""
    if view.num_nodes == 0:
        return []
    local = {key: i for i, key in enumerate(view.node_keys)}
    hinted = list(dict.fromkeys(local[k] for k in hints if k in local))
    if hinted and also_named:
        words = [w.lower() for w in strip_topic_markers(question).split()]
        kind = asked_kind(words)
        asked = analyzer_tokens(words[kind]) if kind is not None else None
        named = [n for n in named_nodes(question, view.node_texts)
                 if n not in hinted and analyzer_tokens(view.node_texts[n]) != asked]
        return prefer_verbatim(question, view.node_texts, hinted + named)
    if hinted:
        return prefer_verbatim(question, view.node_texts, hinted)
    named = named_nodes(question, view.node_texts)
    if named:
        return prefer_verbatim(question, view.node_texts, named)
    similarity = _similarity(view.node_vectors, question_vector)
    words = [w for w in analyzer_tokens(strip_topic_markers(question)) if w not in STOP_WORDS]
    overlap = np.zeros(view.num_nodes)
    for i, text in enumerate(view.node_texts):
        content = [t for t in analyzer_tokens(text) if t not in STOP_WORDS]
        if content:
            overlap[i] = sum(any(same_word(t, w) for w in words) for t in content) / len(content)
    if overlap.max() > 0:
        best = np.flatnonzero(overlap == overlap.max())
        return [int(best[np.argmax(similarity[best])])]
    return [int(np.argmax(similarity))]


def prefer_verbatim(question: str, node_texts: Sequence[str], anchors: list[int]) -> list[int]:
    """Among anchors whose names read the same to the analyzer ("Moulin Rouge!" and "Moulin Rouge", "Hotel" and
    "hotel"), keep those written in the question exactly as named, when some are."""
    text = strip_topic_markers(question)
    groups: dict[tuple[str, ...], list[int]] = {}
    for anchor in anchors:
        groups.setdefault(analyzer_tokens(node_texts[anchor]), []).append(anchor)
    kept = []
    for group in groups.values():
        exact = [a for a in group if len(group) > 1 and node_texts[a].strip() and node_texts[a].strip() in text]
        longest = max((len(node_texts[a].strip()) for a in exact), default=0)
        kept.extend([a for a in exact if len(node_texts[a].strip()) == longest] or group)  # "Moulin Rouge!" too
        # contains "Moulin Rouge": the longer verbatim name is the one written
    return [a for a in anchors if a in kept]


def _similarity(vectors: np.ndarray, query: np.ndarray | None) -> np.ndarray:
    if query is None or vectors.size == 0:
        return np.zeros(len(vectors))
    query = np.asarray(query, dtype=np.float32).reshape(-1)
    norms = np.linalg.norm(vectors, axis=1) * max(float(np.linalg.norm(query)), 1e-12)
    return (vectors @ query) / np.maximum(norms, 1e-12)


# -- walks -----------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Walks:
    """Every (node, signature) pair reachable from the anchors in 1..max_hops steps.

    `signatures[s]` is a tuple of steps; pair i says that node `pair_node[i]` is reached from an anchor by a walk
    with signature `pair_sig[i]`. `links[level]` holds, for the pairs of that level (1-based), the arrays
    (pair index, previous pair index, edge) of every step that leads to them, for evidence."""

    anchors: np.ndarray
    signatures: list[tuple[Step, ...]]
    pair_node: np.ndarray
    pair_sig: np.ndarray
    links: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
    level_start: np.ndarray  # pairs of level l are pair indices level_start[l-1]:level_start[l]

    @property
    def num_pairs(self) -> int:
        return len(self.pair_node)

    def signature_lengths(self) -> np.ndarray:
        return np.asarray([len(s) for s in self.signatures], dtype=np.int64)


def _incidence(view: SubgraphView) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """CSR over nodes: (offsets, edge, neighbour, direction); a self-loop is listed once, forward."""
    n, e = view.num_nodes, view.num_edges
    edges = np.arange(e, dtype=np.int64)
    loop = view.src == view.dst
    owner = np.concatenate([view.src, view.dst[~loop]])
    edge = np.concatenate([edges, edges[~loop]])
    neighbour = np.concatenate([view.dst, view.src[~loop]])
    direction = np.concatenate([np.full(e, FORWARD), np.full(int((~loop).sum()), BACKWARD)]).astype(np.int64)
    order = np.lexsort((edge, owner))
    counts = np.bincount(owner, minlength=n) if len(owner) else np.zeros(n, np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return offsets, edge[order], neighbour[order], direction[order]


def walks(view: SubgraphView, anchors: Sequence[int], max_hops: int = 3, max_pairs: int = 200_000) -> Walks:
    """Breadth-first over (node, signature) pairs; pairs are distinct per level, so hubs cost their degree,
    not the number of walks through them. A walk never returns to an anchor ("films that share a director with
    X" are other films than X, and their years other than X's), but may return to other nodes it has passed."""
    if max_hops < 1:
        raise InputError(f"must be >= 1, got {max_hops}", field="max_hops")
    anchors_array = np.asarray(list(dict.fromkeys(int(a) for a in anchors)), dtype=np.int64)
    if anchors_array.size and (anchors_array.min() < 0 or anchors_array.max() >= view.num_nodes):
        raise InputError("an anchor is not a node of the subgraph", field="anchors")
    offsets, inc_edge, inc_neighbour, inc_direction = _incidence(view)
    signatures: list[tuple[Step, ...]] = [()]
    signature_id: dict[tuple[Step, ...], int] = {(): 0}
    level_node, level_sig = anchors_array, np.zeros(len(anchors_array), dtype=np.int64)
    level_index = np.full(len(anchors_array), -1, dtype=np.int64)  # anchors are no pairs
    nodes_out, sigs_out, links, starts = [], [], [], [0]
    total = 0
    for _ in range(max_hops):
        if level_node.size == 0:
            break
        counts = offsets[level_node + 1] - offsets[level_node]
        if counts.sum() == 0:
            break
        parent = np.repeat(np.arange(len(level_node)), counts)
        first = np.cumsum(counts) - counts
        slot = offsets[level_node][parent] + np.arange(int(counts.sum())) - first[parent]
        edge, neighbour = inc_edge[slot], inc_neighbour[slot]
        away = ~np.isin(neighbour, anchors_array)  # a walk that comes back to what the question names is no path
        parent, slot, edge, neighbour = parent[away], slot[away], edge[away], neighbour[away]
        if edge.size == 0:
            break
        step = view.relation[edge] * 2 + inc_direction[slot]
        # new signature ids for the distinct (parent signature, step) combinations
        combined = np.stack([level_sig[parent], step], axis=1)
        distinct, inverse = np.unique(combined, axis=0, return_inverse=True)
        ids = np.empty(len(distinct), dtype=np.int64)
        for i, (previous, code) in enumerate(distinct.tolist()):
            extended = signatures[previous] + ((code // 2, code % 2),)
            if extended not in signature_id:
                signature_id[extended] = len(signatures)
                signatures.append(extended)
            ids[i] = signature_id[extended]
        new_sig = ids[inverse.reshape(-1)]
        pairs, pair_of_step = np.unique(np.stack([neighbour, new_sig], axis=1), axis=0, return_inverse=True)
        pair_of_step = pair_of_step.reshape(-1)
        if total + len(pairs) > max_pairs:
            break
        nodes_out.append(pairs[:, 0])
        sigs_out.append(pairs[:, 1])
        links.append((total + pair_of_step, level_index[parent], edge))
        level_node, level_sig = pairs[:, 0], pairs[:, 1]
        level_index = total + np.arange(len(pairs), dtype=np.int64)
        total += len(pairs)
        starts.append(total)
    empty = np.zeros(0, np.int64)
    return Walks(anchors=anchors_array, signatures=signatures,
                 pair_node=np.concatenate(nodes_out) if nodes_out else empty,
                 pair_sig=np.concatenate(sigs_out) if sigs_out else empty,
                 links=links, level_start=np.asarray(starts, dtype=np.int64))


def step_back(walks: Walks, level: int, frontier: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the pairs one level nearer the anchors that lead to the pairs `frontier` of 1-based `level`, the edges
    taken): one step of following walks back (none before level 1: anchors)."""
    to_pair, from_pair, edge = walks.links[level - 1]
    hit = np.isin(to_pair, frontier)
    previous = np.unique(from_pair[hit])
    return previous[previous >= 0], edge[hit]


def evidence_edges(walks: Walks, pairs: Sequence[int], max_edges: int = 64) -> list[int]:
    """The edges of the walks that lead to the given pairs (back to the anchors), nearest the answer last,
    at most `max_edges` (the walks of earlier pairs first)."""
    chosen: dict[int, None] = {}
    for pair in pairs:
        frontier = np.asarray([int(pair)], dtype=np.int64)
        level = int(np.searchsorted(walks.level_start, int(pair), side="right"))  # 1-based level of the pair
        collected: list[int] = []
        while level >= 1 and frontier.size:
            frontier, edges = step_back(walks, level, frontier)
            collected.extend(edges.tolist())
            level -= 1
        for edge in reversed(collected):
            if len(chosen) >= max_edges:
                return list(chosen)
            chosen.setdefault(int(edge), None)
    return list(chosen)


def signature_text(view: SubgraphView, signature: Sequence[Step]) -> str:
    """E.g. `starred_actors> <directed_by`: `>` along the edge's direction, `<` against it."""
    return " ".join(f"{view.relation_texts[r]}>" if d == FORWARD else f"<{view.relation_texts[r]}"
                    for r, d in signature)
