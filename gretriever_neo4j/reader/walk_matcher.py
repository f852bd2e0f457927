"""The walk matcher: a learned head that says how well a walk answers a question, from MiniLM vectors the reader
already has.

The zero-shot features (`reader.coverage`) compare the question with each relation and with the walk read as a
question by one cosine each, with hand-set weights. The matcher reads three vectors together: the question with its
anchor masked, the walk read as a question (`coverage.signature_question`: "what is the profession of the parents
of the spouse of X"), and the mean of the first few nodes it ends on (`learned.walk_ends`: what kind of thing the
walk reaches, a person, a country, a year), through a small MLP over their products and differences. Every vector
is one the reader computes anyway (question and walk texts are embedded once and cached, node vectors are
stored), so it costs a few matrix products per question. MiniLM stays frozen: cross-encoding the question with 24
walks through it costs over a second per question on two cores, and its adapters would be a second copy of the
embedder's behaviour to keep in step.

Training is listwise: per question, a softmax over its walks, the target being the walks that answer (F1 at
least `target_share` of the best), each graph's questions weighing as much as any other graph's. Its score
enters a walk's features as `matcher` (`signature_weights.FEATURES`), with a fitted weight.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.settings import from_known_fields, require_positive_integers

CONFIG_FILE = "matcher.json"
WEIGHTS_FILE = "matcher.safetensors"
PARTS = 7  # q*w, q*e, w*e, |q-w|, q, w, e


@dataclass(frozen=True)
class MatcherConfig:
    embedder: str = "sentence-transformers/all-MiniLM-L6-v2"  # whose vectors it reads
    dim: int = 384
    hidden: int = 64
    dropout: float = 0.1
    epochs: int = 40
    learning_rate: float = 2e-3
    weight_decay: float = 1e-3
    questions_per_step: int = 64
    target_share: float = 0.75
    seed: int = 0

    def __post_init__(self) -> None:
        require_positive_integers(self, ("dim", "hidden", "epochs", "questions_per_step"))
        if not (self.learning_rate > 0 and math.isfinite(self.learning_rate)):
            raise InputError(f"must be a positive number, got {self.learning_rate!r}", field="learning_rate")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MatcherConfig:
        return from_known_fields(cls, data, "matcher settings")


def _module(config: MatcherConfig):
    import torch

    torch.manual_seed(config.seed)
    return torch.nn.Sequential(torch.nn.Dropout(config.dropout), torch.nn.Linear(PARTS * config.dim, config.hidden),
                               torch.nn.ReLU(), torch.nn.Linear(config.hidden, 1))


def _inputs(question, walks, ends):
    """(W, PARTS*d) from a question (d,) or (W, d), walk vectors (W, d) and end vectors (W, d), all unit."""
    import torch

    question = question.expand_as(walks) if question.dim() == 1 else question
    return torch.cat([question * walks, question * ends, walks * ends, (question - walks).abs(), question, walks, ends],
                     dim=1)


def unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=-1, keepdims=True), 1e-12)


class WalkMatcher:
    """A trained matcher: `score(question, walks, ends) -> (W,)` logits from unit vectors."""

    def __init__(self, config: MatcherConfig, module):
        self.config = config
        self.module = module.eval()

    def score(self, question: np.ndarray, walks: np.ndarray, ends: np.ndarray) -> np.ndarray:
        import torch

        if not len(walks):
            return np.zeros(0)
        with torch.inference_mode():
            rows = _inputs(torch.from_numpy(unit(question)), torch.from_numpy(unit(walks)),
                           torch.from_numpy(unit(ends)))
            return self.module(rows).squeeze(-1).double().numpy()

    def save(self, folder: str | Path) -> Path:
        from safetensors.torch import save_file

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        save_file({k: v.contiguous() for k, v in self.module.state_dict().items()}, str(folder / WEIGHTS_FILE))
        (folder / CONFIG_FILE).write_text(json.dumps(self.config.to_dict(), indent=1) + "\n")
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> WalkMatcher:
        from safetensors.torch import load_file

        folder = Path(folder)
        try:
            config = MatcherConfig.from_dict(json.loads((folder / CONFIG_FILE).read_text()))
            module = _module(config)
            module.load_state_dict(load_file(str(folder / WEIGHTS_FILE)))
        except (OSError, ValueError, RuntimeError) as error:
            raise ConfigError(f"cannot read the walk matcher in {folder}: {error}") from None
        return cls(config, module)


def answerable(questions: Sequence[Any]) -> tuple[list[Any], np.ndarray]:
    """The questions (anything with `f1` per walk and a `graph`) that have an answering walk and another walk, and
    the weight of each: every graph's questions weigh as much in all as any other graph's; the weights sum to 1."""
    usable = [q for q in questions if len(q.f1) > 1 and q.f1.max() > 0]
    if not usable:
        raise InputError("no question has a walk that reaches its answer", field="questions")
    per_graph: dict[str, int] = {}
    for q in usable:
        per_graph[q.graph] = per_graph.get(q.graph, 0) + 1
    weight = np.asarray([1.0 / per_graph[q.graph] for q in usable])
    return usable, weight / weight.sum()


def walk_targets(f1: np.ndarray, share: float) -> np.ndarray:
    """A question's target distribution over its walks: those within `share` of the best F1, in proportion to
    their F1."""
    target = np.where(f1 >= share * f1.max(), f1, 0.0)
    return target / target.sum()


@dataclass
class MatcherQuestion:
    """One question's walks for training: unit vectors of the masked question (d,), of each walk read as a
    question (W, d) and of what it ends on (W, d); the F1 of each walk; the graph it came from."""

    question: np.ndarray
    walks: np.ndarray
    ends: np.ndarray
    f1: np.ndarray
    graph: str


def train_matcher(questions: Sequence[MatcherQuestion], config: MatcherConfig = MatcherConfig(),
                  progress: Callable[[int, int, float], None] | None = None,
                  start: WalkMatcher | None = None) -> WalkMatcher:
    """A matcher trained on `questions` (those with an answering walk and another walk), from `start`'s
    weights where given (a graph's own questions adapting the general matcher)."""
    import torch

    usable, draw = answerable(questions)  # questions are drawn as they weigh
    module = _module(config)
    if start is not None:
        module.load_state_dict(start.module.state_dict())
    optimizer = torch.optim.AdamW(module.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    rng = np.random.default_rng(config.seed)
    steps = config.epochs * math.ceil(len(usable) / config.questions_per_step)
    module.train()
    for step in range(steps):
        chosen = [usable[i] for i in rng.choice(len(usable), size=config.questions_per_step, p=draw)]
        rows = _inputs(torch.from_numpy(np.concatenate([np.repeat(q.question[None], len(q.f1), 0) for q in chosen])),
                       torch.from_numpy(np.concatenate([q.walks for q in chosen])),
                       torch.from_numpy(np.concatenate([q.ends for q in chosen])))
        logits = module(rows).squeeze(-1)
        loss, offset = 0.0, 0
        for q in chosen:
            target = torch.from_numpy(walk_targets(q.f1, config.target_share).astype(np.float32))
            loss = loss - (target * torch.log_softmax(logits[offset:offset + len(target)], 0)).sum()
            offset += len(target)
        loss = loss / len(chosen)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if progress is not None:
            progress(step + 1, steps, float(loss.detach()))
    return WalkMatcher(config, module)


__all__ = ["MatcherConfig", "MatcherQuestion", "WalkMatcher", "answerable", "train_matcher", "unit", "walk_targets"]
