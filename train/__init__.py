"""Training the G-Retriever models (no database access here; the checkpoint format is `model.checkpoint`).

Names are imported on first use (torch is heavy). Metrics live in `gretriever_neo4j.metrics`: the library
scores answers without importing training code.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "TrainConfig": "trainer", "TrainHistory": "trainer", "EpochStats": "trainer", "train": "trainer",
    "evaluate_loss": "trainer", "predict": "trainer", "lr_at": "trainer",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{module}", __name__), name)
