"""Hybrid seed linking: which stored nodes does a question name?

The paper seeds retrieval with the nodes whose embeddings are closest to the question's. On a large knowledge
graph that misses the entity the question is about most of the time (a movie title embeds far from "who
directed ..."). Here the question's word n-grams are also looked up by name in the fulltext index (Lucene phrase
queries), and:

* a node whose whole name equals an n-gram (compared as analyzer tokens, so case and punctuation do not matter,
  with "saint", "mount", "fort" abbreviated: "st. lucy" names `Saint Lucy`, `naming.title_form`) is an exact match,
  and a match inside a longer match's span ("Hanks" inside "Tom Hanks") is dropped; so is one inside a longer
  mention that a better connected node's name holds in order ("henry harrison" and `William Henry Harrison`, not
  the node `Henry`: `_fuller_names`). Exact matches come first: by link probability when a `MentionPrior` learnt
  on training questions is given (it demotes template words that happen to be names, such as the MetaQA tag
  "director"), then
  - a mention that names one of the graph's relations comes last ("what language do people from greece speak":
    "Language" and "Speak" are nodes of WebQSP, a genre and a film, and the question's words for
    `languages_spoken`; `names_a_relation`), so does a better connected node right after another match, a place
    that qualifies it ("what time zone is brentwood tennessee": Brentwood is the topic, Tennessee says which
    one; in "the film The Late Shift" the MetaQA tag "film" has no more edges than the film);
  - then longest mention, exact case, the better connected node (of two nodes of one name the one with more
    edges is more often the one meant), higher fulltext score;
  - a single word the question asks for ("what kind of *cancer*", "what *guitar*": `asked_kind`) is no match; a
    sole exact match gives way to a far better connected node whose name holds it (`BETTER_KNOWN`: "tupac" means
    `Tupac Shakur`, not the node `Tupac`); an acronym links the node it spells (`ACRONYM_HITS`: "nra");
* everything else is ranked by reciprocal rank fusion (`rrf`) of the fulltext ranking and the vector ranking;
  with no training questions, a question that writes no name out in full is linked by `guess` (how much of a
  vector hit's name the question says, and its degree).

Two backends answer the lookups (`retrieval.linking_backends`): `StoreLinking` (Neo4j's fulltext and vector indexes,
via `GraphStore`) and `InMemoryLinking` (a `KnowledgeGraph`, for benchmarks and tests without a database, scoring
like Lucene's BM25). Both see the same mentions, so they agree on exact matches; their fuzzy rankings may differ
in detail.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.language import WORDS
from gretriever_neo4j.retrieval.linking_backends import (  # noqa: F401  (re-exported)
    InMemoryLinking,
    LinkingBackend,
    StoreLinking,
    TextHit,
    escape_lucene,
    phrase_query,
)
from gretriever_neo4j.retrieval.naming import (  # noqa: F401  (analyzer_tokens, same_word: re-exported)
    STOP_WORDS,
    analyzer_tokens,
    asked_kind,
    initials,
    is_a_noun,
    may_be_acronym,
    name_overlap,
    names_a_relation,
    other_spelling,
    relation_name_words,
    same_word,
    title_form,
    word_lemmas,
)
from gretriever_neo4j.retrieval.tuning import LINKING

RRF_K = 60
DEFAULT_MAX_N = 16
DEFAULT_HITS_PER_MENTION = 10
DEFAULT_VECTOR_HITS = 10

_TOPIC_MARKERS = re.compile(r"[\[\]]")
_SPACES = re.compile(r"\s+")


def strip_topic_markers(question: str) -> str:
    """MetaQA marks the topic entity as `[name]`; a real user does not, so linking never sees the brackets."""
    return _SPACES.sub(" ", _TOPIC_MARKERS.sub("", question)).strip()


def mask_mentions(question: str, names: Iterable[str], placeholder: str = "X") -> str:
    """The question with every case-insensitive, whole-word occurrence of the given names (longest first)
    replaced by `placeholder`: what is asked, without what it is asked about. Topic markers are stripped."""
    text = strip_topic_markers(question)
    for name in sorted({n.strip() for n in names if n and n.strip()}, key=len, reverse=True):
        text = re.sub(r"(?<!\w)" + re.escape(name) + r"(?!\w)", placeholder, text, flags=re.IGNORECASE)
    return text


def mask_question(question: str, anchor_texts: Sequence[str], placeholder: str = "X") -> str:
    """The question with what it says of its anchors replaced by `placeholder`: whole names first, then words
    that match a content word of an anchor's name ("ben franklin" -> "ben X" for "Benjamin Franklin")."""
    text = mask_mentions(question, anchor_texts, placeholder)
    names = {t for name in anchor_texts for t in title_form(analyzer_tokens(name)) if t not in STOP_WORDS}
    if not names:
        return text
    out = []
    for word in text.split():
        tokens = title_form(analyzer_tokens(word))
        if tokens and word != placeholder and all(t not in STOP_WORDS and any(same_word(t, n) for n in names)
                                                  for t in tokens):
            if not out or out[-1] != placeholder:
                out.append(placeholder)
        else:
            out.append(word)
    return " ".join(out)


@dataclass(frozen=True)
class Mention:
    text: str
    start: int  # word positions in the stripped question, end exclusive
    end: int
    tokens: tuple[str, ...]

    @property
    def words(self) -> int:
        return self.end - self.start


def candidate_mentions(question: str, max_n: int = DEFAULT_MAX_N,
                       stop_words: frozenset[str] = STOP_WORDS) -> list[Mention]:
    """Word n-grams (1..max_n) of the question, longest first; n-grams without a word that is not a stop word
    are dropped, as are repeats of a token sequence already listed."""
    if max_n < 1:
        raise InputError(f"must be >= 1, got {max_n}", field="max_n")
    words = question.split()
    seen: set[tuple[str, ...]] = set()
    mentions = []
    for n in range(min(max_n, len(words)), 0, -1):
        for start in range(len(words) - n + 1):
            text = " ".join(words[start:start + n])
            tokens = analyzer_tokens(text)
            if not tokens or tokens in seen or all(t in stop_words for t in tokens):
                continue
            seen.add(tokens)
            mentions.append(Mention(text=text, start=start, end=start + n, tokens=tokens))
    return mentions


def rrf(rankings: Iterable[Sequence[str]], k: int = RRF_K) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: score(x) = sum over rankings of 1 / (k + rank of x), ranks from 1.
    Best first; equal scores by key. A key listed twice in one ranking counts at its first place."""
    scores: dict[str, float] = defaultdict(float)
    for ranking in rankings:
        for rank, key in enumerate(dict.fromkeys(ranking), start=1):
            scores[key] += 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


class MentionPrior:
    """How often a mention that names a node exactly is the question's topic: the link probability of entity
    linking, counted on training questions. Template words that happen to be node names ("director" is a tag
    in MetaQA) get a probability near 0; a mention never seen gets `unseen`."""

    def __init__(self, counts: dict[tuple[str, ...], tuple[int, int]] | None = None, *, unseen: float = 0.5):
        self.counts = dict(counts or {})  # mention tokens -> (times it was the topic, times it matched exactly)
        self.unseen = unseen

    def probability(self, tokens: tuple[str, ...]) -> float:
        linked, seen = self.counts.get(tokens, (0, 0))
        if seen == 0:
            return self.unseen
        return (linked + self.unseen) / (seen + 1.0)  # one pseudo-observation at the unseen prior

    @classmethod
    def fit(cls, questions: Iterable[tuple[str, Sequence[str]]], store_like, graph: str | None, *,
            max_n: int = DEFAULT_MAX_N, unseen: float = 0.5) -> MentionPrior:
        """From (question, topic keys) pairs: for every exact match, was its node a topic?"""
        backend = _backend(store_like)
        counts: dict[tuple[str, ...], list[int]] = defaultdict(lambda: [0, 0])
        for question, topics in questions:
            mentions = candidate_mentions(strip_topic_markers(question), max_n)
            hits = backend.mention_hits([m.text for m in mentions], graph, DEFAULT_HITS_PER_MENTION) if mentions else []
            for match in _maximal(_exact_matches(mentions, hits)):  # the candidates link_seeds ranks
                entry = counts[match.mention.tokens]
                entry[0] += int(match.key in set(topics))
                entry[1] += 1
        return cls({tokens: (linked, seen) for tokens, (linked, seen) in counts.items()}, unseen=unseen)

    def to_dict(self) -> dict:
        return {"unseen": self.unseen,
                "counts": [[list(tokens), linked, seen] for tokens, (linked, seen) in sorted(self.counts.items())]}

    @classmethod
    def from_dict(cls, data: dict) -> MentionPrior:
        return cls({tuple(tokens): (int(linked), int(seen)) for tokens, linked, seen in data["counts"]},
                   unseen=float(data["unseen"]))


@dataclass(frozen=True)
class LinkResult:
    """What `link_seeds` found. The vector ranking is asked for only when something reads it (`fused`, `seeds`
    beyond the exact matches, `guessed`): `preferred` needs it only where no usable exact match was found, and
    a vector index query is a tenth of a retrieval through Neo4j (15-20 ms)."""

    exact: list[str]  # maximal exact full-name matches, longest mention first
    exact_mentions: list[str]  # the mention each exact match answers, same order
    exact_probabilities: list[float | None] = dataclasses.field(default_factory=list)  # prior's, same order
    exact_name_relations: list[bool] = dataclasses.field(default_factory=list)  # `names_a_relation`, same order
    k: int = 3  # at most this many `seeds`
    text_ranking: list[str] = dataclasses.field(default_factory=list, repr=False)  # fulltext hits, best first
    vector_search: Callable[[], list[TextHit]] = dataclasses.field(default=list, repr=False, compare=False)
    question: str = dataclasses.field(default="", repr=False)
    guesses: bool = True  # no prior: the vector hits are ordered by `guess`
    relation_words: frozenset[str] = dataclasses.field(default=frozenset(), repr=False)

    @functools.cached_property
    def vector_hits(self) -> list[TextHit]:
        return self.vector_search()

    @functools.cached_property
    def fused(self) -> list[tuple[str, float]]:
        """Every fulltext or vector hit with its RRF score, best first."""
        return rrf([self.text_ranking, [hit.key for hit in self.vector_hits]])

    @functools.cached_property
    def seeds(self) -> list[str]:
        """Exact matches first, then by fused rank; at most k."""
        if len(self.exact) >= self.k:
            return self.exact[:self.k]
        taken = set(self.exact)
        return (self.exact + [key for key, _ in self.fused if key not in taken])[:self.k]

    @functools.cached_property
    def guessed(self) -> list[str]:
        """Vector hits by what the question says of them (`guess`); none with a prior."""
        return guess(self.question, self.vector_hits, self.relation_words) if self.guesses else []

    def preferred(self, fallback: int = 1, min_ratio: float = 0.0) -> list[str]:
        """The exact matches when there are any, else the `fallback` best guessed (without a prior) or fused
        seeds; also those when every exact match is a word for a relation ("what team did aguero play for": the
        Freebase type "Play" is a node, and the only name written out). Exact matches that name a relation are
        left out beside others. With a prior, exact matches whose link probability is below `min_ratio` times
        the best one's are left out."""
        if not self.exact:
            return list((self.guessed or self.seeds)[:fallback])
        naming = self.exact_name_relations or [False] * len(self.exact)
        if all(naming):
            exact = set(self.exact)
            others = [key for key in self.guessed or [key for key, _ in self.fused] if key not in exact]
            if others:
                return others[:fallback]
        # an exact match that names a relation is no seed beside one that does not ("maasai" and "speak")
        kept = [(key, p) for key, p, named in zip(self.exact, self.exact_probabilities or [None] * len(self.exact),
                                                  naming) if not named or all(naming)]
        known = [p for _, p in kept if p is not None]
        if not known or min_ratio <= 0.0:
            return [key for key, _ in kept]
        floor = min_ratio * max(known)
        return [key for key, p in kept if p is None or p >= floor]


def _backend(store_like) -> LinkingBackend:
    if hasattr(store_like, "mention_hits") and hasattr(store_like, "vector_hits"):
        return store_like
    if hasattr(store_like, "fulltext_nodes_many") and hasattr(store_like, "seed_nodes"):
        return StoreLinking(store_like)
    raise InputError(f"cannot link with a {type(store_like).__name__}: expected a GraphStore or a LinkingBackend",
                     field="store_like")


def link_seeds(question: str, question_vector: np.ndarray | None, store_like, graph: str | None, k: int = 3, *,
               max_n: int = DEFAULT_MAX_N, hits_per_mention: int = DEFAULT_HITS_PER_MENTION,
               vector_k: int = DEFAULT_VECTOR_HITS, prior: MentionPrior | None = None,
               embed: Callable[[list[str]], np.ndarray] | None = None) -> LinkResult:
    """Seed nodes for `question` (topic markers are stripped here) in `graph`; see the module docstring.
    `question_vector=None` links by name only; `prior` reorders exact matches by link probability; `embed` (the
    embedder's, texts -> vectors) lets a word that may be an acronym be looked up by meaning (`ACRONYM_HITS`)."""
    if k < 0:
        raise InputError(f"must be >= 0, got {k}", field="k")
    backend = _backend(store_like)
    mentions = candidate_mentions(strip_topic_markers(question), max_n)
    hits = _mention_hits(backend, mentions, graph, hits_per_mention)
    exact_matches = _exact_matches(mentions, hits)
    if embed is not None:
        acronyms = _acronym_matches(mentions, exact_matches, backend, graph, embed)
        exact_matches = _with_acronyms(exact_matches, acronyms)
    maximal = _maximal(exact_matches + _fuller_names(mentions, hits, exact_matches))
    kind = asked_kind([word.lower() for word in strip_topic_markers(question).split()])
    if kind is not None:  # "what kind of *cancer* did carl wilson have": the answer's kind, not an entity
        maximal = [m for m in maximal if not (m.mention.start == kind and m.mention.words == 1)]
    if len({m.key for m in maximal}) == 1:
        maximal = _better_known(maximal, mentions, hits) or maximal
    relation_words = ((backend.relation_words(graph) if hasattr(backend, "relation_words") else frozenset())
                      if maximal or (prior is None and question_vector is not None) else frozenset())
    exact = _order_exact(maximal, prior, relation_words)
    # Fulltext ranking: a node's best rank in any mention's list, longer mentions first among equal ranks.
    best: dict[str, tuple[int, int]] = {}
    for mention, per_mention in zip(mentions, hits):
        for rank, hit in enumerate(per_mention):
            candidate = (rank, -mention.words)
            if hit.key not in best or candidate < best[hit.key]:
                best[hit.key] = candidate
    text_ranking = sorted(best, key=lambda key: (best[key], key))
    first_match: dict[str, ExactMatch] = {}
    for match in exact:
        first_match.setdefault(match.key, match)
    exact_keys = list(first_match)
    search = list if question_vector is None else functools.partial(backend.vector_hits, question_vector, graph,
                                                                     vector_k)
    return LinkResult(exact=exact_keys, exact_mentions=[first_match[key].mention.text for key in exact_keys],
                      exact_probabilities=[None if prior is None else prior.probability(first_match[key].mention.tokens)
                                           for key in exact_keys],
                      exact_name_relations=[names_a_relation(first_match[key].mention.tokens, relation_words)
                                            for key in exact_keys],
                      k=k, text_ranking=text_ranking, vector_search=search, question=question,
                      guesses=prior is None, relation_words=relation_words)


def _mention_hits(backend, mentions: list[Mention], graph: str | None, limit: int) -> list[list[TextHit]]:
    """The fulltext hits of each mention, and of its `other_spelling` ("st paul" also finds `Saint Paul`), merged."""
    if not mentions:
        return []
    spellings = [other_spelling(m.tokens) for m in mentions]
    extra = [s for s in spellings if s is not None]
    found = backend.mention_hits([m.text for m in mentions] + extra, graph, limit)
    hits, more = found[:len(mentions)], iter(found[len(mentions):])
    for i, spelling in enumerate(spellings):
        if spelling is not None:
            keys = {hit.key for hit in hits[i]}
            hits[i] = hits[i] + [hit for hit in next(more) if hit.key not in keys]
    return hits


GUESS_DEGREE = LINKING.guess_degree
GUESS_RANK = LINKING.guess_rank


def guess(question: str, hits: Sequence[TextHit], relation_words: frozenset[str] = frozenset()) -> list[str]:
    """Keys of vector hits, most probably meant first, for a question that writes no name out in full
    ("what state does romney live in"): the share of the name the question says (`name_overlap`), plus
    `GUESS_DEGREE` * log(1 + edges), less `GUESS_RANK` per place in the vector ranking: for such questions this
    finds the topic more often than the vector ranking alone or the fused one. A question word that names a
    relation says nothing of the entity ("what else did ben franklin invent": "invent" is `inventions`' word, not
    "Inventor"); a node whose text is an opaque id (`m.02t9_gm`) has no name a question says. Only vector hits are
    candidates: fulltext hits bring in names that merely share a word ("la kings": `La La Land`)."""
    from gretriever_neo4j.retrieval.texts import is_opaque

    words = [w for w in analyzer_tokens(strip_topic_markers(question))
             if w not in STOP_WORDS and not names_a_relation((w,), relation_words)]
    scored = [(name_overlap(hit.text, words) + GUESS_DEGREE * math.log1p(hit.degree) - GUESS_RANK * rank, -rank,
               hit.key) for rank, hit in enumerate(hits) if not is_opaque(hit.text)]
    return [key for *_, key in sorted(scored, reverse=True)]


@dataclass(frozen=True)
class ExactMatch:
    key: str
    mention: Mention
    case_exact: bool  # the name equals the mention character for character, not just token for token
    score: float  # the fulltext score of the hit
    degree: int = 0  # the node's edges


GENERATIONAL = WORDS.generational  # "Martin Luther King, Jr." is said "martin luther king"


def unsuffixed(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """A name's tokens without the generational suffix a question leaves out ("jr", "sr"), where two words remain."""
    return tokens[:-1] if len(tokens) > 2 and tokens[-1] in GENERATIONAL else tokens


def _exact_matches(mentions: list[Mention], hits: list[list[TextHit]]) -> list[ExactMatch]:
    """Nodes whose whole name is a mention (as analyzer tokens; "Jr." and "Sr." may be left out: `unsuffixed`), or
    a mention of several words less the "s" its last word ends with: a possessive typed without its apostrophe
    ("angelina jolies brother"), found among the hits of the mention's words but the last."""
    out = []
    by_tokens = dict(zip((m.tokens for m in mentions), hits))
    for mention, per_mention in zip(mentions, hits):
        found = len(out)
        for hit in per_mention:
            if title_form(unsuffixed(analyzer_tokens(hit.text))) == title_form(mention.tokens):
                out.append(ExactMatch(hit.key, mention, _SPACES.sub(" ", hit.text).strip() == mention.text, hit.score,
                                      hit.degree))
        last = mention.tokens[-1]
        if len(out) == found and len(mention.tokens) >= 2 and len(last) > 3 and last.endswith("s"):
            said = mention.tokens[:-1] + (last[:-1],)
            out.extend(ExactMatch(hit.key, mention, False, hit.score, hit.degree)
                       for hit in by_tokens.get(mention.tokens[:-1], ()) if analyzer_tokens(hit.text) == said)
    return out


FULLER_SAID = LINKING.fuller_said


def _fuller_names(mentions: list[Mention], hits: list[list[TextHit]], exact_matches: list[ExactMatch]
                  ) -> list[ExactMatch]:
    """A longer name that the question says more of than of a name it writes out whole: "who became president
    when henry harrison died" means `William Henry Harrison` (the words "henry harrison" in that order), not the
    node `Henry` its one word names exactly. For each mention that holds a shorter exact match, is no node's whole
    name and says more content words than that match, its best fulltext hit whose name holds the mention's words
    in order, has at least the exact match's edges and of whose content words the question says `FULLER_SAID`,
    counts as an exact match of the longer mention (`_maximal` then drops the shorter one). Without the last two
    conditions long titles won ("Countdown of 2011: No. 2 President Obama", "Coronation of Queen Elizabeth II").
    It can mislead: "the president of the european union" links `President of the European Commission` first."""
    exact: dict[tuple[int, int], tuple[int, int]] = {}  # span -> (content words, most edges of a node named so)
    for match in exact_matches:
        span = (match.mention.start, match.mention.end)
        words = _content_words(match.mention.tokens)
        exact[span] = (words, max(match.degree, exact.get(span, (words, 0))[1]))
    question_words = [t for m in mentions if m.words == 1 for t in m.tokens if t not in STOP_WORDS]
    out = []
    for mention, per_mention in zip(mentions, hits):
        if mention.words < 2 or (mention.start, mention.end) in exact:
            continue
        inner = [said for (s, e), said in exact.items() if mention.start <= s and e <= mention.end]
        if not inner:
            continue  # it holds no name written out whole: fuzzy matching is the fused ranking's
        words, degree = max(said for said, _ in inner), max(d for _, d in inner)
        if _content_words(mention.tokens) <= words:
            continue  # "language of china" says no more of `Government of China` than "china" of `China`
        for hit in per_mention:
            if (_holds_in_order(analyzer_tokens(hit.text), mention.tokens) and hit.degree >= degree
                    and name_overlap(hit.text, question_words) >= FULLER_SAID):
                out.append(ExactMatch(hit.key, mention, False, hit.score, hit.degree))
                break
    return out


# Of a question's single exact match, a node whose name holds the mention (in order) and that has at least this many
# times its edges is meant instead: "tupac" names a node `Tupac` (1 edge) and says part of `Tupac Shakur` (73), "henry
# viii" `Henry VIII` (2) and `Henry VIII of England` (31). Only where the question matches one name exactly: beside
# another ("anaheim california") the short name is what the question says; and not for a single word that is a
# noun in the dictionary ("which films are about panda": the MetaQA tag `panda`, not `Kung Fu Panda`).
BETTER_KNOWN = LINKING.better_known


def _better_known(matches: list[ExactMatch], mentions: list[Mention], hits: list[list[TextHit]]) -> list[ExactMatch]:
    """Per match, the best connected fulltext hit of its mention that holds the mention's words in a longer name and
    has `BETTER_KNOWN` times its edges, as a match of the same mention; [] where there is none."""
    by_mention = {m.tokens: per for m, per in zip(mentions, hits)}
    out, taken = [], {m.key for m in matches}
    for match in matches:
        if match.mention.words == 1 and is_a_noun(match.mention.tokens[0]):
            continue  # "which films are about panda": the tag `panda`, not `Kung Fu Panda`
        floor = BETTER_KNOWN * max(match.degree, 1)
        fuller = [hit for hit in by_mention.get(match.mention.tokens, ())
                  if hit.key not in taken and hit.degree >= floor
                  and _holds_in_order(analyzer_tokens(hit.text), match.mention.tokens)]
        if fuller:
            best = max(fuller, key=lambda hit: hit.degree)
            taken.add(best.key)
            out.append(ExactMatch(best.key, match.mention, False, best.score, best.degree))
    return out


# An acronym ("nra", "uk"; `may_be_acronym`) is looked up by meaning: the embedder places "nra" near `National Rifle
# Association`, and of the `ACRONYM_HITS` nodes nearest to the word alone, the best connected whose name it spells
# (`initials`) is linked. It replaces an exact match of the word only where `BETTER_KNOWN` (a node named "uk" against
# `United Kingdom`). Two letters alone link nothing: "sf giants", "la kings", "cs lewis" say part of a longer name.
ACRONYM_HITS = LINKING.acronym_hits
ACRONYM_ALONE = LINKING.acronym_alone


def _acronym_matches(mentions: list[Mention], exact: list[ExactMatch], backend, graph: str | None,
                     embed: Callable[[list[str]], np.ndarray]) -> list[ExactMatch]:
    """Per word that may be an acronym and lies in no longer name the question writes out ("obama" in "barack
    obama": a lookup of 20-30 ms that `_maximal` would drop), the node it spells (`ACRONYM_HITS`)."""
    longer = [(m.mention.start, m.mention.end) for m in exact if m.mention.words > 1]
    words = [m for m in mentions if m.words == 1 and may_be_acronym(m.tokens[0])
             and not any(start <= m.start and m.end <= end for start, end in longer)]
    if not words:
        return []
    out = []
    for mention, vector in zip(words, np.asarray(embed([m.text for m in words]), dtype=np.float32)):
        spelled = [hit for hit in backend.vector_hits(vector, graph, ACRONYM_HITS)
                   if initials(hit.text) == mention.tokens[0]]
        if spelled:
            best = max(spelled, key=lambda hit: hit.degree)
            out.append(ExactMatch(best.key, mention, False, best.score, best.degree))
    return out


def _with_acronyms(exact: list[ExactMatch], acronyms: list[ExactMatch]) -> list[ExactMatch]:
    out = list(exact)
    for acronym in acronyms:
        same = [m for m in exact if m.mention.tokens == acronym.mention.tokens]
        if not same and len(acronym.mention.tokens[0]) < ACRONYM_ALONE:
            continue
        if all(acronym.degree >= BETTER_KNOWN * max(m.degree, 1) for m in same):
            out = [m for m in out if m.mention.tokens != acronym.mention.tokens] + [acronym]
    return out


def _content_words(tokens: tuple[str, ...]) -> int:
    return sum(t not in STOP_WORDS for t in tokens)


def _holds_in_order(name: tuple[str, ...], words: tuple[str, ...]) -> bool:
    n = len(words)
    return len(name) > n and any(name[i:i + n] == words for i in range(len(name) - n + 1))


def _maximal(matches: list[ExactMatch]) -> list[ExactMatch]:
    """Drops a match whose mention lies inside another match's longer mention ("Hanks" in "Tom Hanks")."""
    spans = {(m.mention.start, m.mention.end) for m in matches}
    return [m for m in matches
            if not any(s <= m.mention.start and m.mention.end <= e and (s, e) != (m.mention.start, m.mention.end)
                       for s, e in spans)]


def _order_exact(matches: list[ExactMatch], prior: MentionPrior | None,
                 relation_words: frozenset[str] = frozenset()) -> list[ExactMatch]:
    """Most probable topic first: link probability (with a prior); a mention that names a relation last, then a
    better connected node right after another match (a place qualifying it); longer mention, exact case, more
    edges, higher fulltext score (rarer words score higher), then key."""
    named = {m.mention.tokens: names_a_relation(m.mention.tokens, relation_words) for m in matches}
    smallest_ending = {}  # mention end -> the least connected node matched there
    for m in matches:
        smallest_ending[m.mention.end] = min(m.degree, smallest_ending.get(m.mention.end, m.degree))

    def qualifies(match: ExactMatch) -> bool:  # "brentwood tennessee": a bigger place right after a match
        before = smallest_ending.get(match.mention.start)
        return before is not None and match.degree > before

    def order(match: ExactMatch) -> tuple:
        probability = prior.probability(match.mention.tokens) if prior is not None else 0.0
        return (-probability, named[match.mention.tokens], qualifies(match), -match.mention.words,
                not match.case_exact, -match.degree, -round(match.score, 6), match.key)

    return sorted(matches, key=order)
