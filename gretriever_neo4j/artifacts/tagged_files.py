"""Single-file checkpoints (the learned retriever, the reader): a torch-saved dict tagged with its format, written
atomically, read back with weights-only unpickling and a clear error for anything else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gretriever_neo4j.errors import ConfigError


def write_tagged(path: str | Path, data: dict[str, Any]) -> Path:
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    torch.save(data, partial)
    partial.replace(path)  # a crash never leaves half a checkpoint where loaders look
    return path


def read_tagged(path: str | Path, fmt: str, what: str) -> dict[str, Any]:
    import torch

    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"no {what} checkpoint at {path}")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises pickle, zip and runtime errors for foreign files
        raise ConfigError(f"{path} is not a {what} checkpoint ({error.__class__.__name__})") from None
    if not isinstance(data, dict) or data.get("format") != fmt:
        raise ConfigError(f"{path} is not a {what} checkpoint (format {fmt} expected)")
    return data
