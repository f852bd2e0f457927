"""Zero-shot retrieval that follows relations: a beam over relation paths from the question's linked entities.

With nothing trained, the paper's static retrieval (vector seeds, then PCST) loses the answer of most
knowledge-graph questions: the answer is rarely similar to the question, the relation that leads to it is. Here
the question's entities are linked (`linking.link_seeds`), and relation *paths* (sequences of relation texts and
directions, as `reader.paths` calls signatures) are grown from them step by step. A path scores

    score(path) = sum over its steps of (similarity(question, relation text) - baseline)

so a step along a relation the question talks about adds to the score and a step along an unrelated one takes
away: "languages of the films directed by X" prefers `<directed_by in_language>` to `<directed_by` alone, and
to three-step detours. The baseline is per question, the mean similarity of the relations met at the first step
plus `baseline_margin` (graphs differ in how close their relation names embed to questions).

Nodes whose text is an opaque id (Freebase's compound "CVT" nodes such as `m.08__j0t`) are ways through, never
answers: a path that ends on one is always extended (its step does not count as a hop) and is never a final
path. Only the `beam_width` best paths are extended at each step; a path's frontier is capped at
`max_frontier` nodes so that hubs are passed through boundedly. The subgraph is the union of the realisations
(every edge that walks the path from a seed) of the best final paths, best first, within `max_edges`.

`beam_paths` is a pure function over arrays reached through a `GraphSource` (`retrieval.learned`: an in-memory
`KnowledgeGraph` or the Neo4j-backed `StoreGraphSource`, which fetches only the incident edges it expands). The
two number nodes and relations differently (global ids, order of discovery), so wherever a cap or a tie decides,
the beam orders by node key and relation text (`node_rank`, `relation_rank`), never by id: a graph held in memory
by `gqa serve` and the same graph read through Neo4j by `gqa ask` give the same subgraph.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from gretriever_neo4j.language import WORDS
from gretriever_neo4j.retrieval.kg import Incident
from gretriever_neo4j.retrieval.relation_vectors import RelationTexts
from gretriever_neo4j.retrieval.texts import is_opaque
from gretriever_neo4j.settings import require_positive_integers

FORWARD, BACKWARD = 0, 1
Step = tuple[int, int]  # (relation id of the source, FORWARD | BACKWARD)

CATEGORY_WORDS = WORDS.category_nouns
SHARING_WORDS = WORDS.sharing  # what a question about what X shares with others says
MATE = re.compile(r"^([a-z]{4,})mates?$")  # "bandmates", "teammate", "classmates": X's band, team, class, shared
CO_NOUN = re.compile(r"^co([a-z]{4,})$")  # "coauthors", "costars", "cofounders": they share X's paper, film, firm


def asks_for_a_category(masked_question: str) -> bool:
    """"what kind of film is X", "what types are the films directed by X": the answer is a category."""
    return bool(CATEGORY_WORDS & set(re.findall(r"[a-z]+", masked_question.lower())))


def categorical_steps(values: Mapping[str, tuple[int, int, int]], share: float
                      ) -> frozenset[tuple[str, int]]:
    """Steps (relation text, direction) whose values are few and shared by many (genres, years, ratings: under
    `share` distinct values per edge); `values`: relation text -> (edges, distinct heads, distinct tails)."""
    out = set()
    for text, (edges, heads, tails) in values.items():
        if edges and tails / edges < share:
            out.add((text, FORWARD))
        if edges and heads / edges < share:
            out.add((text, BACKWARD))
    return frozenset(out)


def kg_relation_values(kg) -> dict[str, tuple[int, int, int]]:
    """(edges, distinct heads, distinct tails) per relation text of an in-memory `KnowledgeGraph`."""
    out = {}
    order = np.argsort(kg.relation, kind="stable")
    bounds = np.searchsorted(kg.relation[order], np.arange(len(kg.relation_texts) + 1))
    for r, text in enumerate(kg.relation_texts):
        edges = order[bounds[r]:bounds[r + 1]]
        out[text] = (int(len(edges)), int(len(np.unique(kg.head[edges]))), int(len(np.unique(kg.tail[edges]))))
    return out


def asks_what_is_shared(question: str) -> bool:
    """Whether the question says something is shared ("same", "share", "also", "together", "colleagues",
    "bandmates", ...): then a path out and back along one relation (the other films of X's actors) is what it asks
    for."""
    from lemminflect import getAllLemmas

    from gretriever_neo4j.retrieval.linking import analyzer_tokens

    tokens = set(analyzer_tokens(question))
    if SHARING_WORDS & tokens:
        return True
    mates = (MATE.match(t) for t in tokens)  # not "estimate", "animate": what comes before "mate" is a noun
    if any(m is not None and "NOUN" in getAllLemmas(m.group(1)) for m in mates):
        return True
    # "co" and a noun, where the dictionary does not know the word as another noun ("coaches": coach, not co-ache)
    for m in filter(None, (CO_NOUN.match(t) for t in tokens)):
        parts = getAllLemmas(m.group(1)).get("NOUN", ())
        own = getAllLemmas(m.string).get("NOUN", ())
        if parts and (not own or any("co" + part in own for part in parts)):
            return True
    return False


@dataclass(frozen=True)
class PathConfig:
    max_hops: int = 3  # named hops (steps that end on an opaque node do not count)
    max_steps: int = 5  # steps of any kind
    beam_width: int = 8  # paths extended at each step
    max_frontier: int = 100  # nodes of one path extended at each step (hubs: the first ones)
    max_final_paths: int = 12  # best final paths whose realisations make the subgraph
    max_edges: int = 300
    max_edges_per_path: int = 120
    baseline_margin: float = 0.05
    repeat_penalty: float = 0.05  # a relation met again on the same path adds nothing and costs this
    hop_penalty: float = 0.15  # a named hop beyond the first must earn this much to outrank a shorter path
    max_incident: int = 50_000  # incident entries scored per step
    round_trip_gain: float = 0.1  # a step back along the relation just taken, in a question about what is shared
    categorical_share: float = 0.01  # a relation is categorical when its distinct values are under this per edge

    def __post_init__(self) -> None:
        require_positive_integers(self, ("max_hops", "max_steps", "beam_width", "max_frontier", "max_final_paths",
                                         "max_edges", "max_edges_per_path", "max_incident"))


@dataclass(frozen=True, eq=False)
class PathLevel:
    """The (node, path) pairs reached at one step and how: pair i is node `node[i]` reached by path `path[i]`;
    step entries (to_pair, from_pair, edge) link them to the previous level's pairs (-1: a seed)."""

    node: np.ndarray
    path: np.ndarray
    to_pair: np.ndarray
    from_pair: np.ndarray
    edge: np.ndarray

    @cached_property
    def first_entry(self) -> np.ndarray:
        """pair -> the first step entry that reaches it (the walk `realisation` takes back from it)."""
        first = np.full(len(self.node), -1, dtype=np.int64)
        reached, entry = np.unique(self.to_pair, return_index=True)  # the index of each pair's first occurrence
        first[reached] = entry
        return first


@dataclass(eq=False)
class PathBeam:
    paths: list[tuple[Step, ...]]  # path id -> steps
    scores: np.ndarray  # path id -> score
    final: list[int]  # final path ids, best first (they end on named nodes): by score - hop penalty
    hops: list[int]  # path id -> named hops
    levels: list[PathLevel]  # per step
    level_of: dict[int, int]  # path id -> its level (len(path) - 1)
    edges: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # chosen edges, best path first
    chosen: list[int] = field(default_factory=list)  # the final paths whose edges were taken


def step_score(similarity: np.ndarray, baseline: float) -> np.ndarray:
    return np.asarray(similarity, dtype=np.float64) - baseline


def _by_id(ids: np.ndarray) -> np.ndarray:
    return np.asarray(ids, dtype=np.int64)


def _reordered(order: np.ndarray, inverse: np.ndarray) -> np.ndarray:
    """`inverse` (old row -> row of a table) after the table's rows are put in `order`."""
    moved = np.empty(len(order), dtype=np.int64)
    moved[order] = np.arange(len(order))
    return moved[inverse]


def beam_paths(seeds: np.ndarray, incident: Callable, triples: Callable, opaque: Callable[[np.ndarray], np.ndarray],
               relation_similarity: Callable[[np.ndarray], np.ndarray], config: PathConfig = PathConfig(),
               baseline: float | None = None, round_trip_gain: float | None = None, *,
               node_rank: Callable[[np.ndarray], np.ndarray] = _by_id,
               relation_rank: Callable[[np.ndarray], np.ndarray] = _by_id) -> PathBeam:
    """The beam (see the module docstring). `incident(nodes) -> Incident` and `triples(edges) -> (head, relation,
    tail)` come from a GraphSource; `opaque(nodes) -> bool array`; `relation_similarity(relation ids) -> array`
    is the question's similarity to each relation's text. `baseline` None: the first step's mean + margin.
    `round_trip_gain`: what a step back along the relation just taken earns (the question asks what is shared:
    "films that share actors with X"); None: it is a repeat like any other. `node_rank(ids)` /
    `relation_rank(ids)` order the ids given as their keys / texts order (`candidates.string_ranks`); where caps
    and ties decide, only these orders count, so two sources that number one graph differently walk it alike (the
    default: by id)."""
    seeds = np.asarray(list(dict.fromkeys(np.asarray(seeds, dtype=np.int64).tolist())), dtype=np.int64)
    seeds = seeds[np.argsort(node_rank(seeds), kind="stable")]
    paths: list[tuple[Step, ...]] = [()]
    path_id: dict[tuple[Step, ...], int] = {(): 0}
    scores = [0.0]
    hops = [0]
    level_of: dict[int, int] = {}
    levels: list[PathLevel] = []
    final: set[int] = set()
    frontier_node, frontier_path = seeds, np.zeros(len(seeds), dtype=np.int64)
    frontier_pair = np.full(len(seeds), -1, dtype=np.int64)
    seed_set = seeds
    for step in range(config.max_steps):
        if frontier_node.size == 0:
            break
        nodes, node_pos = np.unique(frontier_node, return_inverse=True)
        inc = incident(nodes)
        if len(inc.edge) == 0:
            break
        # each node's entries by relation text, direction, neighbour key: what `max_incident` cuts and which
        # walk `realisation` takes first do not depend on how the source numbers edges. The entries' relations
        # and neighbour ranks are read once here; a rank orders the keys of this step's entries, all that the
        # pairs below compare.
        entry_relation = np.asarray(triples(inc.edge)[1], dtype=np.int64)
        entry_rank = np.asarray(node_rank(inc.neighbour), dtype=np.int64)
        entry_order = np.lexsort((entry_rank, ~np.asarray(inc.outgoing, dtype=bool), relation_rank(entry_relation),
                                  inc.owner))
        inc = Incident(owner=inc.owner[entry_order], edge=inc.edge[entry_order],
                       neighbour=inc.neighbour[entry_order], outgoing=inc.outgoing[entry_order])
        entry_relation, entry_rank = entry_relation[entry_order], entry_rank[entry_order]
        # entries: each frontier pair x each incident entry of its node
        counts = np.bincount(inc.owner, minlength=len(nodes))
        offsets = np.concatenate([[0], np.cumsum(counts)])
        per_pair = counts[node_pos]
        total = int(per_pair.sum())
        if total == 0:
            break
        pair_of = np.repeat(np.arange(len(frontier_node)), per_pair)
        first = np.cumsum(per_pair) - per_pair
        slot = offsets[node_pos][pair_of] + np.arange(total) - first[pair_of]
        if total > config.max_incident:  # best paths' pairs come first in the frontier
            pair_of, slot = pair_of[:config.max_incident], slot[:config.max_incident]
        away = ~np.isin(inc.neighbour[slot], seed_set)  # a path back to what the question names is no path
        pair_of, slot = pair_of[away], slot[away]
        if slot.size == 0:
            break
        edge, neighbour, relation, neighbour_rank = (inc.edge[slot], inc.neighbour[slot], entry_relation[slot],
                                                     entry_rank[slot])
        direction = np.where(inc.outgoing[slot], FORWARD, BACKWARD).astype(np.int64)
        parent_path = frontier_path[pair_of]
        combined = np.stack([parent_path, relation * 2 + direction], axis=1)
        distinct, inverse = np.unique(combined, axis=0, return_inverse=True)
        # new paths numbered by parent, relation text, direction (a path's id breaks ties between equal scores)
        path_order = np.lexsort((distinct[:, 1] % 2, relation_rank(distinct[:, 1] // 2), distinct[:, 0]))
        distinct, inverse = distinct[path_order], _reordered(path_order, inverse.reshape(-1))
        similarity = np.asarray(relation_similarity(distinct[:, 1] // 2), dtype=np.float64)
        if baseline is None:
            baseline = float(np.mean(np.unique(similarity))) + config.baseline_margin
        lands_opaque = np.asarray(opaque(neighbour), dtype=bool)
        ids = np.empty(len(distinct), dtype=np.int64)
        for i, (parent, code) in enumerate(distinct.tolist()):
            extended = paths[parent] + ((code // 2, code % 2),)
            if extended not in path_id:
                path_id[extended] = len(paths)
                paths.append(extended)
                repeated = any(r == code // 2 for r, _ in paths[parent])
                gain = -config.repeat_penalty if repeated else float(similarity[i] - baseline)
                if round_trip_gain is not None and paths[parent] and paths[parent][-1] == (code // 2, 1 - code % 2):
                    gain = round_trip_gain
                scores.append(scores[parent] + gain)
                hops.append(hops[parent])
                level_of[path_id[extended]] = step
            ids[i] = path_id[extended]
        new_path = ids[inverse]
        # a path ending on a named node is a hop; one ending on an opaque node is a way through
        named_end = np.zeros(len(paths), dtype=bool)
        np.logical_or.at(named_end, new_path, ~lands_opaque)
        opaque_end = np.zeros(len(paths), dtype=bool)
        np.logical_or.at(opaque_end, new_path, lands_opaque)
        candidates = np.unique(new_path)
        for p in candidates.tolist():
            if named_end[p]:  # (where some walks end on names and some on ids, both readings stay open)
                hops[p] = hops[path_id[paths[p][:-1]]] + 1
                final.add(p)
        # pairs by node key, then path: a path's first `max_frontier` nodes are its first by key
        _, first_of, pair_inverse = np.unique(np.stack([neighbour_rank, new_path], axis=1), axis=0,
                                              return_index=True, return_inverse=True)
        pairs, pair_inverse = np.stack([neighbour[first_of], new_path[first_of]], axis=1), pair_inverse.reshape(-1)
        levels.append(PathLevel(node=pairs[:, 0], path=pairs[:, 1], to_pair=pair_inverse,
                                from_pair=frontier_pair[pair_of], edge=edge))
        # the next frontier: pairs of the best paths that may still grow
        score_array = np.asarray(scores)
        growable = [p for p in candidates.tolist()
                    if (hops[p] < config.max_hops or opaque_end[p]) and step + 1 < config.max_steps]
        growable.sort(key=lambda p: (-score_array[p] - (1.0 if opaque_end[p] and not named_end[p] else 0.0), p))
        # opaque-ended paths get a bonus in the ordering: they are incomplete, never final
        keep = growable[:config.beam_width]
        rank = {p: i for i, p in enumerate(keep)}
        mask = np.isin(pairs[:, 1], keep)
        chosen_pairs = np.flatnonzero(mask)
        if chosen_pairs.size == 0:
            break
        ranks = np.asarray([rank[p] for p in pairs[chosen_pairs, 1].tolist()])
        chosen_pairs = chosen_pairs[np.argsort(ranks, kind="stable")]
        kept_pairs = []
        for p in keep:  # at most max_frontier nodes per path
            of_path = chosen_pairs[pairs[chosen_pairs, 1] == p][:config.max_frontier]
            if opaque_end[p] and named_end[p]:
                of_path = of_path[np.asarray(opaque(pairs[of_path, 0]), dtype=bool)]  # names are answers already
            kept_pairs.append(of_path)
        chosen_pairs = np.concatenate(kept_pairs) if kept_pairs else np.zeros(0, np.int64)
        frontier_node, frontier_path, frontier_pair = pairs[chosen_pairs, 0], pairs[chosen_pairs, 1], chosen_pairs
    score_array = np.asarray(scores, dtype=np.float64)
    rank_score = score_array - config.hop_penalty * np.maximum(np.asarray(hops) - 1, 0)
    ranked = sorted(final, key=lambda p: (-rank_score[p], len(paths[p]), p))
    return PathBeam(paths=paths, scores=rank_score, final=ranked, hops=hops, levels=levels, level_of=level_of)


def realisation(beam: PathBeam, p: int, limit: int, named_only: Callable[[np.ndarray], np.ndarray] | None = None
                ) -> list[int]:
    """The edges of the walks along path `p` from the seeds (at most `limit`, whole walks first: each end pair's
    walk back to a seed is taken before the next one's). One walk connects an end; a one-step path keeps the edge
    from every seed that reaches the end, since only all of them say that it is shared ("which cables do A and B
    both invest in": the cable both `<consortium member` edges reach)."""
    level = beam.level_of.get(p)
    if level is None:
        return []
    chosen: dict[int, None] = {}
    lv = beam.levels[level]
    ends = np.flatnonzero(lv.path == p)
    if named_only is not None and ends.size:
        named = ~np.asarray(named_only(lv.node[ends]), dtype=bool)
        ends = np.concatenate([ends[named], ends[~named]])
    if level == 0:
        order = np.argsort(lv.to_pair, kind="stable")
        bounds = np.searchsorted(lv.to_pair[order], np.stack([ends, ends + 1]))
        for start, stop in bounds.T.tolist():
            new = [e for e in dict.fromkeys(lv.edge[order[start:stop]].tolist()) if e not in chosen]
            if len(chosen) + len(new) > limit:
                break
            chosen.update(dict.fromkeys(new))
        return list(chosen)
    firsts = [(beam.levels[back].first_entry, beam.levels[back].edge, beam.levels[back].from_pair)
              for back in range(level, -1, -1)]
    for end in ends.tolist():
        walk: list[int] = []
        pair = end
        for first, edge, from_pair in firsts:  # one walk per end suffices to connect it: its first entry's
            entry = int(first[pair])
            if entry < 0:
                break
            walk.append(int(edge[entry]))
            pair = int(from_pair[entry])
            if pair < 0:
                break
        new = [e for e in reversed(walk) if e not in chosen]
        if len(chosen) + len(new) > limit:
            break
        chosen.update(dict.fromkeys(new))
    return list(chosen)


def choose_edges(beam: PathBeam, config: PathConfig, opaque: Callable[[np.ndarray], np.ndarray] | None = None
                 ) -> tuple[np.ndarray, list[int]]:
    """Edges of the realisations of the best final paths within `max_edges`, taken round-robin over the paths'
    hop counts (the best 1-hop path, the best 2-hop one, ..., then the second best of each): which length the
    question means is the reader's decision, retrieval keeps every length's best readings."""
    by_hops: dict[int, list[int]] = {}
    for p in beam.final:
        by_hops.setdefault(beam.hops[p], []).append(p)
    order = []
    for rank in range(config.max_final_paths):
        order.extend(ps[rank] for _, ps in sorted(by_hops.items()) if rank < len(ps))
    chosen: dict[int, None] = {}
    used = []
    for p in order[:config.max_final_paths * max(len(by_hops), 1)]:
        room = config.max_edges - len(chosen)
        if room <= 0:
            break
        edges = realisation(beam, p, min(room, config.max_edges_per_path), opaque)
        if edges:
            used.append(p)
            chosen.update(dict.fromkeys(edges))
    return np.asarray(list(chosen), dtype=np.int64), used


def describe_path(relation_texts: Sequence[str], steps: Sequence[Step]) -> str:
    return " ".join(f"{relation_texts[r]}>" if d == FORWARD else f"<{relation_texts[r]}" for r, d in steps)


# -- over a graph source ------------------------------------------------------------------------------------

def cosine(rows: np.ndarray, vector: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    vector = np.asarray(vector, dtype=np.float32).reshape(-1)
    norms = np.linalg.norm(rows, axis=1) * max(float(np.linalg.norm(vector)), 1e-12)
    return (rows @ vector) / np.maximum(norms, 1e-12)


@dataclass
class PathRetrieval:
    seeds: np.ndarray  # source node ids
    nodes: np.ndarray
    edges: np.ndarray
    beam: PathBeam
    relation_texts: Callable[[np.ndarray], list[str]]
    timings_ms: dict[str, float]

    def best_paths(self, count: int = 5) -> list[tuple[str, float]]:
        out = []
        for p in self.beam.final[:count]:
            steps = self.beam.paths[p]
            texts = self.relation_texts(np.asarray([r for r, _ in steps], dtype=np.int64))
            out.append((" ".join(f"{t}>" if d == FORWARD else f"<{t}" for t, (_, d) in zip(texts, steps)),
                        float(self.beam.scores[p])))
        return out


def retrieve_paths(source, seeds: np.ndarray, question_vector: np.ndarray, relations: RelationTexts,
                   config: PathConfig = PathConfig(), round_trip_gain: float | None = None,
                   named: Callable[[list[str]], np.ndarray] | None = None) -> PathRetrieval:
    """The beam over a GraphSource from seed node ids, scored against `question_vector` (the question with its
    entities masked), and the chosen edges and nodes (seeds first); `round_trip_gain` as in `beam_paths`;
    `named(relation texts)`: per text, a similarity the step has at least (`PathRetriever.relation_naming`)."""
    started = time.perf_counter()
    texts_of = source.relation_texts
    similarity_cache: dict[int, float] = {}

    def relation_similarity(ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        missing = [i for i in dict.fromkeys(ids.tolist()) if i not in similarity_cache]
        if missing:
            texts = texts_of(np.asarray(missing))
            sims = cosine(relations.vectors(texts), question_vector)
            if named is not None:
                sims = np.maximum(sims, named(texts))
            similarity_cache.update(zip(missing, sims.tolist()))
        return np.asarray([similarity_cache[i] for i in ids.tolist()], dtype=np.float64)

    opaque_cache: dict[int, bool] = {}

    def opaque(nodes: np.ndarray) -> np.ndarray:
        nodes = np.asarray(nodes, dtype=np.int64)
        missing = [n for n in dict.fromkeys(nodes.tolist()) if n not in opaque_cache]
        if missing:
            opaque_cache.update(zip(missing, (is_opaque(t) for t in source.node_texts(np.asarray(missing)))))
        return np.fromiter((opaque_cache[n] for n in nodes.tolist()), dtype=bool, count=len(nodes))

    beam = beam_paths(np.asarray(seeds, dtype=np.int64), source.incident, source.triples, opaque,
                      relation_similarity, config, round_trip_gain=round_trip_gain, node_rank=source.node_ranks,
                      relation_rank=source.relation_ranks)
    edges, chosen = choose_edges(beam, config, opaque)
    beam.edges, beam.chosen = edges, chosen
    head, _, tail = source.triples(edges) if edges.size else (np.zeros(0, np.int64),) * 3
    nodes = np.asarray(list(dict.fromkeys(np.asarray(seeds, dtype=np.int64).tolist()
                                          + np.stack([head, tail], 1).reshape(-1).tolist())), dtype=np.int64)
    return PathRetrieval(seeds=np.asarray(seeds, dtype=np.int64), nodes=nodes, edges=edges, beam=beam,
                         relation_texts=texts_of, timings_ms={"paths": (time.perf_counter() - started) * 1000})


def with_sexes(source, nodes: np.ndarray, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`nodes` and `edges` with the edges saying the sex (`gender`, `sex`) of the people the family edges among
    `edges` link, and the nodes they lead to: "what did X's dad do" walks `parents>` to both parents, and which is
    the father only their `gender` says (`reader.constraints.sexed`)."""
    from gretriever_neo4j.retrieval.naming import is_family_relation, says_sex

    if not edges.size:
        return nodes, edges
    head, relation, tail = source.triples(edges)
    kinds = np.unique(relation)
    family = kinds[[is_family_relation(t) for t in source.relation_texts(kinds)]]
    kin = np.isin(relation, family)
    people = np.unique(np.concatenate([head[kin], tail[kin]]))
    if not people.size:
        return nodes, edges
    incident = source.incident(people)
    outgoing = incident.edge[incident.outgoing]
    if not outgoing.size:
        return nodes, edges
    _, said, values = source.triples(outgoing)
    kinds = np.unique(said)
    sexed = kinds[[says_sex(t) for t in source.relation_texts(kinds)]]
    keep = np.isin(said, sexed) & ~np.isin(outgoing, edges)
    if not keep.any():
        return nodes, edges
    more = list(dict.fromkeys(values[keep].tolist()))
    return (np.concatenate([nodes, np.asarray([n for n in more if n not in set(nodes.tolist())], dtype=np.int64)]),
            np.concatenate([edges, outgoing[keep]]))


class PathRetriever:
    """Zero-shot retrieval over a graph source: link the question's entities, beam over relation paths, return
    the paper's `RetrievalResult` (what every reader and generator consumes). `embed(texts) -> (n, d)` is the
    graph's embedder; the source is a `KnowledgeGraph` (in memory) or a `StoreGraphSource` (Neo4j)."""

    def __init__(self, graph, embed: Callable[[list[str]], np.ndarray], config: PathConfig = PathConfig(), *,
                 relations: RelationTexts | None = None, graph_name: str | None = None, linking=None,
                 max_seeds: int = 3, relation_values: Callable[[], Mapping[str, tuple[int, int, int]]] | None = None,
                 relation_naming: Callable[[str, list[str]], np.ndarray] | None = None):
        """`relation_naming(masked question, relation texts)`: per text, how surely the question's words name that
        relation by themselves (a shared stem: "directed" / `directed_by`), a floor under the embedder's
        similarity in the beam; None: the embedder's similarity alone."""
        from gretriever_neo4j.retrieval.learned import as_source

        self.source = as_source(graph)
        self.embed = embed
        self.config = config
        self.relations = relations or RelationTexts.shared(embed)
        self.graph_name = graph_name if graph_name is not None else getattr(self.source, "graph", None)
        self.linking = linking if linking is not None else self.source.linking()
        self.max_seeds = max_seeds
        self.relation_naming = relation_naming
        kg = getattr(self.source, "kg", None)
        self._relation_values = relation_values or (None if kg is None else (lambda: kg_relation_values(kg)))
        self._categorical: frozenset[tuple[str, int]] | None = None
        self._lock = threading.Lock()

    def categorical(self) -> frozenset[tuple[str, int]]:
        """The graph's categorical steps (`categorical_steps`), computed once, when a question first asks for a
        category (a pass over every edge)."""
        if self._relation_values is None:
            return frozenset()
        with self._lock:
            if self._categorical is None:
                self._categorical = categorical_steps(self._relation_values(), self.config.categorical_share)
            return self._categorical

    def seeds_for(self, question: str, question_vector: np.ndarray | None) -> list[str]:
        from gretriever_neo4j.retrieval.linking import link_seeds

        link = link_seeds(question, question_vector, self.linking, self.graph_name, k=1, embed=self.embed)
        return link.preferred(1, 0.0)[:self.max_seeds]

    def retrieve(self, question: str, question_vector: np.ndarray, *, seeds: Sequence[str] | None = None):
        from gretriever_neo4j.retrieval.in_memory import RetrievalResult
        from gretriever_neo4j.retrieval.linking import mask_question
        from gretriever_neo4j.retrieval.naming import asks_a_sex, offered_names
        from gretriever_neo4j.retrieval.pcst import Selection
        from gretriever_neo4j.retrieval.textualize import textualize

        timings: dict[str, float] = {}
        started = time.perf_counter()
        seed_keys = list(seeds) if seeds is not None else self.seeds_for(question, question_vector)
        seed_ids = self.source.node_ids(seed_keys)
        offered = offered_names(question, self.source.node_texts(seed_ids)) if seed_ids.size else []
        if offered and len(offered) < len(seed_ids):  # "is X male or female": walk from X to one of them
            dropped = set(seed_ids[offered].tolist())
            seed_keys = [k for k in seed_keys if not set(self.source.node_ids([k]).tolist()) & dropped]
            seed_ids = np.asarray([i for i in seed_ids.tolist() if i not in dropped], dtype=np.int64)
        timings["seeds"] = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        masked = mask_question(question, self.source.node_texts(seed_ids)) if seed_ids.size else question
        vector = np.asarray(self.embed([masked]), dtype=np.float32)[0]
        timings["embed_masked"] = (time.perf_counter() - started) * 1000
        naming = self.relation_naming
        named = None if naming is None else (lambda texts: naming(masked, texts))
        gain = self.config.round_trip_gain if asks_what_is_shared(masked) else None
        found = retrieve_paths(self.source, seed_ids, vector, self.relations, self.config, round_trip_gain=gain,
                               named=named)
        timings.update(found.timings_ms)
        started = time.perf_counter()
        nodes, edges = found.nodes, found.edges
        if asks_a_sex(masked):
            nodes, edges = with_sexes(self.source, nodes, edges)
        candidate = self.source.candidate_graph(nodes, edges)
        selection = Selection(node_indices=np.arange(candidate.num_nodes, dtype=np.int64),
                              edge_indices=np.arange(candidate.num_edges, dtype=np.int64),
                              node_prizes=np.zeros(candidate.num_nodes), edge_prizes=np.zeros(candidate.num_edges),
                              whole_graph=False)
        subgraph = textualize(candidate, selection.node_indices, selection.edge_indices)
        timings["textualize"] = (time.perf_counter() - started) * 1000
        keys = set(candidate.node_keys)
        return RetrievalResult(seed_keys=[k for k in seed_keys if k in keys], candidate=candidate,
                               selection=selection, subgraph=subgraph, timings_ms=timings,
                               categorical=self.categorical() if asks_for_a_category(masked) else frozenset())


def signature_scores(signatures: Sequence[Sequence[Step]], similarity: np.ndarray, lands_opaque: set[Step],
                     baseline: float, config: PathConfig = PathConfig()) -> np.ndarray:
    """The beam's score of each signature (relation ids index `similarity`), for readers that walk a retrieved
    subgraph: the sum of step gains, a repeated relation costing `repeat_penalty`, minus `hop_penalty` per named
    hop beyond the first; steps in `lands_opaque` (they lead to opaque nodes) are ways through, not hops. The
    empty signature scores -inf."""
    out = np.full(len(signatures), -np.inf)
    for s, signature in enumerate(signatures):
        if not signature:
            continue
        total, seen = 0.0, set()
        for relation, _direction in signature:
            total += -config.repeat_penalty if relation in seen else float(similarity[relation]) - baseline
            seen.add(relation)
        hops = sum(1 for step in signature if tuple(step) not in lands_opaque)
        out[s] = total - config.hop_penalty * max(hops - 1, 0)
    return out
