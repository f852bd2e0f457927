"""Unit vectors of short texts, each embedded once: the zero-shot reader's cache of words, relation names and
signature questions (none of which depend on the question being asked)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np


class TextVectors:
    """Unit vectors of short texts (words, relation names, signature questions), each embedded once; bounded
    (least recently used texts are dropped), safe to share between threads."""

    def __init__(self, embed: Callable[[list[str]], np.ndarray], capacity: int = 200_000):
        self.embed = embed
        self.capacity = capacity
        self._known: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._known]
        if missing:
            vectors = np.asarray(self.embed(missing), dtype=np.float32).reshape(len(missing), -1)
            norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            with self._lock:
                self._known.update(zip(missing, vectors / norms))
                while len(self._known) > self.capacity:
                    self._known.popitem(last=False)
        with self._lock:
            rows = [self._known.get(t) for t in texts]
        if any(row is None for row in rows):  # evicted by another thread meanwhile: embed again, uncached
            return self.embed_uncached(texts)
        return np.stack(rows) if rows else np.zeros((0, 0), np.float32)

    def embed_uncached(self, texts: list[str]) -> np.ndarray:
        vectors = np.asarray(self.embed(texts), dtype=np.float32).reshape(len(texts), -1)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
