"""A second entity the question names narrows the answer: "who plays *Roxanne* in Ghost Rider" is not every
actor of Ghost Rider but the one whose performance is of the character Roxanne.

The walk from the anchor (Ghost Rider) finds the actors; a node of the subgraph that a word of the question left
over names (the character "Roxanne Simpson": a proper name, not the anchor, not an answer) is a *constraint*, and
the answers linked to it — next to it, or next to one opaque node (a Freebase CVT: the performance) with it — are
the answer. Where no answer is linked to a constraint the answers stand: a constraint the subgraph cannot check
does not empty the answer.

Pure functions over a `SubgraphView`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gretriever_neo4j.reader.paths import SubgraphView
from gretriever_neo4j.retrieval.linking import STOP_WORDS, analyzer_tokens, strip_topic_markers
from gretriever_neo4j.retrieval.relation_paths import humanize_relation

MIN_LETTERS = 3  # a word of the question that can name a constraint ("kirk", "ziva"), not "in", "on"


def constraint_nodes(question: str, view: SubgraphView, anchors: Sequence[int], answers: Sequence[int],
                     words_to_skip: frozenset[str], proper: np.ndarray) -> list[int]:
    """Nodes named by a word of the question that is a name — no word of English (lemminflect knows no lemma of
    it: "roxanne", "kirk", not "music" in "Pop music" or "movie") — and not a word of an anchor's name nor in
    `words_to_skip` (function words, words that name relations): proper names (`proper`) other than the anchors
    and answers."""
    from lemminflect import getAllLemmas

    taken = {t for a in anchors for t in analyzer_tokens(view.node_texts[a])}
    words = {w for w in analyzer_tokens(strip_topic_markers(question))
             if len(w) >= MIN_LETTERS and w not in taken and w not in words_to_skip and not getAllLemmas(w)}
    if not words:
        return []
    excluded = set(anchors) | set(answers)
    return [i for i, text in enumerate(view.node_texts)
            if i not in excluded and proper[i] and words & set(analyzer_tokens(text))]


def linked_answers(view: SubgraphView, answers: Sequence[int], constraints: Sequence[int],
                   opaque: np.ndarray) -> list[int]:
    """The answers next to a constraint, or next to an opaque node that is next to one; in `answers`' order."""
    if not constraints or not answers:
        return []
    neighbours: dict[int, set[int]] = {}
    for s, d in zip(view.src.tolist(), view.dst.tolist()):
        neighbours.setdefault(s, set()).add(d)
        neighbours.setdefault(d, set()).add(s)
    near = set(constraints)
    for c in constraints:
        near |= {n for n in neighbours.get(c, ()) if opaque[n]}
    return [a for a in answers if neighbours.get(a, set()) & near]


def narrowed(question: str, view: SubgraphView, anchors: Sequence[int], probabilities: np.ndarray,
             exclude: set[int], opaque: np.ndarray, proper: np.ndarray, threshold: float) -> np.ndarray:
    """`probabilities` with the answers (at or above `threshold`, not excluded) that no constraint links put just
    below the threshold, where a constraint links some of them; else unchanged. `proper`: nodes named by proper
    names (not opaque ids, values or words in lower case)."""
    answers = [i for i in np.flatnonzero(probabilities >= threshold).tolist() if i not in exclude]
    if len(answers) < 2:
        return probabilities
    relation_words = {t for text in view.relation_texts for t in analyzer_tokens(humanize_relation(text))}
    constraints = constraint_nodes(question, view, anchors, answers, STOP_WORDS | relation_words, proper)
    linked = linked_answers(view, answers, constraints, opaque)
    if not linked or len(linked) == len(answers):
        return probabilities
    out = probabilities.copy()
    out[sorted(set(answers) - set(linked))] = threshold * 0.99
    return out

