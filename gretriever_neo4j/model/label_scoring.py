"""Classification by label scoring: the LLM reads the prompt once and the label tokens' likelihoods decide.

For a label task (ExplaGraphs: "support" / "counter") generation is wasteful: constrained greedy decoding can
only ever say one of the labels, and which one is fixed by the logits the prompt produces. Here every label is
teacher-forced after the prompt; when every label is one token (SmolLM2: "support" and "counter" are), one
forward pass of the prompt serves them all.

- `label_log_likelihoods`: [B, K] summed log-probabilities of each label's tokens (differentiable), the scores
  of the training objective `label_choice_loss` (cross-entropy over the K labels, optionally class-weighted).
- `choose_labels`: the label constrained greedy decoding (`model.constrained`, one item) would produce, read
  from the same teacher-forced logits: at each step the best allowed token among the labels still possible
  (and the end of sequence where a label is complete).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from ..errors import InputError
from .sample import QABatch


def label_token_ids(model, labels: Sequence[str]) -> list[list[int]]:
    """Each label's tokens as the model's training targets hold them (without the EOS after them)."""
    if len(labels) < 2:
        raise InputError("label scoring needs at least two labels", field="labels")
    ids = [list(t)[:model.config.max_new_tokens] for t in model._texts_ids(list(labels))]
    if any(not t for t in ids) or len({tuple(t) for t in ids}) != len(ids):
        raise InputError(f"labels {list(labels)} must be non-empty and tokenize differently", field="labels")
    return ids


def _teacher_forced(model, batch: QABatch, labels: Sequence[str]) -> list[torch.Tensor]:
    """Per label: [B, steps, vocab] log-probabilities, step t predicting the label's token t given the prompt
    and the label's first t tokens (in the one-pass case a single step, shared by all labels)."""
    ids = label_token_ids(model, labels)
    if all(len(t) == 1 for t in ids):
        # One pass: the prompt's last position predicts every label's (only) token.
        _, logits, _ = model.label_logits(dataclasses.replace(batch, labels=[labels[0]] * len(batch)))
        first = F.log_softmax(logits[:, :1], dim=-1)
        return [first for _ in labels]
    out = []
    for label in labels:
        _, logits, _ = model.label_logits(dataclasses.replace(batch, labels=[label] * len(batch)))
        out.append(F.log_softmax(logits, dim=-1))
    return out


def label_log_likelihoods(model, batch: QABatch, labels: Sequence[str]) -> torch.Tensor:
    """[B, K]: log p(label_k tokens | prompt), summed over the label's tokens."""
    return _likelihoods(label_token_ids(model, labels), _teacher_forced(model, batch, labels))


def label_choice_loss(model, batch: QABatch, labels: Sequence[str],
                      class_weights: Sequence[float] | None = None) -> torch.Tensor:
    """Cross-entropy of the gold label among `labels`, on the label likelihoods."""
    return choice_loss(label_log_likelihoods(model, batch, labels), batch.labels, labels, class_weights)


def choice_loss(scores: torch.Tensor, gold_labels: Sequence[str], labels: Sequence[str],
                class_weights: Sequence[float] | None = None) -> torch.Tensor:
    try:
        gold = torch.tensor([list(labels).index(label) for label in gold_labels], device=scores.device)
    except ValueError:
        raise InputError(f"a sample's label is not one of {list(labels)}", field="labels") from None
    weight = None if class_weights is None else torch.tensor(list(class_weights), dtype=scores.dtype,
                                                             device=scores.device)
    return F.cross_entropy(scores, gold, weight=weight)


@torch.no_grad()
def choose_labels(model, batch: QABatch, labels: Sequence[str]) -> list[str]:
    """The label constrained greedy generation would choose for each sample (see the module docs)."""
    return score_batch(model, batch, labels)[1]


def score_batch(model, batch: QABatch, labels: Sequence[str]) -> tuple[torch.Tensor, list[str]]:
    """([B, K] label log-likelihoods, chosen labels) from one set of teacher-forced passes."""
    ids = label_token_ids(model, labels)
    logprobs = _teacher_forced(model, batch, labels)
    return _likelihoods(ids, logprobs), _greedy_choice(ids, logprobs, model.stop_token_ids(), labels)


def class_weights_for(gold_labels: Sequence[str], labels: Sequence[str]) -> list[float]:
    """Weights inverse to each label's frequency (mean weight per sample 1), so the majority label cannot win
    the loss by itself."""
    counts = [max(1, sum(1 for g in gold_labels if g == label)) for label in labels]
    return [sum(counts) / (len(labels) * count) for count in counts]


def _likelihoods(ids: list[list[int]], logprobs: list[torch.Tensor]) -> torch.Tensor:
    columns = []
    for tokens, lp in zip(ids, logprobs):
        index = torch.tensor(tokens, device=lp.device).view(1, -1, 1).expand(lp.shape[0], -1, 1)
        columns.append(lp[:, :len(tokens)].gather(-1, index).squeeze(-1).sum(-1))
    return torch.stack(columns, dim=1)


def _greedy_choice(ids: list[list[int]], logprobs: list[torch.Tensor], stop_ids: Sequence[int],
                   labels: Sequence[str]) -> list[str]:
    stops = list(stop_ids)
    chosen = []
    for row in range(logprobs[0].shape[0]):
        alive, step = list(range(len(labels))), 0
        while len(alive) > 1:
            source = logprobs[alive[0]][row, step].detach()  # alive labels share their prefix, hence these logits
            allowed: dict[int | None, list[int]] = {}
            for k in alive:
                allowed.setdefault(ids[k][step] if step < len(ids[k]) else None, []).append(k)

            def score(token: int | None, source=source) -> float:
                if token is None:  # a label ends here: generation would take its best stop token
                    return max(float(source[s]) for s in stops) if stops else float("-inf")
                return float(source[token])

            best = max(allowed, key=score)
            alive, step = allowed[best], step + 1
            if best is None:
                break
        chosen.append(labels[alive[0]])
    return chosen
