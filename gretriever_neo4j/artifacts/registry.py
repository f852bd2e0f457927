"""Where `gqa train` puts what it trained for a graph, so that a plain `gqa ask --graph G` uses it.

    GQA_HOME/models/<graph>/manifest.json   which models exist, for which graph, dataset and embedder
                           /retriever.pt    the learned retriever (`retrieval.learned`)
                           /reader.pt       the answer reader (`reader.model`)
                           /signature_weights.json  the zero-shot reader's weights fitted for the graph
                                            (`reader.learned`), from the general ones
                           /generator/      a G-Retriever checkpoint (`model.checkpoint`), when trained
                           /lexicon.json    the words of the graph's own questions that name its relations, and
                                            the walks they meant (`reader.lexicon`), learned from them
                           /walk_encoder-<time>/  the general walk encoder's adapters tuned further on them
                                            (`reader.walk_encoder`; a new folder per training, so a server reading
                                            the one before is never handed a half-written one)

A manifest is written last and atomically, so a folder whose training was interrupted still answers with what
an earlier run completed (or with nothing). The learned retriever trained by `gqa train-retriever` before this
layout existed (`GQA_HOME/retrievers/<dataset>.pt`) is still found.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.settings import gqa_home

MANIFEST = "manifest.json"
FORMAT = "gqa-models/1"
PARTS = ("retriever", "reader", "generator", "signature_weights", "lexicon", "walk_encoder")


def models_dir(graph: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", graph).strip("._") or "graph"
    return gqa_home() / "models" / safe


def legacy_retriever(name: str) -> Path:
    """`gqa train-retriever`'s checkpoint for a graph (or, before graphs named it, a dataset)."""
    return gqa_home() / "retrievers" / f"{name}.pt"


@dataclass(frozen=True)
class TrainedModels:
    graph: str
    dataset: str
    embedder: str
    retriever: str | None = None  # file names inside the folder
    reader: str | None = None
    generator: str | None = None
    signature_weights: str | None = None
    lexicon: str | None = None
    walk_encoder: str | None = None
    created: str = ""
    details: dict = field(default_factory=dict)  # what each training reported (questions, seconds, scores)

    @property
    def folder(self) -> Path:
        return models_dir(self.graph)

    def path(self, part: str) -> Path | None:
        name = getattr(self, part)
        return None if name is None else self.folder / name

    @property
    def chosen_retriever(self) -> str | None:
        """"learned" or "paths" where self-supervised training measured which retrieves better here."""
        return self.details.get("retrieval_choice", {}).get("retriever")

    @property
    def zero_shot_reader_chosen(self) -> bool:
        """Trained on synthesized questions alone: `gqa ask` answers with the zero-shot reader."""
        return self.details.get("reader_choice", {}).get("reader") == "zero-shot"

    @property
    def fewshot(self) -> dict:
        """What adapting the zero-shot reader to the graph's own questions measured (`train.fewshot`, as
        `details["fewshot"]` keeps it), with `after` and `adopted` for the reader kept: the walk encoder tuned on
        them where that was kept (measured with the lexicon kept), else the lexicon's. {} where nothing was."""
        fewshot = self.details.get("fewshot") if isinstance(self.details, dict) else None
        if not isinstance(fewshot, dict):
            return {}
        encoder = fewshot.get("walk_encoder")
        if isinstance(encoder, dict) and encoder.get("adopted") is True:
            return {**fewshot, "after": encoder.get("after"), "adopted": True}
        return fewshot

    def describe(self) -> str:
        parts = [f"{part} {self.path(part)}" for part in PARTS if getattr(self, part)]
        return "; ".join(parts) or "nothing trained"

    def with_part(self, part: str, name: str, details: dict | None = None) -> TrainedModels:
        merged = dict(self.details)
        if details is not None:
            merged[part] = details
        return replace(self, **{part: name}, details=merged,
                       created=time.strftime("%Y-%m-%dT%H:%M:%S%z"))

    def save(self) -> Path:
        folder = self.folder
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / (MANIFEST + ".partial")
        partial.write_text(json.dumps({"format": FORMAT, **asdict(self)}, indent=1, default=str))
        partial.replace(folder / MANIFEST)
        return folder / MANIFEST


def load_trained(graph: str) -> TrainedModels | None:
    """The graph's manifest, or None when nothing was trained for it. Parts whose files are gone are dropped."""
    path = models_dir(graph) / MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise ConfigError(f"{path} is not a readable manifest ({error.__class__.__name__}); delete it or train "
                          f"again with `gqa train`") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f"{path} is not a gqa models manifest (format {FORMAT} expected)")
    data.pop("format")
    try:
        models = TrainedModels(**data)
    except TypeError as error:
        raise ConfigError(f"{path}: {error}") from None
    if models.graph != graph:
        raise ConfigError(f"{path} belongs to graph {models.graph!r}, not {graph!r}")
    for part in PARTS:
        location = models.path(part)
        if location is not None and not location.exists():
            models = replace(models, **{part: None})
    return models


def check_embedder(models: TrainedModels, embedder_name: str) -> None:
    if models.embedder != embedder_name:
        raise ConfigError(f"the models trained for graph {models.graph!r} read '{models.embedder}' vectors, not "
                          f"'{embedder_name}': use --embedder '{models.embedder}' or train again")
