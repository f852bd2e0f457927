"""Question answering as one library call (`QA.ask(question, graph=…) -> QAResult`: retrieve, then answer),
for the CLI and the service alike; `batch` asks a questions file, `questions_file` reads one, `client` asks a
running `gqa serve`, `overview` describes the stored graphs and their models."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {"QA": "qa", "QAResult": "qa", "RETRIEVER_KINDS": "qa"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:  # imported on first use: `gqa ask` asking a server needs none of it
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)
