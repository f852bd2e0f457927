"""Few-shot adaptation of the zero-shot reader to a graph's own questions: its lexicon (`reader.lexicon`), learned
from the questions the graph has answers for (ingested or given as feedback), and used only where it measured no
worse than the zero-shot reader alone.

The measure is cross-validation on those questions (`LexiconSettings.folds` folds): each fold is read with a
lexicon learned from the other folds, and compared, question by question, with the zero-shot reader's reading
(strict Hit@1: the first answer is gold). The lexicon kept is learned from all the questions. The same readings
refit the intercept of the answers' confidence for the reader kept (`reader.confidence.Calibration.refit`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


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


def fewshot_lexicon(questions: Sequence[AnsweredQuestion], reader_for: Callable, settings=None, seed: int = 0):
    """(lexicon, details): the graph's lexicon learned from `questions` and what cross-validation measured.
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
    return lexicon, details
