"""The learned reader: the zero-shot reader's walk-signature features (`reader.coverage`) scored by weights fitted
on questions instead of set by hand.

A question's shortlisted walk signatures each have a row of named features (`signature_weights.FEATURES`: how
well the words name each step, direction and voice, the kind of value it ends on, hops, round trips, ...). The
reader picks the walk with the highest `features . weights`. `fit_weights` fits those weights by a listwise
softmax over each question's walks (target: the walks in proportion to how well their end nodes answer, F1),
with an L2 pull towards a prior (the hand-set values, or the general weights when a graph adapts them), each
graph's questions weighing as much in all as any other graph's. The general weights, fitted once across many
graphs (`train.general_reader`), ship in the package (`general_weights`); a graph's own, fitted from them on its
questions, are saved with its models.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.reader.signature_weights import FEATURES, ZERO_SHOT, SignatureWeights
from gretriever_neo4j.reader.walk_matcher import answerable, walk_targets

# What is trained across many graphs: walk_encoder.json and .safetensors ship, walk_ranker.json and .txt, and the hop
# reader in HOP_READER;
# signature_weights.json, matcher.json and .safetensors are read where they are put (none ship:
# docs/learned-reader.md)
GENERAL = Path(__file__).with_name("general")
WEIGHTS_FILE = "signature_weights.json"
HOP_READER = "hops"


@lru_cache(maxsize=1)
def general_weights() -> SignatureWeights:
    """The weights fitted across many graphs that ship with gqa (the hand-set ones where none ship)."""
    return SignatureWeights.load(GENERAL / WEIGHTS_FILE) if (GENERAL / WEIGHTS_FILE).exists() else ZERO_SHOT


@lru_cache(maxsize=1)
def general_matcher():
    """The walk matcher trained across many graphs that ships with gqa, or None."""
    from gretriever_neo4j.reader.walk_matcher import CONFIG_FILE, WalkMatcher

    return WalkMatcher.load(GENERAL) if (GENERAL / CONFIG_FILE).exists() else None


@lru_cache(maxsize=1)
def general_walk_encoder():
    """The walk encoder tuned across many graphs that ships with gqa (`reader.walk_encoder`), or None."""
    from gretriever_neo4j.reader.walk_encoder import CONFIG_FILE, WalkEncoder

    return WalkEncoder.load(GENERAL) if (GENERAL / CONFIG_FILE).exists() else None


@lru_cache(maxsize=1)
def general_hop_reader():
    """The hop reader trained across many graphs that ships with gqa (`reader.hop_reading`), or None."""
    from gretriever_neo4j.reader.hop_reading import CONFIG_FILE, HopReader

    folder = GENERAL / HOP_READER
    return HopReader.load(folder) if (folder / CONFIG_FILE).exists() else None


@lru_cache(maxsize=1)
def general_walk_ranker():
    """The walk ranker trained across many graphs that ships with gqa (`reader.walk_ranker`), or None."""
    from gretriever_neo4j.reader.walk_ranker import CONFIG_FILE, WalkRanker

    return WalkRanker.load(GENERAL) if (GENERAL / CONFIG_FILE).exists() else None


def end_node_f1(reading, is_gold: np.ndarray) -> np.ndarray:
    """(S,) per walk signature of `reading`, the F1 of its end nodes (anchors and opaque records left out)
    against the gold nodes (`is_gold`, per node of the view)."""
    from gretriever_neo4j.retrieval.texts import is_opaque

    walks, view = reading.walks, reading.view
    count = len(walks.signatures)
    out = np.zeros(count)
    allowed = np.asarray([not is_opaque(t) for t in view.node_texts], dtype=bool)
    allowed[list(reading.anchors)] = False
    gold_total = int((is_gold & allowed).sum())
    if not walks.num_pairs or gold_total == 0:
        return out
    keep = allowed[walks.pair_node]
    sig, node = walks.pair_sig[keep], walks.pair_node[keep]
    pairs = np.unique(np.stack([sig, node], axis=1), axis=0)
    ends = np.bincount(pairs[:, 0], minlength=count).astype(np.float64)
    hits = np.bincount(pairs[:, 0], weights=is_gold[pairs[:, 1]].astype(np.float64), minlength=count)
    precision = np.divide(hits, ends, out=np.zeros(count), where=ends > 0)
    recall = hits / gold_total
    total = precision + recall
    return np.divide(2 * precision * recall, total, out=np.zeros(count), where=total > 0)


def walk_ends(walks, view, anchors: Sequence[int], signatures: Sequence[int], names: int = 2) -> list[list[int]]:
    """Per signature, the first `names` distinct nodes it ends on (anchors and opaque records left out): what the
    walk matcher knows of what a walk reaches."""
    from gretriever_neo4j.retrieval.texts import is_opaque

    anchors = set(anchors)
    wanted = {int(s) for s in signatures}
    ends: dict[int, list[int]] = {}
    seen: dict[int, set[str]] = {}
    for sig, node in zip(walks.pair_sig.tolist(), walks.pair_node.tolist()):
        if sig not in wanted:
            continue
        found = ends.setdefault(sig, [])
        text = view.node_texts[node]
        known = seen.setdefault(sig, set())
        if len(found) < names and node not in anchors and not is_opaque(text) and text not in known:
            found.append(node)
            seen[sig].add(text)
    return [ends.get(int(s), []) for s in signatures]


def matcher_scores(matcher, question_vector: np.ndarray, texts, walks, view, anchors: Sequence[int],
                   signatures: Sequence[int]) -> np.ndarray:
    """The walk matcher's scores of `signatures` (`walk_matcher`): `texts` is the reader's `TextVectors`."""
    from gretriever_neo4j.reader.walk_matcher import unit
    from gretriever_neo4j.reader.walk_shapes import signature_question

    if not len(signatures):
        return np.zeros(0)
    walk_vectors = texts([signature_question(view.relation_texts, walks.signatures[s]) for s in signatures])
    ends = np.zeros((len(signatures), walk_vectors.shape[1]), np.float32)
    for row, nodes in enumerate(walk_ends(walks, view, anchors, signatures)):
        if nodes:
            ends[row] = unit(unit(view.node_vectors[nodes]).mean(axis=0))
    return matcher.score(question_vector, walk_vectors, ends)


@dataclass(frozen=True)
class FitConfig:
    """How the weights are fitted: `l2` pulls them towards the prior (in units of the score's temperature),
    `steps` of L-BFGS, walks within `target_share` of a question's best F1 are its targets."""

    l2: float = 0.05
    steps: int = 200
    target_share: float = 0.75

    def __post_init__(self) -> None:
        if not (self.l2 >= 0 and math.isfinite(self.l2)):
            raise InputError(f"must be a number >= 0, got {self.l2!r}", field="l2")


@dataclass
class QuestionWalks:
    """One question's shortlisted walks: their features (W, F), the F1 of each, and the graph it came from."""

    features: np.ndarray
    f1: np.ndarray
    graph: str


def read_collected(path: Path) -> dict[str, np.ndarray]:
    """A `train.general_reader collect` file's arrays. A feature added to `FEATURES` after the file was collected
    (they are only ever appended) reads 0 there, as it did for the reader that collected it."""
    with np.load(path) as stored:
        data = dict(stored)
    width = data["features"].shape[1]
    if width > len(FEATURES):
        raise InputError(f"{path}: {width} features, this gqa has {len(FEATURES)}", field="data")
    data["features"] = np.pad(data["features"], ((0, 0), (0, len(FEATURES) - width)))
    return data


def load_tables(paths: Sequence[Path]) -> list[QuestionWalks]:
    """The questions of `train.general_reader collect` files (only their shortlisted walks)."""
    out = []
    for path in paths:
        data = read_collected(path)
        graph = str(data["graph"])
        keep = data["shortlisted"]
        features, f1, question = data["features"][keep], data["f1"][keep], data["question"][keep]
        order = np.argsort(question, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(question[order]) != 0])
        for rows in np.split(order, starts[1:]):
            out.append(QuestionWalks(features[rows], f1[rows], graph))
    return out


def fit_weights(questions: Sequence[QuestionWalks], config: FitConfig = FitConfig(),
                prior: SignatureWeights = ZERO_SHOT) -> SignatureWeights:
    """Weights fitted on `questions` (those with some walk that answers), starting from and pulled towards
    `prior`; its temperature and shortlist are kept."""
    import torch

    usable, weight = answerable(questions)
    features = torch.tensor(np.concatenate([q.features for q in usable]), dtype=torch.float64)
    owner = torch.tensor(np.concatenate([np.full(len(q.f1), i) for i, q in enumerate(usable)]))
    target = torch.tensor(np.concatenate([walk_targets(q.f1, config.target_share) for q in usable]))
    weight = torch.tensor(weight)
    start = torch.tensor(prior.vector() / prior.temperature, dtype=torch.float64)
    theta = start.clone().requires_grad_(True)
    optimizer = torch.optim.LBFGS([theta], max_iter=config.steps, line_search_fn="strong_wolfe")

    def loss_fn():
        optimizer.zero_grad()
        logits = features @ theta
        top = torch.full((len(usable),), -1e30, dtype=torch.float64).scatter_reduce(0, owner, logits, reduce="amax")
        exp = torch.exp(logits - top[owner])
        log_norm = torch.log(torch.zeros(len(usable), dtype=torch.float64).index_add(0, owner, exp)) + top
        nll = -torch.zeros(len(usable), dtype=torch.float64).index_add(0, owner, target * (logits - log_norm[owner]))
        loss = (weight * nll).sum() + config.l2 * ((theta - start) ** 2).sum()
        loss.backward()
        return loss

    optimizer.step(loss_fn)
    fitted = theta.detach().numpy() * prior.temperature
    return SignatureWeights.from_vector(fitted, temperature=prior.temperature, shortlist=prior.shortlist)


def signature_hit(questions: Sequence[QuestionWalks], weights: SignatureWeights) -> float:
    """The share of `questions` whose best-scored walk reaches a gold answer (F1 > 0)."""
    if not questions:
        return 0.0
    vector = weights.vector()
    return float(np.mean([q.f1[int(np.argmax(q.features @ vector))] > 0 for q in questions]))


__all__ = ["FitConfig", "GENERAL", "HOP_READER", "QuestionWalks", "end_node_f1", "fit_weights",
           "general_hop_reader", "general_matcher", "general_walk_encoder", "general_walk_ranker",
           "general_weights", "load_tables",
           "matcher_scores", "read_collected", "signature_hit", "walk_ends"]
