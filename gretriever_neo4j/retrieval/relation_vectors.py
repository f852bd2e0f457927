"""Relation texts embedded once per process: what relation-path retrieval and the zero-shot reader compare
questions with."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from gretriever_neo4j.retrieval.texts import humanize_relation


class RelationTexts:
    """Humanized relation texts embedded once (`embed(texts) -> (n, d)`), by text, shared across questions.
    `shared(embed)` gives one table per embedder in a process, so the retriever and the reader embed a relation
    text once between them; `known` seeds it (a cache kept on disk by the caller)."""

    _shared: dict[int, RelationTexts] = {}

    def __init__(self, embed: Callable[[list[str]], np.ndarray], known: dict[str, np.ndarray] | None = None):
        self.embed = embed
        self._vectors: dict[str, np.ndarray] = dict(known or {})

    @classmethod
    def shared(cls, embed: Callable[[list[str]], np.ndarray]) -> RelationTexts:
        owner = getattr(embed, "__self__", embed)  # a bound `Embedder.embed`: one table per embedder
        if id(owner) not in cls._shared:
            cls._shared[id(owner)] = cls(embed)
        return cls._shared[id(owner)]

    @property
    def known(self) -> dict[str, np.ndarray]:
        return self._vectors

    def warm(self, texts: Sequence[str], batch: int = 256) -> int:
        """Embeds the texts not known yet (in batches, much faster than question by question); how many."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        for start in range(0, len(missing), batch):
            chunk = missing[start:start + batch]
            rows = np.asarray(self.embed([humanize_relation(t) for t in chunk]), dtype=np.float32)
            self._vectors.update(zip(chunk, rows))
        return len(missing)

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        self.warm(texts)
        return np.stack([self._vectors[t] for t in texts]) if texts else np.zeros((0, 0), np.float32)
