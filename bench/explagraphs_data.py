"""ExplaGraphs samples for the benches, from one local copy.

`bench/explagraphs.py` builds them from Neo4j retrieval (cached by gqa's SampleCache); `dump` writes them once to
runs/explagraphs-<split>.pt so that probes and training runs load them in a second, without Neo4j.
"""

from __future__ import annotations

from pathlib import Path

from _common import REPO

LOCAL = REPO / "runs"


def local_path(split: str) -> Path:
    return LOCAL / f"explagraphs-{split}.pt"


def load_split(split: str, limit: int | None = None):
    """The split's samples: from the local copy when there is one, else from Neo4j (and then copied)."""
    import torch

    from gretriever_neo4j.model.sample import QASample

    path = local_path(split)
    if not path.is_file():
        dump(split)
    samples = [QASample(**row) for row in torch.load(path, weights_only=False)]
    return samples[:limit] if limit else samples


def dump(split: str) -> Path:
    import torch

    samples = from_neo4j(split)
    path = local_path(split)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save([s.__dict__ for s in samples], path.with_suffix(".partial"))
    path.with_suffix(".partial").replace(path)
    return path


def from_neo4j(split: str):
    """The split's samples from gqa's static retrieval over the ingested graph (gqa's SampleCache keeps them)."""
    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.retrievers.base import RetrievalContext
    from gretriever_neo4j.retrievers.neo4j import StaticRetriever
    from gretriever_neo4j.settings import Neo4jSettings
    from gretriever_neo4j.store import connected
    from gretriever_neo4j.train.data import build_samples, static_settings

    embedder = Embedder()
    with connected(Neo4jSettings.from_env()) as store:
        retriever = StaticRetriever(RetrievalContext(store, embedder))
        return build_samples(store, retriever, "explagraphs", split,
                             settings=static_settings(retriever, "explagraphs"))
