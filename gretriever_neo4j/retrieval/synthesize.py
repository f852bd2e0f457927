"""Self-supervised questions from a knowledge graph alone: relation paths turned into questions.

A graph nobody wrote questions for still says what can be asked of it: every relation path from an entity is a
question whose answers are the nodes the path reaches. Here

1. **paths** are sampled per start entity: a start is a named node that is not a hub (degree at most the
   `hub_quantile` of the graph's degrees); each step picks uniformly among the distinct relations (with their
   direction) leaving the current node, then one of its edges, so rare relations are asked about as often as
   frequent ones. Hop counts 1..`max_hops` are drawn evenly. Nodes whose text is an opaque id (Freebase CVTs)
   are passed through: a step that lands on one is followed by another step and does not count as a hop.
2. the path's **signature** (relation texts and directions) is executed from the start over the whole graph
   (`weak_labels.follow`): every node it reaches is an answer (multi-answer paths), minus the start itself and
   opaque nodes; paths reaching more than `max_answers` nodes (through hubs) are dropped.
3. **questions** are written from templates over humanized relation names (`texts.humanize_relation`),
   several phrasings per path, forward and backward steps phrased differently ("the directed by of X" vs "the
   things whose directed by is X").

Everything is a pure function of the KG's arrays and a seed. `to_rows` gives the rows `gqa ingest questions`
reads (JSON lines: question, answers, topic_entities, split, id).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.language import WORDS
from gretriever_neo4j.retrieval.kg import KnowledgeGraph
from gretriever_neo4j.retrieval.texts import humanize_relation, is_opaque
from gretriever_neo4j.retrieval.weak_labels import BACKWARD, FORWARD, Step, follow
from gretriever_neo4j.settings import require_positive_integers

# {x}: the phrase of what is asked (see `describe`); a question states it with one of these
WRAPPERS = WORDS.wrappers
FORWARD_STEP = WORDS.forward_step  # x --r--> answer ("'s" only right after the topic's name)
BACKWARD_STEP = WORDS.backward_step  # answer --r--> x


@dataclass(frozen=True)
class SynthesisConfig:
    questions: int = 6000  # paths to sample (each gives `phrasings` questions)
    phrasings: int = 2
    max_hops: int = 3
    max_steps: int = 5  # steps including those through opaque nodes
    max_answers: int = 50
    hub_quantile: float = 0.99  # starts have a degree at most this quantile of the graph's degrees
    attempts_per_path: int = 4
    seed: int = 0

    def __post_init__(self) -> None:
        require_positive_integers(self, ("questions", "phrasings", "max_hops", "max_steps", "max_answers",
                                         "attempts_per_path"))
        if not 0.0 < self.hub_quantile <= 1.0:
            raise InputError(f"must lie in (0, 1], got {self.hub_quantile!r}", field="hub_quantile")


@dataclass(frozen=True)
class SyntheticQuestion:
    text: str
    topic: str  # node key of the start entity
    answers: list[str]  # node keys reached by the path
    signature: tuple[Step, ...]
    hops: int
    qid: str


@dataclass
class Synthesis:
    questions: list[SyntheticQuestion]
    paths: int  # distinct (start, signature) paths kept
    by_signature: Counter = field(default_factory=Counter)  # signature text -> paths
    seconds: float = 0.0
    dropped: dict[str, int] = field(default_factory=dict)  # why sampled walks were not kept

    def report(self) -> dict:
        return {"paths": self.paths, "questions": len(self.questions), "seconds": round(self.seconds, 2),
                "signatures": len(self.by_signature), "dropped": dict(self.dropped),
                "paths_per_signature": dict(self.by_signature.most_common())}


def signature_text(kg: KnowledgeGraph, signature) -> str:
    return " ".join(f"{kg.relation_texts[r]}>" if d == FORWARD else f"<{kg.relation_texts[r]}" for r, d in signature)


def describe(kg: KnowledgeGraph, signature, topic: str, rng: np.random.Generator) -> str:
    """The phrase naming what the path reaches from `topic`, innermost step first ("the release year of the
    things whose directed by is X")."""
    phrase = topic
    for relation, direction in signature:
        words = humanize_relation(kg.relation_texts[relation])
        templates = (FORWARD_STEP if phrase == topic else FORWARD_STEP[:1]) if direction == FORWARD else BACKWARD_STEP
        phrase = templates[int(rng.integers(len(templates)))].format(r=words, x=phrase)
    return phrase


def phrase_questions(kg: KnowledgeGraph, signature, topic: str, count: int, rng: np.random.Generator) -> list[str]:
    """`count` distinct phrasings (fewer when the templates run out)."""
    out: dict[str, None] = {}
    for _ in range(count * 4):
        if len(out) >= count:
            break
        wrapper = WRAPPERS[int(rng.integers(len(WRAPPERS)))]
        out.setdefault(wrapper.format(x=describe(kg, signature, topic, rng)), None)
    return list(out)


def _start_pool(kg: KnowledgeGraph, config: SynthesisConfig, opaque: np.ndarray) -> np.ndarray:
    degree = kg.degree
    limit = np.quantile(degree[degree > 0], config.hub_quantile) if (degree > 0).any() else 0
    return np.flatnonzero((degree > 0) & (degree <= max(limit, 1)) & ~opaque)


def sample_walk(kg: KnowledgeGraph, start: int, hops: int, config: SynthesisConfig, opaque: np.ndarray,
                rng: np.random.Generator) -> tuple[Step, ...] | None:
    """A signature of `hops` named hops from `start` (None when the walk runs dry): each step a uniform choice
    among the distinct (relation, direction) leaving the node, then among its edges; steps onto opaque nodes
    are followed by another step and do not count."""
    node, signature, named = start, [], 0
    while named < hops and len(signature) < config.max_steps:
        inc = kg.incident(np.asarray([node]))
        back = inc.neighbour != start
        if not back.any():
            return None
        edge, neighbour, outgoing = inc.edge[back], inc.neighbour[back], inc.outgoing[back]
        codes = kg.relation[edge] * 2 + np.where(outgoing, FORWARD, BACKWARD)
        distinct = np.unique(codes)
        code = int(distinct[rng.integers(len(distinct))])
        choices = np.flatnonzero(codes == code)
        pick = int(choices[rng.integers(len(choices))])
        signature.append((code // 2, code % 2))
        node = int(neighbour[pick])
        if not opaque[node]:
            named += 1
    return tuple(signature) if named == hops else None


def synthesize(kg: KnowledgeGraph, config: SynthesisConfig = SynthesisConfig()) -> Synthesis:
    """Questions from the graph's own relation paths (see the module docstring)."""
    started = time.perf_counter()
    if kg.num_edges == 0:
        raise InputError("the graph has no edges: no relation path to ask about", field="graph")
    rng = np.random.default_rng(config.seed)
    opaque = np.asarray([is_opaque(t) for t in kg.node_texts], dtype=bool)
    pool = _start_pool(kg, config, opaque)
    if pool.size == 0:
        raise InputError("the graph has no named node with edges to start a question from", field="graph")
    questions: list[SyntheticQuestion] = []
    seen: set[tuple[int, tuple]] = set()
    by_signature: Counter = Counter()
    dropped: Counter = Counter()
    for i in range(config.questions * config.attempts_per_path):
        if len(seen) >= config.questions:
            break
        hops = 1 + i % config.max_hops
        start = int(pool[rng.integers(pool.size)])
        signature = sample_walk(kg, start, hops, config, opaque, rng)
        if signature is None:
            dropped["walk ran dry"] += 1
            continue
        if (start, signature) in seen:
            dropped["repeated"] += 1
            continue
        reached = follow(kg, np.asarray([start]), signature)[0][-1]
        answers = [int(n) for n in reached.tolist() if n != start and not opaque[n]]
        if not answers:
            dropped["no named answer"] += 1
            continue
        if len(answers) > config.max_answers:
            dropped["too many answers (hub)"] += 1
            continue
        seen.add((start, signature))
        by_signature[signature_text(kg, signature)] += 1
        topic = kg.node_texts[start]
        answer_keys = [kg.node_keys[n] for n in answers]
        for j, text in enumerate(phrase_questions(kg, signature, topic, config.phrasings, rng)):
            questions.append(SyntheticQuestion(text=text, topic=kg.node_keys[start], answers=answer_keys,
                                               signature=signature, hops=hops, qid=f"synth-{len(seen)}-{j}"))
    return Synthesis(questions=questions, paths=len(seen), by_signature=by_signature,
                     seconds=time.perf_counter() - started, dropped=dict(dropped))


def split_by_path(questions: list[SyntheticQuestion], val_fraction: float, seed: int = 0
                  ) -> tuple[list[SyntheticQuestion], list[SyntheticQuestion]]:
    """(train, val) with all phrasings of a path on the same side (a phrasing must not test its twin)."""
    paths = sorted({q.qid.rsplit("-", 1)[0] for q in questions})
    rng = np.random.default_rng(seed)
    val = set(rng.choice(paths, size=int(round(val_fraction * len(paths))), replace=False).tolist()) if paths else set()
    return ([q for q in questions if q.qid.rsplit("-", 1)[0] not in val],
            [q for q in questions if q.qid.rsplit("-", 1)[0] in val])


def to_rows(questions: list[SyntheticQuestion], split: str | None = None) -> list[dict]:
    """Rows in the format `gqa ingest questions` reads as JSON lines."""
    return [{"id": q.qid, "question": q.text, "answers": list(q.answers), "topic_entities": [q.topic],
             **({"split": split} if split else {})} for q in questions]
