import json

import pytest
import torch
from safetensors.torch import load_file

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.model.checkpoint import (
    LORA_DIR,
    MANIFEST,
    MODULES,
    load_checkpoint,
    read_checkpoint,
    restore_weights,
    save_checkpoint,
)
from gretriever_neo4j.model.llm import tiny_llama
from gretriever_neo4j.model.sample import collate

from model_toys import random_sample, toy_model

VARIANTS = ["inference-only", "prompt-tuning", "g-retriever", "lora", "g-retriever-lora"]


def perturbed(variant, **changes):
    """A toy model whose trainable weights (and batch-norm statistics) moved away from their initial values."""
    model = toy_model(variant, **changes)
    generator = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for parameter in model.trainable_parameters():
            parameter.add_(0.3 * torch.randn(parameter.shape, generator=generator))
    model.train()
    model(collate([random_sample(0, 3), random_sample(1, 4)]))  # updates batch-norm running statistics
    return model.eval()


def llm_bytes(model):
    return sum(p.numel() * p.element_size() for n, p in model.named_parameters()
               if n.startswith("llm.") and "lora_" not in n)


def folder_bytes(path):
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


@pytest.mark.parametrize("variant", VARIANTS)
def test_round_trip_reproduces_logits_and_answers_without_flags(variant, tmp_path):
    model = perturbed(variant)
    batch = collate([random_sample(0, 3), random_sample(1, 4), random_sample(2, 1)])
    save_checkpoint(model, tmp_path / "ckpt", epoch=3, step=12, metrics={"val_loss": 1.5})
    reloaded = load_checkpoint(tmp_path / "ckpt", device="cpu")
    assert type(reloaded) is type(model) and reloaded.config == model.config and not reloaded.training
    assert torch.equal(reloaded.logits(batch), model.logits(batch))
    assert reloaded.generate(batch) == model.generate(batch)
    info = read_checkpoint(tmp_path / "ckpt")
    assert (info.epoch, info.step, info.metrics, info.llm_hidden_size) == (3, 12, {"val_loss": 1.5}, 64)


@pytest.mark.parametrize("variant", VARIANTS)
def test_frozen_llm_weights_are_never_saved(variant, tmp_path):
    model = perturbed(variant)
    path = save_checkpoint(model, tmp_path / "ckpt")
    assert not any(key.startswith("llm.") for key in load_file(str(path / MODULES)))
    assert folder_bytes(path) < llm_bytes(model) / 4
    if model.config.uses_lora:
        adapter = load_file(str(path / LORA_DIR / "adapter_model.safetensors"))
        assert adapter and all("lora_" in key for key in adapter)
    else:
        assert not (path / LORA_DIR).exists()


def test_prompt_and_graph_weights_are_what_is_saved(tmp_path):
    keys = set(load_file(str(save_checkpoint(perturbed("prompt-tuning"), tmp_path / "p") / MODULES)))
    assert keys == {"prompt"}
    keys = set(load_file(str(save_checkpoint(perturbed("g-retriever"), tmp_path / "g") / MODULES)))
    assert "empty_graph" in keys and "gnn.norms.0.running_mean" in keys and "projector.2.weight" in keys


def test_llm_hidden_size_mismatch_names_both_sizes(tmp_path):
    save_checkpoint(perturbed("g-retriever"), tmp_path / "ckpt")
    narrow = tiny_llama(hidden=32)
    with pytest.raises(ConfigError, match=r"hidden size 64.*hidden size 32"):
        load_checkpoint(tmp_path / "ckpt", llm=narrow)


def test_embedder_dimension_mismatch_names_both_sizes(tmp_path):
    save_checkpoint(perturbed("g-retriever"), tmp_path / "ckpt")
    with pytest.raises(ConfigError, match=r"16-dimensional.*gives 384"):
        load_checkpoint(tmp_path / "ckpt", embedder_dim=384)


def test_missing_or_foreign_checkpoints(tmp_path):
    with pytest.raises(ConfigError, match="no checkpoint"):
        load_checkpoint(tmp_path / "absent")
    path = save_checkpoint(perturbed("prompt-tuning"), tmp_path / "ckpt")
    manifest = json.loads((path / MANIFEST).read_text())
    manifest["model_config"]["gnn_size"] = 3
    (path / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ConfigError, match="gnn_size"):
        read_checkpoint(path)
    manifest["format"] = "something-else"
    (path / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ConfigError, match="not a gqa checkpoint"):
        read_checkpoint(path)


def test_restoring_into_a_differently_configured_model_is_refused(tmp_path):
    save_checkpoint(perturbed("g-retriever"), tmp_path / "ckpt")
    with pytest.raises(ConfigError, match="gnn: 'graph-transformer' .checkpoint. vs 'gat' .model."):
        restore_weights(toy_model("g-retriever", gnn="gat"), tmp_path / "ckpt")


def test_overwriting_is_atomic_and_leaves_no_debris(tmp_path):
    first = perturbed("g-retriever")
    save_checkpoint(first, tmp_path / "ckpt", epoch=1)
    second = perturbed("g-retriever", gnn_dropout=0.1)
    save_checkpoint(second, tmp_path / "ckpt", epoch=2)
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt"]
    assert read_checkpoint(tmp_path / "ckpt").config.gnn_dropout == 0.1
