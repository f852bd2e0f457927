"""A graph's own lexicon: which words of its people's questions name which of its relations, learned from the
questions it has answers for (`gqa ingest questions`, feedback).

The zero-shot reader knows a relation is named by a word its embedder rates near the relation's name, or that
shares its stem. A graph's users say things no embedder relates to its relation names: "what's on the *menu* at
X" for `served at`, "X's *other half*" for `spouse`. One answered question shows which walk the words meant; a
few show which word meant which step. The lexicon holds those pairs, and `reader.coverage` reads a learned pair
as it reads a shared stem (`GraphLexicon.naming`).

Learning (`learn`): for each answered question, the walk signature whose end nodes answer it best (ties: the one
the reader already scored highest) is the walk the question meant. Its relations that no word of the question
names already (`coverage.naming_matrix`) must be named by the words that name nothing else: an IBM-model-1
alignment (EM) shares each such relation among those words (and a null word), across questions, so a word seen
with one relation each time wins it. A word keeps a relation when it was aligned to it `min_count` times in all,
and the relation holds `min_share` of the word's alignments. Words and adjacent word pairs ("other half") are
aligned alike, by their lemmas.

The settings are saved with the lexicon (`LexiconSettings`); `fewshot_choice` decides whether a graph's lexicon is
used at all, by cross-validation on its own questions.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.settings import from_known_fields

FORMAT = "gqa-lexicon/1"
FILE = "lexicon.json"


@dataclass(frozen=True)
class LexiconSettings:
    min_count: float = 0.5  # expected alignments of a word to a relation, over all questions, to keep the pair
    min_share: float = 0.5  # ... and of the word's alignments, the share to that relation: t(relation | word)
    strength: float = 0.6  # the similarity a learned pair counts as (a shared stem's is `coverage.LEXICAL`, 0.8)
    null_weight: float = 0.5  # the null word's weight against a word's t(relation | word) (a relation no word says)
    iterations: int = 10  # EM iterations
    folds: int = 5  # cross-validation folds of `train.fewshot`
    remember_above: float = 0.97  # a question this similar to an answered one (masked, unit vectors) may mean its walk

    @classmethod
    def from_dict(cls, data: dict) -> LexiconSettings:
        return from_known_fields(cls, data, what="lexicon settings")


@dataclass(frozen=True)
class LexiconEntry:
    gram: str  # lemmas of a word or of two adjacent words, space-separated
    relation: str  # the relation's text as stored
    count: float  # expected alignments over the questions learned from
    share: float  # of the gram's alignments, the share to this relation: t(relation | gram)


@dataclass(frozen=True)
class RememberedWalk:
    question: str  # an answered question, its anchor masked, as the reader read it
    walk: tuple[tuple[str, int], ...]  # the walk it meant: (relation text, direction) steps


@dataclass(frozen=True)
class GraphLexicon:
    entries: tuple[LexiconEntry, ...] = ()
    settings: LexiconSettings = field(default_factory=LexiconSettings)
    questions: int = 0  # answered questions it was learned from
    walks: tuple[RememberedWalk, ...] = ()

    def __post_init__(self):
        index: dict[str, dict[str, float]] = defaultdict(dict)
        for entry in self.entries:
            index[entry.gram][entry.relation] = max(index[entry.gram].get(entry.relation, 0.0), entry.share)
        object.__setattr__(self, "_index", dict(index))

    def __len__(self) -> int:
        return len(self.entries) + len(self.walks)

    def remembered(self, question_unit: np.ndarray, signatures: Sequence, relation_texts: Sequence[str],
                   vectors) -> np.ndarray:
        """(S,) per signature, the similarity of the question (`question_unit`: masked, a unit vector) to the most
        similar remembered question that meant this walk, where at least `remember_above`; else 0. `vectors`: the
        reader's `TextVectors`."""
        out = np.zeros(len(signatures))
        if not self.walks or question_unit is None:
            return out
        similarity = vectors([w.question for w in self.walks]) @ np.asarray(question_unit, np.float32)
        near = np.flatnonzero(similarity >= self.settings.remember_above)
        if not len(near):
            return out
        index = {tuple((relation_texts[int(r)], int(d)) for r, d in signature): s
                 for s, signature in enumerate(signatures) if len(signature)}
        for w in near.tolist():
            s = index.get(self.walks[w].walk)
            if s is not None:
                out[s] = max(out[s], float(similarity[w]))
        return out

    def naming(self, grams: Sequence[str], relation_texts: Sequence[str]) -> np.ndarray:
        """(G, R): how well each gram names each relation by this lexicon (`strength` times the pair's share;
        0 where it holds no pair)."""
        out = np.zeros((len(grams), len(relation_texts)), np.float32)
        if not self.entries:
            return out
        column: dict[str, list[int]] = defaultdict(list)
        for r, text in enumerate(relation_texts):
            column[text].append(r)
        for g, gram in enumerate(grams):
            for relation, share in self._index.get(gram_key(gram), {}).items():
                for r in column.get(relation, ()):
                    out[g, r] = self.settings.strength * share
        return out

    def to_dict(self) -> dict:
        return {"format": FORMAT, "settings": asdict(self.settings), "questions": self.questions,
                "entries": [asdict(e) for e in self.entries],
                "walks": [{"question": w.question, "walk": [list(step) for step in w.walk]} for w in self.walks]}

    @classmethod
    def from_dict(cls, data: dict, source: str = "lexicon") -> GraphLexicon:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ConfigError(f"{source}: not a gqa lexicon ({FORMAT} expected)")
        try:
            entries = tuple(LexiconEntry(**e) for e in data.get("entries", []))
            walks = tuple(RememberedWalk(str(w["question"]), tuple((str(r), int(d)) for r, d in w["walk"]))
                          for w in data.get("walks", []))
        except (TypeError, KeyError, ValueError) as error:
            raise ConfigError(f"{source}: field 'entries': {error}") from None
        return cls(entries=entries, settings=LexiconSettings.from_dict(data.get("settings", {})),
                   questions=int(data.get("questions", 0)), walks=walks)

    def save(self, path: Path) -> Path:
        partial = path.with_name(path.name + ".partial")
        partial.write_text(json.dumps(self.to_dict(), indent=1))
        partial.replace(path)
        return path

    @classmethod
    def load(cls, path: Path) -> GraphLexicon:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as error:
            raise ConfigError(f"{path} is not a readable lexicon ({error.__class__.__name__}): train again with "
                              f"`gqa train`") from None
        return cls.from_dict(data, source=str(path))


def gram_key(gram: str) -> str:
    """A gram by its words' shortest lemmas: "dads" and "dad", "married" and "marry" are one key."""
    from gretriever_neo4j.retrieval.naming import word_lemmas

    return " ".join(min(word_lemmas(w), key=lambda lemma: (len(lemma), lemma)) for w in gram.split())


@dataclass(frozen=True)
class LexiconExample:
    """One answered question as the lexicon learns from it: its grams, the relations of the walk it meant that
    no gram names already, and the grams free to name them (those naming no relation of that walk)."""

    grams: tuple[str, ...]  # gram keys
    unnamed: tuple[str, ...]  # relation texts
    free: tuple[str, ...]  # gram keys
    remembered: RememberedWalk | None = None  # the question and the walk it meant


def learn(examples: Sequence[LexiconExample], settings: LexiconSettings = LexiconSettings()) -> GraphLexicon:
    """The lexicon of `examples` (see the module docstring)."""
    pairs = [(e.free, e.unnamed) for e in examples if e.free and e.unnamed]
    t: dict[tuple[str, str], float] = defaultdict(lambda: 1.0)  # t(relation | gram); uniform at first
    counts: dict[tuple[str, str], float] = {}
    for _ in range(max(1, settings.iterations)):
        counts = defaultdict(float)
        for free, unnamed in pairs:
            for relation in unnamed:
                weights = np.asarray([t[(g, relation)] for g in free] + [settings.null_weight])
                posterior = weights / weights.sum()
                for g, p in zip(free, posterior[:-1].tolist()):
                    counts[(g, relation)] += p
        totals: dict[str, float] = defaultdict(float)
        for (g, _), c in counts.items():
            totals[g] += c
        t = defaultdict(float, {(g, r): c / totals[g] for (g, r), c in counts.items()})
    entries = []
    for (g, relation), count in sorted(counts.items()):
        share = t[(g, relation)]
        if count >= settings.min_count and share >= settings.min_share:
            entries.append(LexiconEntry(gram=g, relation=relation, count=round(count, 3), share=round(share, 3)))
    walks = tuple(dict.fromkeys(e.remembered for e in examples if e.remembered is not None))
    return GraphLexicon(entries=tuple(entries), settings=settings, questions=len(examples), walks=walks)


def meant_walk(reading, is_gold: np.ndarray) -> int | None:
    """The walk signature of a zero-shot `reading` the question meant: the one whose end nodes answer it best
    (F1 against `is_gold`, per node of the view), of those the reader shortlisted; ties go to the one it scored
    highest. None where no shortlisted walk reaches a gold node."""
    from gretriever_neo4j.reader.learned import end_node_f1

    table = reading.signature_table
    if table is None or not len(table.used):
        return None
    f1 = end_node_f1(reading, is_gold)[table.used]
    f1 = np.where(table.shortlisted, f1, 0.0)
    if f1.max() <= 0:
        return None
    best = np.flatnonzero(f1 >= f1.max() - 1e-9)
    return int(table.used[best[np.argmax(reading.signature_scores[table.used[best]])]])


def lexicon_example(reading, is_gold: np.ndarray, vectors) -> LexiconExample | None:
    """What a zero-shot `reading` of an answered question teaches the lexicon (`LexiconExample`), or None where
    no walk it read answers the question. `vectors`: the reader's `TextVectors`."""
    from gretriever_neo4j.reader.coverage import WORD_NAMES, naming_matrix
    from gretriever_neo4j.reader.wording import content_words, word_grams

    meant = meant_walk(reading, is_gold)
    if meant is None or reading.masked is None:
        return None
    relation_texts = reading.view.relation_texts
    grams = word_grams(content_words(reading.masked))
    walk = sorted({int(r) for r, _ in reading.walks.signatures[meant]})
    matrix = naming_matrix(grams, relation_texts, vectors)
    centered = matrix - matrix.mean(axis=1, keepdims=True)
    # a gram names the relation it is nearest, where near enough (as `coverage` reads it): "mum" nearer `father of`
    # than `mother of` names neither of the walk's relations, and learns which it means
    best = np.where(centered.max(axis=1) >= WORD_NAMES, centered.argmax(axis=1), -1)
    unnamed = [relation_texts[r] for r in walk if r not in best]
    free = [gram_key(g) for g, b in zip(grams, best) if b not in walk]
    steps = tuple((relation_texts[int(r)], int(d)) for r, d in reading.walks.signatures[meant])
    return LexiconExample(grams=tuple(gram_key(g) for g in grams), unnamed=tuple(dict.fromkeys(unnamed)),
                          free=tuple(dict.fromkeys(free)), remembered=RememberedWalk(reading.masked, steps))
