"""The walk encoder: the embedder (MiniLM) with its last layers tuned, across many graphs, so that a question with
its anchor masked lies nearest the walk that answers it, read as a question ("what is the profession of the
parents of the spouse of X").

The frozen embedder relates a question to a walk only by their words ("what's on the menu at X" and `served at`
share none); tuned on graphs whose answers are known, it learns how people phrase walks, and that carries over to
graphs it never saw (docs/learned-reader.md). The reader reads it as the walk feature `tuned_reading`: the cosine
of the masked question and each of its `candidates` best walks by every other feature, 0 for the rest, so a
question costs one encoder pass over a few short texts.

What ships is the tuned layers alone (`LAYERS_FILE`, float16) and their config (`CONFIG_FILE`); the frozen layers
are the embedder's own, loaded from its package. Trained by `train.walk_encoder`.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.settings import from_known_fields

CONFIG_FILE = "walk_encoder.json"
LAYERS_FILE = "walk_encoder.safetensors"


@dataclass(frozen=True)
class WalkEncoderConfig:
    """`base`: the embedder whose last `layers` layers were tuned (the others are its own); `candidates`: the walks
    per question, best by every other feature, that it reads; `training`: how it was trained (a record)."""

    base: str = "sentence-transformers/all-MiniLM-L6-v2"
    layers: int = 2
    candidates: int = 8
    training: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("layers", "candidates"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"must be an integer >= 1, got {value!r}", field=name)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WalkEncoderConfig:
        return from_known_fields(cls, data, "walk encoder config")


def tuned_layers(model, layers: int):
    """The last `layers` transformer layers of a SentenceTransformer (a BERT-like encoder)."""
    return model[0].auto_model.encoder.layer[-layers:]


def save(model, config: WalkEncoderConfig, folder: Path) -> None:
    """The tuned layers of `model` in float16 and `config`, into `folder`."""
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    state = {f"{i}.{key}": value.detach().half().contiguous()
             for i, layer in enumerate(tuned_layers(model, config.layers)) for key, value in layer.state_dict().items()}
    save_file(state, str(folder / LAYERS_FILE))
    (folder / CONFIG_FILE).write_text(json.dumps(config.to_dict(), indent=1) + "\n")


class WalkEncoder:
    """Cosines of a masked question to walk texts under the tuned encoder. Safe to share between threads: one
    lock around the model and its cache (texts recur: a graph's walks, a chat's questions)."""

    MAX_CACHED = 100_000

    def __init__(self, model, config: WalkEncoderConfig):
        self.model = model
        self.config = config
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._onnx = None  # ONNX Runtime, as the embedder's questions (`onnx_encoder`): made on first use
        self._onnx_tried = False

    @classmethod
    def load(cls, folder: Path) -> WalkEncoder:
        """The base embedder from its package with the tuned layers of `folder` put in its place."""
        from safetensors import SafetensorError
        from safetensors.torch import load_file
        from sentence_transformers import SentenceTransformer

        from gretriever_neo4j.embedding.embedder import resolve_model_location

        try:
            config = WalkEncoderConfig.from_dict(json.loads((folder / CONFIG_FILE).read_text()))
            state = load_file(str(folder / LAYERS_FILE))
        except (OSError, ValueError, SafetensorError) as error:
            raise ConfigError(f"cannot read the walk encoder in {folder}: {error}") from error
        model = SentenceTransformer(resolve_model_location(config.base), device="cpu")
        for i, layer in enumerate(tuned_layers(model, config.layers)):
            prefix = f"{i}."
            layer.load_state_dict({key[len(prefix):]: value.float() for key, value in state.items()
                                   if key.startswith(prefix)})
        model.eval()
        return cls(model, config)

    def similarities(self, masked: str, walks: Sequence[str]) -> np.ndarray:
        """(len(walks),) the cosine of each walk text to the masked question."""
        with self._lock:
            if len(self._cache) > self.MAX_CACHED:
                self._cache.clear()
            todo = list(dict.fromkeys(t for t in (masked, *walks) if t not in self._cache))
            if todo:
                self._cache.update(zip(todo, self._encode(todo)))
            if not walks:
                return np.zeros(0)
            return np.stack([self._cache[w] for w in walks]) @ self._cache[masked]

    def _encode(self, texts: list[str]) -> np.ndarray:
        if not self._onnx_tried:
            self._onnx_tried = True
            from gretriever_neo4j.embedding import onnx_encoder
            from gretriever_neo4j.settings import gqa_home

            self._onnx = onnx_encoder.load(self.model, gqa_home() / "onnx")
        if self._onnx is not None:  # a question's 9 texts: 17 ms against 186 ms through PyTorch (two loaded cores)
            return self._onnx.encode(texts)
        return self.model.encode(texts, batch_size=64, convert_to_numpy=True, normalize_embeddings=True,
                                 show_progress_bar=False).astype(np.float32, copy=False)


def add_tuned_reading(encoder: WalkEncoder, table, weights, masked: str, signatures, relation_texts) -> None:
    """Fills the feature `tuned_reading` of `table` (a `coverage.SignatureTable`) in place: for the encoder's
    `candidates` best shortlisted walks by every other feature, their cosine to the masked question."""
    from gretriever_neo4j.reader.signature_weights import FEATURES
    from gretriever_neo4j.reader.walk_shapes import signature_question

    rows = np.flatnonzero(table.shortlisted)
    if not len(rows):
        return
    others = table.features[rows] @ weights.vector()  # `tuned_reading` is 0 so far
    best = rows[np.argsort(-others, kind="stable")[:encoder.config.candidates]]
    texts = [signature_question(relation_texts, signatures[s]) for s in table.used[best].tolist()]
    table.features[best, list(FEATURES).index("tuned_reading")] = encoder.similarities(masked, texts)
