"""Validation and prediction: loss, what the model answers, collapse detection; label scoring for label tasks.

Without a label set, validation reads the greedy first answer token of every sample from the loss's own forward
pass. With one (ExplaGraphs: support/counter), the label tokens' likelihoods decide (`model.label_scoring`): the
validation loss is the cross-entropy over the labels, and accuracy and the predicted-label shares come from the
same pass. `predict_labels` is the fast test-time path (one forward pass per batch, no generation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch.utils.data import DataLoader

from ..errors import InputError
from ..model.gretriever import GraphQAModel
from ..model.label_scoring import choice_loss, score_batch
from ..model.sample import QASample, collate
from .distributed import World, gather, mean_across


@dataclass(frozen=True)
class Validation:
    loss: float  # mean per-batch loss, as the reference averages its validation loss
    predicted_shares: dict[str, float]  # predicted first answer token (or label) -> share of the samples
    gold_shares: dict[str, float]  # gold first answer token (or label) -> share
    collapse: str | None  # set when one prediction dominates far beyond its gold share
    accuracy: float | None = None  # with a label set: share of samples whose chosen label is the gold one


COLLAPSE_SHARE = 0.9  # one predicted first token for at least this share of the samples...
COLLAPSE_EXCESS = 0.2  # ...and at least this much more often than the gold answers start with it


@torch.no_grad()
def evaluate(model: GraphQAModel, samples: Sequence[QASample], batch_size: int = 16,
             num_workers: int = 0, world: World | None = None, labels: Sequence[str] | None = None,
             class_weights: Sequence[float] | None = None) -> Validation:
    """Validation loss and what the model would answer, from the same forward pass (see the module docs). A
    model that says the same thing to every question (ExplaGraphs: "support" for all) is flagged as collapsed.
    Distributed, each rank evaluates a slice and every rank gets the same result."""
    if not samples:
        raise InputError("no samples to evaluate")
    world = world or World()
    indices = list(range(len(samples)))[world.rank::world.size]
    was_training = model.training
    model.eval()
    losses: list[float] = []
    predicted: list = []
    gold: list = []
    try:
        for batch in (_loader(samples, indices, batch_size, num_workers) if indices else []):
            if labels:
                scores, chosen = score_batch(model, batch, labels)
                losses.append(float(choice_loss(scores, batch.labels, labels, class_weights)))
                predicted.extend(labels.index(c) for c in chosen)
                gold.extend(labels.index(g) if g in labels else -1 for g in batch.labels)
                continue
            loss, logits, targets = model.label_logits(batch)
            losses.append(float(loss))
            for row in range(targets.shape[0]):
                positions = (targets[row] != -100).nonzero()
                if len(positions):
                    first = int(positions[0])
                    predicted.append(int(logits[row, first].argmax()))
                    gold.append(int(targets[row, first]))
    finally:
        model.train(was_training)
    if world.distributed:
        predicted, gold = gather(predicted, world), gather(gold, world)
    accuracy = None
    if labels:
        accuracy = sum(p == g for p, g in zip(predicted, gold)) / max(len(gold), 1)
        decode = lambda ids: [labels[i] if i >= 0 else "(other)" for i in ids]
    else:
        decode = lambda ids: [model.tokenizer.decode([i]).strip() or repr(model.tokenizer.decode([i])) for i in ids]
    predicted_shares, gold_shares = _shares(decode(predicted)), _shares(decode(gold))
    loss = mean_across(losses, world) if world.distributed else sum(losses) / len(losses)
    return Validation(loss=loss, predicted_shares=predicted_shares, gold_shares=gold_shares,
                      collapse=collapse_warning(predicted_shares, gold_shares), accuracy=accuracy)


def evaluate_loss(model: GraphQAModel, samples: Sequence[QASample], batch_size: int = 16,
                  num_workers: int = 0) -> float:
    """Mean per-batch loss, as the reference averages its validation loss."""
    return evaluate(model, samples, batch_size, num_workers).loss


def _shares(tokens: list[str]) -> dict[str, float]:
    counts: dict[str, int] = {}
    for token in tokens:
        counts[token] = counts.get(token, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return {token: count / len(tokens) for token, count in ranked[:10]} if tokens else {}


def collapse_warning(predicted: dict[str, float], gold: dict[str, float]) -> str | None:
    """A message when one predicted first token covers >= COLLAPSE_SHARE of the samples and exceeds its gold
    share by >= COLLAPSE_EXCESS: the model answers everything alike, whatever the question."""
    if not predicted:
        return None
    token, share = next(iter(predicted.items()))
    if share >= COLLAPSE_SHARE and share - gold.get(token, 0.0) >= COLLAPSE_EXCESS:
        return (f"collapse: {share:.0%} of validation answers start with {token!r} (gold: "
                f"{gold.get(token, 0.0):.0%}); raise the learning rate or train longer")
    return None


@torch.no_grad()
def predict(model: GraphQAModel, samples: Sequence[QASample], batch_size: int = 16, num_workers: int = 0,
            max_new_tokens: int | None = None, labels: Sequence[str] | None = None) -> list[str]:
    """Generated answers for `samples`, in order; with `labels`, each answer is exactly one of them
    (constrained decoding, `model.constrained`). `predict_labels` gives the same labels without generating."""
    from ..model.constrained import TrieConstraint, item_token_ids, separator_ids

    constraint = None
    if labels:
        constraint = TrieConstraint(item_token_ids(model.tokenizer, list(labels)), separator_ids(model.tokenizer),
                                    model.stop_token_ids(), max_items=1)
    was_training = model.training
    model.eval()
    try:
        answers: list[str] = []
        for batch in _loader(samples, list(range(len(samples))), batch_size, num_workers):
            answers.extend(model.generate(batch, max_new_tokens=max_new_tokens,
                                          constraints=None if constraint is None else [constraint] * len(batch)))
    finally:
        model.train(was_training)
    return answers


@torch.no_grad()
def predict_labels(model: GraphQAModel, samples: Sequence[QASample], labels: Sequence[str],
                   batch_size: int = 16, num_workers: int = 0) -> list[str]:
    """The label of each sample by label scoring: what constrained generation would answer, one forward pass
    per batch when every label is one token."""
    was_training = model.training
    model.eval()
    try:
        answers: list[str] = []
        for batch in _loader(samples, list(range(len(samples))), batch_size, num_workers):
            answers.extend(score_batch(model, batch, labels)[1])
    finally:
        model.train(was_training)
    return answers


def _loader(samples: Sequence[QASample], order: list[int], batch_size: int, num_workers: int) -> DataLoader:
    ordered = [samples[i] for i in order]
    # An own generator: a DataLoader otherwise draws its worker seed from the global RNG, which would make the
    # dropout stream of a resumed run differ from an uninterrupted one.
    return DataLoader(ordered, batch_size=batch_size, shuffle=False, collate_fn=collate, num_workers=num_workers,
                      generator=torch.Generator().manual_seed(0))
