"""Relations that say one fact under two names, and the walks they make one.

A Freebase dump (and RoG's WebQSP graphs cut from it) spells many facts twice: Einstein's schooling as
`people.person.education` and `education.education.student` into one record (`parallel_into_records`). A question
cannot tell such walks apart, so they score as the best of them and their end nodes answer together
(`merged_scores`). Pure functions of a `SubgraphView`.

A relation is not merged with its converse (`languages_spoken>` from Switzerland with `<countries_spoken_in`), even
where both join one pair of named nodes: RoG stores some triples of a relation the wrong way round, so `parents`
joins Henry VIII to his father too, and relations that share a word are not converses (`partially_containedby` and
`containedby`, `official_language` through `languages_spoken`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gretriever_neo4j.reader.paths import SubgraphView
from gretriever_neo4j.reader.tuning import TUNING

RECORD_KIND_OVERLAP = TUNING.record_kind_overlap  # of the relations around two sets of records, shared


def _union_find(size: int):
    parent = list(range(size))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def join(a: int, b: int) -> None:
        a, b = root(a), root(b)
        if a != b:
            parent[max(a, b)] = min(a, b)

    return root, join


def parallel_into_records(view: SubgraphView, opaque: np.ndarray) -> list[int]:
    """Relations that join one node to the same record (an opaque node) side by side, merged: `same[r]`, the
    relation each stands for. A node tied to one record twice is tied in one role under two names (a Freebase
    dump holds Einstein's schooling as `people.person.education` on four records and as
    `education.education.student` on one of them), so a walk through either is the same fact; so are two relations
    out of one record to one node, and two into records of one kind (`_into_records_of_one_kind`)."""
    root, join = _union_find(len(view.relation_texts))
    into = opaque[view.dst] & ~opaque[view.src]
    by_pair: dict[tuple[int, int], set[int]] = {}
    for u, v, r in zip(view.src[into].tolist(), view.dst[into].tolist(), view.relation[into].tolist()):
        by_pair.setdefault((u, v), set()).add(r)
    out_of: dict[tuple[int, int], set[int]] = {}  # and out of one record to one node (`institution`,
    # `students_graduates` from a schooling to its school)
    leaving = opaque[view.src] & ~opaque[view.dst]
    for u, v, r in zip(view.src[leaving].tolist(), view.dst[leaving].tolist(), view.relation[leaving].tolist()):
        out_of.setdefault((u, v), set()).add(r)
    for relations in [*by_pair.values(), *out_of.values()]:
        first, *rest = sorted(relations)
        for r in rest:
            join(first, r)
    for first, second in _into_records_of_one_kind(view, by_pair):
        join(first, second)
    return [root(r) for r in range(len(view.relation_texts))]


def _into_records_of_one_kind(view: SubgraphView, by_pair: dict[tuple[int, int], set[int]]) -> list[tuple[int, int]]:
    """Pairs of relations that tie one node to records of one kind, each to records of its own: John Mayer's
    schooling is `education.education.student` into one record and `people.person.education` into another, both
    records holding an `institution` (the walk through the first alone answered his high school, not his college).
    Records are of one kind where the relations around them, other than those into them from that node, are mostly
    the same (`RECORD_KIND_OVERLAP`): a marriage's and a sibling relationship's are not."""
    around: dict[int, set[int]] = {}
    for u, v, r in zip(view.src.tolist(), view.dst.tolist(), view.relation.tolist()):
        around.setdefault(u, set()).add(r)
        around.setdefault(v, set()).add(r)
    kinds: dict[int, dict[int, set[int]]] = {}  # node -> relation into records -> relations around those records
    for (u, record), relations in by_pair.items():
        for r in relations:
            kinds.setdefault(u, {}).setdefault(r, set()).update(around.get(record, set()))
    pairs = set()
    for relations in kinds.values():
        ordered = sorted(relations)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1:]:
                ka, kb = relations[a] - {a, b}, relations[b] - {a, b}
                if ka and kb and len(ka & kb) >= RECORD_KIND_OVERLAP * len(ka | kb):
                    pairs.add((a, b))
    return sorted(pairs)


def merged_scores(scores: np.ndarray, signatures: Sequence, relation_texts: Sequence[str], masked: str,
                  ways_through: set, parallel: Sequence[int] | None = None) -> np.ndarray:
    """Signatures the question cannot tell apart (`kinship.merged_relations`: "parents" over `is the father of` and
    `is the mother of`; `married` either way; `parallel_into_records`) score as the best of them:
    their end nodes answer together. A relation through opaque nodes (Freebase's `spouse_s` to a marriage) has a
    way, not two."""
    from gretriever_neo4j.reader.kinship import merged_relations
    from gretriever_neo4j.reader.wording import content_words

    same, both = merged_relations(relation_texts, content_words(masked))
    if parallel is not None:
        same = [same[p] for p in parallel]
    both -= {int(r) for r, _ in ways_through}
    if not both and all(s == r for r, s in enumerate(same)):
        return scores
    keys = [tuple((same[int(r)], -1 if int(r) in both else int(d)) for r, d in signature) for signature in signatures]
    best: dict[tuple, float] = {}
    for k, score in zip(keys, scores.tolist()):
        best[k] = max(best.get(k, -np.inf), score)
    return np.asarray([best[k] for k in keys], dtype=scores.dtype)
