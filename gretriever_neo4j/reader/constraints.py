"""A second entity the question names narrows the answer: "who plays *Roxanne* in Ghost Rider" is not every
actor of Ghost Rider but the one whose performance is of the character Roxanne.

The walk from the anchor (Ghost Rider) finds the actors; a node of the subgraph that a word of the question left
over names (the character "Roxanne Simpson": a proper name, not the anchor, not an answer) is a *constraint*, and
the answers linked to it — next to it, or next to one opaque node (a Freebase CVT: the performance) with it — are
the answer. Where no answer is linked to a constraint the answers stand: a constraint the subgraph cannot check
does not empty the answer.

Two anchors join the same way (`joined`): "who played *Carlton Lassiter* on *Psych*" names both ends of one
performance, and the actor linked to both anchors is the answer, even where a walk from one anchor alone rates
another actor higher (Psych's cast list: its series edges lead to other actors); and where one opaque node
is next to both anchors ("who did *Johnny Depp* play in *Corpse Bride*"), what the walks reach next to it is the
answer however they rate it (the character, not the guitar Depp plays). Only nodes the question names in full are
anchors of a join, not those it mentions in part ("vampire diaries" for "The Vampire Diaries").

A sex the question asks narrows the same way (`sexed`): "what did X's dad do for a living" walks `parents>
profession>` to both parents' jobs, and only the walks through a parent whose `gender` says male answer.

Pure functions over a `SubgraphView`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from gretriever_neo4j.reader.paths import SubgraphView, Walks, step_back
from gretriever_neo4j.reader.tuning import TUNING
from gretriever_neo4j.retrieval.linking import STOP_WORDS, analyzer_tokens, strip_topic_markers
from gretriever_neo4j.retrieval.texts import humanize_relation

MIN_LETTERS = TUNING.min_letters  # a word of the question that can name a constraint ("kirk", "ziva"), not "in", "on"
# How far below the best walk's score a node linked to two anchors may be and still be the answer.
JOIN_MARGIN = TUNING.join_margin


def answers_at(probabilities: np.ndarray, threshold: float, exclude: set[int]) -> list[int]:
    """The nodes at or above `threshold` that are not excluded: the answer as it stands."""
    return [i for i in np.flatnonzero(probabilities >= threshold).tolist() if i not in exclude]


def kept_only(probabilities: np.ndarray, answers: Sequence[int], kept: Sequence[int], threshold: float) -> np.ndarray:
    """`probabilities` with the `answers` not `kept` put just below `threshold`, where some but not all are kept;
    else the same array (a narrowing that would keep none or all changes nothing)."""
    if not kept or len(kept) == len(answers):
        return probabilities
    out = probabilities.copy()
    out[sorted(set(answers) - set(kept))] = threshold * 0.99
    return out


def answer_only(probabilities: np.ndarray, nodes: Sequence[int], threshold: float) -> np.ndarray:
    """`probabilities` with `nodes` the whole answer: theirs 1, every other node's at most just below `threshold`."""
    out = np.minimum(probabilities, threshold * 0.99)
    out[list(nodes)] = 1.0
    return out


def constraint_nodes(question: str, view: SubgraphView, anchors: Sequence[int], answers: Sequence[int],
                     words_to_skip: frozenset[str], proper: np.ndarray) -> list[int]:
    """Nodes named by a word of the question that is a name — no word of English (lemminflect knows no lemma of
    it: "roxanne", "kirk", not "music" in "Pop music" or "movie") — and not a word of an anchor's name nor in
    `words_to_skip` (function words, words that name relations), or whose whole name the question says
    (`_said_whole`): proper names (`proper`) other than the anchors and answers."""
    from lemminflect import getAllLemmas

    taken = {t for a in anchors for t in analyzer_tokens(view.node_texts[a])}
    tokens = analyzer_tokens(strip_topic_markers(question))
    words = {w for w in tokens
             if len(w) >= MIN_LETTERS and w not in taken and w not in words_to_skip and not getAllLemmas(w)}
    excluded = set(anchors) | set(answers)
    said = " " + " ".join(tokens) + " "
    out = []
    for i, text in enumerate(view.node_texts):
        if i in excluded or not proper[i]:
            continue
        name = analyzer_tokens(text)
        if words & set(name) or _said_whole(name, said, taken):
            out.append(i)
    return out


def said_nodes(question: str, view: SubgraphView, excluded: set[int], words_to_skip: frozenset[str],
               opaque: np.ndarray) -> list[int]:
    """Nodes whose whole name the question says, inflection aside ("which *Centers* were drafted in 2018" says
    `Center`), whatever the name is: a common word or a value as well as a proper name ("*Comedy* podcasts",
    "*Mammal* species", "2018", "4G"). Not opaque nodes, not `excluded`, not names whose words are all in
    `words_to_skip` (function words, words of relation names: "who is the *father* of X" says no node `Father`), and
    not a name inside a longer name the question says (`Hockey` inside "Ice Hockey")."""
    # a name said as it is is said in the singular too: comparing the singular forms alone finds both
    said = " " + " ".join(_singular(t) for t in analyzer_tokens(strip_topic_markers(question))) + " "
    found: dict[int, str] = {}
    for i, text in enumerate(view.node_texts):
        if i in excluded or opaque[i]:
            continue
        name = analyzer_tokens(text)
        if not name or all(t in words_to_skip for t in name):
            continue
        form = f" {' '.join(_singular(t) for t in name)} "
        if form in said:
            found[i] = form
    return [i for i, form in found.items() if not any(form in other and len(other) > len(form)
                                                      for other in found.values())]


@functools.lru_cache(maxsize=65536)
def _singular(word: str) -> str:
    """The word's noun lemma where lemminflect knows one ("centers" -> center), else the word."""
    from lemminflect import getLemma

    lemmas = getLemma(word, upos="NOUN")
    return lemmas[0].lower() if lemmas and lemmas[0] else word


def _said_whole(name: Sequence[str], said: str, taken: set[str]) -> bool:
    """Whether the question says the whole name, two words or more, in order, and not all of them an anchor's
    ("who does Kellan Lutz play in *prom night*": the film `Prom Night`, though its words are English ones)."""
    return (sum(t not in STOP_WORDS for t in name) >= 2 and not set(name) <= taken
            and f" {' '.join(name)} " in said)


def _neighbours(view: SubgraphView) -> dict[int, set[int]]:
    neighbours: dict[int, set[int]] = {}
    for s, d in zip(view.src.tolist(), view.dst.tolist()):
        neighbours.setdefault(s, set()).add(d)
        neighbours.setdefault(d, set()).add(s)
    return neighbours


def _ways_in(neighbours: dict[int, set[int]], nodes: Sequence[int], opaque: np.ndarray) -> set[int]:
    """`nodes` and the opaque nodes next to them: a node next to one of these is linked to `nodes`."""
    near = set(nodes)
    for node in nodes:
        near |= {n for n in neighbours.get(node, ()) if opaque[n]}
    return near


def linked_answers(view: SubgraphView, answers: Sequence[int], constraints: Sequence[int],
                   opaque: np.ndarray) -> list[int]:
    """The answers next to a constraint, or next to an opaque node that is next to one; in `answers`' order."""
    if not constraints or not answers:
        return []
    neighbours = _neighbours(view)
    near = _ways_in(neighbours, constraints, opaque)
    return [a for a in answers if neighbours.get(a, set()) & near]


def joined(view: SubgraphView, anchors: Sequence[int], node_scores: np.ndarray, probabilities: np.ndarray,
           opaque: np.ndarray, threshold: float, margin: float = JOIN_MARGIN) -> np.ndarray:
    """`probabilities` with the answer replaced by the nodes linked to two anchors or more: the best rated by the
    walks (`node_scores`, -inf for nodes that cannot answer) next to an opaque node next to two anchors; else the
    best rated of those next to two anchors, or next to opaque nodes next to them, where the walks rate it within
    `margin` of their best ("which battles did the regiment fight in the war": of the war's battles the regiment
    fought in, the one a walk that reads the question well reaches; not every node linked to both). The same array
    where there is none."""
    if len(anchors) < 2 or not np.isfinite(node_scores).any():
        return probabilities
    top = float(node_scores[np.isfinite(node_scores)].max())
    neighbours = _neighbours(view)
    anchors = list(dict.fromkeys(anchors))
    # One opaque node (a CVT) next to two anchors and to a node the walks reach: one fact names all three ("who
    # did Johnny Depp play in Corpse Bride": the performance's character), however the walks rate it.
    shared = [k for k in np.flatnonzero(opaque).tolist() if sum(a in neighbours.get(k, ()) for a in anchors) >= 2]
    reached = [c for k in shared for c in neighbours.get(k, ()) if np.isfinite(node_scores[c])]
    both = _best_rated(reached, node_scores)
    if not both:
        near = [_ways_in(neighbours, [anchor], opaque) for anchor in anchors]
        linked = [c for c in np.flatnonzero(np.isfinite(node_scores)).tolist()
                  if sum(bool(neighbours.get(c, set()) & n) for n in near) >= 2]
        both = _best_rated(linked, node_scores)
        if both and node_scores[both[0]] < top - margin:
            both = []
    if not both:
        return probabilities
    return answer_only(probabilities, both, threshold)


def chosen_among(offered: Sequence[int], node_scores: np.ndarray, probabilities: np.ndarray,
                 threshold: float) -> np.ndarray:
    """`probabilities` with the answer the best rated by the walks of the nodes the question offers as a choice
    (`retrieval.naming.offered_names`: "is X male or female"), where a walk reaches one; else the same array."""
    reached = [int(n) for n in offered if np.isfinite(node_scores[n])]
    if not reached:
        return probabilities
    return answer_only(probabilities, _best_rated(reached, node_scores), threshold)


def _best_rated(nodes: Sequence[int], node_scores: np.ndarray) -> list[int]:
    """The nodes of `nodes` the walks rate best (all of them where they tie), in id order; none of none."""
    if not nodes:
        return []
    best = max(node_scores[c] for c in nodes)
    return sorted({c for c in nodes if node_scores[c] >= best})


def narrowed(question: str, view: SubgraphView, anchors: Sequence[int], probabilities: np.ndarray,
             exclude: set[int], opaque: np.ndarray, proper: np.ndarray, threshold: float) -> np.ndarray:
    """`probabilities` with the answers (at or above `threshold`, not excluded) that no constraint links put just
    below the threshold, where a constraint links some of them; else the same array. `proper`: nodes named by proper
    names (not opaque ids, values or words in lower case)."""
    answers = answers_at(probabilities, threshold, exclude)
    if len(answers) < 2:
        return probabilities
    relation_words = {t for text in view.relation_texts for t in analyzer_tokens(humanize_relation(text))}
    skip = STOP_WORDS | relation_words
    constraints = constraint_nodes(question, view, anchors, answers, skip, proper)
    constraints += [n for n in said_nodes(question, view, set(anchors) | set(answers), skip, opaque)
                    if n not in constraints]
    linked = linked_answers(view, answers, constraints, opaque)
    return kept_only(probabilities, answers, linked, threshold)



def node_sexes(view: SubgraphView) -> np.ndarray:
    """Per node, "M" or "F" where a relation saying a person's sex (`gender`, `sex`) links it to a node named as
    one ("Male", "woman"), else ""."""
    from gretriever_neo4j.language import WORDS
    from gretriever_neo4j.retrieval.naming import says_sex

    sexes = np.full(view.num_nodes, "", dtype="<U1")
    sex_relation = [says_sex(text) for text in view.relation_texts]
    for src, relation, dst in zip(view.src.tolist(), view.relation.tolist(), view.dst.tolist()):
        if sex_relation[relation]:
            sexes[src] = WORDS.sex_names.get(view.node_texts[dst].strip().lower(), sexes[src])
    return sexes


def _walk_of_sexes(walks: Walks, pair: int, chain: str, kin: list[bool], sexes: np.ndarray) -> bool:
    """Whether some walk of `pair` passes, at each of its family steps, people of the sex `chain` asks there (a
    person of unknown sex passes); True where its family steps are not as many as the chain's."""
    signature = walks.signatures[int(walks.pair_sig[pair])]
    family = [level for level, (relation, _) in enumerate(signature, start=1) if kin[relation]]
    if len(family) != len(chain):
        return True
    asked = {level: sex for level, sex in zip(family, chain) if sex != "-"}
    frontier = np.asarray([pair], dtype=np.int64)
    for level in range(len(signature), 0, -1):
        if level in asked:
            found = sexes[walks.pair_node[frontier]]
            frontier = frontier[(found == "") | (found == asked[level])]
            if not frontier.size:
                return False
        frontier, _ = step_back(walks, level, frontier)
    return True


def sexed(masked_question: str, view: SubgraphView, walks: Walks, pair_scores: np.ndarray, node_scores: np.ndarray,
          probabilities: np.ndarray, exclude: set[int], threshold: float) -> np.ndarray:
    """`probabilities` with the answers (at or above `threshold`, not excluded) whose best walks pass no person of
    the sex the question asks at a family step (`kinship.sex_chain` of the question, its anchor masked as X) put
    just below the threshold, where some answers' walks do; else the same array."""
    from gretriever_neo4j.reader.kinship import sex_chain
    from gretriever_neo4j.retrieval.naming import is_family_relation

    chain = sex_chain(masked_question)
    answers = answers_at(probabilities, threshold, exclude) if chain else []
    if len(answers) < 2:
        return probabilities
    sexes = node_sexes(view)
    if not sexes.any():
        return probabilities
    kin = [is_family_relation(text) for text in view.relation_texts]
    fits = [a for a in answers
            if any(_walk_of_sexes(walks, p, chain, kin, sexes)
                   for p in np.flatnonzero((walks.pair_node == a) & (pair_scores >= node_scores[a])).tolist())]
    return kept_only(probabilities, answers, fits, threshold)
