"""Checkpoints: everything that was trained, plus what is needed to rebuild the rest, never the frozen LLM.

A checkpoint is a folder:
    checkpoint.json        format tag, the ModelConfig, the LLM hidden size, epoch/step/metrics
    modules.safetensors    graph encoder, projector, empty-graph vector or soft prompt (buffers included)
    lora/                  the LoRA adapter, written by peft's save_pretrained (LoRA variants only)
    training_state.pt      optimizer, schedule position, random states, early-stopping state (for resume)
The LLM itself is reloaded by name from the configuration, so `load_checkpoint(path)` needs nothing else.
Folders are written beside their destination and renamed into place: a crash never leaves half a checkpoint.
"""

from __future__ import annotations

import json
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.model.config import ModelConfig
from gretriever_neo4j.model.gretriever import GraphQAModel, build_model
from gretriever_neo4j.model.llm import hidden_size, load_llm

FORMAT = "gqa-checkpoint"
VERSION = 1
MANIFEST = "checkpoint.json"
MODULES = "modules.safetensors"
LORA_DIR = "lora"
TRAINING_STATE = "training_state.pt"


@dataclass(frozen=True)
class CheckpointInfo:
    path: Path
    config: ModelConfig
    llm_hidden_size: int
    epoch: int | None = None
    step: int | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    has_training_state: bool = False


def save_checkpoint(model: GraphQAModel, path: str | Path, *, epoch: int | None = None, step: int | None = None,
                    metrics: dict[str, Any] | None = None, training_state: dict[str, Any] | None = None) -> Path:
    """Write `model`'s trained parts (and optionally the trainer's state) to the folder `path`, atomically."""
    from safetensors.torch import save_file

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.parent / f".{path.name}.partial-{uuid.uuid4().hex[:8]}"
    partial.mkdir()
    try:
        manifest = {"format": FORMAT, "version": VERSION, "model_config": model.config.to_dict(),
                    "llm_hidden_size": model.llm_hidden_size, "epoch": epoch, "step": step,
                    "metrics": metrics or {}}
        (partial / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        save_file({k: v.contiguous() for k, v in model.module_state_dict().items()}, str(partial / MODULES))
        if model.config.uses_lora:
            model.llm.save_pretrained(str(partial / LORA_DIR))
        if training_state is not None:
            torch.save(training_state, partial / TRAINING_STATE)
        _swap_into_place(partial, path)
    finally:
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)
    return path


def read_checkpoint(path: str | Path) -> CheckpointInfo:
    """The manifest of a checkpoint folder; ConfigError when it is missing or not one of ours."""
    path = Path(path)
    manifest_path = path / MANIFEST
    if not manifest_path.is_file():
        raise ConfigError(f"no checkpoint at {path} (missing {MANIFEST})")
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"checkpoint manifest {manifest_path} is unreadable: {exc}") from None
    if manifest.get("format") != FORMAT:
        raise ConfigError(f"{manifest_path} is not a gqa checkpoint (format {manifest.get('format')!r})")
    if manifest.get("version") != VERSION:
        raise ConfigError(f"checkpoint {path} has format version {manifest.get('version')!r}; this gqa reads "
                          f"version {VERSION}")
    return CheckpointInfo(path=path, config=ModelConfig.from_dict(manifest.get("model_config", {})),
                          llm_hidden_size=int(manifest["llm_hidden_size"]), epoch=manifest.get("epoch"),
                          step=manifest.get("step"), metrics=dict(manifest.get("metrics") or {}),
                          has_training_state=(path / TRAINING_STATE).is_file())


def load_checkpoint(path: str | Path, *, llm: Any = None, device: str = "auto",
                    embedder_dim: int | None = None) -> GraphQAModel:
    """Rebuild the model saved at `path` (in eval mode): its LLM by the name in its config, then its weights.

    `llm` may override the LLM: a name or path, or an already loaded (model, tokenizer) pair. `embedder_dim`,
    when given, is checked against the width the checkpoint was trained on.
    """
    info = read_checkpoint(path)
    check_embedder_dim(info, embedder_dim)
    if llm is None or isinstance(llm, str):
        name = llm or info.config.llm
        llm_model, tokenizer = load_llm(name, device=device)
        config = info.config if name == info.config.llm else info.config.replace(llm=name)
    else:
        llm_model, tokenizer = llm
        config = info.config
    check_llm_hidden_size(info, hidden_size(llm_model), config.llm)
    model = build_model(config, llm=llm_model, tokenizer=tokenizer)
    _load_weights(model, info)
    return model.eval()


def restore_weights(model: GraphQAModel, path: str | Path) -> CheckpointInfo:
    """Load a checkpoint's trained weights into an existing model built from the same configuration."""
    info = read_checkpoint(path)
    differences = config_differences(info.config, model.config)
    if differences:
        raise ConfigError(f"checkpoint {info.path} was made for another model configuration: {differences}")
    check_llm_hidden_size(info, model.llm_hidden_size, model.config.llm)
    _load_weights(model, info)
    return info


def load_training_state(path: str | Path) -> dict[str, Any] | None:
    state_path = Path(path) / TRAINING_STATE
    if not state_path.is_file():
        return None
    return torch.load(state_path, map_location="cpu", weights_only=True)


def check_embedder_dim(info: CheckpointInfo, embedder_dim: int | None) -> None:
    if embedder_dim is not None and embedder_dim != info.config.gnn_in_dim:
        raise ConfigError(f"checkpoint {info.path} was trained on {info.config.gnn_in_dim}-dimensional embeddings "
                          f"({info.config.embedder}) but the embedder in use gives {embedder_dim}")


def check_llm_hidden_size(info: CheckpointInfo, actual: int, llm_name: str) -> None:
    if actual != info.llm_hidden_size:
        raise ConfigError(f"checkpoint {info.path} was trained with an LLM of hidden size {info.llm_hidden_size} "
                          f"('{info.config.llm}') but '{llm_name}' has hidden size {actual}")


def config_differences(saved: ModelConfig, current: ModelConfig) -> str:
    """'field: saved -> current' for every field that differs; empty when the configurations agree."""
    a, b = saved.to_dict(), current.to_dict()
    return "; ".join(f"{k}: {a[k]!r} (checkpoint) vs {b[k]!r} (model)" for k in sorted(a) if a[k] != b[k])


def _load_weights(model: GraphQAModel, info: CheckpointInfo) -> None:
    from safetensors.torch import load_file

    modules_path = info.path / MODULES
    if not modules_path.is_file():
        raise ConfigError(f"checkpoint {info.path} lacks {MODULES}")
    model.load_module_state_dict(load_file(str(modules_path), device="cpu"))
    if info.config.uses_lora:
        _load_lora(model, info.path / LORA_DIR)


def _load_lora(model: GraphQAModel, folder: Path) -> None:
    from peft import load_peft_weights, set_peft_model_state_dict

    if not folder.is_dir():
        raise ConfigError(f"checkpoint of a LoRA model lacks its adapter folder {folder}")
    weights = load_peft_weights(str(folder), device=str(model.input_device))
    result = set_peft_model_state_dict(model.llm, weights)
    unexpected = list(getattr(result, "unexpected_keys", []) or [])
    if unexpected:
        raise ConfigError(f"LoRA adapter in {folder} does not fit the model: unexpected {unexpected[:5]}")


def _swap_into_place(partial: Path, destination: Path) -> None:
    """Replace `destination` by `partial`; the old folder is only removed once the new one is in place."""
    if destination.exists():
        retired = destination.parent / f".{destination.name}.old-{uuid.uuid4().hex[:8]}"
        destination.rename(retired)
        partial.rename(destination)
        shutil.rmtree(retired, ignore_errors=True)
    else:
        partial.rename(destination)
