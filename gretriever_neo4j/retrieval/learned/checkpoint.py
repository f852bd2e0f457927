"""The learned retriever's single-file checkpoint: config, scorer weights, embedder name, input width and
mention prior, written and read through `artifacts.tagged_files` under its own format tag."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gretriever_neo4j.artifacts.tagged_files import read_tagged, write_tagged
from gretriever_neo4j.retrieval.learned.config import RetrieverConfig
from gretriever_neo4j.retrieval.learned.scorer import build_scorer
from gretriever_neo4j.retrieval.linking import MentionPrior

CHECKPOINT_FORMAT = "gqa-learned-retriever/1"


def save_checkpoint(path: str | Path, model, config: RetrieverConfig, embedder_name: str,
                    prior: MentionPrior | None = None) -> Path:
    """One file: the config (as a dict), the state dict, the embedder's name, the input width, the mention prior."""
    return write_tagged(path, {
        "format": CHECKPOINT_FORMAT, "config": dataclasses.asdict(config), "embedder": embedder_name,
        "dim": int(model.question.in_features),
        "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "mention_prior": None if prior is None else prior.to_dict()})


def load_checkpoint(path: str | Path):
    """-> (torch module in eval mode, RetrieverConfig, embedder name, MentionPrior or None)."""
    data = read_tagged(path, CHECKPOINT_FORMAT, "retriever")
    config = RetrieverConfig.from_dict(data["config"])
    model = build_scorer(int(data["dim"]), config)
    model.load_state_dict(data["state_dict"])
    model.eval()
    prior = MentionPrior.from_dict(data["mention_prior"]) if data.get("mention_prior") else None
    return model, config, str(data["embedder"]), prior
