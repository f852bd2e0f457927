import pytest
import torch

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.model.label_scoring import label_choice_loss, score_batch
from gretriever_neo4j.model.sample import collate
from gretriever_neo4j.model.text_cache import TextCache, attach_text_cache, build_text_cache

from model_toys import random_sample, toy_model

LABELS = ("cat", "dog")


def samples():
    return [random_sample(i, 2 + i % 3, label=LABELS[i % 2], question=f"item {i} {'?' * (i % 5)}") for i in range(7)]


@pytest.mark.parametrize("variant", ["g-retriever", "prompt-tuning", "inference-only"])
def test_the_cached_text_changes_the_speed_not_the_scores_or_gradients(variant, tmp_path):
    batch = collate(samples())
    full = toy_model(variant, seed=4, soft_token_position="last")
    cached = toy_model(variant, seed=4, soft_token_position="last")
    cache = build_text_cache(cached, samples(), batch_size=3)
    cache.save(tmp_path / "c.pt")
    attach_text_cache(cached, TextCache.load(tmp_path / "c.pt"))
    for model in (full, cached):
        model.train()
    a_loss, a_logits, a_targets = full.label_logits(batch)
    b_loss, b_logits, b_targets = cached.label_logits(batch)
    assert torch.equal(a_targets[a_targets != -100], b_targets.flatten())
    assert torch.allclose(a_logits, b_logits, atol=1e-4)
    assert score_batch(full, batch, LABELS)[1] == score_batch(cached, batch, LABELS)[1]
    if variant != "inference-only":
        for model in (full, cached):
            model.zero_grad()
            label_choice_loss(model, batch, LABELS).backward()
        grads = [[p.grad for p in m.trainable_parameters()] for m in (full, cached)]
        for a, b in zip(*grads):
            assert torch.allclose(a, b, atol=1e-5)


def test_a_cache_needs_a_frozen_llm_and_the_soft_tokens_last():
    with pytest.raises(ConfigError):
        build_text_cache(toy_model("g-retriever"), samples())
    with pytest.raises(ConfigError):
        build_text_cache(toy_model("g-retriever-lora", soft_token_position="last"), samples())
    cache = build_text_cache(toy_model("g-retriever", soft_token_position="last"), samples())
    with pytest.raises(ConfigError):
        attach_text_cache(toy_model("g-retriever", soft_token_position="last", max_txt_len=8), cache)
