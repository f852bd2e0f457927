"""Few-shot adaptation of the zero-shot reader to a graph's own questions: its lexicon (`reader.lexicon`), learned
from the questions the graph has answers for (ingested or given as feedback), and used only where it measured no
worse than the zero-shot reader alone.

The measure is cross-validation on those questions (`LexiconSettings.folds` folds): each fold is read with a
lexicon learned from the other folds, and compared, question by question, with the zero-shot reader's reading
(strict Hit@1: the first answer is gold). The lexicon kept is learned from all the questions. The same readings
refit the intercept of the answers' confidence for the reader kept (`reader.confidence.Calibration.refit`).

Then the walk encoder (`reader.walk_encoder`): the general one's adapters tuned further on the graph's questions
(`fewshot_walk_encoder`), measured the same way (`EncoderAdaptation.folds` folds) and kept only where they read the
held-out folds better than the general encoder: they learn how this graph's people phrase its walks, which the
general one may not know ("kribble" for a menu), and a few questions could as well teach it noise. What is kept is
the mean of the folds' tuned adapters, which together saw every question, so no tuning follows the measurement.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from gretriever_neo4j.errors import ConfigError


@dataclass
class AnsweredQuestion:
    """A question the graph has answers for, ready to read: the reader's input and which nodes are gold."""

    item: object  # reader.ReaderInput
    masked_vector: np.ndarray
    full_vector: np.ndarray
    is_gold: np.ndarray  # (N,) per node of item.view


def answered_questions(items: Sequence, answers: Sequence[Sequence[str]], embed) -> list[AnsweredQuestion]:
    """`items` (`reader.ReaderInput`) with their gold answers (node keys, or names) and the question vectors."""
    from gretriever_neo4j import metrics

    if not items:
        return []
    vectors = np.asarray(embed([t for item in items for t in (item.masked, item.question)]), dtype=np.float32)
    out = []
    for i, (item, gold) in enumerate(zip(items, answers)):
        wanted = {metrics.normalize(a) for a in gold}
        is_gold = np.asarray([k in gold or metrics.normalize(k) in wanted or metrics.normalize(t) in wanted
                              for k, t in zip(item.view.node_keys, item.view.node_texts)], dtype=bool)
        out.append(AnsweredQuestion(item, vectors[2 * i], vectors[2 * i + 1], is_gold))
    return out


def _hit(reading, question: AnsweredQuestion) -> bool:
    return bool(reading.answers) and bool(question.is_gold[reading.answers[0]])


@dataclass(frozen=True)
class LexiconFit:
    """What `fewshot_lexicon` learned and measured."""

    lexicon: object  # reader.lexicon.GraphLexicon, learned from all the questions
    details: dict  # what cross-validation measured, and whether the lexicon is kept
    learn_on: Callable  # learn_on(rows): the lexicon learned from those questions alone
    readings: list  # each question read without a lexicon (what is adapted after it can start from them)


def fewshot_lexicon(questions: Sequence[AnsweredQuestion], reader_for: Callable, settings=None,
                    seed: int = 0) -> LexiconFit:
    """The graph's lexicon learned from `questions` and cross-validated on them (`LexiconFit`).
    `reader_for(lexicon)` makes the zero-shot reader that reads with a lexicon (None: without)."""
    from gretriever_neo4j.reader import read
    from gretriever_neo4j.reader.confidence import CALIBRATION, answer_evidence
    from gretriever_neo4j.reader.lexicon import LexiconSettings, learn, lexicon_example

    settings = settings or LexiconSettings()
    started = time.perf_counter()
    base = reader_for(None)
    readings = [read(base, q.item, q.masked_vector, q.full_vector) for q in questions]
    before = [_hit(r, q) for r, q in zip(readings, questions)]
    examples = [lexicon_example(r, q.is_gold, base.texts) for r, q in zip(readings, questions)]
    after = list(before)
    evidence_before = [answer_evidence(r) for r in readings]
    evidence_after = list(evidence_before)
    folds = min(settings.folds, len(questions))
    order = np.random.default_rng(seed).permutation(len(questions))
    reread = 0
    for fold in range(folds):
        held = set(order[fold::folds].tolist()) if folds > 1 else set()
        lexicon = learn([e for i, e in enumerate(examples) if e is not None and i not in held], settings)
        if not len(lexicon):
            continue
        reader = reader_for(lexicon)
        for i in sorted(held):
            q = questions[i]
            reading = read(reader, q.item, q.masked_vector, q.full_vector)
            after[i], evidence_after[i] = _hit(reading, q), answer_evidence(reading)
            reread += 1
    lexicon = learn([e for e in examples if e is not None], settings)
    n = len(questions)
    adopted = bool(len(lexicon)) and (n == 0 or float(np.mean(after)) >= float(np.mean(before)))
    # the confidence of the reader kept, fitted again on how often it was right on these questions (held out)
    hits, evidence = (after, evidence_after) if adopted else (before, evidence_before)
    known = [(e, h) for e, h in zip(evidence, hits) if e is not None]
    calibration = CALIBRATION.refit([e for e, _ in known], [h for _, h in known]) if known else CALIBRATION
    details = {
        "questions": n, "entries": len(lexicon), "before": float(np.mean(before)) if n else None,
        "after": float(np.mean(after)) if n else None, "folds": folds, "reread": reread,
        "measured_on": f"{folds}-fold cross-validation on the graph's own questions (strict Hit@1)",
        "adopted": adopted, "calibration": calibration.to_dict(),
        "seconds": round(time.perf_counter() - started, 1),
    }

    def learn_on(rows: Sequence[int]):
        return learn([examples[i] for i in rows if examples[i] is not None], settings)

    return LexiconFit(lexicon, details, learn_on, readings)


@dataclass(frozen=True)
class EncoderAdaptation:
    """How `gqa train` tunes the general walk encoder's adapters further on a graph's own questions
    (`fewshot_walk_encoder`)."""

    folds: int = 3  # cross-validation folds
    epochs: int = 8
    learning_rate: float = 5e-4
    batch: int = 8  # questions per optimizer step
    min_questions: int = 10  # with fewer, the general encoder as it is: too few to tell a gain from chance
    candidates: int = 8  # walks per question tuned on (the encoder may read more: its own `candidates`); 8 keeps
    # a warm `gqa train` within its two minutes
    layers: int | None = 2  # the last layers whose adapters are tuned further, the lower ones' kept and what they
    # compute read once per text (`train.walk_encoder.fine_tune`'s `top`); None: all
    final: str = "soup"  # what is kept where cross-validation measured a gain: "soup", the mean of the folds'
    # encoders (`train.walk_encoder_soup`; no tuning after the folds), or "tuned", tuned once more on every question
    seed: int = 0

    def __post_init__(self) -> None:
        if self.final not in ("soup", "tuned"):
            raise ConfigError(f"field 'final': must be 'soup' or 'tuned', got {self.final!r}")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def walk_example(reading, question: AnsweredQuestion, weights, candidates: int):
    """The walk encoder's training example of one read question (`train.walk_encoder.WalkQuestion`): the walks it
    reads (`reader.walk_encoder.candidate_rows`) with the F1 of their end nodes; None where no walk was read."""
    from gretriever_neo4j.reader.learned import end_node_f1
    from gretriever_neo4j.reader.walk_encoder import candidate_rows
    from gretriever_neo4j.reader.walk_shapes import signature_question

    from .walk_encoder import WalkQuestion

    table = reading.signature_table
    if table is None or not len(table.used):
        return None
    rows = candidate_rows(table, weights, candidates)
    if len(rows) < 2:
        return None
    used = table.used[rows]
    texts = [signature_question(question.item.view.relation_texts, reading.walks.signatures[s])
             for s in used.tolist()]
    return WalkQuestion(question.item.masked, texts, end_node_f1(reading, question.is_gold)[used],
                        table.features[rows] @ weights.vector(), graph="")


def fewshot_walk_encoder(questions: Sequence[AnsweredQuestion], reader_for: Callable, general,
                         settings: EncoderAdaptation | None = None, lexicon_of: Callable | None = None,
                         readings: Sequence | None = None):
    """(saved, details): the general walk encoder (`general`, a `reader.walk_encoder.WalkEncoder` loaded from
    low-rank adapters) tuned further on the graph's `questions`, as the (config, tensors) that
    `reader.walk_encoder.write_saved` writes, or None where cross-validation on them measured it no better than the
    general one. What is kept is the mean of the folds' encoders (`settings.final` "soup"; each was tuned on all
    the questions but its fold, so together they saw every question) or one tuned again on all of them ("tuned").
    `reader_for(lexicon, encoder)` makes the reader as `gqa ask` would read with them; `lexicon_of(rows)` is the
    graph's lexicon learned from those questions alone (None: the graph keeps none), so that each fold is read with
    a lexicon that did not see it, by either encoder. `readings`: the questions as `reader_for(None, general)`
    reads them, where the caller has them already (`LexiconFit.readings`), so they are not read again."""
    import copy

    from sentence_transformers import SentenceTransformer

    from gretriever_neo4j.embedding.embedder import resolve_model_location
    from gretriever_neo4j.reader import read
    from gretriever_neo4j.reader.confidence import CALIBRATION, answer_evidence
    from gretriever_neo4j.reader.walk_encoder import WalkEncoder, read_saved, tuned_state, with_lora

    from .walk_encoder import EncoderConfig, fine_tune
    from .walk_encoder_soup import soup

    settings = settings or EncoderAdaptation()
    started = time.perf_counter()
    config, n = general.config, len(questions)
    details = {"questions": n, "settings": settings.to_dict(), "adopted": False,
               "measured_on": f"{settings.folds}-fold cross-validation on the graph's own questions (strict Hit@1)"}
    if config.adapter != "lora" or n < settings.min_questions:
        details["why"] = (f"{n} questions: fewer than {settings.min_questions}" if config.adapter == "lora" else
                          "the general encoder has no adapters to tune further")
        return None, details
    state = read_saved(general.source)[1]  # the adapters, to tune further
    plain = reader_for(None, general)  # what the walks to tune on are chosen by
    if readings is None:
        readings = [read(plain, q.item, q.masked_vector, q.full_vector) for q in questions]
    examples = [walk_example(r, q, plain.weights, settings.candidates) for r, q in zip(readings, questions)]
    tuning = EncoderConfig(epochs=settings.epochs, learning_rate=settings.learning_rate, batch=settings.batch,
                           seed=settings.seed)
    base = SentenceTransformer(resolve_model_location(config.base), device="cpu")

    lower_states = {}  # what the frozen layers below the tuned ones compute, the same for every fold: read once

    def tuned(rows):
        model = with_lora(copy.deepcopy(base), config, state)
        return fine_tune(model, [examples[i] for i in rows if examples[i] is not None], tuning, log=False,
                         top=settings.layers, lower_states=lower_states)

    before, after, evidence, parts = [False] * n, [False] * n, [None] * n, []
    order = np.random.default_rng(settings.seed).permutation(n)
    for fold in range(settings.folds):
        held = order[fold::settings.folds].tolist()
        rows = sorted(set(range(n)) - set(held))
        lexicon = lexicon_of(rows) if lexicon_of is not None else None
        untuned = reader_for(lexicon, general) if lexicon is not None else None  # None: as `readings` read
        model = tuned(rows)
        parts.append((config, tuned_state(model, config)))
        reader = reader_for(lexicon, WalkEncoder(model, config, onnx=False))
        for i in held:
            q = questions[i]
            before[i] = _hit(readings[i] if untuned is None else read(untuned, q.item, q.masked_vector,
                                                                         q.full_vector), q)
            reading = read(reader, q.item, q.masked_vector, q.full_vector)
            after[i], evidence[i] = _hit(reading, q), answer_evidence(reading)
    details.update(before=float(np.mean(before)), after=float(np.mean(after)))
    details["adopted"] = details["after"] > details["before"]
    saved = None
    if details["adopted"]:  # the confidence of the tuned reader, fitted on its held-out readings
        known = [(e, h) for e, h in zip(evidence, after) if e is not None]
        details["calibration"] = CALIBRATION.refit([e for e, _ in known], [h for _, h in known]).to_dict()
        saved = (soup(parts, config.candidates) if settings.final == "soup" and len(parts) > 1
                 else (config, tuned_state(tuned(range(n)), config)))
    details["seconds"] = round(time.perf_counter() - started, 1)
    return saved, details
