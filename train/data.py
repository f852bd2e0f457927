"""Training and evaluation samples: stored questions, the product's own retrieval, cached per question.

A sample is the retrieved subgraph of one question (node and edge text embeddings, local edge index, the
textualized CSV) with its prompt and target. Retrieval runs once per question and parameter set: the samples
are cached under `gqa_home()/samples`, so epochs and later runs never query Neo4j again for them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import torch

from ..errors import ConfigError
from ..model.prompts import CLASSIFICATION, PROMPT_VERSION, sample_from_retrieval
from ..model.sample import QASample
from ..progress import OnProgress, notify
from ..retrieval.in_memory import RetrievalResult
from ..retrieval.params import params_to_dict
from ..settings import gqa_home

_TOPIC_MARKERS = re.compile(r"\[([^\]]*)\]")


def retrieval_text(dataset: str, question: str, topic_entities: Sequence[str] = ()) -> str:
    """What retrieval embeds: MetaQA (and questions files written like it) mark the topic entity with
    [brackets], which real users never type. Brackets are removed for MetaQA, and wherever one encloses a topic
    entity of the question."""
    if dataset == "metaqa":
        return _TOPIC_MARKERS.sub(r"\1", question)
    topics = {t.strip().lower() for t in topic_entities}
    if topics and any(m.group(1).strip().lower() in topics for m in _TOPIC_MARKERS.finditer(question)):
        return _TOPIC_MARKERS.sub(r"\1", question)
    return question


class SampleCache:
    """One file per (dataset, split, retrieval settings): qid -> sample; missing questions are added."""

    def __init__(self, root: Path | None = None):
        self.root = root or gqa_home() / "samples"

    def path(self, dataset: str, split: str, settings: dict) -> Path:
        digest = hashlib.sha1(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:12]
        return self.root / f"{_safe(dataset)}-{_safe(split)}-{digest}.pt"

    def load(self, path: Path) -> dict[str, QASample]:
        if not path.is_file():
            return {}
        rows = torch.load(path, weights_only=False)
        return {row["qid"]: QASample(**row) for row in rows}

    def save(self, path: Path, samples: dict[str, QASample]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        torch.save([sample.__dict__ for sample in samples.values()], partial)
        partial.replace(path)


def build_samples(store, retriever, dataset: str, split: str, *, limit: int | None = None,
                  retrieve: Callable | None = None, settings: dict | None = None, cache: SampleCache | None = None,
                  on_progress: OnProgress | None = None) -> list[QASample]:
    """Samples for the stored questions of `dataset`/`split` (sorted by qid, first `limit`).

    `retrieve(question_text, graph) -> RetrievalResult` defaults to the static retrieval of `retriever`;
    `settings` must describe whatever changes its output (they key the cache).
    """
    questions = store.questions(dataset, split)
    if not questions:
        raise ConfigError(f"no stored questions for dataset {dataset!r}, split {split!r}: "
                          f"ingest the dataset first (gqa ingest {dataset} …), or pick another split")
    questions = questions[:limit] if limit else questions
    if retrieve is None:
        def retrieve(text: str, graph: str) -> RetrievalResult:
            return retriever.retrieve(text, graph=graph, record=False).result

    settings = {"dataset": dataset, "split": split, "embedder": retriever.embedder.name, "prompt": PROMPT_VERSION,
                **(settings or {})}
    cache = cache or SampleCache()
    path = cache.path(dataset, split, settings)
    samples = cache.load(path)
    missing = [q for q in questions if q["qid"] not in samples]
    for done, question in enumerate(missing, 1):
        result = retrieve(retrieval_text(dataset, question["text"], question.get("topic_entities") or ()),
                          question["graph"])
        samples[question["qid"]] = sample_from_retrieval(result, qid=question["qid"], dataset=dataset,
                                                         question=question["text"], answers=question["answers"],
                                                         graph_id=question["graph"])
        notify(on_progress, "samples", done, len(missing))
        if done % 500 == 0:
            cache.save(path, samples)
    if missing:
        cache.save(path, samples)
    return [samples[q["qid"]] for q in questions]


def static_settings(retriever, dataset: str) -> dict:
    """What keys the cache for the static retrieval: its parameters for this dataset's graphs."""
    from ..retrieval.params import params_for

    kind = "per-sample" if dataset in CLASSIFICATION else "kg"
    return {"retriever": "static", "params": params_to_dict(params_for(dataset, kind))}


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
