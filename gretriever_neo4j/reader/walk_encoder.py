"""The walk encoder: the embedder (MiniLM) with its last layers tuned, across many graphs, so that a question with
its anchor masked lies nearest the walk that answers it, read as a question ("what is the profession of the
parents of the spouse of X").

The frozen embedder relates a question to a walk only by their words ("what's on the menu at X" and `served at`
share none); tuned on graphs whose answers are known, it learns how people phrase walks, and that carries over to
graphs it never saw (docs/learned-reader.md). The reader reads it as the walk feature `tuned_reading`: the cosine
of the masked question and each of its `candidates` best walks by every other feature, 0 for the rest, so a
question costs one encoder pass over a few short texts.

What ships is what the tuning changed, in float16 (`LAYERS_FILE`), and its config (`CONFIG_FILE`); the rest is the
embedder's own, loaded from its package. Two kinds (`WalkEncoderConfig.adapter`): "lora", low-rank adapters over
every layer's linear maps, merged into the embedder's weights at load (well under a megabyte, so every retrained
version can stay in git); "layers", the last layers' weights whole. Trained by `train.walk_encoder`; what
ships is two such adapters averaged into one (`train.walk_encoder_soup`).
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
from gretriever_neo4j.settings import from_known_fields, require_positive_integers

CONFIG_FILE = "walk_encoder.json"
LAYERS_FILE = "walk_encoder.safetensors"
ADAPTERS = ("lora", "layers")
_PEFT_PREFIX = "base_model.model."  # of `peft`'s names for the adapters; the saved names are the embedder's own
LORA_DOWN, LORA_UP = ".lora_A.weight", ".lora_B.weight"  # an adapted map's saved pair: <map>.lora_A/B.weight


@dataclass(frozen=True)
class WalkEncoderConfig:
    """`base`: the embedder that was tuned; `adapter`: what the tuning changed, "lora" (adapters of `rank`, scaled
    by `alpha / rank`, over the linear maps named `targets` in every layer) or "layers" (the last `layers` layers
    whole); `candidates`: the walks per question, best by every other feature, that it reads; `training`: how it
    was trained (a record)."""

    base: str = "sentence-transformers/all-MiniLM-L6-v2"
    adapter: str = "layers"
    layers: int = 2
    rank: int = 8
    alpha: int = 16
    targets: tuple[str, ...] = ("query", "key", "value", "dense")
    candidates: int = 8
    training: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        require_positive_integers(self, ("layers", "rank", "alpha", "candidates"))
        if self.adapter not in ADAPTERS:
            raise InputError(f"must be one of {', '.join(ADAPTERS)}, got {self.adapter!r}", field="adapter")
        object.__setattr__(self, "targets", tuple(self.targets))
        if not self.targets or not all(isinstance(t, str) and t for t in self.targets):
            raise InputError(f"must be a non-empty list of module names, got {self.targets!r}", field="targets")

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "targets": list(self.targets)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WalkEncoderConfig:
        return from_known_fields(cls, data, "walk encoder config")


def tuned_layers(model, layers: int):
    """The last `layers` transformer layers of a SentenceTransformer (a BERT-like encoder)."""
    return model[0].auto_model.encoder.layer[-layers:]


def with_lora(model, config: WalkEncoderConfig, state: dict | None = None):
    """`model` (a SentenceTransformer) with trainable low-rank adapters over its encoder (`peft`), the rest frozen:
    new ones, or those of `state` (as `save` wrote them) to train further."""
    from peft import LoraConfig, get_peft_model, set_peft_model_state_dict

    model[0].auto_model = get_peft_model(model[0].auto_model, LoraConfig(
        r=config.rank, lora_alpha=config.alpha, lora_dropout=0.0, target_modules=list(config.targets)))
    if state is not None:
        set_peft_model_state_dict(model[0].auto_model, {_PEFT_PREFIX + key: value.float()
                                                        for key, value in state.items()})
    return model


def save(model, config: WalkEncoderConfig, folder: Path) -> None:
    """What the tuning changed in `model` (its adapters from `with_lora`, or its last layers), in float16, and
    `config`, into `folder`."""
    write_saved(config, tuned_state(model, config), folder)


def tuned_state(model, config: WalkEncoderConfig) -> dict:
    """What the tuning changed in `model`, in float16, named as `save` writes it and `read_saved` reads it."""
    if config.adapter == "lora":
        from peft import get_peft_model_state_dict

        return {key.removeprefix(_PEFT_PREFIX): value.detach().half().contiguous()
                for key, value in get_peft_model_state_dict(model[0].auto_model).items()}
    return {f"{i}.{key}": value.detach().half().contiguous() for i, layer in
            enumerate(tuned_layers(model, config.layers)) for key, value in layer.state_dict().items()}


def write_saved(config: WalkEncoderConfig, state: dict, folder: Path) -> None:
    """`config` and the tensors `state` into `folder`, as `read_saved` reads them."""
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    save_file(state, str(folder / LAYERS_FILE))
    (folder / CONFIG_FILE).write_text(json.dumps(config.to_dict(), indent=1) + "\n")


class WalkEncoder:
    """Cosines of a masked question to walk texts under the tuned encoder. Safe to share between threads: one
    lock around the model and its cache (texts recur: a graph's walks, a chat's questions)."""

    MAX_CACHED = 100_000

    def __init__(self, model, config: WalkEncoderConfig, onnx: bool | Path = True):
        """`onnx`: where its ONNX export goes (True: GQA_HOME/onnx, beside the embedder's; a graph's own encoder
        keeps it in its own folder, removed with it), or False for none (a model read a few times only)."""
        self.model = model
        self.config = config
        self.source: Path | None = None  # the folder `load` read it from: where its saved tuning can be read again
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._onnx = None  # ONNX Runtime, as the embedder's questions (`onnx_encoder`): made on first use
        self._onnx_folder = onnx
        self._onnx_tried = onnx is False

    @classmethod
    def load(cls, folder: Path, onnx: bool | Path = True) -> WalkEncoder:
        """The base embedder from its package with what the tuning in `folder` changed put in (adapters merged,
        or layers replaced); `onnx` as in the constructor."""
        from sentence_transformers import SentenceTransformer

        from gretriever_neo4j.embedding.embedder import resolve_model_location

        config, state = read_saved(folder)
        model = SentenceTransformer(resolve_model_location(config.base), device="cpu")
        try:
            if config.adapter == "lora":
                _merge_lora(model[0].auto_model, state, config.alpha / config.rank)
            else:
                for i, layer in enumerate(tuned_layers(model, config.layers)):
                    prefix = f"{i}."
                    layer.load_state_dict({key[len(prefix):]: value.float() for key, value in state.items()
                                           if key.startswith(prefix)})
        except (AttributeError, KeyError, RuntimeError) as error:
            raise ConfigError(f"the walk encoder in {folder} does not fit {config.base}: {error}") from error
        model.eval()
        encoder = cls(model, config, onnx)
        encoder.source = folder
        return encoder

    def similarities(self, masked: str, walks: Sequence[str]) -> np.ndarray:
        """(len(walks),) the cosine of each walk text to the masked question."""
        vectors = self.vectors([masked, *walks])
        return vectors[1:] @ vectors[0] if walks else np.zeros(0)

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dimension) the unit vectors of `texts` under the tuned encoder."""
        with self._lock:
            if len(self._cache) > self.MAX_CACHED:
                self._cache.clear()
            todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if todo:
                self._cache.update(zip(todo, self._encode(todo)))
            return np.stack([self._cache[t] for t in texts])

    def _encode(self, texts: list[str]) -> np.ndarray:
        if not self._onnx_tried:
            self._onnx_tried = True
            from gretriever_neo4j.embedding import onnx_encoder
            from gretriever_neo4j.settings import gqa_home

            folder = self._onnx_folder if isinstance(self._onnx_folder, Path) else gqa_home() / "onnx"
            self._onnx = onnx_encoder.load(self.model, folder)
        if self._onnx is not None:  # a question's 9 texts: 17 ms against 186 ms through PyTorch (two loaded cores)
            return self._onnx.encode(texts)
        return self.model.encode(texts, batch_size=64, convert_to_numpy=True, normalize_embeddings=True,
                                 show_progress_bar=False).astype(np.float32, copy=False)


def read_saved(folder: Path) -> tuple[WalkEncoderConfig, dict]:
    """(config, tensors) of a walk encoder as `save` wrote it into `folder`."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        return (WalkEncoderConfig.from_dict(json.loads((folder / CONFIG_FILE).read_text())),
                load_file(str(folder / LAYERS_FILE)))
    except (OSError, ValueError, SafetensorError) as error:
        raise ConfigError(f"cannot read the walk encoder in {folder}: {error}") from error


def _merge_lora(encoder, state: dict, scaling: float) -> None:
    """Adds each adapter's low-rank product (`scaling` B A, as `peft` computes it) into the weight it adapts, so
    that the merged encoder is a plain one (and exports to ONNX as one)."""
    import torch

    with torch.no_grad():
        for key in (k for k in state if k.endswith(LORA_DOWN)):
            path = key[:-len(LORA_DOWN)]
            low, high = state[key].float(), state[path + LORA_UP].float()
            encoder.get_submodule(path).weight.add_(scaling * (high @ low))


def add_tuned_reading(encoder: WalkEncoder, table, weights, masked: str, signatures, relation_texts) -> None:
    """Fills the feature `tuned_reading` of `table` (a `coverage.SignatureTable`) in place: for the encoder's
    `candidates` best shortlisted walks by every other feature, their cosine to the masked question."""
    from gretriever_neo4j.reader.signature_weights import FEATURES
    from gretriever_neo4j.reader.walk_shapes import signature_question

    best = candidate_rows(table, weights, encoder.config.candidates)
    if not len(best):
        return
    texts = [signature_question(relation_texts, signatures[s]) for s in table.used[best].tolist()]
    table.features[best, list(FEATURES).index("tuned_reading")] = encoder.similarities(masked, texts)


def candidate_rows(table, weights, candidates: int) -> np.ndarray:
    """The rows of `table` the encoder reads: its `candidates` best shortlisted walks by every feature but
    `tuned_reading`."""
    from gretriever_neo4j.reader.signature_weights import FEATURES

    rows = np.flatnonzero(table.shortlisted)
    vector = weights.vector()
    vector[list(FEATURES).index("tuned_reading")] = 0.0
    others = table.features[rows] @ vector
    return rows[np.argsort(-others, kind="stable")[:candidates]]
